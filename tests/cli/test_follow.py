"""Following a run through what happens to it meanwhile, as users do it: the real
``greenloop`` in a subprocess, a real dev server, the scripted LLM.

- The Temporal server is killed and restarted (same port, same database file)
  during ``greenloop run``: the command reconnects, says so, and exits with the
  run's outcome.
- Ctrl-C (SIGINT) on ``greenloop run --scripted``: the run is paused (its worker
  was that command) and the command says how to resume or abort it; ``status``
  gives the hint that works; ``greenloop resume`` serves it with its scripted LLM
  and follows it to green.
- Ctrl-C on ``greenloop watch``: the run goes on on its worker; the command says
  how to re-attach.
- The next ``greenloop run --scripted`` of the same repository (an interrupted ``make demo``
  run again) names the paused run first, with the commands that finish or drop it.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import yaml

from greenloop.domain.states import RunOutcome
from greenloop.server import dev
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from tests.cli.test_run import DEMO, GREENLOOP, SCENARIO, cli_env, greenloop
from tests.conftest import REPO

RUN_LINE = re.compile(r"^run (greenloop-\S+)$", re.M)


def slow_scenario(tmp_path: Path, delay_s: float) -> Path:
    """The demo's scenario, every fixer's first answer coming after ``delay_s``: a run that takes a while."""
    sc = yaml.safe_load(SCENARIO.read_text())
    for rule in sc["rules"]:
        if rule["trigger"].get("role") == "fixer" and rule["trigger"].get("turn") == 1:
            rule["response"]["delay_s"] = delay_s
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(sc))
    return path


class Command:
    """A ``greenloop`` command running in the background, its output in files."""

    def __init__(self, tmp_path: Path, name: str, *args: str) -> None:
        self.out, self.err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen([*GREENLOOP, *args], cwd=REPO, stdout=out, stderr=err,
                                         env=cli_env(tmp_path / "data"))

    @property
    def stdout(self) -> str:
        return self.out.read_text()

    @property
    def stderr(self) -> str:
        return self.err.read_text()

    def wait_for(self, pattern: str, timeout_s: float = 120, stderr: bool = False) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if found := re.search(pattern, self.stderr if stderr else self.stdout, re.M):
                return found
            assert self.proc.poll() is None, f"exited with {self.proc.returncode}: {self.stderr[-2000:]}"
            time.sleep(0.2)
        raise AssertionError(f"never printed {pattern!r}: {self.stdout[-2000:]}")

    def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=90)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A dev server of the test's own, on a fixed port with its database in a file: it can be
    killed and started again with everything it had."""

    def __init__(self, tmp_path: Path) -> None:
        self.port, self.db, self.log = free_port(), tmp_path / "temporal.db", tmp_path / "server.log"
        self.proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(dev.command(self.port, None, self.db), stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while not dev.listening(self.port):
            assert self.proc.poll() is None and time.monotonic() < deadline, self.log.read_text()[-2000:]
            time.sleep(0.1)
        time.sleep(1.0)  # listening comes a moment before the frontend answers

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def test_run_outlives_a_restart_of_the_server_and_exits_with_the_runs_outcome(tmp_path):
    server = Server(tmp_path)
    server.start()
    run = None
    try:
        run = Command(tmp_path, "run", "run", str(DEMO), "--scripted", str(slow_scenario(tmp_path, 3.0)),
                      "--address", server.address)
        run.wait_for(r"^  tests/\S+: (ANALYZING|FIXING)$")  # the run is under way
        server.kill()
        time.sleep(15)  # longer than the SDK's own retries of a call last: the follower sees the server gone
        server.start()
        code = run.proc.wait(timeout=280)
    finally:
        if run is not None:
            run.stop()
        server.kill()
    assert code == 0, run.stderr[-3000:]  # the run's outcome (green), not an internal error
    assert "reconnecting:" in run.stderr and "reconnected" in run.stderr, run.stderr[-3000:]
    assert "completed: fixed 3, skipped 0, escalated 0, flaky 0, still failing 0" in run.stdout, run.stdout[-2000:]
    assert "retried" not in run.stdout  # the SDK's own retries are not printed in the middle of the output
    assert "Traceback" not in run.stderr and "internal" not in run.stderr


def interrupted_run(temporal_env, tmp_path: Path) -> tuple[str, str, Command]:
    """A scripted `greenloop run` stopped by Ctrl-C while a test is FIXING: (address, run id, the
    command), after asserting it exited 130. Nothing serves the run any more."""
    address = temporal_env.client.service_client.config.target_host
    run = Command(tmp_path, "run", "run", str(DEMO), "--scripted", str(slow_scenario(tmp_path, 2.0)),
                  "--address", address)
    try:
        run_id = run.wait_for(RUN_LINE.pattern).group(1)
        run.wait_for(r"^  tests/\S+: FIXING$")
        code = run.interrupt()
    finally:
        run.stop()
    assert code == 130
    return address, run_id, run


async def test_ctrl_c_pauses_a_scripted_run_and_resume_finishes_it(temporal_env, tmp_path):
    address, run_id, run = interrupted_run(temporal_env, tmp_path)
    said = run.stderr
    assert f"run {run_id} is paused" in said, said
    assert f"greenloop resume {run_id} --address {address}" in said, said
    assert f"greenloop abort {run_id} --address {address}" in said
    assert "Traceback" not in said

    # Nothing serves it now: status says so, with the command that does.
    status = greenloop("status", run_id, "--address", address, data_home=tmp_path / "data")
    assert status.returncode == 2 and f"greenloop resume {run_id}" in status.stderr, status.stderr

    resumed = greenloop("resume", run_id, "--address", address, "--json", data_home=tmp_path / "data")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads(resumed.stdout)
    assert summary["run_id"] == run_id and len(summary["fixed"]) == 3 and summary["final"]["failed"] == 0


async def test_abort_of_a_run_nobody_serves_serves_it_and_ends_it(temporal_env, tmp_path):
    """The printed `greenloop abort RUN` works after Ctrl-C: no worker serves the run, so the
    command serves it itself until the abort has rolled back and reported (it hung before),
    even when the run's scenario is gone (an abort asks no model)."""
    address, run_id, _ = interrupted_run(temporal_env, tmp_path)
    (tmp_path / "slow.yaml").unlink()
    aborted = greenloop("abort", run_id, "--address", address, data_home=tmp_path / "data")
    assert aborted.returncode == 0, aborted.stderr[-3000:]
    assert f"no worker serves run {run_id}: this command serves it until it has ended" in aborted.stdout
    summary = await temporal_env.client.get_workflow_handle_for(FixSuiteWorkflow.run, run_id).result()
    assert summary.state == RunOutcome.ABORTED and summary.report_markdown
    again = greenloop("abort", run_id, "--address", address, data_home=tmp_path / "data")
    assert again.returncode == 2 and f"run {run_id} has already ended" in again.stderr, again.stderr


async def test_ctrl_c_on_watch_leaves_the_run_going(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    run = Command(tmp_path, "run", "run", str(DEMO), "--scripted", str(slow_scenario(tmp_path, 2.0)),
                  "--address", address)
    watch = None
    try:
        run_id = run.wait_for(RUN_LINE.pattern).group(1)
        watch = Command(tmp_path, "watch", "watch", run_id, "--address", address)
        watch.wait_for(r"^  tests/\S+: \w+$")
        code = watch.interrupt()
        assert code == 130
        assert f"run {run_id} goes on" in watch.stderr, watch.stderr
        assert f"greenloop watch {run_id} --address {address}" in watch.stderr
        assert run.proc.wait(timeout=280) == 0, run.stderr[-3000:]  # it went on, to green
    finally:
        run.stop()
        if watch is not None:
            watch.stop()


async def test_the_next_scripted_run_names_an_interrupted_one(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    scenario = slow_scenario(tmp_path, 2.0)
    first = Command(tmp_path, "first", "run", str(DEMO), "--scripted", str(scenario), "--address", address)
    second = None
    runs: list[str] = []  # this test's runs only: other tests drive the same sample at the same time
    try:
        paused = first.wait_for(RUN_LINE.pattern).group(1)
        runs.append(paused)
        first.wait_for(r"^  tests/\S+: FIXING$")
        assert first.interrupt() == 130
        second = Command(tmp_path, "second", "run", str(DEMO), "--scripted", str(scenario), "--address", address)
        started = second.wait_for(RUN_LINE.pattern).group(1)
        runs.append(started)
        # Said before the new run started (its first lines), the paused one only: never the new one.
        said = " ".join(second.stderr.split())
        rid = f"{paused} --address {address}"
        assert f"run {paused} of this repository was interrupted and is paused" in said, said
        assert f"To finish it: `greenloop resume {rid}`" in said
        assert f"`greenloop resume {rid}`, then in another terminal `greenloop abort {rid}`" in said
        assert started != paused and f"run {started} of this repository" not in said
        assert second.interrupt() == 130
    finally:
        first.stop()
        if second is not None:
            second.stop()
        for run_id in runs:
            with contextlib.suppress(Exception):  # already ended
                await temporal_env.client.get_workflow_handle(run_id).terminate("test over")
