"""Schedules are created, listed, paused, triggered and deleted for real,
through the CLI, against the real dev server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid

from tests.conftest import REPO


def greenloop(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    # Output to a pipe, as a script or CI log reads it: no COLUMNS (pytest-xdist's workers set 80), so tables
    # take the width a pipe gets, wide enough not to cut a cell.
    base = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "greenloop.cli.main", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**base, **(env or {})})


async def test_schedule_lifecycle(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    (tmp_path / "repo").mkdir()
    name = "nightly-demo"
    created = greenloop("schedule", "create", name, str(tmp_path / "repo"), "--cron", "0 2 * * *",
                        "--address", address)
    assert created.returncode == 0, created.stderr
    listed = json.loads(greenloop("schedule", "list", "--json", "--address", address).stdout)
    mine = [s for s in listed if s["id"] == name]
    assert mine and mine[0]["spec"] == "cron 0 2 * * *" and not mine[0]["paused"] and mine[0]["next"]

    assert greenloop("schedule", "pause", name, "--address", address).returncode == 0
    assert [s for s in json.loads(greenloop("schedule", "list", "--json", "--address", address).stdout)
            if s["id"] == name][0]["paused"]
    assert greenloop("schedule", "unpause", name, "--address", address).returncode == 0

    assert greenloop("schedule", "trigger", name, "--address", address).returncode == 0
    started = []
    for _ in range(50):
        started = [w async for w in temporal_env.client.list_workflows(f"WorkflowId STARTS_WITH '{name}-run'")]
        if started:
            break
        await asyncio.sleep(0.2)
    assert started and started[0].workflow_type == "FixSuiteWorkflow"
    for w in started:
        await temporal_env.client.get_workflow_handle(w.id, run_id=w.run_id).terminate("test over")

    assert greenloop("schedule", "delete", name, "--address", address).returncode == 0
    assert name not in [s["id"] for s in json.loads(greenloop("schedule", "list", "--json", "--address",
                                                               address).stdout)]


def test_bad_schedule_input_is_a_clear_error(tmp_path):
    both = greenloop("schedule", "create", "x", str(tmp_path), "--cron", "* * * * *", "--every", "1h")
    assert both.returncode == 2 and "exactly one of --cron or --every" in both.stderr
    missing = greenloop("schedule", "create", "x", str(tmp_path / "nope"), "--every", "1h")
    assert missing.returncode == 2 and "does not exist" in missing.stderr


async def test_a_schedule_takes_every_run_option_and_lists_its_last_outcome(temporal_env, tmp_path, monkeypatch):
    # The same options as `greenloop run`, kept in the schedule's action; a run it started is listed with its
    # outcome once it ends (a real worker on the schedule's task queue, the scripted LLM, the real sandbox).
    from temporalio.client import ScheduleActionStartWorkflow

    from greenloop.llm.scenario import Scenario
    from greenloop.llm.scripted_server import ScriptedLLMServer
    from greenloop.run_request import FixRequest
    from greenloop.worker import build_worker
    from tests.workflows.conftest import BACKEND, DEMO

    address = temporal_env.client.service_client.config.target_host
    queue = f"sched-{uuid.uuid4().hex[:6]}"
    env = {"GREENLOOP_TASK_QUEUE": queue}
    name = f"opts-{uuid.uuid4().hex[:4]}"
    target = "tests/test_cart.py::test_discount"
    created = greenloop("schedule", "create", name, str(DEMO), "--every", "24h", "--address", address,
                        "--sandbox", BACKEND, "--budget-usd", "1.5", "--model", "claude-scripted", "--select", target,
                        "--concurrency", "2", "--max-attempts", "2", "--timeout", "120", "--tests-only",
                        "--push", "origin", "--pr", env=env)
    assert created.returncode == 0, created.stderr
    desc = await temporal_env.client.get_schedule_handle(name).describe()
    action = desc.schedule.action
    assert isinstance(action, ScheduleActionStartWorkflow) and action.task_queue == queue
    (request,) = await temporal_env.client.data_converter.decode(action.args, [FixRequest])
    assert request.sandbox.backend == BACKEND and request.sandbox.timeout_s == 120
    assert request.llm.budget_usd == 1.5 and request.llm.model == "claude-scripted"
    assert not request.llm.allow_production_edits and request.select == [target]
    assert request.concurrency == 2 and request.max_attempts == 2
    assert request.push == "origin" and request.pull_request

    again = greenloop("schedule", "create", name, str(DEMO), "--every", "1h", "--address", address)
    assert again.returncode == 2 and f"a schedule named '{name}' exists already" in again.stderr
    assert f"greenloop schedule delete {name}" in again.stderr
    for verb in ("pause", "trigger", "delete"):
        missing = greenloop("schedule", verb, "no-such-schedule", "--address", address)
        assert missing.returncode == 2 and "no schedule named 'no-such-schedule'" in missing.stderr
        assert "Traceback" not in missing.stderr
    await temporal_env.client.get_schedule_handle(name).delete()

    # A run the schedule starts: its outcome in the list.
    run_name = f"demo-{uuid.uuid4().hex[:4]}"
    made = greenloop("schedule", "create", run_name, str(DEMO), "--every", "24h", "--address", address,
                     "--sandbox", BACKEND, "--model", "claude-scripted", "--select", target, "--timeout", "120",
                     env=env)
    assert made.returncode == 0, made.stderr
    server = ScriptedLLMServer(Scenario.load(DEMO.parent / "scenarios" / "fix-first-attempt.yaml")).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "scripted-test-key")
    monkeypatch.setenv("GREENLOOP_HOME", str(tmp_path / "home"))
    try:
        async with build_worker(temporal_env.client, task_queue=queue):
            assert greenloop("schedule", "trigger", run_name, "--address", address).returncode == 0
            row = {}
            for _ in range(600):
                rows = json.loads(greenloop("schedule", "list", "--json", "--address", address).stdout)
                row = next(r for r in rows if r["id"] == run_name)
                if row["last_outcome"] not in ("", "running"):
                    break
                await asyncio.sleep(0.5)
    finally:
        server.stop()
    assert row["last_outcome"] == "completed" and row["last_run"].startswith(f"{run_name}-run")
    assert row["next"] and row["recent"] == 1
    table = greenloop("schedule", "list", "--address", address)
    assert "completed" in table.stdout and run_name in table.stdout
    await temporal_env.client.get_schedule_handle(run_name).delete()
