"""Answers and control as the Web UI sends them (JSON a person types), through
both the ``answer`` update and the ``answer`` signal, on the real server with
a real worker: typed answers are taken, bad ones are refused with a message
that says what is allowed, and a signal the state cannot take is recorded and
ignored with a note in the test's history and current details."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
import yaml
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer

from greenloop.domain.states import FixState
from greenloop.reports.record import FixStatusView, RunSummary
from greenloop.worker import build_worker
from greenloop.workflows.control import ANSWER_HINT
from greenloop.workflows.fix_one_test import FixOneTestWorkflow
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from tests.workflows.conftest import DEMO, fix_request, replays, wait_for_view

TARGET = "tests/test_cart.py::test_discount"


async def refused(handle: WorkflowHandle, update: str, payload: object) -> str:
    """Send ``update`` with ``payload``; the rejection's message."""
    with pytest.raises(WorkflowUpdateFailedError) as exc:
        await handle.execute_update(update, payload, result_type=str)
    cause = exc.value.cause
    # Refused as bad input: the Web UI shows the message, not the worker's stack trace.
    assert isinstance(cause, ApplicationError) and cause.type == "Refused", cause
    assert cause.failure is not None and cause.failure.message and not cause.failure.stack_trace
    return str(cause)


async def details(handle: WorkflowHandle) -> str:
    """The current details the Web UI shows for a workflow."""
    meta = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    return meta.current_details


async def test_typed_answers_by_update_and_signal(temporal_env, demo_repo, scripted, tmp_path):
    scripted(DEMO.parent / "scenarios" / "unfixable.yaml")
    client = temporal_env.client
    queue = f"q-{uuid.uuid4().hex[:6]}"
    request = fix_request(demo_repo, tmp_path, select=[TARGET], max_attempts=1)
    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"typed-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue)
        child = client.get_workflow_handle(child_id(handle.id, TARGET))
        await wait_for_view(client, child.id, lambda v: v.state == FixState.ESCALATED, "ESCALATED")
        # What the Web UI shows says what to type.
        shown = await details(child)
        assert TARGET in shown and "**ESCALATED**" in shown and "last verdict: **FAIL**" in shown
        assert f"to answer: {ANSWER_HINT}" in shown

        # Updates the state could take but whose payload is wrong say what is allowed.
        assert "'retry', 'skip' or 'abort'" in await refused(child, "answer", "maybe")
        assert "greater than or equal to 1" in await refused(child, "answer", {"choice": "retry", "attempts": 0})
        # The run's own controls too.
        assert "not a reason: 42" in await refused(handle, "abort", 42)
        assert f"{TARGET} has no applied fix to roll back" in await refused(handle, "rollback", {"test_id": TARGET})

    # With no worker, three signals wait in the history; the next worker gets them
    # in one go and in order: the unreadable one and the second answer are ignored.
    await child.signal("answer", "maybe")
    await child.signal("answer", {"choice": "retry", "attempts": 1})
    await child.signal("answer", "abort")
    await handle.signal("rollback", "tests/test_cart.py::test_nothing")
    async with build_worker(client, task_queue=queue):
        view = await wait_for_view(client, child.id, lambda v: v.state == FixState.ESCALATED and v.attempt == 2,
                                   "ESCALATED after the retry by signal")
        ignored = [line for line in view.history if "ignored" in line]
        assert ignored == [
            ('signal answer ignored: not an answer: "maybe" (choice: Input should be \'retry\', \'skip\' or '
             '\'abort\'); type "retry", {"choice":"retry","attempts":2}, "skip" or "abort"'),
            'signal answer "abort" ignored: this escalation already has an answer',
        ]
        assert "retry 1 more, answered by a signal" in view.history
        shown = await details(child)
        assert all(f"ignored: {line}" in shown for line in ignored)
        run_details = await details(handle)
        assert "signal rollback \"tests/test_cart.py::test_nothing\" ignored: " in run_details
        assert "has no applied fix to roll back" in run_details

        # A bare string through the update ends the escalation.
        assert await child.execute_update("answer", "skip", result_type=str) == FixState.SKIPPED.value
        summary: RunSummary = await handle.result()
        final = await child.query("status", result_type=FixStatusView)

    assert summary.skipped == [TARGET] and summary.state == "completed"
    # The answers (signals ignored and taken, updates refused and taken) replay deterministically.
    await Replayer(workflows=[FixOneTestWorkflow], data_converter=pydantic_data_converter).replay_workflow(
        await child.fetch_history())
    assert await replays(client, handle) == 1
    assert any("signal rollback" in note and "ignored" in note for note in summary.notes)
    assert final.state == FixState.SKIPPED and final.history[-1] == "SKIPPED: skipped by an update"


async def test_a_signal_the_state_cannot_take_is_noted_and_an_abort_signal_stops_the_run(
        temporal_env, demo_repo, scripted, tmp_path):
    # Never fixed; the second analysis is slow, so the test is surely ANALYZING when a signal comes.
    scripted({"name": "unfixable, slow second analysis", "rules": [
        {"trigger": {"role": "analyzer", "iteration": 2}, "priority": 1,
         "response": {"text": "## Root Cause\nStill unclear.", "delay_s": 6}},
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\nUnclear."}},
        {"trigger": {"role": "fixer"}, "response": {"text": "I could not find a safe fix for this test."}},
    ]})
    client = temporal_env.client
    queue = f"q-{uuid.uuid4().hex[:6]}"
    request = fix_request(demo_repo, tmp_path, select=[TARGET], max_attempts=1)
    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"typed-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue)
        child = client.get_workflow_handle(child_id(handle.id, TARGET))
        await wait_for_view(client, child.id, lambda v: v.state == FixState.ESCALATED, "ESCALATED")
    # Answered by signal, then a retry by signal once it works again: the second
    # comes after the first was taken (the test is ANALYZING), and is ignored.
    await child.signal("answer", {"choice": "retry", "attempts": 1})
    async with build_worker(client, task_queue=queue):
        await wait_for_view(client, child.id, lambda v: v.state == FixState.ANALYZING and v.attempt == 2,
                            "analysing again")
        await child.signal("answer", "skip")
        view = await wait_for_view(client, child.id, lambda v: v.state == FixState.ESCALATED and v.attempt == 2,
                                   "ESCALATED again")
        ignored = [line for line in view.history if "ignored" in line]
        assert len(ignored) == 1 and ignored[0].startswith('signal answer "skip" ignored: test ')
        assert "not waiting for an answer (only an ESCALATED test takes retry/skip/abort)" in ignored[0]
        await handle.signal("abort", {"reason": "enough for today"})
        summary: RunSummary = await handle.result()
    assert summary.state == "aborted" and summary.aborted == [TARGET]
    assert "enough for today" in summary.notes


async def test_rollback_by_signal(temporal_env, demo_repo, scripted, tmp_path):
    # The demo's fixes, each analysis slow: the run is busy with a later test when the signal comes.
    data = yaml.safe_load((DEMO.parent / "scenarios" / "demo-python.yaml").read_text())
    for rule in data["rules"]:
        if rule["trigger"].get("role") == "analyzer":
            rule["response"]["delay_s"] = 3
    scripted(data)
    client = temporal_env.client
    queue = f"q-{uuid.uuid4().hex[:6]}"
    # Fixes of different files: a rollback by hand of a fix whose file a later fix changed is refused.
    tests = ["tests/test_cart.py::test_add_same_sku_merges_quantities", "tests/test_money.py::test_format_whole_euros"]
    request = fix_request(demo_repo, tmp_path, select=tests)
    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"typed-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue)
        fixed: list[str] = []
        for _ in range(600):
            views = await handle.query("status", result_type=list[FixStatusView])
            fixed = [v.test_id for v in views if v.state == FixState.FIXED]
            if fixed:
                break
            await asyncio.sleep(0.2)
        assert fixed, "no test was fixed"
        first = fixed[0]
        # As a person types it in the Signal dialog; the same test again is not rolled back twice.
        await handle.signal("rollback", {"test_id": first})
        await handle.signal("rollback", first)
        summary: RunSummary = await handle.result()

    assert first in summary.skipped and first not in summary.fixed
    view = {v.test_id: v for v in summary.tests}[first]
    assert view.state == FixState.SKIPPED and view.history[-1] == "fix rolled back by hand"
    ignored = [n for n in summary.notes if n.startswith(f'signal rollback "{first}" ignored: ')]
    assert len(ignored) == 1, summary.notes
    assert first in tests and summary.fixed == [t for t in tests if t != first]
    # Its edit is out of the workspace.
    cart = Path(request.run_dir, "workspace", "shop/cart.py").read_text()
    assert "self.lines[sku] = (price, qty)  # bug: forgets the quantity" in cart
