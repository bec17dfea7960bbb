"""Workspaces and monorepos in the setup phase: every member's manifest staged,
the links to the members and their own dependencies installed, and the tests
run from the root for the members that own them. Real npm, uv and go, the
real sandbox."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from greenloop.parsers.models import Status
from greenloop.projectenv.setup import set_up
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.sandbox.models import SandboxSettings
from greenloop.workspace import worktree
from tests.projectenv.conftest import (
    BACKEND,
    LIB_FIXED,
    NPM_WORKSPACE_MEMBERS,
    git_init,
    make_pnpm_workspace,
    make_yarn_workspace,
    write,
)

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


async def test_a_uv_workspace_installs_its_members_and_tests_the_workspaces_own_code(home, uv_workspace, tmp_path):
    plan, environment, run = await _setup_and_run(uv_workspace, tmp_path / "out")
    assert environment.ecosystem == "python" and environment.source == "built"
    assert "packages/prices/pyproject.toml" in environment.manifests
    assert ("uv.lock (exact pins)" in environment.reason) == (uv_workspace / "uv.lock").is_file()
    assert "the workspace's 1 members (packages/prices)" in environment.reason
    assert environment.import_roots == ["src", "packages/prices/src"]
    venv = Path(environment.root) / "venv"
    assert list(venv.glob("lib/python3*/site-packages/prices*"))  # the member satisfies shop's dependency
    # Both the root's and the member's tests run; the member's bug fails the root's test.
    assert _statuses(run) == {"tests/test_shop.py::test_checkout_adds_tax": Status.FAILED,
                              "packages/prices/tests/test_prices.py::test_no_amount_no_tax": Status.PASSED}
    # The workspace's own member is what is tested (PYTHONPATH), not the copy installed in the environment.
    member = uv_workspace / "packages" / "prices" / "src" / "prices" / "__init__.py"
    member.write_text(member.read_text().replace("amount > 100", "amount >= 100"))
    again = await run_tests(plan, uv_workspace, tmp_path / "again", SETTINGS)
    assert set(_statuses(again).values()) == {Status.PASSED} and len(again.report.tests) == 2


GO_WORKSPACE = {
    "go.work": "go 1.19\n\nuse (\n\t./app\n\t./lib // the halving\n)\n",
    "lib/go.mod": "module example.com/lib\n\ngo 1.19\n",
    "lib/lib.go": "package lib\n\nfunc Half(n int) int { return n / 3 }\n",
    "lib/lib_test.go": "package lib\n\nimport \"testing\"\n\nfunc TestHalfOfZero(t *testing.T) { if Half(0) != 0 { t.Fatal() } }\n",
    "app/go.mod": "module example.com/app\n\ngo 1.19\n\nrequire example.com/lib v0.0.0\n",
    "app/app.go": "package app\n\nimport \"example.com/lib\"\n\nfunc Split(n int) (int, int) { h := lib.Half(n); "
                  "return h, n - h }\n",
    "app/app_test.go": "package app\n\nimport \"testing\"\n\nfunc TestSplit(t *testing.T) { a, b := Split(10); "
                       "if a != 5 || b != 5 { t.Fatal(a, b) } }\n",
}


async def test_a_go_workspace_runs_every_modules_tests_from_its_root(home, tmp_path):
    ws = git_init(write(tmp_path / "gowork", GO_WORKSPACE))
    plan, environment, run = await _setup_and_run(ws, tmp_path / "out")
    assert plan.language == "go" and "./app/... ./lib/..." in plan.test_command  # no module at the root
    assert environment.manifests == ["go.work", "app/go.mod", "lib/go.mod"]
    assert "GOFLAGS" not in environment.env  # workspace mode refuses -mod=mod
    # app's test fails on lib's bug, through the workspace's `use` of lib.
    assert _statuses(run) == {"example.com/app::TestSplit": Status.FAILED,
                              "example.com/lib::TestHalfOfZero": Status.PASSED}


async def test_a_pnpm_workspace_links_each_members_own_node_modules(home, pnpm_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{pnpm_bin}:{os.environ['PATH']}")
    ws = make_pnpm_workspace(tmp_path / "mono", pnpm_bin)
    plan, environment, run = await _setup_and_run(ws, tmp_path / "out")
    assert "pnpm install --frozen-lockfile" in environment.reason
    assert plan.test_command.endswith("packages/app packages/lib/test/")  # `pnpm -r test`, followed
    # pnpm keeps a member's dependencies in its own node_modules: app's link to lib is the workspace's lib,
    # is-number is the environment's.
    modules = ws / "packages" / "app" / "node_modules"
    assert (modules / "@mono" / "lib").resolve() == (ws / "packages" / "lib").resolve()
    assert (modules / "is-number").resolve().is_relative_to(Path(environment.root))
    assert _statuses(run) == {"an empty list costs nothing": Status.PASSED,
                              "a bill adds its prices": Status.FAILED,
                              "a bill skips what is not a price": Status.FAILED}


async def test_a_yarn_workspace_installs_from_its_yarn_lock(home, yarn_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{yarn_bin}:{os.environ['PATH']}")
    ws = make_yarn_workspace(tmp_path / "mono", yarn_bin)
    plan, environment, run = await _setup_and_run(ws, tmp_path / "out")
    assert "yarn install --frozen-lockfile" in environment.reason
    assert plan.test_command.endswith("packages/app packages/lib/test/")  # `yarn workspaces run test`, followed
    assert (ws / "node_modules" / "@mono" / "lib").resolve() == (ws / "packages" / "lib").resolve()
    assert _statuses(run) == {"an empty list costs nothing": Status.PASSED,
                              "a bill adds its prices": Status.FAILED,
                              "a bill skips what is not a price": Status.FAILED}
