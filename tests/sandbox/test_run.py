"""The sandbox interface (``sandbox.run``): output excerpts and truncation,
exit codes, signals, timeouts, OOM, backend choice, environment — on real
backends with real processes."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from greenloop import sandbox
from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.sandbox import local, process
from greenloop.sandbox.local import UNCONTAINED
from greenloop.sandbox.models import EXCERPT_BYTES, TRUNCATION_MARKER, Limits

from .conftest import BACKENDS, IN_CI, assert_nothing_left, cgroups_delegable, processes_with, run_in

pytestmark = pytest.mark.usefixtures("nothing_left")
FAST = [b for b in BACKENDS if b != "docker"]  # the interface is shared; docker has its own tests too


def test_bwrap_works_here():
    ok, why = sandbox.backend_module("bwrap")[0].available()
    if not ok and not IN_CI:
        pytest.skip(why)
    assert ok, why


@pytest.mark.parametrize("backend", FAST)
async def test_head_and_tail_of_long_output(backend, ws, tmp_path):
    r = await run_in(backend, "seq 1 20000; seq 1 3 >&2", ws, tmp_path / "out")
    assert r.exit_code == 0 and not r.truncated
    assert r.stdout_head.startswith("1\n2\n3\n") and r.stdout_tail.endswith("19999\n20000\n")
    assert len(r.stdout_head.encode()) == EXCERPT_BYTES and len(r.stdout_tail.encode()) == EXCERPT_BYTES
    assert Path(r.stdout_path).read_text().count("\n") == 20000  # the file keeps everything
    assert (r.stderr_head, r.stderr_tail) == ("1\n2\n3\n", "")  # short output: all in the head


@pytest.mark.parametrize("backend", FAST)
async def test_output_past_the_limit_is_cut_with_a_marker(backend, ws, tmp_path):
    r = await run_in(backend, "while :; do echo spam; done", ws, tmp_path / "out", output_bytes=64 * 1024)
    assert r.truncated and not r.timed_out
    data = Path(r.stdout_path).read_bytes()
    assert len(data) == 64 * 1024 + len(TRUNCATION_MARKER) and data.endswith(TRUNCATION_MARKER.encode())
    assert r.stdout_tail.endswith(TRUNCATION_MARKER) and r.stdout_head.startswith("spam\n")
    assert any("output truncated" in w for w in r.warnings)


@pytest.mark.parametrize("backend", FAST)
async def test_exit_codes_and_signals(backend, ws, tmp_path):
    r = await run_in(backend, "echo out; echo err >&2; exit 3", ws, tmp_path / "a")
    assert (r.exit_code, r.killed_by_signal, r.timed_out) == (3, None, False)
    assert (r.stdout_head, r.stderr_head) == ("out\n", "err\n")
    r = await run_in(backend, "kill -KILL $$", ws, tmp_path / "b")
    assert (r.exit_code, r.killed_by_signal) == (137, 9)
    r = await run_in(backend, "true", ws, tmp_path / "c")
    assert r.exit_code == 0 and r.killed_by_signal is None and r.duration_s > 0


@pytest.mark.parametrize("backend", FAST)
async def test_timeout_kills_the_tree_grandchildren_included(backend, ws, tmp_path, token):
    command = f"(exec -a {token}-grandchild sleep 300) & bash -c 'sleep 300' {token}-child & sleep 300"
    started = time.monotonic()
    r = await run_in(backend, command, ws, tmp_path / "out", timeout_s=1)
    assert r.timed_out and r.exit_code is None and r.killed_by_signal is None
    assert time.monotonic() - started < 1 + process.GRACE_S + 2
    assert any("time limit" in w for w in r.warnings)
    assert_nothing_left(token)


@pytest.mark.parametrize("backend", FAST)
async def test_cancelling_the_caller_kills_the_tree(backend, ws, tmp_path, token):
    task = asyncio.ensure_future(run_in(backend, f"bash -c 'sleep 300' {token} & wait", ws, tmp_path / "out"))
    await asyncio.sleep(0.5)
    assert processes_with(token), "the command should be running before the cancel"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_nothing_left(token)


@pytest.mark.parametrize("backend", FAST)
async def test_out_of_memory_is_flagged(backend, ws, tmp_path):
    bomb = "python3 -c 'b = []\nwhile True: b.append(bytearray(8 << 20))'"
    r = await run_in(backend, bomb, ws, tmp_path / "out", memory_mb=96)
    assert r.out_of_memory and r.exit_code not in (0, None)
    assert any("out of memory" in w for w in r.warnings)
    if "memory" in cgroups_delegable():
        assert r.killed_by_signal == 9 and r.peak_memory_mb is not None and r.peak_memory_mb <= 96 + 1


@pytest.mark.parametrize("backend", FAST)
async def test_peak_resources_are_reported(backend, ws, tmp_path):
    r = await run_in(backend, "python3 -c 'x = bytearray(40 << 20); print(len(x))'", ws, tmp_path / "out")
    assert r.exit_code == 0
    have = cgroups_delegable()
    if "memory" in have:
        assert 40 <= r.peak_memory_mb < 256
    if "pids" in have:
        assert r.peak_pids is not None and r.peak_pids >= 1
    if have:
        assert r.cpu_s is not None and r.cpu_s > 0
    else:
        assert any("cgroups: cannot bound" in w for w in r.warnings)


@pytest.mark.parametrize("backend", FAST)
async def test_heartbeat_while_running(backend, ws, tmp_path, monkeypatch):
    monkeypatch.setattr(process, "HEARTBEAT_S", 0.2)
    beats: list[str] = []
    r = await sandbox.run("sleep 1", ws, {}, Limits(timeout_s=10), backend=backend, out_dir=tmp_path / "o",
                          heartbeat=beats.append)
    assert r.exit_code == 0 and len(beats) >= 2 and beats[0].startswith("running for")


@pytest.mark.parametrize("backend", FAST)
async def test_environment_is_the_allow_list_plus_what_the_caller_adds(backend, ws, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-worker-secret")
    monkeypatch.setenv("WORKER_ONLY_SETTING", "worker-value")
    r = await run_in(backend, "env", ws, tmp_path / "out",
                     env={"MY_FLAG": "on", "ANTHROPIC_API_KEY": "sk-ant-passed", "DB_PASSWORD": "hunter2"})
    env = dict(line.split("=", 1) for line in Path(r.stdout_path).read_text().splitlines() if "=" in line)
    assert env["MY_FLAG"] == "on" and env["CI"] == "true" and "PATH" in env
    for leaked in ("sk-ant-worker-secret", "sk-ant-passed", "hunter2", "worker-value"):
        assert leaked not in Path(r.stdout_path).read_text()
    assert any("ANTHROPIC_API_KEY, DB_PASSWORD" in w for w in r.warnings)


async def test_auto_picks_an_isolating_backend_and_says_why(ws, tmp_path):
    r = await sandbox.run("true", ws, {}, Limits(timeout_s=30), out_dir=tmp_path / "out")
    assert r.backend in ("docker", "bwrap") and r.backend_reason.startswith("auto: ")
    # Docker when its engine answered the run's probe (remembered for a while, so asking again gets
    # the run's answer: an engine too slow to answer at import time on a loaded machine may answer now).
    docker, _ = sandbox.backend_module("docker")
    assert r.backend == ("docker" if docker is not None and docker.available()[0] else "bwrap"), r.backend_reason
    assert not any("NO isolation" in w for w in r.warnings)


async def test_local_runs_only_by_name_and_says_what_it_does_not_hold(ws, tmp_path):
    r = await sandbox.run("true", ws, {}, Limits(timeout_s=10), backend="local", out_dir=tmp_path / "out")
    assert (r.backend, r.backend_reason.split(";")[0]) == ("local", "asked for by name")
    warning = next(w for w in r.warnings if "NO isolation" in w)
    assert all(why in warning for why in UNCONTAINED.values())
    assert all(why in local.warning(cgroup_missing=True) for why in local.UNCONTAINED_WITHOUT_CGROUP.values())
    assert (local.UNCONTAINED_WITHOUT_CGROUP["fork_bomb"] in warning) == ("pids" not in cgroups_delegable())


async def test_auto_fails_closed_when_nothing_isolates(ws, tmp_path, monkeypatch):
    # No bwrap on PATH and no Docker engine to answer: auto must refuse, not fall back to local.
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("bash", "sh", "true", "env"):
        os.symlink(shutil.which(tool), bare / tool)
    monkeypatch.setenv("PATH", str(bare))
    # Docker "not installed": the module cannot be imported (the dispatcher's real ImportError path;
    # an engine that stops answering cannot be staged here, a running one answers for the whole session).
    monkeypatch.setitem(sys.modules, "greenloop.sandbox.docker", None)
    with pytest.raises(GreenloopError) as err:
        await sandbox.run("true", ws, {}, Limits(timeout_s=5), out_dir=tmp_path / "out")
    assert err.value.kind == ErrorKind.PERMISSION_ERROR
    assert "docker backend not installed" in str(err.value) and "bwrap is not installed" in str(err.value)
    assert "--sandbox local" in str(err.value)
    assert not (tmp_path / "out" / "stdout.txt").exists()  # nothing ran
    with pytest.raises(GreenloopError) as err:
        await sandbox.run("true", ws, {}, Limits(timeout_s=5), backend="bwrap", out_dir=tmp_path / "out")
    assert err.value.kind == ErrorKind.PERMISSION_ERROR


async def test_unknown_backend_is_a_validation_error(ws, tmp_path):
    with pytest.raises(GreenloopError) as err:
        await sandbox.run("true", ws, {}, Limits(), backend="chroot", out_dir=tmp_path / "out")
    assert err.value.kind == ErrorKind.VALIDATION_ERROR


@pytest.mark.parametrize("backend", [b for b in FAST if b != "local"])
async def test_network_flag_opens_the_host_network(backend, ws, tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    threading.Thread(target=lambda: server.accept()[0].sendall(b"hello from host"), daemon=True).start()
    port = server.getsockname()[1]
    probe = f"python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', {port}), 2).recv(64))\""
    closed = await run_in(backend, probe, ws, tmp_path / "closed", timeout_s=10)
    opened = await run_in(backend, probe, ws, tmp_path / "open", timeout_s=10, network=True)
    server.close()
    assert closed.exit_code != 0 and "Connection refused" in closed.stderr_head
    assert opened.exit_code == 0 and "hello from host" in opened.stdout_head


@pytest.mark.parametrize("backend", FAST)
async def test_without_cgroups_rlimits_hold_memory_and_the_result_says_what_is_unbounded(
        backend, ws, tmp_path, monkeypatch):
    monkeypatch.setenv("GREENLOOP_SANDBOX_CGROUPS", "off")
    assert cgroups_delegable() == []
    bomb = "python3 -c 'b = []\nwhile True: b.append(bytearray(8 << 20))'"
    r = await run_in(backend, bomb, ws, tmp_path / "out", memory_mb=200)
    assert r.out_of_memory and "MemoryError" in r.stderr_tail + r.stderr_head  # RLIMIT_AS, not the OOM killer
    assert r.peak_memory_mb is None and r.peak_pids is None
    warning = next(w for w in r.warnings if w.startswith("cgroups: cannot bound pids, memory, cpu"))
    assert ("processes are unbounded" in warning) == (os.getuid() == 0)
