"""The CLI as people meet it, as a real process: every mistake and every failed run
is said (the cause and the next step) without a Python traceback and with a
non-zero exit; test ids print literally and the printed ``answer`` command works;
a run nobody can progress says so within seconds."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO

SCENARIOS = REPO / "samples" / "scenarios"
DEMO = REPO / "samples" / "demo-python"


def env_for(data_home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GREENLOOP_", "TEMPORAL_"))}
    env["XDG_DATA_HOME"] = str(data_home)
    env.update(extra)
    return env


def greenloop(*args: str, data_home: Path, timeout: float = 280, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "greenloop.cli.main", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env=env_for(data_home, **extra))


def start(*args: str, data_home: Path, **extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "greenloop.cli.main", *args], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_for(data_home, **extra))


def said_well(done: subprocess.CompletedProcess, *words: str, code: int = 2) -> None:
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    assert done.returncode == code, out
    for w in words:
        assert w in out, out


def read_until(stream, needle: str, timeout_s: float) -> list[str]:
    """Lines of ``stream`` up to the first that holds ``needle``."""
    lines, deadline = [], time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"{needle!r} never came; got:\n{''.join(lines)}")


def test_user_mistakes_are_said_with_the_next_step(tmp_path):
    (tmp_path / "empty").mkdir()
    scenario = str(SCENARIOS / "demo-python.yaml")
    said_well(greenloop("run", str(tmp_path / "empty"), "--scripted", scenario, data_home=tmp_path),
              "is empty", "hint:")
    said_well(greenloop("run", str(DEMO), "--max-attempts", "20", "--scripted", scenario, data_home=tmp_path),
              "--max-attempts", "less than or equal to 10", "--help")
    said_well(greenloop("run", str(DEMO), "--timeout", "0", "--scripted", scenario, data_home=tmp_path),
              "--timeout", "greater than", "(got 0)")
    said_well(greenloop("status", "some-run", "--address", "127.0.0.1:1", data_home=tmp_path, timeout=60),
              "no Temporal server reachable at 127.0.0.1:1", "greenloop server")


def test_a_sandbox_that_does_not_work_here_is_refused_before_the_run_starts(tmp_path):
    """--sandbox docker with no engine answering: exit 2 with what to do, no server or run started."""
    scenario = str(SCENARIOS / "demo-python.yaml")
    started = time.monotonic()
    done = greenloop("run", str(DEMO), "--sandbox", "docker", "--scripted", scenario, data_home=tmp_path,
                     timeout=120, DOCKER_HOST=f"unix://{tmp_path}/no-docker.sock")
    said_well(done, "the docker sandbox is not available here", "start the Docker engine", "--sandbox bwrap")
    assert "run " not in done.stdout and time.monotonic() - started < 60
    assert not (tmp_path / "greenloop" / "temporal").exists()  # no embedded server was started


def test_the_local_sandbox_says_it_does_not_isolate(tmp_path):
    from greenloop.cli.runs import check_sandbox

    done = subprocess.run([sys.executable, "-c", "from greenloop.cli.runs import check_sandbox; "
                           "check_sandbox('local')"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0 and "without isolation" in done.stderr
    check_sandbox("local", quiet=True)  # --json: nothing printed, nothing refused


async def test_schedule_names_that_exist_or_are_missing(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    name = f"dup-{uuid.uuid4().hex[:6]}"
    create = ("schedule", "create", name, str(DEMO), "--every", "24h", "--address", address)
    said_well(greenloop(*create, data_home=tmp_path), code=0)
    try:
        said_well(greenloop(*create, data_home=tmp_path), f"a schedule named '{name}' exists already", "delete")
    finally:
        said_well(greenloop("schedule", "delete", name, "--address", address, data_home=tmp_path), code=0)
    said_well(greenloop("schedule", "pause", name, "--address", address, data_home=tmp_path),
              f"no schedule named '{name}'", "schedule list")


async def test_an_unreadable_suite_exits_3_with_the_reason(temporal_env, tmp_path):
    repo = tmp_path / "no-tests"
    (repo / "tests").mkdir(parents=True)
    (repo / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (repo / "tests" / "test_nothing.py").write_text("VALUE = 1\n")
    address = temporal_env.client.service_client.config.target_host
    done = greenloop("run", str(repo), "--scripted", str(SCENARIOS / "unfixable.yaml"), "--address", address,
                     "--sandbox", "bwrap", data_home=tmp_path)
    said_well(done, "suite_unreadable:", "why:", "found no tests", "next:", code=3)
    assert "completed" not in done.stdout


async def test_no_worker_on_the_task_queue_is_said_within_seconds(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    queue = f"nobody-{uuid.uuid4().hex[:6]}"
    proc = start("run", str(DEMO), "--address", address, data_home=tmp_path, GREENLOOP_TASK_QUEUE=queue,
                 ANTHROPIC_API_KEY="no-call-is-made")
    try:
        t0 = time.monotonic()
        lines = read_until(proc.stderr, "no worker is polling", timeout_s=30)
        assert time.monotonic() - t0 < 30 and queue in lines[-1] and "greenloop worker" in lines[-1]
    finally:
        proc.kill()
        proc.wait()
        async for w in temporal_env.client.list_workflows(f"TaskQueue = '{queue}'"):
            await temporal_env.client.get_workflow_handle(w.id).terminate("test over")


async def test_a_parametrised_id_prints_literally_and_is_answerable(temporal_env, tmp_path):
    repo = tmp_path / "param"
    (repo / "tests").mkdir(parents=True)
    (repo / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (repo / "tests" / "test_p.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('x', ['a-b'])\ndef test_x(x):\n    assert x == 'b-a'\n")
    test_id = "tests/test_p.py::test_x[a-b]"
    address = temporal_env.client.service_client.config.target_host
    proc = start("run", str(repo), "--scripted", str(SCENARIOS / "unfixable.yaml"), "--max-attempts", "1",
                 "--address", address, "--sandbox", "bwrap", data_home=tmp_path)
    try:
        lines = read_until(proc.stdout, "retry|skip|abort", timeout_s=180)
        run_id = next(line.split()[1] for line in lines if line.startswith("run "))
        assert f"  {test_id}: waiting for a person\n" in lines
        # The whole command, on the lines after "answer with:" (continued with backslashes when long).
        shown = "".join(lines[next(i for i, line in enumerate(lines) if "answer with:" in line) + 1:])
        command = shlex.split(shown.replace("\\\n", ""))
        assert command == ["greenloop", "answer", run_id, test_id, "retry|skip|abort"]

        status = greenloop("status", run_id, "--address", address, data_home=tmp_path)
        said_well(status, test_id, code=0)
        # A part of the id, the way --select matches, names the test too.
        answered = greenloop("answer", run_id, "test_x[a-b]", "skip", "--address", address, data_home=tmp_path)
        said_well(answered, f"{test_id}: SKIPPED", code=0)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in out + err and proc.returncode == 1, out + err  # completed, a test left failing
    assert "completed:" in out


@pytest.mark.parametrize("name", ["tests/test_p.py::test_x[a-b]"])
def test_rich_markup_in_an_id_is_not_eaten(name, capsys):
    from greenloop.cli.runs import _answer_hint

    assert "[a-b]" in str(_answer_hint("run-1", name))


async def test_a_setup_that_fails_exits_3_with_the_end_of_its_log(temporal_env, tmp_path):
    from tests.projectenv.conftest import SRC_LAYOUT, git_init, write

    files = dict(SRC_LAYOUT)
    files["pyproject.toml"] = files["pyproject.toml"].replace('"inflection==0.5.1"',
                                                              '"greenloop-no-such-package-q7==1.0"')
    repo = git_init(write(tmp_path / "wordy", files))
    address = temporal_env.client.service_client.config.target_host
    done = greenloop("run", str(repo), "--scripted", str(SCENARIOS / "unfixable.yaml"), "--address", address,
                     data_home=tmp_path, GREENLOOP_HOME=str(tmp_path / "home"))
    said_well(done, "setup_failed", "greenloop-no-such-package-q7", "next:", code=3)
