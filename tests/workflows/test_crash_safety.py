"""Crash safety on a real server with real worker processes: a worker killed
with SIGKILL while FIXING, while VALIDATING, or half-way through applying an
edit set is replaced by a new one that finishes the run with the repository
exactly as the history says (no lost, no doubled edits). And the Temporal
server itself restarts from its SQLite file mid-run."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from greenloop.domain.states import FixState
from greenloop.reports.record import RunSummary
from greenloop.server.dev import temporal_binary
from greenloop.server.search_attributes import ALL
from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from tests.workflows.conftest import fix_request, wait_for_view

TARGET = "tests/test_cart.py::test_discount"
FIX = {"path": "shop/cart.py", "old_text": "self.total() * percent / 100",
       "new_text": "self.total() * (100 - percent) / 100"}
NOTE = {"path": "shop/money.py", "old_text": "def format_cents(cents):",
        "new_text": "def format_cents(cents):  # reviewed"}


def scenario(delay_s: float = 0.0) -> dict:
    return {"name": "crash", "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\ndiscount() is wrong."}},
        {"trigger": {"role": "fixer", "turn": 1}, "response": {
            "delay_s": delay_s, "tool_calls": [{"name": "replace_in_file", "input": FIX},
                                               {"name": "replace_in_file", "input": NOTE}]}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "Fixed discount()."}},
    ]}


# A worker process. With KILL_AFTER_WRITING set, it SIGKILLs itself right after it
# writes that file of the workspace, once (KILLED_MARKER records it): a worker dying
# half-way through an edit set, at the moment the test chose (the hook lives here,
# not in the product).
WORKER = """
import asyncio, os, signal
from pathlib import Path
from greenloop import worker
from greenloop.workspace import backups

victim = os.environ.get("KILL_AFTER_WRITING")
if victim:
    write = backups.atomic_write

    def write_then_die(path, data, mode=None):
        write(path, data, mode)
        marker = Path(os.environ["KILLED_MARKER"])
        if Path(path).resolve() == Path(victim).resolve() and not marker.exists():
            marker.write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)

    backups.atomic_write = write_then_die
asyncio.run(worker.serve(os.environ["WORKER_ADDRESS"], None, os.environ["WORKER_QUEUE"]))
"""


def start_worker(address: str, queue: str, extra_env: dict[str, str]) -> subprocess.Popen:
    env = {**os.environ, **extra_env, "WORKER_ADDRESS": address, "WORKER_QUEUE": queue}
    return subprocess.Popen([sys.executable, "-c", WORKER], cwd="/", env=env, start_new_session=True)


def kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


async def wait_for_state(client: Client, run_id: str, state: FixState) -> None:
    await wait_for_view(client, child_id(run_id, TARGET), lambda v: v.state == state, state.value)


def assert_exact(ws: str) -> None:
    cart = Path(ws, "shop/cart.py").read_text()
    money = Path(ws, "shop/money.py").read_text()
    assert cart.count("(100 - percent)") == 1 and "percent / 100, 2)  # bug" not in cart
    assert money.count("# reviewed") == 1  # applied exactly once


@pytest.mark.parametrize("kill_in", ["FIXING", "VALIDATING", "applying edits"])
async def test_killed_worker_is_replaced_and_the_run_finishes_exactly(
        temporal_env, demo_repo, scripted, tmp_path, kill_in):
    if kill_in == "VALIDATING":
        # Slow the suite down so the kill lands inside a test run.
        (demo_repo / "tests" / "conftest.py").write_text("import time\ntime.sleep(1.5)\n")
    server = scripted(scenario(delay_s=3.0 if kill_in == "FIXING" else 0.0))
    client = temporal_env.client
    address = client.service_client.config.target_host
    queue = f"crash-{uuid.uuid4().hex[:6]}"
    env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "scripted-test-key"}
    request = fix_request(demo_repo, tmp_path, select=[TARGET], heartbeat_timeout_s=5)
    if kill_in == "applying edits":  # the first file of the edit set, before the second
        env |= {"KILL_AFTER_WRITING": f"{request.run_dir}/workspace/{FIX['path']}",
                "KILLED_MARKER": str(tmp_path / "crashed")}
    run_id = f"crash-{uuid.uuid4().hex[:6]}"
    first = start_worker(address, queue, env)
    second = None
    try:
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
        if kill_in == "applying edits":
            for _ in range(600):
                if first.poll() is not None:
                    break
                await asyncio.sleep(0.2)
            assert first.returncode == -signal.SIGKILL and (tmp_path / "crashed").exists()
            half = Path(request.run_dir, "workspace", "shop/cart.py").read_text()
            assert "(100 - percent)" in half  # really died half-way
        else:
            await wait_for_state(client, run_id, FixState[kill_in])
            await asyncio.sleep(0.5)
            kill(first)
        second = start_worker(address, queue, env)
        summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=240)
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                kill(p)
    assert summary.fixed == [TARGET] and summary.final.failed == 2  # the other two demo bugs remain
    assert_exact(f"{request.run_dir}/workspace")


async def test_server_restarts_from_its_database_mid_run(demo_repo, scripted, tmp_path):
    scripted(scenario(delay_s=4.0))
    db = tmp_path / "temporal.db"
    port = 17233 + os.getpid() % 1000

    async def start() -> WorkflowEnvironment:
        return await WorkflowEnvironment.start_local(
            dev_server_existing_path=temporal_binary(), data_converter=pydantic_data_converter,
            search_attributes=ALL, dev_server_database_filename=str(db), port=port,
            dev_server_log_level="error", ui=False)

    env = await start()
    queue = f"restart-{uuid.uuid4().hex[:6]}"
    request = fix_request(demo_repo, tmp_path, select=[TARGET], heartbeat_timeout_s=10)
    run_id = f"restart-{uuid.uuid4().hex[:6]}"
    await env.client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
    async with build_worker(env.client, task_queue=queue):
        await wait_for_state(env.client, run_id, FixState.FIXING)
    await env.shutdown()  # the server goes away with the run in flight
    env = await start()  # and comes back from its SQLite file
    try:
        async with build_worker(env.client, task_queue=queue):
            summary = await asyncio.wait_for(env.client.get_workflow_handle(run_id, result_type=RunSummary).result(),
                                             timeout=240)
    finally:
        await env.shutdown()
    assert summary.fixed == [TARGET]
    assert Path(request.run_dir, "workspace", "shop/cart.py").read_text().count("(100 - percent)") == 1
