"""A bounded pool of warm sandbox containers for the docker backend.

A pooled container idles with a tiny reaper as PID 1 (it waits on children
so orphans never pile up as zombies); each run is a ``docker exec`` in it.
Between runs the container is reset: every process but PID 1 is killed
(``kill(-1, SIGKILL)`` from inside reaches the whole PID namespace, however
a process detached) and ``/tmp`` and ``/dev/shm`` are emptied. A container
whose reset fails is destroyed, never reused.

Containers are keyed by everything fixed at creation (image, workspace,
user, limits): a run's workspace is bind-mounted when the container is
made, so a container serves one workspace — the suite runs of a fix loop
reuse it, a new workspace gets a fresh one. The pool holds at most
``size`` idle containers; the least recently used goes first.

Every container carries labels naming its owner (host, pid, process start
time), so a new worker removes what a dead one left (``remove_stale``),
and the pool removes its own at exit.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
from collections.abc import Callable

import docker
import docker.errors
from pydantic import BaseModel

log = logging.getLogger(__name__)

LABEL = "greenloop.sandbox.container"  # value: "pool" or "run"
OWNER_LABEL = "greenloop.sandbox.owner"
RESET_TIMEOUT_S = 10.0
KEY_LABEL = "greenloop.sandbox.key"

# PID 1 of every sandbox container: reaps whatever is re-parented to it and
# otherwise sleeps; it survives the reset's kill(-1) (PID 1 is exempt).
IDLE = """\
import os, signal
signal.signal(signal.SIGCHLD, lambda *_: None)
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
while True:
    try:
        os.wait()
    except ChildProcessError:
        signal.pause()
"""

# Run inside the container as the sandbox user between two runs.
RESET = """\
import os, sys, time
me = os.getpid()

def alive():
    left = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (1, me):
            try:
                with open(f"/proc/{name}/stat") as f:
                    state = f.read().rpartition(")")[2].split()[0]
            except OSError:
                continue
            if state != "Z":
                left.append(int(name))
    return left

deadline = time.monotonic() + 5
while True:
    try:
        os.kill(-1, 9)
    except ProcessLookupError:
        pass
    left = alive()
    if not left:
        break
    if time.monotonic() > deadline:
        sys.exit(f"processes survive the reset: {left}")
    time.sleep(0.01)

# The workspace and the read-only toolchain mounts (the worker's venv, say)
# may sit below /tmp at their host paths: the directories leading to them
# stay, the mounts themselves are never entered.
workspace = sys.argv[1] if len(sys.argv) > 1 else ""
mounts = {workspace}
with open("/proc/self/mountinfo") as f:
    for line in f:
        point = line.split()[4].replace("\\\\040", " ")
        if point.startswith(("/tmp/", "/dev/shm/")):
            mounts.add(point)
keep = set()
for p in mounts:
    while p not in ("", "/"):
        keep.add(p)
        p = os.path.dirname(p)

def wipe(path):
    try:
        entries = list(os.scandir(path))
    except PermissionError:
        os.chmod(path, 0o700)
        entries = list(os.scandir(path))
    for e in entries:
        if e.path in mounts:
            continue
        if e.path in keep:  # made by the engine, root's: nothing of the run's can be in it
            wipe(e.path)
        elif e.is_dir(follow_symlinks=False):
            os.chmod(e.path, 0o700)
            wipe(e.path)
            os.rmdir(e.path)
        else:
            os.unlink(e.path)

for root in ("/tmp", "/dev/shm"):
    if os.path.isdir(root):
        wipe(root)
        left = [n for n in os.listdir(root) if os.path.join(root, n) not in keep]
        if left:
            sys.exit(f"{root} is not empty after the reset: {left[:5]}")
"""


class Box(BaseModel):
    """One sandbox container."""

    id: str
    key: str  # what it was made for: containers with equal keys are interchangeable
    pid: int  # PID 1's pid on the host, for its cgroup
    user: str  # uid:gid the commands run as
    python: str  # the interpreter inside (the worker's) for the reset
    workdir: str  # the workspace, mounted at its own path
    runs: int = 0


def owner() -> str:
    """This process, as the owner label: host, pid and start time (pids are reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return "?"


def _owner_alive(label: str) -> bool:
    host, _, rest = label.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname():
        return True  # another machine's: not ours to judge
    return pid.isdigit() and _start_time(int(pid)) == started


def remove_stale(api: docker.APIClient) -> int:
    """Remove the sandbox containers (pooled or not) whose worker on this
    host is gone; how many."""
    removed = 0
    for c in api.containers(all=True, filters={"label": LABEL}):
        label = (c.get("Labels") or {}).get(OWNER_LABEL, "")
        if not _owner_alive(label):
            try:
                api.remove_container(c["Id"], force=True)
                removed += 1
            except docker.errors.NotFound:
                pass
    return removed


def destroy(api: docker.APIClient, box: Box) -> None:
    """Kill and remove a container; gone already is fine."""
    try:
        api.remove_container(box.id, force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise


def reset(api: docker.APIClient, box: Box, timeout_s: float = RESET_TIMEOUT_S) -> str | None:
    """Put a used container back to its idle state; None when done, else
    why not (a reset that hangs is given up after ``timeout_s``)."""
    answer: list[str | None] = []
    worker = threading.Thread(target=lambda: answer.append(_reset(api, box)), daemon=True,
                              name="greenloop-pool-reset")
    worker.start()
    worker.join(timeout_s)
    return answer[0] if answer else f"reset did not finish within {timeout_s:g}s"


def _reset(api: docker.APIClient, box: Box) -> str | None:
    try:
        ex = api.exec_create(box.id, [box.python, "-I", "-S", "-c", RESET, box.workdir], user=box.user, workdir="/")
        output = api.exec_start(ex["Id"])
        code = api.exec_inspect(ex["Id"]).get("ExitCode")
    except docker.errors.DockerException as exc:
        return f"reset failed: {exc}"
    if code != 0:
        return f"reset failed ({code}): {output.decode(errors='replace').strip()[-300:]}"
    return None


class Pool:
    """Warm containers by key. ``acquire`` gives one (warm, or new from
    its ``create``), ``release`` resets it and keeps it, or destroys it."""

    def __init__(self, api: docker.APIClient, size: int):
        self.api = api
        self.size = size
        self.idle: list[Box] = []  # least recently used first
        self.resetting: list[tuple[Box, threading.Event]] = []  # released, reset under way
        self.lock = threading.Lock()
        self.created = 0
        self.reused = 0
        self.closed = False
        remove_stale(api)
        atexit.register(self.close)

    def acquire(self, key: str, create: Callable[[], Box]) -> Box:
        """A container for ``key``: an idle one when there is one (waiting
        for one being reset), else a new one from ``create``."""
        while True:
            with self.lock:
                for i in range(len(self.idle) - 1, -1, -1):
                    if self.idle[i].key == key:
                        self.reused += 1
                        return self.idle.pop(i)
                waiting = next((done for b, done in self.resetting if b.key == key), None)
            if waiting is None or not waiting.wait(RESET_TIMEOUT_S + 1):
                break
        self.created += 1
        return create()

    def release(self, box: Box) -> str | None:
        """Reset ``box`` and keep it (evicting the least recently used past
        the bound), or destroy it when the reset fails; the failure, if any."""
        why = reset(self.api, box)
        evicted: list[Box] = []
        with self.lock:
            if why is None and not self.closed and self.size > 0:
                box.runs += 1
                self.idle.append(box)
                while len(self.idle) > self.size:
                    evicted.append(self.idle.pop(0))
            else:
                evicted.append(box)
        for b in evicted:
            destroy(self.api, b)
        if why is not None:
            log.warning("sandbox container %s discarded: %s", box.id[:12], why)
        return why

    def release_later(self, box: Box) -> None:
        """``release`` in the background: the run's result need not wait
        for the reset; the next ``acquire`` of the same key waits for it."""
        done = threading.Event()
        entry = (box, done)
        with self.lock:
            self.resetting.append(entry)

        def work() -> None:
            try:
                self.release(box)
            except Exception:  # noqa: BLE001 - the container is gone or going; the next acquire makes one
                log.exception("sandbox container %s: release failed", box.id[:12])
            finally:
                with self.lock:
                    self.resetting.remove(entry)
                done.set()

        threading.Thread(target=work, daemon=True, name="greenloop-pool-release").start()

    def close(self) -> None:
        """Destroy every idle container (at worker shutdown; also at exit)."""
        with self.lock:
            self.closed = True
            pending = [done for _, done in self.resetting]
        for done in pending:  # a closed pool destroys what it gets back
            done.wait(RESET_TIMEOUT_S + 1)
        with self.lock:
            idle, self.idle = self.idle, []
        for b in idle:
            try:
                destroy(self.api, b)
            except docker.errors.DockerException:
                pass
