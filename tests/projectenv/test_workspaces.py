"""Workspaces and monorepos in the setup phase: every member's manifest staged,
the links to the members and their own dependencies installed, and the tests
run from the root for the members that own them. Real npm, uv and go, the
real sandbox."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from greenloop.parsers.models import Status
from greenloop.projectenv.setup import set_up
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.sandbox.models import SandboxSettings
from greenloop.workspace import worktree
from tests.projectenv.conftest import BACKEND, LIB_FIXED, NPM_WORKSPACE_MEMBERS

SETTINGS = SandboxSettings(backend=BACKEND, timeout_s=120)


async def _setup_and_run(ws: Path, out: Path):
    plan = plan_tests(ws)
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS, out / "setup")
    plan = plan.model_copy(update={"environment": environment})
    return plan, environment, await run_tests(plan, ws, out / "suite", SETTINGS)


def _statuses(run) -> dict[str, Status]:
    return {t.id: t.status for t in run.report.tests}


async def test_an_npm_workspace_installs_every_member_and_tests_the_workspaces_own_members(
        home, npm_workspace, tmp_path):
    plan, environment, run = await _setup_and_run(npm_workspace, tmp_path / "out")
    # The members' tests, from the root, with node's runner: not the root's chain of build, lint
    # (eslint is not installed) and coverage.
    assert plan.framework == "node-test"
    assert "eslint" not in plan.test_command and "c8" not in plan.test_command
    assert plan.test_command.endswith("packages/app packages/lib/test/")
    assert "without lint (eslint .)" in plan.reason
    # Every member's manifest is part of the environment's key, and staged without its scripts.
    assert environment.manifests == ["package.json", "packages/app/package.json", "packages/lib/package.json",
                                     "package-lock.json"]
    staged = Path(environment.root) / "project"
    for rel, manifest in NPM_WORKSPACE_MEMBERS.items():
        assert json.loads((staged / rel / "package.json").read_text()) == {
            k: v for k, v in manifest.items() if k != "scripts"}
    # The workspace's link to a member is its own member, not the staged manifest.
    lib = npm_workspace / "node_modules" / "@mono" / "lib"
    assert lib.is_symlink() and lib.resolve() == (npm_workspace / "packages" / "lib").resolve()
    assert (npm_workspace / "node_modules" / "is-number").resolve().is_relative_to(Path(environment.root))
    # lib's own test passes; app's tests, through the link to lib, fail on lib's bug.
    assert _statuses(run) == {"an empty list costs nothing": Status.PASSED,
                              "a bill adds its prices": Status.FAILED,
                              "a bill skips what is not a price": Status.FAILED}
    status = subprocess.run(["git", "-C", str(npm_workspace), "status", "--porcelain"], capture_output=True,
                            text=True, check=True).stdout
    assert "node_modules" not in status

    # A worktree with lib fixed tests its own lib through the same cached environment.
    tree = tmp_path / "trees" / "t"
    worktree.create(npm_workspace, tree)
    (tree / "packages" / "lib" / "index.js").write_text(LIB_FIXED)
    again = await run_tests(plan, tree, tmp_path / "tree-suite", SETTINGS)
    assert set(_statuses(again).values()) == {Status.PASSED} and len(again.report.tests) == 3
    assert (tree / "node_modules" / "@mono" / "lib").resolve() == (tree / "packages" / "lib").resolve()
