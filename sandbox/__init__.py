"""Sandboxed execution of untrusted test commands.

``run_command`` is the one entry point. Backends:
- ``bwrap`` (bubblewrap; see ``sandbox.bwrap``): namespaces, read-only host,
  no network, no secrets — the default;
- ``local``: a process group with rlimits, for development only; it does not
  isolate the network, the filesystem or the host's files, and says so in
  every result;
- ``auto``: bwrap when it works here, otherwise a clear error (it fails
  closed: ``local`` runs only when asked for by name).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from parsers.errors import ErrorKind, GreenloopError
from sandbox import bwrap
from sandbox.environment import sandbox_env
from sandbox.process import Limits, rlimits, run_process

LOCAL_WARNING = ("local backend: NO isolation — the command can use the network, read the host's files "
                 "and write outside the workspace; only time, memory, CPU and output are limited")


def choose_backend(name: str) -> tuple[str, str]:
    """(backend, reason) for a requested backend name; fails closed."""
    if name == "local":
        return "local", "asked for by name"
    if name in ("auto", "bwrap"):
        ok, why = bwrap.available()
        if ok:
            return "bwrap", why if name == "bwrap" else f"auto: {why}"
        raise GreenloopError(
            f"no isolating sandbox is available ({why}); install bubblewrap, or run unisolated with "
            "--sandbox local", kind=ErrorKind.PERMISSION_ERROR)
    if name == "docker":
        raise GreenloopError("the docker backend is not available in this version; use bwrap",
                             kind=ErrorKind.VALIDATION_ERROR)
    raise GreenloopError(f"unknown sandbox backend {name!r}", kind=ErrorKind.VALIDATION_ERROR)


async def run_command(command: str, workspace: Path, out_dir: Path, settings,
                      heartbeat: Callable[[str], None] = lambda _: None):
    """Run ``bash -c command`` in ``workspace`` under ``settings`` (a
    ``SandboxSettings``); output streams to ``out_dir``. Returns an ``Execution``."""
    from runner.execute import Execution

    backend, reason = choose_backend(settings.backend)
    out_dir.mkdir(parents=True, exist_ok=True)
    limits = Limits(timeout_s=settings.timeout_s, memory_mb=settings.memory_mb, cpus=settings.cpus,
                    pids=settings.pids)
    warnings: list[str] = []
    if backend == "bwrap":
        env = sandbox_env("/tmp")
        argv = bwrap.argv(command, workspace, env, network=settings.network, tmpfs_mb=1024)
        # Inside the user namespace the uid is not root: RLIMIT_NPROC holds there.
        preexec = rlimits(limits, nproc=os.getuid() != 0)
    else:
        home = out_dir / "home"
        home.mkdir(exist_ok=True)
        env = sandbox_env(str(home))
        argv = ["bash", "-c", command]
        preexec = rlimits(limits, nproc=os.getuid() != 0)
        warnings.append(LOCAL_WARNING)
    done = await run_process(argv, cwd=workspace, env=env, out_dir=out_dir, limits=limits, preexec=preexec,
                             heartbeat=heartbeat)
    if done.truncated:
        warnings.append("output truncated at the sandbox's output limit")
    if done.timed_out:
        warnings.append(f"killed after the time limit of {settings.timeout_s}s")
    stderr_tail = (out_dir / "stderr.txt").read_bytes()[-4096:].decode(errors="replace")
    oom = "MemoryError" in stderr_tail or "out of memory" in stderr_tail.lower() or "Cannot allocate memory" in stderr_tail
    return Execution(
        command=command, exit_code=done.exit_code, stdout_path=str(out_dir / "stdout.txt"),
        stderr_path=str(out_dir / "stderr.txt"), duration_s=done.duration_s, timed_out=done.timed_out,
        out_of_memory=oom and done.exit_code not in (0, None), backend=f"{backend} ({reason})", warnings=warnings,
    )
