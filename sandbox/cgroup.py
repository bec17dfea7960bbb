"""A per-run control group: it bounds what rlimits cannot (processes for
root, whole-tree memory, CPU share), tells peak memory and processes and
whether the OOM killer struck, and kills every process of the run however
it detached.

Both layouts are handled: cgroup v2 (one ``cgroup2`` mount) and v1/hybrid
(one mount per controller, plus an optional controller-less v2 mount whose
``cgroup.kill`` still kills a whole tree). Each controller is used where it
is delegable here; whatever is not is reported in ``missing`` so the caller
can fall back to rlimits and say so.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..settings import settings
from .models import Limits

CONTROLLERS = ("pids", "memory", "cpu")
CPU_PERIOD_US = 100_000
STALE_S = 300  # a run cgroup this old and empty is a leftover


@dataclass
class Hierarchy:
    """One mounted hierarchy: where it is, its version and its controllers."""

    mount: Path
    version: int
    controllers: frozenset[str]
    own: str  # this process's cgroup in it, relative to the mount


def hierarchies(mounts: str | None = None, own: str | None = None) -> list[Hierarchy]:
    """The cgroup hierarchies mounted here (from /proc/self/mounts and /proc/self/cgroup)."""
    mounts = mounts if mounts is not None else Path("/proc/self/mounts").read_text()
    paths = own_paths(own if own is not None else Path("/proc/self/cgroup").read_text())
    found = []
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[2] not in ("cgroup", "cgroup2"):
            continue
        mount = Path(parts[1])
        if parts[2] == "cgroup2":
            ctrl_file = mount / paths.get("<v2>", "/").lstrip("/") / "cgroup.controllers"
            ctrls = frozenset(ctrl_file.read_text().split()) if ctrl_file.exists() else frozenset()
            found.append(Hierarchy(mount, 2, ctrls, paths.get("<v2>", "/")))
        else:
            opts = set(parts[3].split(","))
            ctrls = frozenset(c for c in (*CONTROLLERS, "cpuacct") if c in opts)
            key = next((k for k in paths if k != "<v2>" and set(k.split(",")) & opts), None)
            if ctrls:
                found.append(Hierarchy(mount, 1, ctrls, paths.get(key or "", "/")))
    return found


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def read_int(path: Path | None) -> int | None:
    """A cgroup file holding one number; None when absent or not a number."""
    raw = (_read(path) or "").strip() if path is not None else ""
    return int(raw) if raw.isdigit() else None


def read_stat(path: Path | None, key: str) -> int | None:
    """One ``key value`` line of a cgroup file (``memory.events``, ``cpu.stat``...)."""
    for line in ((_read(path) or "") if path is not None else "").splitlines():
        k, _, v = line.partition(" ")
        if k == key and v.strip().isdigit():
            return int(v)
    return None


def own_paths(text: str) -> dict[str, str]:
    """A ``/proc/<pid>/cgroup`` file as {controllers: path}; the v2 entry under ``<v2>``."""
    paths: dict[str, str] = {}
    for line in text.splitlines():
        _, ctrls, path = line.split(":", 2)
        paths[ctrls or "<v2>"] = path
    return paths


@dataclass
class RunCgroup:
    """The cgroup(s) of one run. ``create`` makes them, the child joins in
    its preexec hook, ``kill_all`` ends everything in them, ``remove``
    deletes them (after killing whatever is left)."""

    dirs: list[tuple[Hierarchy, Path]] = field(default_factory=list)
    by_controller: dict[str, tuple[int, Path]] = field(default_factory=dict)
    kill_file: Path | None = None  # a v2 cgroup.kill, when there is one
    missing: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, limits: Limits) -> RunCgroup:
        """A fresh cgroup per hierarchy with the limits written; never raises
        (what cannot be made is listed in ``missing``)."""
        run = cls()
        name = f"greenloop-{uuid.uuid4().hex[:12]}"
        try:
            # GREENLOOP_SANDBOX_CGROUPS=off: leave cgroups to whoever manages them here (rlimits only).
            found = hierarchies() if settings().sandbox_cgroups else []
        except OSError:
            found = []
        for h in found:
            parent = h.mount / h.own.lstrip("/")
            if not parent.is_dir():
                parent = h.mount
            if h.version == 2:
                # Controllers reach a child only through the parent's subtree_control.
                for c in CONTROLLERS:
                    if c in h.controllers:
                        _write(parent / "cgroup.subtree_control", f"+{c}")
            _sweep(parent)
            path = parent / name
            try:
                path.mkdir()
            except OSError:
                continue
            run.dirs.append((h, path))
            if h.version == 2 and (path / "cgroup.kill").exists():
                run.kill_file = path / "cgroup.kill"
            for c in CONTROLLERS:
                if c not in run.by_controller and c in h.controllers and _apply(c, h.version, path, limits):
                    run.by_controller[c] = (h.version, path)
            if "cpuacct" in h.controllers and h.version == 1:
                run.by_controller.setdefault("cpuacct", (1, path))
        run.missing = [c for c in CONTROLLERS if c not in run.by_controller]
        return run

    def join(self) -> None:
        """Move the calling process into every cgroup of the run (call it in
        the child, before exec, so nothing it forks escapes)."""
        for _, path in self.dirs:
            fd = os.open(path / "cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def pids(self) -> set[int]:
        """Every process still in the run."""
        alive: set[int] = set()
        for _, path in self.dirs:
            alive |= {int(p) for p in (_read(path / "cgroup.procs") or "").split()}
        return alive

    def kill_all(self, wait_s: float = 3.0) -> bool:
        """SIGKILL everything in the run until nothing is left; True when empty."""
        deadline = time.monotonic() + wait_s
        while True:
            if self.kill_file is not None:
                _write(self.kill_file, "1")
            alive = self.pids()
            if not alive:
                return True
            if time.monotonic() > deadline:
                return False
            for pid in alive:  # v1: a fork racing the kill is caught on the next pass
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def peak_memory_mb(self) -> float | None:
        version, path = self.by_controller.get("memory", (0, None))
        raw = read_int(path / ("memory.peak" if version == 2 else "memory.max_usage_in_bytes")) if path else None
        return round(raw / 2**20, 1) if raw is not None else None

    def peak_pids(self) -> int | None:
        _, path = self.by_controller.get("pids", (0, None))
        return read_int(path / "pids.peak") if path else None

    def oom_killed(self) -> bool:
        version, path = self.by_controller.get("memory", (0, None))
        if path is None:
            return False
        return (read_stat(path / ("memory.events" if version == 2 else "memory.oom_control"), "oom_kill") or 0) > 0

    def cpu_s(self) -> float | None:
        if "cpuacct" in self.by_controller:
            raw = read_int(self.by_controller["cpuacct"][1] / "cpuacct.usage")
            return round(raw / 1e9, 3) if raw is not None else None
        for h, path in self.dirs:
            if h.version == 2:
                usec = read_stat(path / "cpu.stat", "usage_usec")
                if usec is not None:
                    return round(usec / 1e6, 3)
        return None

    def remove(self) -> None:
        """Kill what is left and delete the cgroups (retrying while the
        kernel finishes reaping)."""
        self.kill_all()
        for _, path in self.dirs:
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _sweep(parent: Path) -> None:
    """Remove run cgroups a dead worker left behind: old and empty ones only
    (rmdir refuses a populated cgroup, so a live run's is never touched)."""
    try:
        stale = [p for p in parent.glob("greenloop-*") if time.time() - p.stat().st_mtime > STALE_S]
    except OSError:
        return
    for path in stale:
        try:
            path.rmdir()
        except OSError:
            pass


def _apply(controller: str, version: int, path: Path, limits: Limits) -> bool:
    """Write one controller's limit; False when the files are not there."""
    if controller == "pids":
        return _write(path / "pids.max", str(limits.pids))
    if controller == "memory":
        mem = limits.memory_mb * 2**20
        if version == 2:
            ok = _write(path / "memory.max", str(mem))
            _write(path / "memory.swap.max", "0")
            return ok
        ok = _write(path / "memory.limit_in_bytes", str(mem))
        _write(path / "memory.memsw.limit_in_bytes", str(mem))  # no swapping around the limit
        return ok
    quota = max(1000, int(limits.cpus * CPU_PERIOD_US))
    if version == 2:
        return _write(path / "cpu.max", f"{quota} {CPU_PERIOD_US}")
    return _write(path / "cpu.cfs_period_us", str(CPU_PERIOD_US)) and _write(path / "cpu.cfs_quota_us", str(quota))
