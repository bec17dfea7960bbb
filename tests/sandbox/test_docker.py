"""The docker backend against a real engine: images built locally, the
container's bounds (memory, processes, time, output, tmpfs), its isolation
(network, read-only root, non-root user, no capabilities, no secrets), the
workspace, and the warm pool (reuse, reset, replacement, stale cleanup).

Skipped only when no engine answers and none can be started here, outside
CI; in CI (``CI=true``) a missing engine fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import docker.errors
import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.sandbox import docker as backend
from greenloop.sandbox import images, pool
from greenloop.sandbox.environment import sandbox_env
from greenloop.sandbox.models import TRUNCATION_MARKER, Limits

from .conftest import IN_CI, TAG, assert_nothing_left

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / ".ci" / "setup-docker.sh"


@pytest.fixture(scope="module")
def api():
    """A live engine: started with .ci/setup-docker.sh when none answers and we are root."""
    ok, why = backend.available()
    if not ok and os.geteuid() == 0 and SETUP.exists():
        subprocess.run(["bash", str(SETUP)], check=False, timeout=300)
        backend._probe = None  # believe the new engine at once
        ok, why = backend.available()
    if not ok:
        if IN_CI:
            pytest.fail(f"CI needs a docker engine: {why}")
        pytest.skip(why)
    yield backend._client()
    backend.shutdown()  # the session may end with os._exit (tests/conftest.py): atexit would not run


async def run(api, command: str, ws: Path, out: Path, *, env: dict[str, str] | None = None, pooled: bool = False,
              **limits):
    base = dict(timeout_s=30, memory_mb=256, pids=128, tmpfs_mb=64)
    base.update(limits)
    return await backend.run(command, ws, env if env is not None else sandbox_env("/tmp"), Limits(**base), out,
                             lambda _: None, pooled=pooled)


def containers_for(api, ws: Path) -> list[dict]:
    """The sandbox containers made for workspace ``ws`` (any state)."""
    found = []
    for c in api.containers(all=True, filters={"label": pool.LABEL}):
        try:
            mounts = api.inspect_container(c["Id"])["Mounts"]
        except docker.errors.NotFound:  # another test's, removed since the listing: not left, not ours
            continue
        if any(m.get("Destination") == str(ws) for m in mounts):
            found.append(c)
    return found


# --- images ----------------------------------------------------------------------

def test_images_are_built_locally_once_and_labelled(api):
    tags = {name: images.ensure_image(name, client=api) for name in ("python", "node", "java", "rust", "cpp")}
    assert len(set(tags.values())) == 5
    images._known.clear()  # forget the in-process cache: the engine's copy must be found again
    started = time.monotonic()
    assert images.ensure_image("python", client=api) == tags["python"]
    assert time.monotonic() - started < 1.0
    info = api.inspect_image(tags["rust"])
    labels = info["Config"]["Labels"]
    assert labels[images.LABEL] == "rust"
    assert os.path.realpath(os.path.expanduser("~/.rustup")) in json.loads(labels["greenloop.sandbox.mounts"]) \
        or not os.path.isdir(os.path.expanduser("~/.rustup"))
    assert len(api.images(name=tags["python"])) == 1  # built once: one image under its content tag


@pytest.mark.parametrize(("marker", "probe"), [
    ("package.json", "node --version"),
    ("pom.xml", "java -version"),
    ("Cargo.toml", "cargo --version && rustc --version"),
    ("CMakeLists.txt", "g++ --version && cmake --version"),
])
async def test_each_toolchain_runs_from_its_image(api, tmp_path, marker, probe):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / marker).write_text("{}\n" if marker == "package.json" else "\n")
    r = await run(api, probe, ws, tmp_path / "out", memory_mb=512)
    assert r.exit_code == 0, r.stderr_head + r.stdout_head


async def test_the_demo_suite_runs_and_reports(api, tmp_path):
    ws = tmp_path / "demo"
    shutil.copytree(REPO / "samples" / "demo-python", ws, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    r = await run(api, "python -m pytest -q -p no:cacheprovider", ws, tmp_path / "out", memory_mb=512)
    assert r.exit_code == 1  # the demo's two real bugs
    assert "failed" in r.stdout_tail + r.stdout_head and "passed" in r.stdout_tail + r.stdout_head
    assert r.backend == "docker" and r.peak_memory_mb and r.peak_memory_mb > 5


# --- isolation ---------------------------------------------------------------------

async def test_non_root_no_capabilities_no_new_privileges_read_only_root(api, ws, tmp_path):
    probe = ("id -u; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status; "
             "for p in /etc/x /x /usr/x \"$(dirname \"$PWD\")/x\"; do touch $p 2>/dev/null && echo wrote $p; done; "
             "touch /tmp/ok && echo tmp-ok")
    r = await run(api, probe, ws, tmp_path / "out")
    lines = r.stdout_head.splitlines()
    assert lines[0] == "1000"  # root owns the workspace: the sandbox user, never root
    status = dict(line.split(":\t") for line in lines[1:5])
    assert status["CapEff"] == status["CapPrm"] == status["CapBnd"] == "0000000000000000"
    assert status["NoNewPrivs"] == "1"
    assert "wrote" not in r.stdout_head and "tmp-ok" in r.stdout_head


async def test_a_workspace_owned_by_a_user_runs_as_that_user(api, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chown(ws, 4242, 4343)
    r = await run(api, "id -u; id -g; echo made > new.txt", ws, tmp_path / "out")
    assert r.stdout_head.split() == ["4242", "4343"]
    assert (ws / "new.txt").stat().st_uid == 4242


async def test_workspace_is_writable_and_files_come_back_but_git_stays_read_only(api, ws, tmp_path):
    (ws / "sub").mkdir()
    (ws / "sub" / "old.txt").write_text("old\n")  # root's, 644: the sandbox must still write it
    r = await run(api, "echo new > sub/old.txt && mkdir -p build/x && echo out > build/x/f && "
                       "(touch .git/hooks/evil 2>/dev/null && echo hooked || echo git-read-only); pwd",
                  ws, tmp_path / "out")
    assert r.exit_code == 0, r.stderr_head
    assert (ws / "sub" / "old.txt").read_text() == "new\n" and (ws / "build" / "x" / "f").read_text() == "out\n"
    assert "git-read-only" in r.stdout_head and not (ws / ".git" / "hooks" / "evil").exists()
    assert r.stdout_head.splitlines()[-1] == str(ws)  # the host's path: parsers see the same paths
    assert (ws / ".git").stat().st_uid == 0 and (ws / "README").stat().st_uid == 0  # owners unchanged


async def test_only_the_allow_listed_environment_enters(api, ws, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-worker-secret")
    monkeypatch.setenv("GREENLOOP_WORKER_ONLY", "worker-value")
    env = sandbox_env("/tmp", {"APP_MODE": "test"}) | {"GITHUB_TOKEN": "ghp-passed-by-mistake"}
    r = await run(api, "env", ws, tmp_path / "out", env=env)
    seen = dict(line.split("=", 1) for line in r.stdout_head.splitlines() if "=" in line)
    assert seen["APP_MODE"] == "test" and seen["HOME"] == "/tmp"
    assert "ANTHROPIC_API_KEY" not in seen and "GITHUB_TOKEN" not in seen and "GREENLOOP_WORKER_ONLY" not in seen
    assert "sk-worker-secret" not in r.stdout_head and "ghp-passed" not in r.stdout_head
    docker_added = {"HOSTNAME", "PWD", "SHLVL", "_", "CARGO_HOME", "RUSTUP_HOME"}
    assert set(seen) - set(env) - docker_added <= {"HOME", "TMPDIR"}


async def test_no_network_but_loopback_works_inside(api, ws, tmp_path):
    # A server on the host's loopback: with network=none the container's loopback is its own.
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    probe = ("import os, socket, threading\n"
             "print(sorted(os.listdir('/sys/class/net')))\n"
             "s = socket.socket(); s.settimeout(2)\n"
             f"print('host', s.connect_ex(('127.0.0.1', {port})))\n"
             "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
             "threading.Thread(target=lambda: srv.accept()[0].sendall(b'pong'), daemon=True).start()\n"
             "c = socket.create_connection(srv.getsockname(), timeout=2); print('inside', c.recv(4))\n")
    (ws / "probe.py").write_text(probe)
    try:
        r = await run(api, "python3 probe.py", ws, tmp_path / "out")
    finally:
        server.close()
    lines = r.stdout_head.splitlines()
    assert lines[0] == "['lo']"  # no interface leads out
    assert lines[1] != "host 0"  # the host's loopback server is unreachable
    assert lines[2] == "inside b'pong'"


async def test_network_flag_shares_the_hosts_network(api, ws, tmp_path):
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    threading.Thread(target=lambda: server.accept()[0].sendall(b"hello from host"), daemon=True).start()
    probe = f"python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), 2).recv(64))\""
    try:
        r = await run(api, probe, ws, tmp_path / "out", network=True)
    finally:
        server.close()
    assert r.exit_code == 0 and "hello from host" in r.stdout_head, r.stderr_head


# --- limits --------------------------------------------------------------------------

async def test_memory_limit_flags_out_of_memory(api, ws, tmp_path):
    r = await run(api, "python3 -c 'x = bytearray(400 << 20); print(len(x))'", ws, tmp_path / "out", memory_mb=96)
    assert r.out_of_memory and r.killed_by_signal == 9 and r.exit_code == 137
    assert r.peak_memory_mb is not None and r.peak_memory_mb <= 96 + 1
    ok = await run(api, "python3 -c 'x = bytearray(20 << 20)'", ws, tmp_path / "ok", memory_mb=96)
    assert ok.exit_code == 0 and not ok.out_of_memory


async def test_process_limit_holds(api, ws, tmp_path, token):
    probe = ("import os, time\nmade = 0\nfor _ in range(200):\n    try:\n        pid = os.fork()\n"
             "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(5); os._exit(0)\n"
             "    made += 1\nprint(made)\n")
    (ws / "forks.py").write_text(probe)
    r = await run(api, f"python3 forks.py {token}", ws, tmp_path / "out", pids=32)
    assert 10 < int(r.stdout_head.split()[-1]) < 32
    assert_nothing_left(token)


async def test_timeout_kills_the_whole_tree_and_the_container(api, ws, tmp_path, token):
    started = time.monotonic()
    # The token in every process's environment: the check finds this run's sleeps, not another test's.
    r = await run(api, f"(sleep 300; echo {token}) & setsid sleep 301 & sleep 302 # {token}", ws,
                  tmp_path / "out", env={**sandbox_env("/tmp"), TAG: token}, timeout_s=2, pooled=True)
    assert r.timed_out and r.exit_code is None and time.monotonic() - started < 10
    assert_nothing_left(token)
    assert containers_for(api, ws) == []  # killed, not returned to the pool


async def test_cancellation_kills_the_container(api, ws, tmp_path, token):
    task = asyncio.create_task(run(api, f"sleep 300 # {token}", ws, tmp_path / "out", pooled=True))
    await asyncio.sleep(1.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_nothing_left(token)
    assert containers_for(api, ws) == []


async def test_output_is_capped_with_a_marker(api, ws, tmp_path):
    r = await run(api, "yes greenloop", ws, tmp_path / "out", output_bytes=64 * 1024)
    assert r.truncated and not r.timed_out and r.duration_s < 10 and r.killed_by_signal == 9
    data = Path(r.stdout_path).read_bytes()
    assert data.endswith(TRUNCATION_MARKER.encode()) and len(data) == 64 * 1024 + len(TRUNCATION_MARKER.encode())
    assert r.stdout_tail.endswith(TRUNCATION_MARKER)


async def test_tmp_is_a_bounded_tmpfs(api, ws, tmp_path):
    r = await run(api, "head -c 40000000 /dev/zero > /tmp/fill; stat -c %s /tmp/fill", ws, tmp_path / "out",
                  tmpfs_mb=8)
    assert int(r.stdout_head.split()[-1]) <= 8 * 2**20 and "No space left" in r.stderr_head


async def test_a_disk_flood_is_stopped_and_one_file_is_capped(api, ws, tmp_path):
    big = await run(api, "head -c 40000000 /dev/zero > big; echo rc=$?", ws, tmp_path / "big", disk_mb=16)
    assert (ws / "big").stat().st_size <= 16 * 2**20 and "rc=0" not in big.stdout_head
    (ws / "big").unlink()
    flood = "i=0; while :; do head -c 2000000 /dev/zero > fill$i || exit 9; i=$((i+1)); done"
    r = await run(api, flood, ws, tmp_path / "flood", disk_mb=16, timeout_s=30)
    assert r.disk_exceeded and not r.timed_out and r.killed_by_signal == 9 and r.exit_code == 137
    assert sum(p.stat().st_size for p in ws.glob("fill*")) < 1024 * 2**20


async def test_heartbeat_while_running(api, ws, tmp_path, monkeypatch):
    monkeypatch.setattr(backend, "HEARTBEAT_S", 0.3)
    beats: list[str] = []
    r = await backend.run("sleep 1.5", ws, sandbox_env("/tmp"), Limits(timeout_s=10), tmp_path / "out", beats.append)
    assert r.exit_code == 0 and len(beats) >= 2 and beats[-1].startswith("running for")


# --- the pool ------------------------------------------------------------------------

async def test_pool_reuses_a_container_and_resets_it_between_runs(api, ws, tmp_path, token):
    p = backend.warm_pool()
    reused = p.reused
    first = await run(api, f"echo $HOSTNAME; echo secret > /tmp/stale-file; echo shm > /dev/shm/stale-shm; "
                           f"mkdir -p /tmp/d/e; chmod 000 /tmp/d; (setsid sleep 400 {token} &) ; ls -A /tmp /dev/shm; echo ok",
                      ws, tmp_path / "one", pooled=True)
    assert first.stdout_head.split()[-1] == "ok"
    assert "stale-file" in first.stdout_head and "stale-shm" in first.stdout_head
    second = await run(api, "echo $HOSTNAME; ls -A /tmp /dev/shm; cat /proc/[0-9]*/comm 2>/dev/null | grep -x sleep "
                            "|| echo no-leftover", ws, tmp_path / "two", pooled=True)
    assert second.stdout_head.split()[0] == first.stdout_head.split()[0]  # the same container
    assert p.reused == reused + 1
    left = second.stdout_head.split()[1:]  # after the hostname: what /tmp and /dev/shm hold
    assert "stale-file" not in left and "stale-shm" not in left and "d" not in left
    assert second.stdout_head.rstrip().endswith("no-leftover")
    assert_nothing_left(f"sleep 400 {token}")
    assert len(containers_for(api, ws)) == 1  # kept warm for the next run


async def test_pool_without_pooling_leaves_no_container(api, ws, tmp_path):
    r = await run(api, "true", ws, tmp_path / "out", pooled=False)
    assert r.exit_code == 0 and containers_for(api, ws) == []


async def test_a_container_that_fails_its_reset_is_destroyed_and_replaced(api, ws, tmp_path):
    spec = backend.spec_for(ws.resolve(), Limits(memory_mb=128, pids=64, tmpfs_mb=16))
    p = pool.Pool(api, 2)
    box = p.acquire(spec.key(), lambda: backend.start_container(spec, "pool"))
    api.kill(box.id)  # a dead container cannot be reset
    assert p.release(box) is not None
    assert p.idle == [] and containers_for(api, ws) == []
    fresh = p.acquire(spec.key(), lambda: backend.start_container(spec, "pool"))
    assert fresh.id != box.id and p.release(fresh) is None and p.idle == [fresh]
    p.close()
    assert containers_for(api, ws) == []


async def test_pool_is_bounded_least_recently_used_out(api, tmp_path):
    p = pool.Pool(api, 2)
    boxes = []
    for i in range(3):
        ws = tmp_path / f"ws{i}"
        ws.mkdir()
        spec = backend.spec_for(ws, Limits(memory_mb=128, pids=64, tmpfs_mb=16))
        boxes.append(p.acquire(spec.key(), lambda: backend.start_container(spec, "pool")))
    for b in boxes:
        assert p.release(b) is None
    assert [b.id for b in p.idle] == [boxes[1].id, boxes[2].id]
    with pytest.raises(docker.errors.NotFound):
        api.inspect_container(boxes[0].id)
    p.close()
    for b in boxes:
        with pytest.raises(docker.errors.NotFound):
            api.inspect_container(b.id)


async def test_stale_containers_of_dead_workers_are_removed(api, ws, tmp_path):
    spec = backend.spec_for(ws.resolve(), Limits(memory_mb=64, pids=16, tmpfs_mb=8))
    mine = backend.start_container(spec, role="pool")
    dead_owner = f"{os.uname().nodename}:{2**22 + 17}:0"  # no such pid
    c = api.create_container(spec.image, command=["/bin/true"], labels={
        pool.LABEL: "pool", pool.OWNER_LABEL: dead_owner, pool.KEY_LABEL: spec.key()})
    other_host = api.create_container(spec.image, command=["/bin/true"], labels={
        pool.LABEL: "pool", pool.OWNER_LABEL: "another-machine:1:1", pool.KEY_LABEL: spec.key()})
    try:
        assert pool.remove_stale(api) >= 1
        with pytest.raises(docker.errors.NotFound):
            api.inspect_container(c["Id"])
        assert api.inspect_container(mine.id)["State"]["Running"]  # a live worker's container stays
        api.inspect_container(other_host["Id"])  # and so does another machine's
    finally:
        for cid in (mine.id, other_host["Id"]):
            api.remove_container(cid, force=True)


def test_shutdown_removes_the_warm_containers(api, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    asyncio.run(run(api, "true", ws, tmp_path / "out", pooled=True))
    assert len(containers_for(api, ws)) == 1
    backend.shutdown()
    assert containers_for(api, ws) == []


async def test_a_workspace_made_again_at_the_same_path_gets_a_fresh_container(api, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    first = await run(api, "echo $HOSTNAME", ws, tmp_path / "one", pooled=True)
    shutil.rmtree(ws)
    ws.mkdir()
    second = await run(api, "echo $HOSTNAME; echo here > f", ws, tmp_path / "two", pooled=True)
    assert second.stdout_head.split()[0] != first.stdout_head.split()[0]
    assert (ws / "f").read_text() == "here\n"  # written to the new directory, not the deleted one


def _image_of_host_bash(api, tag: str) -> str:
    """A local image of bash, sleep and their libraries copied from the host, and a marker file."""
    import io
    import tarfile

    files: set[str] = set()
    for binary in ("/bin/bash", "/bin/sleep", "/bin/cat"):
        real = os.path.realpath(binary)
        files.add(real)
        ldd = subprocess.run(["ldd", real], capture_output=True, text=True, check=True).stdout
        files.update(part for line in ldd.splitlines() for part in line.split() if part.startswith("/"))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        names = {(f"bin/{n}", os.path.realpath(f"/bin/{n}")) for n in ("bash", "sleep", "cat")}
        names |= {(name.lstrip("/"), os.path.realpath(path)) for path in files
                  for name in (path, os.path.realpath(path))}
        for arcname, real in sorted(dict(names).items()):
            tar.add(real, arcname=arcname)
        for d in ("tmp", "proc", "sys", "dev", "etc"):
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if d == "tmp" else 0o755
            tar.addfile(info)
        data = b"the project's own image\n"
        info = tarfile.TarInfo("etc/greenloop-test-image")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    repo, version = tag.split(":")
    api.import_image_from_data(buf.getvalue(), repository=repo, tag=version)
    return tag


async def test_a_configured_image_is_the_one_the_command_runs_in(api, tmp_path):
    from greenloop.sandbox.models import SandboxSettings

    tag = _image_of_host_bash(api, "greenloop-test-own-image:1")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text("from the workspace\n")
    settings = SandboxSettings(backend="docker", image=tag, timeout_s=30, memory_mb=256, pids=128, tmpfs_mb=64)
    try:
        done = await backend.run("cat /etc/greenloop-test-image data.txt; test -e /usr/bin/python3 || echo no-host-usr",
                                 ws, sandbox_env("/tmp"), settings, tmp_path / "out", lambda _: None)
        out = Path(done.stdout_path).read_text()
        assert done.exit_code == 0, (out, Path(done.stderr_path).read_text())
        # The image's own file, the workspace mounted, and none of the host's system trees.
        assert out.splitlines() == ["the project's own image", "from the workspace", "no-host-usr"]
        assert not containers_for(api, ws.resolve())  # never pooled: removed after the run
        with pytest.raises(GreenloopError) as caught:
            await backend.run("true", ws, sandbox_env("/tmp"), settings.model_copy(update={"image": "greenloop-no:such"}),
                              tmp_path / "out2", lambda _: None)
        assert "greenloop-no:such" in caught.value.message and caught.value.kind is ErrorKind.VALIDATION_ERROR
    finally:
        api.remove_image(tag, force=True)
