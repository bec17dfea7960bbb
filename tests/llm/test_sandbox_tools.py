"""The conversation's sandboxed tools (llm/sandbox_tools.py) on the demo repository,
in the real bwrap sandbox (and on docker: a live engine, which CI must have):
tests run on a scratch copy with the pending edits (never on the workspace),
their bound, the command tool's isolation and bounds, its refusal under the
local backend, and long results trimmed with a note."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from greenloop.git_command import git
from greenloop.llm import sandbox_tools
from greenloop.llm.sandbox_tools import Counts, Hands
from greenloop.llm.trim import trim
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.sandbox import docker as docker_backend
from greenloop.sandbox.models import SandboxSettings
from tests.sandbox.conftest import IN_CI
from tests.workflows.conftest import BACKEND, DEMO

TARGET = "tests/test_cart.py::test_discount"
WRONG = "self.total() * percent / 100"
RIGHT = "self.total() * (100 - percent) / 100"


@pytest.fixture
async def demo(tmp_path) -> tuple[Path, Hands]:
    """The demo repository as a git workspace, its suite run once (the failing tests' report)."""
    root = tmp_path / "ws"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "demo")
    plan = plan_tests(root)
    sandbox = SandboxSettings(backend=BACKEND, timeout_s=120)
    run = await run_tests(plan, root, tmp_path / "initial", sandbox)
    assert run.report.find(TARGET) is not None
    hands = Hands(plan=plan, sandbox=sandbox, report_path=str(tmp_path / "initial" / "report.json"), test_id=TARGET,
                  run_dir=str(tmp_path / "run"), role="fixer", attempt=1, max_test_runs=2, max_commands=5)
    return root, hands


def fixed(root: Path) -> dict[str, str | None]:
    return {"shop/cart.py": (root / "shop/cart.py").read_text().replace(WRONG, RIGHT)}


async def test_run_tests_sees_the_pending_edits_and_never_the_workspace_is_changed(demo):
    root, hands = demo
    before, status, counts = (root / "shop/cart.py").read_text(), git(root, "status", "--porcelain"), Counts()
    out, err = await sandbox_tools.call(hands, "run_tests", {}, root, {}, counts)
    assert not err and f"{TARGET}: failed" in out and "assert" in out
    out, err = await sandbox_tools.call(hands, "run_tests", {}, root, fixed(root), counts)
    assert not err and f"{TARGET}: passed" in out, out
    assert counts.test_runs == 2 and (root / "shop/cart.py").read_text() == before
    assert git(root, "status", "--porcelain") == status  # nothing written to the workspace
    # Over the bound: a tool error, not counted, nothing run.
    out, err = await sandbox_tools.call(hands, "run_tests", {"tests": [TARGET]}, root, {}, counts)
    assert err and "limit of 2 test runs" in out and counts.test_runs == 2


async def test_run_tests_runs_other_tests_by_id(demo):
    root, hands = demo
    other = "tests/test_cart.py::test_skus_sorted"
    out, err = await sandbox_tools.call(hands, "run_tests", {"tests": [other, TARGET]}, root, {}, Counts())
    assert not err and f"{other}: passed" in out and f"{TARGET}: failed" in out
    out, err = await sandbox_tools.call(hands, "run_tests", {"tests": "x"}, root, {}, Counts())
    assert err and "`tests` must be a non-empty list" in out


@pytest.mark.skipif(BACKEND == "local", reason="the command tool needs an isolating sandbox")
async def test_a_command_has_no_network_and_cannot_write_outside_its_scratch_copy(demo):
    root, hands = demo
    counts = Counts()
    net = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)\""
    out, err = await sandbox_tools.call(hands, "bash", {"command": net}, root, {}, counts)
    assert not err and "exit code 1" in out and "Network is unreachable" in out, out
    outside = f"echo x > {root}/outside.txt; echo y > /etc/greenloop-probe; echo here > inside.txt; cat inside.txt"
    out, err = await sandbox_tools.call(hands, "bash", {"command": outside}, root, {}, counts)
    assert not err and "Read-only file system" in out and "here" in out, out
    assert not (root / "outside.txt").exists() and not (root / "inside.txt").exists()
    assert not Path("/etc/greenloop-probe").exists()
    # It sees the pending edits; the secrets of the worker's environment do not reach it.
    out, err = await sandbox_tools.call(hands, "bash", {"command": "grep -c '100 - percent' shop/cart.py; env"},
                                        root, fixed(root), counts)
    assert out.startswith("exit code 0") and "\n1\n" in out and "ANTHROPIC_API_KEY" not in out
    assert counts.commands == 3 and counts.test_runs == 0


async def test_the_command_tool_is_refused_under_the_local_backend(demo):
    root, hands = demo
    local = hands.model_copy(update={"sandbox": hands.sandbox.model_copy(update={"backend": "local"})})
    counts = Counts()
    out, err = await sandbox_tools.call(local, "bash", {"command": "echo hi"}, root, {}, counts)
    assert err and "refused under the `local` sandbox backend" in out and counts.commands == 0


async def test_a_long_command_output_is_trimmed_with_a_note(demo):
    root, hands = demo
    out, err = await sandbox_tools.call(hands, "bash", {"command": "seq 1 100000"}, root, {}, Counts())
    assert not err and "[greenloop cut" in out and "\n100000" in out and len(out) < 20_000


def test_trim_keeps_the_start_and_the_end_and_says_what_it_cut():
    text = "\n".join(f"line {n}" for n in range(1, 10_001))
    out = trim(text, 1_000, "read less")
    assert out.startswith("line 1\n") and out.endswith("line 10000") and len(out) < 1_200
    assert "[greenloop cut" in out and "read less" in out and "lines " in out
    assert trim("short", 1_000) == "short"


@pytest.fixture
def on_docker(demo) -> tuple[Path, Hands]:
    """The demo's hands on the docker backend (a live engine: in CI a missing one fails)."""
    ok, why = docker_backend.available()
    if not ok:
        if IN_CI:
            pytest.fail(f"CI needs a docker engine: {why}")
        pytest.skip(why)
    root, hands = demo
    return root, hands.model_copy(update={"sandbox": hands.sandbox.model_copy(update={"backend": "docker"})})


async def test_the_tools_run_on_the_docker_backend_with_the_same_bounds(on_docker):
    root, hands = on_docker
    counts = Counts()
    out, err = await sandbox_tools.call(hands, "run_tests", {}, root, fixed(root), counts)
    assert not err and f"{TARGET}: passed" in out, out
    net = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)\""
    out, err = await sandbox_tools.call(hands, "bash", {"command": net}, root, {}, counts)
    assert not err and out.startswith("exit code 1") and "unreachable" in out, out
    out, err = await sandbox_tools.call(
        hands, "bash", {"command": "grep -c '100 - percent' shop/cart.py; echo here > inside.txt; "
                                   "echo y > /etc/greenloop-probe; env"}, root, fixed(root), counts)
    assert "\n1\n" in out and "Read-only file system" in out and "ANTHROPIC_API_KEY" not in out, out
    assert not (root / "inside.txt").exists() and (root / "shop/cart.py").read_text().count(RIGHT) == 0
    out, err = await sandbox_tools.call(hands, "bash", {"command": "test -f /.dockerenv && echo in a container"},
                                        root, {}, counts)
    assert "in a container" in out, out  # the docker backend ran it, not bwrap
    tight = hands.model_copy(update={"sandbox": hands.sandbox.model_copy(update={"timeout_s": 3, "memory_mb": 128})})
    out, err = await sandbox_tools.call(tight, "bash", {"command": "sleep 60"}, root, {}, counts)
    assert not err and "killed after its time limit (3 s)" in out, out
    hog = "python3 -c \"x = bytearray(1024 * 1024 * 1024); print(len(x))\""
    out, err = await sandbox_tools.call(tight, "bash", {"command": hog}, root, {}, counts)
    assert not err and "out of memory (128 MB)" in out, out
    assert counts.commands == 5 and counts.test_runs == 1
    out, err = await sandbox_tools.call(hands, "bash", {"command": "seq 1 100000"}, root, {}, Counts())
    assert not err and "[greenloop cut" in out and "\n100000" in out and len(out) < 20_000
