"""A model call that takes long is named by the live view: "waiting for the model for 3s (test, role)"."""

from __future__ import annotations

import asyncio
import io
import uuid

from rich.console import Console

from greenloop.cli.live import Board, ShellCommand, Tracker
from greenloop.git_command import git
from greenloop.llm.scenario import Scenario
from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from tests.workflows.conftest import DEMO, fix_request

SCENARIO = DEMO.parent / "scenarios" / "demo-python.yaml"
TARGET = "tests/test_money.py::test_format_whole_euros"


async def test_a_slow_model_call_is_named(temporal_env, demo_repo, scripted, tmp_path):
    git(demo_repo, "init", "-q")
    scenario = Scenario.load(SCENARIO)
    for rule in scenario.rules:
        if rule.name == "analyzer":
            rule.response.delay_s = 4.0
    scripted(scenario.model_dump())
    out = io.StringIO()
    board = Board(Console(file=out, width=200), "run", lambda t: ShellCommand(["greenloop", "answer", t]), live=False)
    queue = f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(temporal_env.client, task_queue=queue):
        handle = await temporal_env.client.start_workflow(
            FixSuiteWorkflow.run, fix_request(demo_repo, tmp_path, select=[TARGET]),
            id=f"run-{uuid.uuid4().hex[:6]}", task_queue=queue)
        tracker = Tracker(temporal_env.client, handle, board, slow_call_s=1.5)
        seen: list[str] = []
        result = asyncio.ensure_future(handle.result())
        while not result.done():
            await tracker.look()
            seen += board.slow_calls.values()
            await asyncio.sleep(0.3)
        summary = result.result()
        await tracker.finished(summary)
    assert summary.fixed == [TARGET]
    slow = [s for s in seen if s.startswith("waiting for the model for ")]
    assert slow and all(s.endswith(f"({TARGET}, analyzer, attempt 1)") or s.endswith(f"({TARGET}, analyzer)")
                        for s in slow), seen
    assert out.getvalue().count("waiting for the model for") == 1  # said once as a plain line
    assert board.slow_calls == {}  # the run ended: nothing waits
    # A quick call is not named: the fixer's turns answered at once.
    assert not [s for s in seen if "fixer" in s]
