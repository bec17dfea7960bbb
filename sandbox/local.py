"""The local backend: the command runs on the host as the worker's own user,
in its own process group and (where the machine delegates one) its own
cgroup, with rlimits, a private HOME and TMPDIR, the allow-listed
environment, and no new privileges. It is for development only: it does not
isolate, and every result says so.

What it holds: time, output, memory and processes (through the cgroup, else
rlimits), CPU, the disk it may fill in the workspace's filesystem, the
worker's environment (secrets never enter), and leftovers (the cgroup kills
every descendant, detached or not). What it does not hold is ``UNCONTAINED``
(and ``UNCONTAINED_WITHOUT_CGROUP`` on a machine that delegates no cgroup);
tests/sandbox/test_attacks.py proves each entry by doing it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .models import ExecResult, Limits, Mount
from .process import result, run_process

UNCONTAINED: dict[str, str] = {
    "network": "reaches the network: the host's loopback services and the outside world",
    "host_files": "reads every file the worker's user can read (secrets in the host's HOME included)",
    "write_outside": "writes wherever the worker's user can write, outside the workspace too",
    "git_hooks": "writes the workspace's .git, hooks included",
    "privileges": "keeps the worker's uid and capabilities (as root it can mount, remount and chown)",
    "tmp_size": "temporary files go to the host's disk: tmpfs_mb does not bound them",
}
UNCONTAINED_WITHOUT_CGROUP: dict[str, str] = {
    "fork_bomb": "processes are unbounded for root (RLIMIT_NPROC does not apply to root)",
    "detached": "a descendant that leaves the process group (setsid) outlives the run",
}


def warning(cgroup_missing: bool) -> str:
    """The warning every local result carries."""
    gaps = {**UNCONTAINED, **(UNCONTAINED_WITHOUT_CGROUP if cgroup_missing else {})}
    return "local backend: NO isolation — the command " + "; ".join(gaps.values())


def available() -> tuple[bool, str]:
    """Always: it needs nothing but bash."""
    return True, "runs on the host without isolation"


async def run(command: str, workdir: Path, env: dict[str, str], limits: Limits, out_dir: Path,
              heartbeat: Callable[[str], None], mounts: list[Mount] | None = None) -> ExecResult:
    """Run ``bash -c command`` in ``workdir`` on the host (where ``mounts`` are already visible)."""
    home, tmp = out_dir / "home", out_dir / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**env, "HOME": str(home), "TMPDIR": str(tmp)}
    done = await run_process(["bash", "-c", command], cwd=workdir, env=env, out_dir=out_dir, limits=limits,
                             heartbeat=heartbeat, disk_root=workdir)
    return result(command, "local", done, out_dir, limits, [warning("pids" in done.cgroup_missing)])
