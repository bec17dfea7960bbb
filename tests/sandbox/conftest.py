"""Real backends, real processes: helpers to run a command in a sandbox and
to prove nothing it started is left on the machine."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from greenloop import sandbox
from greenloop.sandbox.cgroup import RunCgroup
from greenloop.sandbox.models import ExecResult, Limits

IN_CI = os.environ.get("CI") == "true"


def available_backends() -> list[str]:
    """Every backend that works here; bwrap must (CI installs it), docker
    joins when its module exists and an engine answers."""
    names = []
    for name in ("docker", "bwrap"):
        module, _ = sandbox.backend_module(name)
        if module is not None and module.available()[0]:
            names.append(name)
    return [*names, "local"]


BACKENDS = available_backends()


def cgroups_delegable() -> list[str]:
    """The controllers a run's cgroup gets here (none missing on CI's machines)."""
    cg = RunCgroup.create(Limits())
    try:
        return [c for c in ("pids", "memory", "cpu") if c not in cg.missing]
    finally:
        cg.remove()


_current_token = [""]


@pytest.fixture
def token() -> str:
    """A unique tag to find every process a test's command started."""
    return f"glattack{uuid.uuid4().hex[:10]}"


@pytest.fixture
def nothing_left(token):
    """Tag every ``run_in`` of the test with ``token``; afterwards, no
    process of any of its runs may still be alive."""
    _current_token[0] = token
    yield
    _current_token[0] = ""
    assert_nothing_left(token)


@pytest.fixture
def ws(tmp_path) -> Path:
    """A workspace that is a real git repository."""
    path = tmp_path / "ws"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "README").write_text("workspace\n")
    return path


TAG = "GREENLOOP_TEST_TAG"


def processes_with(token: str) -> list[str]:
    """Live processes (any namespace) whose command line or environment
    mentions ``token``: ``run_in`` puts it in every run's environment, which
    survives exec and argv rewriting."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            environ = (entry / "environ").read_bytes().decode(errors="replace")
            state = next((ln for ln in (entry / "status").read_text().splitlines() if ln.startswith("State:")), "")
        except OSError:
            continue
        if (token in cmd or f"{TAG}={token}" in environ) and "zombie" not in state:
            found.append(f"{entry.name}: {cmd[:120]}")
    return found


def assert_nothing_left(token: str, settle_s: float = 2.0) -> None:
    """No process of the run survives it (a short settle for the kernel's reaping)."""
    deadline = time.monotonic() + settle_s
    while (left := processes_with(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for line in left:  # a failing test must not leave them behind either
        try:
            os.kill(int(line.split(":")[0]), 9)
        except OSError:
            pass
    assert not left, f"left running after the run: {left}"


async def run_in(backend: str, command: str, ws: Path, out: Path, env: dict[str, str] | None = None,
                 **limits) -> ExecResult:
    """One real run with tight default limits; ``token`` tags every process of it."""
    base = dict(timeout_s=20, memory_mb=256, pids=128, tmpfs_mb=64)
    base.update(limits)
    token = _current_token[0]
    env = {**(env or {}), **({TAG: token} if token else {})}
    return await sandbox.run(command, ws, env, Limits(**base), backend=backend, out_dir=out)
