"""Live progress: `greenloop run` under a pseudo-terminal draws a Rich table (each test's state, attempt,
last verdict, elapsed time; the phase; LLM spend against the budget); `greenloop watch RUN` follows a run
started elsewhere in plain lines when its output is a pipe; `greenloop runs` lists it from the search
attributes. All against the real dev server, the real sandbox and the scripted LLM."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
import uuid

from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from tests.cli.test_follow import slow_scenario
from tests.cli.test_run import DEMO, SCENARIO, greenloop
from tests.conftest import REPO
from tests.workflows.conftest import fix_request

FAILING = ["tests/test_cart.py::test_add_same_sku_merges_quantities", "tests/test_cart.py::test_discount",
           "tests/test_money.py::test_format_whole_euros"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def run_in_pty(args: list[str], env: dict[str, str], timeout_s: float = 250) -> tuple[int, str]:
    """Run a command with its stdout and stderr on a pseudo-terminal; (exit code, everything it wrote)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, cwd=REPO, env=env,
                            close_fds=True)
    os.close(follower)
    out = bytearray()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout=30), out.decode("utf-8", "replace")


async def test_run_on_a_terminal_shows_a_live_table(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GREENLOOP_UI_URL"))}
    env.update(XDG_DATA_HOME=str(tmp_path), TERM="xterm-256color", COLUMNS="160", LINES="50")
    code, raw = run_in_pty([sys.executable, "-m", "greenloop.cli.main", "run", str(DEMO), "--scripted", str(SCENARIO),
                            "--address", address, "--budget-usd", "5"], env)
    text = ANSI.sub("", raw)
    assert code == 0, text[-3000:]
    assert "\x1b[" in raw  # drawn for a terminal (colours, cursor moves)
    run_id = re.search(r"run (greenloop-demo-python-\S+)", text).group(1)
    # The last frame: the phase in the title, every test's row, the spend against the budget.
    last = text[text.rindex(f"{run_id}: finished"):]
    header = next(line for line in last.splitlines() if "last verdict" in line)
    assert [c.strip() for c in header.strip("┃│ ").split("┃")] == ["test", "state", "attempt", "last verdict",
                                                                   "elapsed"]
    for test_id in FAILING:
        row = next(line for line in last.splitlines() if test_id in line)
        cells = [c.strip() for c in row.strip("│ ").split("│")]
        assert cells[:4] == [test_id, "FIXED", "1", "PASS"] and re.fullmatch(r"\dm\d\ds", cells[4]), row
    spend = re.search(r"LLM spend: \$(\d+\.\d{4}) of \$5\.00", last)
    total = re.search(r"attempt\(s\), \$(\d+\.\d{4})", last)
    assert spend and total and spend.group(1) == total.group(1) and float(spend.group(1)) > 0, last[-2000:]
    # Frames before the last showed the run in progress.
    assert re.search(r": (starting|preparing the workspace|running the suite|fixing)", text)
    # Before the tests are known, a line says what the run's own activity is doing, and for how long.
    assert re.search(r"now: (prepare_workspace|plan_tests|set_up_environment|run_suite|analyze_suite) for \dm\d\ds",
                     text), text[:3000]
    assert "tests/test_cart.py::test_discount: FIXED" not in text  # no plain lines on a terminal
    assert "completed: fixed 3" in text and "report: " in text


async def test_watch_follows_a_run_in_plain_lines_and_runs_lists_it(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIO)
    queue = f"watch-{uuid.uuid4().hex[:6]}"
    run_id = f"watched-{uuid.uuid4().hex[:6]}"
    request = fix_request(demo_repo, tmp_path)
    async with build_worker(temporal_env.client, task_queue=queue):
        await temporal_env.client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
        env = {**os.environ, "GREENLOOP_TASK_QUEUE": queue}
        address = temporal_env.client.service_client.config.target_host
        watched = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "greenloop.cli.main", "watch", run_id, "--address", address],
                                 cwd=REPO, capture_output=True, text=True, timeout=250, env=env)
    assert watched.returncode == 0, watched.stderr[-3000:]
    lines = watched.stdout.splitlines()
    for test_id in FAILING:  # a line per state change, the last one FIXED
        states = [line.rsplit(": ", 1)[1] for line in lines if line.startswith(f"  {test_id}: ")]
        assert states and states[-1] == "FIXED", watched.stdout
    assert "completed: fixed 3" in watched.stdout and "\x1b[" not in watched.stdout
    assert "finished" in lines  # the last phase, said once the run ended

    listed = greenloop("runs", "--address", address, "--json", "--repo", str(demo_repo), data_home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (row,) = [r for r in json.loads(listed.stdout) if r["run_id"] == run_id]
    assert row["repo"] == str(demo_repo) and row["state"] == "COMPLETED" and row["status"] == "completed"
    assert row["fixed"] == 3 and row["failing"] == 0 and row["started"]
    table = greenloop("runs", "--address", address, "--repo", str(demo_repo), data_home=tmp_path)
    assert run_id in table.stdout and "3/0" in table.stdout

    missing = greenloop("watch", "no-such-run", "--address", address, data_home=tmp_path)
    assert missing.returncode == 2 and "no run 'no-such-run'" in missing.stderr
    assert "Traceback" not in missing.stderr


async def test_watch_and_status_name_the_base_commit_from_the_start(temporal_env, demo_repo, scripted, tmp_path):
    # The commit the fixes apply to is named while the run goes, not only in its last lines: a person
    # who commits meanwhile knows from the start what the patch will be written against.
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run([*git, *args], cwd=demo_repo, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=demo_repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    scripted(slow_scenario(tmp_path, 3.0))
    queue, run_id = f"base-{uuid.uuid4().hex[:6]}", f"based-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "GREENLOOP_TASK_QUEUE": queue}
    address = temporal_env.client.service_client.config.target_host
    cli = [sys.executable, "-m", "greenloop.cli.main"]
    async with build_worker(temporal_env.client, task_queue=queue):
        handle = await temporal_env.client.start_workflow(FixSuiteWorkflow.run, fix_request(demo_repo, tmp_path),
                                                          id=run_id, task_queue=queue)
        for _ in range(300):
            if await handle.query(FixSuiteWorkflow.base_commit):
                break
            await asyncio.sleep(0.2)
        status = await asyncio.to_thread(subprocess.run, [*cli, "status", run_id, "--address", address, "--json"],
                                         cwd=REPO, capture_output=True, text=True, timeout=60, env=env)
        table = await asyncio.to_thread(subprocess.run, [*cli, "status", run_id, "--address", address],
                                        cwd=REPO, capture_output=True, text=True, timeout=60, env=env)
        watched = await asyncio.to_thread(subprocess.run, [*cli, "watch", run_id, "--address", address],
                                          cwd=REPO, capture_output=True, text=True, timeout=250, env=env)
    assert status.returncode == 0, status.stderr[-2000:]
    running = json.loads(status.stdout)
    assert running["base_commit"] == head and not running["phase"].startswith("finished"), running
    assert table.returncode == 0 and f"base commit: {head}" in table.stdout, table.stdout
    assert watched.returncode == 0, watched.stderr[-3000:]
    lines = watched.stdout.splitlines()
    # Said once the run named it, before any test's state, and again with the outcome.
    named = lines.index(f"base commit: {head}")
    first_test = next(i for i, line in enumerate(lines) if line.startswith("  tests/"))
    assert named < first_test, watched.stdout
    assert f"  base commit: {head}" in lines and "completed: fixed 3" in watched.stdout
