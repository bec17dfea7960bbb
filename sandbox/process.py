"""Run one command as its own process group, stream its output to files
(capped), enforce the wall-clock limit, and kill the whole tree on timeout
or cancellation (SIGTERM, a grace period, then SIGKILL)."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

MAX_OUTPUT_BYTES = 50 * 1024 * 1024
GRACE_S = 2.0
HEARTBEAT_S = 5.0
POLL_S = 0.25


class Limits(BaseModel):
    timeout_s: float
    memory_mb: int
    cpus: float
    pids: int
    output_bytes: int = MAX_OUTPUT_BYTES


class Finished(BaseModel):
    exit_code: int | None
    duration_s: float
    timed_out: bool
    truncated: bool
    killed_by_signal: int | None


def rlimits(limits: Limits, *, nproc: bool) -> Callable[[], None]:
    """A preexec function applying the limits rlimits can hold."""

    def apply() -> None:
        mem = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        cpu = int(limits.timeout_s * max(limits.cpus, 1)) + 5
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_bytes * 4, limits.output_bytes * 4))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if nproc:  # RLIMIT_NPROC counts per uid and does nothing for root
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.pids, limits.pids))

    return apply


def kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


async def run_process(argv: list[str], *, cwd: Path, env: dict[str, str], out_dir: Path, limits: Limits,
                      preexec: Callable[[], None] | None, heartbeat: Callable[[str], None]) -> Finished:
    """Run ``argv`` in a new session, output straight to files; the caller's
    cancellation kills the tree too.

    Output goes to files rather than pipes so a detached grandchild holding a
    pipe can never keep the run waiting; a watcher kills the run when the
    output passes the cap.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = out_dir / "stdout.txt", out_dir / "stderr.txt"
    started = time.monotonic()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env=env, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=err,
            start_new_session=True, preexec_fn=preexec,
        )
    timed_out = truncated = False
    deadline = started + limits.timeout_s
    last_beat = started
    try:
        while True:
            now = time.monotonic()
            try:
                await asyncio.wait_for(asyncio.shield(proc.wait()), timeout=max(0.05, min(POLL_S, deadline - now)))
                break
            except asyncio.TimeoutError:
                pass
            now = time.monotonic()
            if now - last_beat >= HEARTBEAT_S:
                heartbeat(f"running for {now - started:.0f}s")
                last_beat = now
            if stdout_path.stat().st_size + stderr_path.stat().st_size > limits.output_bytes:
                truncated = True
                await terminate(proc)
                break
            if now >= deadline:
                timed_out = True
                await terminate(proc)
                break
    except asyncio.CancelledError:
        await terminate(proc)
        raise
    # The leader is gone; anything left in its group goes too.
    kill_group(proc.pid, signal.SIGKILL)
    for path in (stdout_path, stderr_path):
        if path.stat().st_size > limits.output_bytes:
            with open(path, "r+b") as f:
                f.truncate(limits.output_bytes)
                f.seek(0, 2)
                f.write(b"\n...[greenloop: output truncated]...\n")
    code = proc.returncode
    return Finished(
        exit_code=None if timed_out else (128 - code if code is not None and code < 0 else code),
        duration_s=time.monotonic() - started, timed_out=timed_out, truncated=truncated,
        killed_by_signal=-code if code is not None and code < 0 else None,
    )


async def terminate(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the group, wait the grace period, SIGKILL what is left."""
    kill_group(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), timeout=GRACE_S)
    except asyncio.TimeoutError:
        pass
    kill_group(proc.pid, signal.SIGKILL)
    await proc.wait()
