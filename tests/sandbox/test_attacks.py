"""Adversarial suite: every attack, on every backend that works here, with
nothing left running afterwards. An isolating backend (docker, bwrap) must
contain every attack; ``local`` must contain all but the ones its
``UNCONTAINED`` constant lists, and for those the test proves the attack
really goes through, so the warning never lies.

Attacks that would hurt this machine if they went through (a fork bomb as
root, remounting host paths as root) are not run where they are known not
to be contained; there the test checks the precondition instead.

No test sends a packet beyond loopback: "egress to the outside" is a UDP
connect() to 1.1.1.1:80, which only asks the kernel for a route (no packet
leaves), and fails with ENETUNREACH in a network namespace with no route.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from greenloop.sandbox import local
from greenloop.sandbox.process import GRACE_S

from .conftest import BACKENDS, assert_nothing_left, cgroups_delegable, processes_with, run_in

pytestmark = [pytest.mark.parametrize("backend", BACKENDS), pytest.mark.usefixtures("nothing_left")]


def uncontained(backend: str) -> set[str]:
    """The attacks this backend says it does not hold on this machine."""
    if backend != "local":
        return set()
    return set(local.UNCONTAINED) | (set(local.UNCONTAINED_WITHOUT_CGROUP) if "pids" not in cgroups_delegable()
                                     else set())


async def test_fork_bomb(backend, ws, tmp_path, token):
    if "fork_bomb" in uncontained(backend):
        r = await run_in(backend, "true", ws, tmp_path / "out")
        assert any(local.UNCONTAINED_WITHOUT_CGROUP["fork_bomb"] in w for w in r.warnings)
        return  # never set one off where nothing bounds it
    if backend == "bwrap" and "pids" not in cgroups_delegable() and os.getuid() == 0:
        pytest.fail("no pids cgroup here and root is not bound by RLIMIT_NPROC: bwrap cannot hold a fork bomb")
    r = await run_in(backend, f"b(){{ b | b & }}; b; sleep 30 # {token}", ws, tmp_path / "out",
                     pids=64, timeout_s=3)
    assert r.timed_out
    assert r.peak_pids is None or r.peak_pids <= 64
    assert_nothing_left(token)
    # The machine still forks: a plain run right after works.
    after = await run_in(backend, "echo alive", ws, tmp_path / "after")
    assert after.stdout_head == "alive\n"


async def test_memory_bomb_in_one_and_in_many_processes(backend, ws, tmp_path, token):
    one = await run_in(backend, "python3 -c 'b = []\nwhile True: b.append(b\"x\" * (8 << 20))'", ws,
                       tmp_path / "one", memory_mb=128)
    assert one.out_of_memory and one.exit_code != 0
    # Four processes of 60 MB each: per-process rlimits would let all through, a 128 MB bound must not.
    many = (f"for i in 1 2 3 4; do python3 -c 'import time; x = b\"x\" * (60 << 20); time.sleep(3)' {token} & "
            "done; wait; echo all-survived")
    r = await run_in(backend, many, ws, tmp_path / "many", memory_mb=128, timeout_s=20)
    if "memory" in cgroups_delegable() or backend == "docker":
        assert r.out_of_memory and "all-survived" in r.stdout_head  # the shell lives on; a bomb died
    assert_nothing_left(token)


async def test_tmp_fill(backend, ws, tmp_path, token):
    fill = 'head -c 48000000 /dev/zero > "$TMPDIR/fill"; stat -c %s "$TMPDIR/fill"'
    r = await run_in(backend, fill, ws, tmp_path / "out", tmpfs_mb=16, memory_mb=256)
    size = int(r.stdout_head.split()[-1])
    if "tmp_size" in uncontained(backend):
        assert size == 48_000_000
    else:
        assert size <= 16 * 2**20 and "No space left on device" in r.stderr_head


async def test_workspace_fill(backend, ws, tmp_path, token):
    # One huge file: cut at the per-file bound.
    big = await run_in(backend, "head -c 64000000 /dev/zero > big; echo rc=$?", ws, tmp_path / "big", disk_mb=24)
    assert (ws / "big").stat().st_size <= 24 * 2**20
    (ws / "big").unlink()
    # A flood of small files: the whole-filesystem watch stops it.
    flood = "i=0; while :; do head -c 2000000 /dev/zero > fill$i || exit 9; i=$((i+1)); done"
    r = await run_in(backend, flood, ws, tmp_path / "flood", disk_mb=24, memory_mb=512, timeout_s=30)
    written = sum(p.stat().st_size for p in ws.glob("fill*"))
    assert not r.timed_out and r.exit_code != 0
    assert r.disk_exceeded or backend == "docker"
    assert written < 1024 * 2**20, f"{written >> 20} MB written before the stop"
    assert big.exit_code != 0 or "rc=0" not in big.stdout_head


async def test_endless_output(backend, ws, tmp_path, token):
    r = await run_in(backend, f"yes {token} >&2 & yes {token}", ws, tmp_path / "out", output_bytes=1 << 20)
    assert r.truncated and not r.timed_out and r.duration_s < 15
    for path in (r.stdout_path, r.stderr_path):
        assert Path(path).stat().st_size <= (1 << 20) + 64
    assert_nothing_left(token)


async def test_network_egress(backend, ws, tmp_path, token):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    probe = ("import socket\n"
             "try:\n"
             f"    socket.create_connection(('127.0.0.1', {port}), 3); print('host-loopback: reached')\n"
             "except OSError as e: print('host-loopback:', e)\n"
             "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
             "try:\n"
             "    s.connect(('1.1.1.1', 80)); print('outside: routed')\n"
             "except OSError as e: print('outside:', e)\n")
    (ws / "probe.py").write_text(probe)
    r = await run_in(backend, "python3 probe.py", ws, tmp_path / "out", timeout_s=15)
    # The kernel completes a handshake into the backlog without accept(): a queued connection means reached.
    server.setblocking(False)
    try:
        reached = bool(server.accept())
    except BlockingIOError:
        reached = False
    server.close()
    if "network" in uncontained(backend):
        assert "host-loopback: reached" in r.stdout_head and reached
        assert "outside: routed" in r.stdout_head
    else:
        assert "host-loopback: reached" not in r.stdout_head and not reached
        assert "outside: [Errno 101] Network is unreachable" in r.stdout_head


async def test_host_secrets(backend, ws, tmp_path, token, monkeypatch):
    secret_file = Path.home() / f".{token}-credentials"
    secret_file.write_text(f"file-secret-{token}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"sk-ant-{token}")
    monkeypatch.setenv("WORKER_DATABASE_URL", f"postgres://db-{token}")
    try:
        command = (f"env; cat /proc/self/environ /proc/1/environ; cat {secret_file}; "
                   f"test -e /proc/{os.getpid()}/environ && echo WORKER-VISIBLE; true")
        r = await run_in(backend, command, ws, tmp_path / "out")
    finally:
        secret_file.unlink()
    out = Path(r.stdout_path).read_text(errors="replace")
    assert f"sk-ant-{token}" not in out and f"db-{token}" not in out  # the environment: held everywhere
    if "host_files" in uncontained(backend):
        assert f"file-secret-{token}" in out
    else:
        assert f"file-secret-{token}" not in out and "WORKER-VISIBLE" not in out


async def test_writing_outside_the_workspace(backend, ws, tmp_path, token):
    (tmp_path / "outside").mkdir()
    targets = [tmp_path / "outside" / token, ws.parent / f"{token}-sibling", Path.home() / f"{token}-written",
               Path("/usr/local") / f"{token}-written", Path("/etc") / f"{token}-written"]
    command = "; ".join(f"echo pwned > {t}" for t in targets) + "; echo inside > ok.txt"
    try:
        r = await run_in(backend, command, ws, tmp_path / "out")
        written = [t for t in targets if t.exists()]
    finally:
        for t in targets:
            t.unlink(missing_ok=True)
    assert (ws / "ok.txt").read_text() == "inside\n"  # the workspace itself is writable
    if "write_outside" in uncontained(backend):
        assert written, r.stderr_head
    else:
        assert written == []


async def test_process_ignoring_sigterm(backend, ws, tmp_path, token):
    stubborn = ("python3 -c 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)' "
                f"{token}")
    started = time.monotonic()
    r = await run_in(backend, f"{stubborn} & {stubborn}", ws, tmp_path / "out", timeout_s=1)
    assert r.timed_out and time.monotonic() - started < 1 + GRACE_S + 3
    assert_nothing_left(token)


async def test_detached_grandchildren(backend, ws, tmp_path, token):
    command = (f"setsid bash -c 'sleep 300' {token}-setsid & "
               f"nohup bash -c 'sleep 300' {token}-nohup >/dev/null 2>&1 & "
               "python3 -c 'import os, sys, time\n"
               "if os.fork(): os._exit(0)\n"
               "os.setsid()\n"
               "if os.fork(): os._exit(0)\n"
               f"time.sleep(300)' {token}-daemon; sleep 0.3; echo launched")
    r = await run_in(backend, command, ws, tmp_path / "out")
    assert r.exit_code == 0 and r.stdout_head == "launched\n"
    if "detached" in uncontained(backend):
        left = processes_with(token)
        for line in left:
            os.kill(int(line.split(":")[0]), 9)
        assert left
    else:
        assert_nothing_left(token)


async def test_remount_and_privileges(backend, ws, tmp_path, token):
    if "privileges" in uncontained(backend):
        # Do not remount the host's paths: prove the precondition instead.
        r = await run_in(backend, "id -u; grep CapEff /proc/self/status", ws, tmp_path / "out")
        uid, caps = r.stdout_head.split("\n")[:2]
        assert int(uid) == os.getuid()
        assert (int(caps.split()[-1], 16) != 0) == (os.getuid() == 0)
        return
    attempts = [
        "mount -o remount,rw /usr && echo BROKE-remount-usr",
        f"mount -o remount,rw,bind {ws}/.git && echo BROKE-remount-git",
        f"mount -t tmpfs none {ws}/.git && echo BROKE-mount-git",
        f"umount -l {ws}/.git && echo BROKE-umount-git",
        f"touch /usr/{token} && echo BROKE-write-usr",
        "unshare -rm sh -c 'mount -o remount,rw /usr' && echo BROKE-nested-userns",
        "chroot / true && echo BROKE-chroot",
    ]
    r = await run_in(backend, "; ".join(attempts) + "; true", ws, tmp_path / "out")
    assert "BROKE" not in r.stdout_head, r.stdout_head
    assert not Path(f"/usr/{token}").exists()


async def test_setuid_binaries_gain_nothing(backend, ws, tmp_path, token):
    command = ("cp \"$(command -v grep)\" ./sgrep && chmod 4755 ./sgrep; ./sgrep CapEff /proc/self/status; "
               "su root -s /bin/sh -c 'grep CapEff /proc/self/status' 2>&1; grep NoNewPrivs /proc/self/status")
    r = await run_in(backend, command, ws, tmp_path / "out")
    lines = r.stdout_head.splitlines()
    assert "NoNewPrivs:\t1" in lines  # setuid bits are ignored on every backend
    caps = [int(ln.split()[-1], 16) for ln in lines if ln.startswith("CapEff:")]
    assert caps, r.stdout_head
    if "privileges" in uncontained(backend) and os.getuid() == 0:
        assert any(caps)  # local keeps root's capabilities; nothing is gained, nothing was dropped
    else:
        assert not any(caps)


async def test_writing_git_hooks(backend, ws, tmp_path, token):
    config = (ws / ".git" / "config").read_text()
    command = ("printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
               "echo '[core] hooksPath = /tmp' >> .git/config; rm -rf .git/objects; true")
    await run_in(backend, command, ws, tmp_path / "out")
    hooked = (ws / ".git" / "hooks" / "pre-commit").exists()
    if "git_hooks" in uncontained(backend):
        assert hooked
    else:
        assert not hooked
        assert (ws / ".git" / "config").read_text() == config and (ws / ".git" / "objects").is_dir()


SUITE = '''
import os, socket, tempfile, threading, unittest

class Positive(unittest.TestCase):
    def test_loopback_server(self):
        srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
        threading.Thread(target=lambda: srv.accept()[0].sendall(b"pong"), daemon=True).start()
        self.assertEqual(socket.create_connection(srv.getsockname(), 5).recv(4), b"pong")

    def test_unix_socket_in_workspace(self):
        path = os.path.join(os.getcwd(), "app.sock")
        srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen()
        threading.Thread(target=lambda: srv.accept()[0].sendall(b"unix"), daemon=True).start()
        c = socket.socket(socket.AF_UNIX); c.connect(path)
        self.assertEqual(c.recv(4), b"unix")
        os.unlink(path)

    def test_temp_files(self):
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"x" * 1_000_000); f.flush()
            self.assertEqual(os.path.getsize(f.name), 1_000_000)

    def test_many_threads(self):
        done = []
        ts = [threading.Thread(target=done.append, args=(i,)) for i in range(200)]
        for t in ts: t.start()
        for t in ts: t.join()
        self.assertEqual(len(done), 200)
'''


async def test_a_real_suite_runs_normally(backend, ws, tmp_path, token):
    (ws / "test_positive.py").write_text(SUITE)
    r = await run_in(backend, "python3 -m unittest -v test_positive", ws, tmp_path / "out", pids=512)
    assert r.exit_code == 0, r.stderr_head
    assert "Ran 4 tests" in r.stderr_head and "OK" in r.stderr_head
