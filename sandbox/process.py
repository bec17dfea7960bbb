"""Run one command as its own process group (and, where the machine allows,
its own cgroup), stream its output to files (capped), enforce the
wall-clock, output and disk limits, and kill the whole tree on timeout or
cancellation (SIGTERM, a grace period, then SIGKILL to the group and to
every process of the cgroup, however it detached).

``run_process`` is what the bwrap and local backends share; ``result``
turns what happened into the ``ExecResult`` every backend returns.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import resource
import signal
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from .cgroup import RunCgroup
from .models import EXCERPT_BYTES, TRUNCATION_MARKER, ExecResult, Limits

GRACE_S = 2.0
HEARTBEAT_S = 5.0
POLL_S = 0.1
PR_SET_NO_NEW_PRIVS = 38
OOM_TEXT = ("MemoryError", "Cannot allocate memory", "out of memory", "OutOfMemoryError",
            "JavaScript heap out of memory")


class Finished(BaseModel):
    """How the process ended, before the backend dresses it as an ``ExecResult``."""

    returncode: int | None
    duration_s: float
    timed_out: bool = False
    truncated: bool = False
    disk_exceeded: bool = False
    peak_memory_mb: float | None = None
    peak_pids: int | None = None
    cpu_s: float | None = None
    cgroup_oom: bool = False
    cgroup_missing: list[str] = []


def preexec(limits: Limits, cgroup: RunCgroup | None) -> Callable[[], None]:
    """The child's setup before exec: join the run's cgroup, refuse setuid
    gains, and the rlimits for whatever the cgroup does not hold.

    RLIMIT_AS stands in for a memory cgroup only when there is none: it
    breaks runtimes that reserve address space (JVM, Go, V8). RLIMIT_NPROC
    counts per uid and does nothing for root; it is set anyway for non-root
    workers without a pids cgroup.
    """
    missing = set(cgroup.missing if cgroup else ("pids", "memory", "cpu"))
    nproc = "pids" in missing and os.getuid() != 0
    libc = ctypes.CDLL(None, use_errno=True)

    def apply() -> None:
        if cgroup is not None:
            cgroup.join()
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if "memory" in missing:
            mem = limits.memory_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        cpu = int(limits.timeout_s * max(limits.cpus, 1)) + 5
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        size = limits.disk_mb * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if nproc:
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.pids, limits.pids))

    return apply


def kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def free_bytes(path: Path | str) -> int:
    """Bytes free for unprivileged writers on the filesystem holding ``path``."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def strike(done: Finished, limits: Limits, *, output_over: bool, disk_used: int, now: float,
           deadline: float) -> bool:
    """Mark on ``done`` the first limit a running command has passed
    (output, then disk, then time); whether one has, so the run is killed."""
    if output_over:
        done.truncated = True
    elif disk_used > limits.disk_mb * 2**20:
        done.disk_exceeded = True
    elif now >= deadline:
        done.timed_out = True
    else:
        return False
    return True


async def run_process(argv: list[str], *, cwd: Path, env: dict[str, str], out_dir: Path, limits: Limits,
                      heartbeat: Callable[[str], None], disk_root: Path | None = None) -> Finished:
    """Run ``argv`` in a new session and cgroup, output straight to
    ``out_dir/stdout.txt`` and ``stderr.txt``; the caller's cancellation
    kills the tree too.

    Output goes to files rather than pipes so a detached grandchild holding a
    pipe can never keep the run waiting; a watcher kills the run when the
    output passes its cap or the filesystem under ``disk_root`` fills by more
    than ``limits.disk_mb`` (a whole-filesystem measure: it also catches a
    flood of small files, which RLIMIT_FSIZE cannot).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = out_dir / "stdout.txt", out_dir / "stderr.txt"
    cgroup = await asyncio.to_thread(RunCgroup.create, limits)
    free0 = free_bytes(disk_root) if disk_root else 0
    started = time.monotonic()
    done = Finished(returncode=None, duration_s=0.0, cgroup_missing=cgroup.missing)
    try:
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=str(cwd), env=env, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True, preexec_fn=preexec(limits, cgroup),
            )
        deadline = started + limits.timeout_s
        last_beat = started
        try:
            while True:
                now = time.monotonic()
                try:
                    await asyncio.wait_for(asyncio.shield(proc.wait()),
                                           timeout=max(0.02, min(POLL_S, deadline - now)))
                    break
                except asyncio.TimeoutError:
                    pass
                now = time.monotonic()
                if now - last_beat >= HEARTBEAT_S:
                    heartbeat(f"running for {now - started:.0f}s")
                    last_beat = now
                written = stdout_path.stat().st_size + stderr_path.stat().st_size
                disk_used = free0 - free_bytes(disk_root) if disk_root else 0
                if not strike(done, limits, output_over=written > limits.output_bytes, disk_used=disk_used, now=now,
                              deadline=deadline):
                    continue
                await terminate(proc, cgroup)
                break
        except asyncio.CancelledError:
            await terminate(proc, cgroup)
            raise
        # The leader is gone; anything left in its group or cgroup goes too.
        kill_group(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(cgroup.kill_all)
        done.returncode = proc.returncode
        done.duration_s = time.monotonic() - started
        done.peak_memory_mb = cgroup.peak_memory_mb()
        done.peak_pids = cgroup.peak_pids()
        done.cpu_s = cgroup.cpu_s()
        done.cgroup_oom = cgroup.oom_killed()
    finally:
        await asyncio.to_thread(cgroup.remove)
    for path in (stdout_path, stderr_path):
        if path.stat().st_size > limits.output_bytes:
            done.truncated = True
            with open(path, "r+b") as f:
                f.truncate(limits.output_bytes)
                f.seek(0, 2)
                f.write(TRUNCATION_MARKER.encode())
    return done


async def terminate(proc: asyncio.subprocess.Process, cgroup: RunCgroup | None = None) -> None:
    """SIGTERM the group, wait the grace period, SIGKILL the group and the cgroup."""
    kill_group(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), timeout=GRACE_S)
    except asyncio.TimeoutError:
        pass
    kill_group(proc.pid, signal.SIGKILL)
    if cgroup is not None:
        await asyncio.to_thread(cgroup.kill_all)
    await proc.wait()


def excerpt(path: Path) -> tuple[str, str]:
    """The first and last ``EXCERPT_BYTES`` of a file (the whole file when
    it is short enough, as head with an empty tail)."""
    if not path.exists():
        return "", ""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(EXCERPT_BYTES)
        if size <= EXCERPT_BYTES:
            return head.decode(errors="replace"), ""
        f.seek(max(EXCERPT_BYTES, size - EXCERPT_BYTES))
        return head.decode(errors="replace"), f.read().decode(errors="replace")


def signal_of(returncode: int | None) -> int | None:
    """The signal that ended the command: a negative return code, or the
    shell's (and bwrap's, docker's) 128+N convention."""
    if returncode is None:
        return None
    if returncode < 0:
        return -returncode
    if 128 < returncode <= 128 + signal.NSIG:
        return returncode - 128
    return None


def result(command: str, backend: str, done: Finished, out_dir: Path, limits: Limits,
           warnings: list[str]) -> ExecResult:
    """The ``ExecResult`` of a finished run, warnings included for every
    limit that struck and every bound that could not be enforced."""
    stdout_path, stderr_path = out_dir / "stdout.txt", out_dir / "stderr.txt"
    out_head, out_tail = excerpt(stdout_path)
    err_head, err_tail = excerpt(stderr_path)
    warnings = list(warnings)
    code = done.returncode
    exit_code = None if done.timed_out or code is None else (128 - code if code < 0 else code)
    sig = signal_of(code)
    # The cgroup's OOM count is authoritative; without one, the runtimes' own words.
    oom = done.cgroup_oom or (exit_code not in (0, None) and any(t in err_head + err_tail for t in OOM_TEXT))
    if done.cgroup_missing:
        warnings.append("cgroups: cannot bound " + ", ".join(done.cgroup_missing) + " here; rlimits only"
                        + (" (RLIMIT_NPROC does nothing for root: processes are unbounded)"
                           if "pids" in done.cgroup_missing and os.getuid() == 0 else ""))
    if done.truncated:
        warnings.append(f"output truncated at the sandbox's limit of {limits.output_bytes} bytes")
    if done.timed_out:
        warnings.append(f"killed after the time limit of {limits.timeout_s:g}s")
    if done.disk_exceeded:
        warnings.append(f"killed for writing more than {limits.disk_mb} MB to the workspace's filesystem")
    if oom:
        warnings.append(f"out of memory (limit {limits.memory_mb} MB)")
    return ExecResult(
        command=command, backend=backend, backend_reason="", exit_code=exit_code,
        stdout_path=str(stdout_path), stderr_path=str(stderr_path), stdout_head=out_head, stdout_tail=out_tail,
        stderr_head=err_head, stderr_tail=err_tail, truncated=done.truncated, duration_s=round(done.duration_s, 3),
        timed_out=done.timed_out, killed_by_signal=None if done.timed_out else sig, out_of_memory=oom,
        peak_memory_mb=done.peak_memory_mb, cpu_s=done.cpu_s, peak_pids=done.peak_pids,
        disk_exceeded=done.disk_exceeded, warnings=warnings,
    )
