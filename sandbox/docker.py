"""The docker backend: each command runs in a container of its toolchain's
image (``sandbox.images``) with no network (unless asked), a read-only
root, a size-bounded tmpfs ``/tmp``, the workspace bind-mounted at its own
path (so paths in the output match the host's, as with every backend), a
non-root user, every capability dropped, no new privileges, and memory (no
swap), CPU and process limits. Only the allow-listed environment given to
``run`` enters.

A run is a ``docker exec`` in a container that idles under a reaper; with
the pool (``GREENLOOP_DOCKER_POOL``, the number of warm containers; 0
turns it off) the container is reset and kept for the next run in the same
workspace (``sandbox.pool``), otherwise it is removed after the run. A
timeout, an output flood, a disk flood or the caller's cancellation kills
the whole container.

The docker SDK blocks, so every engine call runs in a thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
from pydantic import BaseModel

from ..domain.errors import ErrorKind, GreenloopError
from . import images, pool
from .cgroup import hierarchies, own_paths, read_int, read_stat
from .environment import is_secret
from .models import TRUNCATION_MARKER, ExecResult, Limits, Mount, SandboxSettings
from .process import Finished, free_bytes, result, strike
from ..settings import settings

HEARTBEAT_S = 5.0
CHECK_S = 0.25  # how often the limits and the command's own end are checked
PROBE_TIMEOUT_S = 2.0
TRUST_PROBE_S = (60.0, 10.0)  # how long a successful, a failed probe is believed
DEFAULT_POOL = 2

_lock = threading.Lock()
_probe: tuple[float, tuple[bool, str]] | None = None
_api: docker.APIClient | None = None
_pool: pool.Pool | None = None


class Spec(BaseModel):
    """Everything a sandbox container is made with; equal specs share pooled containers."""

    image: str
    toolchain: images.Toolchain
    workdir: str
    # A workspace deleted and made again at the same path is another
    # directory: a container still holds the old one's mount.
    workdir_inode: str
    uid: int
    gid: int
    memory_mb: int
    cpus: float
    pids: int
    tmpfs_mb: int
    disk_mb: int
    network: bool
    mounts: list[Mount] = []  # more host directories, at their own paths
    # A configured image (``SandboxSettings.image``): it brings its own system and
    # toolchains; its containers idle under docker's init and are never pooled
    # (the reset between runs needs Greenloop's Python inside).
    own_image: bool = False

    def key(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]


def engine() -> dict[str, object]:
    """Where the Docker engine is: ``DOCKER_HOST`` (and its TLS settings) as the docker CLI reads them."""
    return docker.utils.kwargs_from_env()


def _client(timeout: float = 60) -> docker.APIClient:
    global _api
    with _lock:
        if _api is None:
            _api = docker.APIClient(version="auto", timeout=timeout, **engine())
        return _api


def available() -> tuple[bool, str]:
    """Whether a Docker engine answers here (within ~2 s), and why not;
    the answer is remembered for a while (``TRUST_PROBE_S``)."""
    global _probe
    now = time.monotonic()
    if _probe is not None and now - _probe[0] < TRUST_PROBE_S[0 if _probe[1][0] else 1]:
        return _probe[1]
    try:
        api = docker.APIClient(version="auto", timeout=PROBE_TIMEOUT_S, **engine())
        info = api.version()
        answer = (True, f"docker engine {info.get('Version', '?')} answers")
    except Exception as exc:  # noqa: BLE001 - any failure means "not here"; the reason is reported
        answer = (False, f"no docker engine answers ({type(exc).__name__}: {str(exc)[:160]})")
    _probe = (now, answer)
    return answer


def pool_size() -> int:
    """Warm containers kept per worker (``GREENLOOP_DOCKER_POOL``; 0: no pool)."""
    return settings().docker_pool


def warm_pool() -> pool.Pool:
    """This worker's pool (made on first use; stale containers of dead workers are removed then)."""
    global _pool
    api = _client()
    with _lock:
        if _pool is None or _pool.closed:
            _pool = pool.Pool(api, pool_size())
        return _pool


def shutdown() -> None:
    """Remove this worker's warm containers (call at worker shutdown; also runs at exit)."""
    global _pool
    with _lock:
        p, _pool = _pool, None
    if p is not None:
        p.close()


def grant_workspace(workdir: Path, gid: int) -> None:
    """Let the sandbox group write the workspace a root worker owns: group
    ``gid`` and group write on every file and directory but ``.git`` (which
    stays read-only inside). The owner never changes (git refuses a
    repository whose owner is not the caller); symlinks are never followed.
    Only what needs it is touched, so a second call costs a walk of stats."""
    _grant(str(workdir), None, gid)
    for top, dirs, files, dfd in os.fwalk(workdir, follow_symlinks=False):
        if top == str(workdir) and ".git" in dirs:
            dirs.remove(".git")
        for name in (*dirs, *files):
            _grant(name, dfd, gid)


def _grant(name: str, dir_fd: int | None, gid: int) -> None:
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return
    mode = stat.S_IMODE(st.st_mode)
    want = mode | stat.S_IRGRP | stat.S_IWGRP | (stat.S_IXGRP if stat.S_ISDIR(st.st_mode) else 0)
    if st.st_gid != gid:
        os.chown(name, -1, gid, dir_fd=dir_fd, follow_symlinks=False)
    if want != mode or st.st_gid != gid:
        # After chown, which clears set-id bits. Nothing runs in the sandbox
        # now, so the entry checked above is the one changed.
        os.chmod(name, want, dir_fd=dir_fd)


def spec_for(workdir: Path, limits: Limits, mounts: list[Mount] | None = None) -> Spec:
    """The container spec for a run in ``workdir``: Greenloop's image of its
    toolchain (built if need be), or the image the run's settings name."""
    uid, gid = images.sandbox_user(workdir)
    own = limits.image if isinstance(limits, SandboxSettings) else None
    if own:
        toolchain, image = images.toolchain_of_image(own), images.local_image(own, client=_client())
    else:
        toolchain = images.toolchain(images.toolchain_for(workdir))
        image = images.ensure_image(toolchain.name, uid, gid, client=_client())
    st = os.stat(workdir)
    return Spec(image=image, toolchain=toolchain, workdir=str(workdir), workdir_inode=f"{st.st_dev}:{st.st_ino}",
                uid=uid, gid=gid, own_image=bool(own),
                memory_mb=limits.memory_mb, cpus=limits.cpus, pids=limits.pids, tmpfs_mb=limits.tmpfs_mb,
                disk_mb=limits.disk_mb, network=limits.network, mounts=mounts or [])


def start_container(spec: Spec, role: str = "run") -> pool.Box:
    """Create and start an idle sandbox container for ``spec``."""
    api = _client()
    binds = {m: {"bind": m, "mode": "ro"} for m in spec.toolchain.mounts}
    binds[spec.workdir] = {"bind": spec.workdir, "mode": "rw"}
    for m in spec.mounts:
        binds[m.path] = {"bind": m.path, "mode": "rw" if m.writable else "ro"}
    mem = spec.memory_mb * 2**20
    mounts = [docker.types.Mount(f, "/dev/null", type="bind", read_only=True) for f in spec.toolchain.masked]
    # network=True shares the host's network, as bwrap does: a bridge
    # would need the iptables NAT that CI's engine runs without.
    host = api.create_host_config(
        binds=binds, mounts=mounts or None, network_mode="host" if spec.network else "none", read_only=True,
        # /tmp is executable, as in bubblewrap: toolchains build and run their test binaries there (go test).
        tmpfs={"/tmp": f"size={spec.tmpfs_mb}m,mode=1777,nosuid,nodev,exec",
               "/dev/shm": f"size={min(spec.tmpfs_mb, 256)}m,mode=1777,nosuid,nodev"},
        cap_drop=["ALL"], security_opt=["no-new-privileges"], mem_limit=mem, memswap_limit=mem,
        init=spec.own_image or None,  # docker's init reaps orphans where Greenloop's reaper cannot run
        nano_cpus=int(spec.cpus * 1e9), pids_limit=spec.pids, ipc_mode="private",
        # The largest file a command may write (the whole-filesystem watch is in ``_exec``); no core dumps.
        ulimits=[docker.types.Ulimit(name="fsize", soft=spec.disk_mb * 2**20, hard=spec.disk_mb * 2**20),
                 docker.types.Ulimit(name="core", soft=0, hard=0)],
    )
    python = os.path.realpath(sys.executable)
    user = f"{spec.uid}:{spec.gid}"
    idle = ["sleep", "infinity"] if spec.own_image else [python, "-I", "-S", "-c", pool.IDLE]
    c = api.create_container(
        spec.image, command=idle, user=user, working_dir=spec.workdir,
        host_config=host, network_disabled=not spec.network, stop_signal="SIGKILL",
        labels={pool.LABEL: role, pool.OWNER_LABEL: pool.owner(), pool.KEY_LABEL: spec.key()},
    )
    box = pool.Box(id=c["Id"], key=spec.key(), pid=0, user=user, python=python, workdir=spec.workdir)
    try:
        api.start(c["Id"])
        box.pid = int(api.inspect_container(c["Id"])["State"]["Pid"] or 0)
    except docker.errors.DockerException:
        pool.destroy(api, box)
        raise
    return box


class Counters:
    """A container's cgroup as the host sees it (when the engine is local):
    OOM kills, peak memory and CPU time, read before and after each run."""

    def __init__(self, pid: int):
        self.dirs: dict[str, tuple[int, Path]] = {}
        try:
            paths = own_paths(Path(f"/proc/{pid}/cgroup").read_text()) if pid else {}
            found = hierarchies()
        except OSError:
            return
        for h in found:
            if h.version == 2:
                rel = paths.get("<v2>")
                ctrls = ("memory", "cpu", "pids")
            else:
                rel = next((v for k, v in paths.items() if k != "<v2>" and set(k.split(",")) & h.controllers), None)
                ctrls = tuple(h.controllers)
            if rel is None:
                continue
            d = h.mount / rel.lstrip("/")
            if d.is_dir():
                for c in ctrls:
                    self.dirs.setdefault(c, (h.version, d))

    def _file(self, controller: str, v1: str, v2: str) -> Path | None:
        """The controller's file by cgroup version (an empty name: none in that version)."""
        version, d = self.dirs.get(controller, (0, None))
        name = v1 if version == 1 else v2
        return d / name if d is not None and name else None

    def oom_kills(self) -> int | None:
        path = self._file("memory", "memory.oom_control", "memory.events")
        return read_stat(path, "oom_kill")

    def reset_peak(self) -> bool:
        """Restart the peak-memory count (cgroup v1 only); False when it cannot."""
        path = self._file("memory", "memory.max_usage_in_bytes", "")
        try:
            if path is not None:
                path.write_text("0")
                return True
        except OSError:
            pass
        return False

    def peak_memory_mb(self) -> float | None:
        raw = read_int(self._file("memory", "memory.max_usage_in_bytes", "memory.peak"))
        return round(raw / 2**20, 1) if raw is not None else None

    def cpu_ns(self) -> int | None:
        if "cpuacct" in self.dirs:
            return read_int(self.dirs["cpuacct"][1] / "cpuacct.usage")
        path = self._file("cpu", "", "cpu.stat")
        usec = read_stat(path, "usage_usec")
        return usec * 1000 if usec is not None else None


class Output:
    """Writes a run's two streams to files, both together capped at
    ``cap`` bytes: the stream that passes the cap gets what fits and the
    truncation marker, and the rest is dropped."""

    def __init__(self, out_dir: Path, cap: int):
        self.files = {1: open(out_dir / "stdout.txt", "wb"), 2: open(out_dir / "stderr.txt", "wb")}
        self.left = cap
        self.truncated = False
        self.done = threading.Event()
        self.error: BaseException | None = None

    def write(self, fd: int, data: bytes) -> None:
        """Write a chunk, or what fits of it and the marker."""
        if len(data) > self.left:
            self.files[fd].write(data[: self.left] + TRUNCATION_MARKER.encode())
            self.files[fd].flush()
            self.left = 0
            self.truncated = True
        else:
            self.files[fd].write(data)
            self.left -= len(data)

    def pump(self, stream) -> None:
        """Copy the exec's demultiplexed stream to the files until it ends or overflows."""
        try:
            for out, err in stream:
                # Past the cap the stream is still drained (and dropped): an
                # engine whose writes block cannot kill the container quickly.
                if out and not self.truncated:
                    self.write(1, out)
                if err and not self.truncated:
                    self.write(2, err)
        except Exception as exc:  # noqa: BLE001 - a broken stream after the container is killed is expected
            self.error = exc
        finally:
            self.close()
            self.done.set()

    def close(self) -> None:
        for f in self.files.values():
            f.close()


async def run(command: str, workdir: Path, env: dict[str, str], limits: Limits, out_dir: Path,
              heartbeat: Callable[[str], None], *, pooled: bool | None = None,
              mounts: list[Mount] | None = None) -> ExecResult:
    """Run ``bash -c command`` in ``workdir`` inside a sandbox container;
    output to ``out_dir/stdout.txt`` and ``stderr.txt``. ``pooled``
    overrides the pool setting (``GREENLOOP_DOCKER_POOL``) for this run."""
    ok, why = available()
    if not ok:
        raise GreenloopError(why, kind=ErrorKind.PERMISSION_ERROR)
    out_dir.mkdir(parents=True, exist_ok=True)
    workdir = workdir.resolve()
    use_pool = pool_size() > 0 if pooled is None else pooled
    started = time.monotonic()
    api = _client()
    try:
        spec = await asyncio.to_thread(spec_for, workdir, limits, mounts)
        if os.geteuid() == 0:
            await asyncio.to_thread(grant_workspace, workdir, spec.gid)
            for m in spec.mounts:
                if m.writable:
                    await asyncio.to_thread(grant_workspace, Path(m.path), spec.gid)
        use_pool = use_pool and not spec.own_image
        if use_pool:
            box = await asyncio.to_thread(warm_pool().acquire, spec.key(), lambda: start_container(spec, "pool"))
        else:
            box = await asyncio.to_thread(start_container, spec)
    except docker.errors.DockerException as exc:
        raise GreenloopError(f"the docker sandbox could not start a container: {exc}",
                             kind=ErrorKind.PERMISSION_ERROR) from exc
    killed = True  # until the run ends by itself; a killed container is never reused
    try:
        done, killed = await _exec(api, box, command, _env(env, spec), spec, limits, out_dir, heartbeat, started)
    except docker.errors.DockerException as exc:
        raise GreenloopError(f"the docker sandbox failed during the run: {exc}",
                             kind=ErrorKind.PERMISSION_ERROR) from exc
    finally:
        if use_pool and not killed:
            warm_pool().release_later(box)
        else:
            await asyncio.to_thread(pool.destroy, api, box)
    done.duration_s = time.monotonic() - started
    return result(command, "docker", done, out_dir, limits, [])


def _env(env: dict[str, str], spec: Spec) -> dict[str, str]:
    """The command's environment: the allow-list given (secrets dropped
    again, in case), the toolchain's variables, HOME and TMPDIR in /tmp."""
    out = {k: v for k, v in env.items() if not is_secret(k)}
    out.update(spec.toolchain.env)
    out["HOME"] = out["TMPDIR"] = "/tmp"
    path = out.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":")
    out["PATH"] = ":".join([p for p in spec.toolchain.path if p not in path] + path)
    return out


async def _exec(api: docker.APIClient, box: pool.Box, command: str, env: dict[str, str], spec: Spec,
                limits: Limits, out_dir: Path, heartbeat: Callable[[str], None],
                started: float) -> tuple[Finished, bool]:
    """Run the command in ``box``; (what happened, whether the container was killed)."""
    counters = Counters(box.pid)
    peak_known = box.runs == 0 or counters.reset_peak()
    oom0 = counters.oom_kills()
    cpu0 = counters.cpu_ns()
    free0 = free_bytes(spec.workdir)
    done = Finished(returncode=None, duration_s=0.0)
    output = Output(out_dir, limits.output_bytes)
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()

    def start() -> str:
        ex = api.exec_create(box.id, ["/bin/bash", "-c", command], user=box.user, environment=env,
                             workdir=spec.workdir)
        stream = api.exec_start(ex["Id"], stream=True, demux=True)

        def pump() -> None:
            output.pump(stream)
            loop.call_soon_threadsafe(ended.set)

        threading.Thread(target=pump, daemon=True, name="greenloop-docker-output").start()
        return ex["Id"]

    try:
        exec_id = await asyncio.to_thread(start)
    except BaseException:
        output.close()
        raise
    deadline = time.monotonic() + limits.timeout_s
    last_beat = time.monotonic()
    killed = False
    try:
        while True:
            try:
                await asyncio.wait_for(ended.wait(), timeout=CHECK_S)
            except asyncio.TimeoutError:
                pass
            now = time.monotonic()
            if now - last_beat >= HEARTBEAT_S:
                heartbeat(f"running for {now - started:.0f}s")
                last_beat = now
            if not strike(done, limits, output_over=output.truncated, disk_used=free0 - free_bytes(spec.workdir),
                          now=now, deadline=deadline):
                if ended.is_set():
                    break
                # The stream also stays open while a background child holds
                # the output: when the command itself is done, its leftovers go.
                info = await asyncio.to_thread(api.exec_inspect, exec_id)
                if not info.get("Running"):
                    await asyncio.to_thread(pool.reset, api, box)
                continue
            killed = True
            await asyncio.to_thread(pool.destroy, api, box)
            done.returncode = -9  # SIGKILL, as the process backends report a kill
            break
    except asyncio.CancelledError:
        await asyncio.to_thread(pool.destroy, api, box)
        raise
    if not killed:
        info = await asyncio.to_thread(api.exec_inspect, exec_id)
        done.returncode = info.get("ExitCode")
    await asyncio.to_thread(output.done.wait, 5)
    oom1 = counters.oom_kills()
    done.cgroup_oom = oom0 is not None and oom1 is not None and oom1 > oom0
    if not killed:
        done.peak_memory_mb = counters.peak_memory_mb() if peak_known else None
        cpu1 = counters.cpu_ns()
        done.cpu_s = round((cpu1 - cpu0) / 1e9, 3) if cpu0 is not None and cpu1 is not None else None
    return done, killed
