"""Schedules are created, listed, paused, triggered and deleted for real,
through the CLI, against the real dev server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from tests.conftest import REPO


def greenloop(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "greenloop.cli.main", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


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
