"""The fixer's and the analyzer's conversations one activity at a time (the
workflow drives them): against the scripted server through the real client,
each step is idempotent, so a worker that died after a step but before
reporting it costs nothing: a model call made and saved is not made again,
tool calls are applied once. On a real dev server, each of the analyzer's
model calls is an activity of the test's history, and its usage is the test's
as soon as the call is done."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Replayer

from greenloop.activities.analysis import AnalyzeInput, FinishAnalysisInput, finish_analysis, start_analysis
from greenloop.activities.conversation import (
    FinishFixInput,
    ToolsInput,
    TurnInput,
    analyzer_tools,
    analyzer_turn,
    finish_fix,
    fixer_tools,
    fixer_turn,
    start_fix,
)
from greenloop.domain.changes import apply_change
from greenloop.llm.scripted_server import ScriptedLLMServer
from greenloop.reports.record import FixOneTestResult, FixStatusView
from greenloop.worker import build_worker
from greenloop.workflows.fix_one_test import FixOneTestWorkflow
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from tests.llm.test_agent import CART, fix_input, scenario, settings
from tests.workflows.conftest import DEMO, fix_request, replays

FIX = {"path": "shop/cart.py", "old_text": "sum(items) - 1", "new_text": "sum(items)"}


async def test_each_step_is_done_once_and_the_proposal_comes_from_the_conversation(repo, api_key, tmp_path_factory):
    sc = scenario({"trigger": {"role": "fixer", "turn": 1},
                   "response": {"tool_calls": [{"name": "replace_in_file", "input": FIX}]}},
                  {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "total() subtracted one."}})
    env = ActivityEnvironment()
    with ScriptedLLMServer(sc) as server:
        fix = fix_input(repo, tmp_path_factory, settings(server))
        start = await env.run(start_fix, fix)
        assert start.proposal is None and start.ref is not None
        turn = TurnInput(workspace=fix.workspace, ref=start.ref, turn=1, llm=fix.llm)
        first = await env.run(fixer_turn, turn)
        again = await env.run(fixer_turn, turn)  # a retry after its worker died having saved the answer
        assert first.tool_calls == ["replace_in_file"] and not first.replayed
        assert again.replayed and again.usage == first.usage and len(server.requests) == 1
        tools = ToolsInput(workspace=fix.workspace, ref=start.ref, turn=1)
        await env.run(fixer_tools, tools)
        await env.run(fixer_tools, tools)  # applied once
        saved = json.loads(Path(start.ref).read_text())
        assert [m["role"] for m in saved["messages"]] == ["user", "assistant", "user"]
        second = await env.run(fixer_turn, turn.model_copy(update={"turn": 2}))
        assert second.tool_calls == [] and second.stop == "end_turn" and len(server.requests) == 2
        # the second request carried the first turn's tool result
        assert server.requests[1].body["messages"][-1]["content"][0]["type"] == "tool_result"
        proposal = await env.run(finish_fix, FinishFixInput(fix=fix, ref=start.ref, stop=second.stop))
    assert proposal.changes and proposal.failure_reason is None
    # The fix travels as what it changes, applied on the version it was written on.
    assert proposal.files == ["shop/cart.py"] and proposal.changed_lines() == 2
    assert apply_change(proposal.changes[0], CART) == CART.replace("sum(items) - 1", "sum(items)")
    assert proposal.rationale == "total() subtracted one."
    assert (repo / "shop" / "cart.py").read_text() == CART  # the overlay, not the workspace


async def test_a_conversation_file_that_is_gone_is_a_lost_workspace(repo, api_key, tmp_path_factory):
    with ScriptedLLMServer(scenario({"trigger": {}, "response": {"text": "x"}})) as server:
        fix = fix_input(repo, tmp_path_factory, settings(server))
        with pytest.raises(ApplicationError) as err:
            await ActivityEnvironment().run(fixer_turn, TurnInput(workspace=fix.workspace, ref=str(
                Path(fix.workspace.run_dir) / "conversations" / "gone.json"), turn=1, llm=fix.llm))
        assert len(server.requests) == 0
    assert err.value.type == "workspace_lost"


def analyze_input(fix) -> AnalyzeInput:
    return AnalyzeInput(run_id=fix.run_id, workspace=fix.workspace, test_id=fix.test_id, failure_run=fix.failure_run,
                        attempts=[], llm=fix.llm)


async def test_the_analyzers_steps_read_only_and_each_done_once(repo, api_key, tmp_path_factory):
    sc = scenario({"trigger": {"role": "analyzer", "turn": 1},
                   "response": {"text": "Reading the code.", "tool_calls": [
                       {"name": "read_file", "input": {"path": "shop/cart.py"}},
                       {"name": "replace_in_file", "input": FIX}]}},  # not the analyzer's tool: refused
                  {"trigger": {"role": "analyzer", "turn": 2},
                   "response": {"text": "## Root Cause\ntotal() subtracts 1.", "input_tokens": 700}})
    env = ActivityEnvironment()
    with ScriptedLLMServer(sc) as server:
        fix = fix_input(repo, tmp_path_factory, settings(server))
        start = await env.run(start_analysis, analyze_input(fix))
        assert start.ref is not None and start.ref.endswith("analysis-1.json")
        assert (start.note.kind, start.note.expected, start.note.actual, start.note.llm_analysis) == (
            "assertion", "3", "2", "")
        assert len(server.requests) == 0  # the pattern analysis asks no model
        turn = TurnInput(workspace=fix.workspace, ref=start.ref, turn=1, llm=fix.llm)
        first = await env.run(analyzer_turn, turn)
        again = await env.run(analyzer_turn, turn)
        assert first.tool_calls == ["read_file", "replace_in_file"] and again.replayed and len(server.requests) == 1
        tools = ToolsInput(workspace=fix.workspace, ref=start.ref, turn=1)
        await env.run(analyzer_tools, tools)
        await env.run(analyzer_tools, tools)  # applied once
        second = await env.run(analyzer_turn, turn.model_copy(update={"turn": 2}))
        note = await env.run(finish_analysis, FinishAnalysisInput(
            workspace=fix.workspace, test_id=fix.test_id, note=start.note, ref=start.ref, stop=second.stop))
        requests = list(server.requests)
    assert [(r.role, r.turn) for r in requests] == [("analyzer", 1), ("analyzer", 2)]
    assert {t["name"] for t in requests[0].body["tools"]} == {"str_replace_based_edit_tool", "search"}
    results = requests[1].body["messages"][2]["content"]
    assert [r["is_error"] for r in results] == [False, True]
    assert "return sum(items) - 1" in results[0]["content"]  # the file the analyzer read
    assert (repo / "shop" / "cart.py").read_text() == CART  # nothing edited
    assert second.usage.input_tokens == 700 and second.usage.calls == 1
    assert note.llm_analysis == "## Root Cause\ntotal() subtracts 1." and note.kind == "assertion"
    assert note.context_markdown == start.note.context_markdown


async def test_an_analysis_only_run_starts_no_conversation(repo, api_key, tmp_path_factory):
    with ScriptedLLMServer(scenario({"trigger": {}, "response": {"text": "x"}})) as server:
        fix = fix_input(repo, tmp_path_factory, settings(server, analysis_only=True))
        start = await ActivityEnvironment().run(start_analysis, analyze_input(fix))
        assert len(server.requests) == 0
    assert start.ref is None and start.note.kind == "assertion" and start.note.usage.calls == 0
    assert not (Path(fix.workspace.run_dir) / "conversations").exists()


DISCOUNT = "tests/test_cart.py::test_discount"
SCENARIO = DEMO.parent / "scenarios" / "demo-python.yaml"


def scheduled_activities(history) -> dict[int, str]:
    """The activities a workflow's history scheduled, by event id, in order."""
    return {e.event_id: e.activity_task_scheduled_event_attributes.activity_type.name
            for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED}


async def test_each_analyzer_call_is_an_activity_counted_as_it_completes(temporal_env, demo_repo, scripted, tmp_path):
    """The analyzer reads a file, then answers (slowly): while its second call is in
    flight the test's usage already holds the first; the history has one
    ``analyzer_turn`` per call, each with that call's tokens; it replays."""
    sc = yaml.safe_load(SCENARIO.read_text())
    sc["rules"][:0] = [
        {"trigger": {"role": "analyzer", "turn": 1}, "response": {
            "text": "Reading the cart.", "tool_calls": [{"name": "read_file", "input": {"path": "shop/cart.py"}}],
            "input_tokens": 1000, "output_tokens": 40}},
        {"trigger": {"role": "analyzer", "turn": 2}, "response": {
            "text": "## Root Cause\ndiscount() returns the discount, not the total.", "input_tokens": 1500,
            "output_tokens": 60, "delay_s": 3.0}},
    ]
    server = scripted(sc)
    client = temporal_env.client
    request = fix_request(demo_repo, tmp_path, select=[DISCOUNT])
    run_id, queue = f"analyzer-{uuid.uuid4().hex[:6]}", f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
        child = client.get_workflow_handle(child_id(run_id, DISCOUNT), result_type=FixOneTestResult)
        for _ in range(300):
            if any(r.role == "analyzer" and r.turn == 2 for r in server.requests):
                break
            await asyncio.sleep(0.1)
        midway = await child.query("status", result_type=FixStatusView)  # the second call is in flight
        summary = await asyncio.wait_for(handle.result(), timeout=240)
    result = await child.result()

    assert (midway.state.value, midway.usage.calls, midway.usage.input_tokens) == ("ANALYZING", 1, 1000)
    assert summary.fixed == [DISCOUNT] and summary.final.failed == 2  # the other two were not selected
    assert [(r.role, r.turn) for r in server.requests] == [("analyzer", 1), ("analyzer", 2), ("fixer", 1),
                                                           ("fixer", 2)]
    fixer_prompt = server.requests[2].body["messages"][0]["content"][0]["text"]
    assert "discount() returns the discount, not the total." in fixer_prompt  # the findings reached the fixer
    history = await child.fetch_history()
    scheduled = scheduled_activities(history)
    # The model ended the conversation: its last turn finished it (no finishing step of its own).
    assert list(scheduled.values())[:5] == ["start_analysis", "analyzer_turn", "analyzer_tools", "analyzer_turn",
                                            "start_fix"]
    assert "finish_analysis" not in scheduled.values() and "finish_fix" not in scheduled.values()
    turns = []
    for e in history.events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            attrs = e.activity_task_completed_event_attributes
            if scheduled[attrs.scheduled_event_id] == "analyzer_turn":
                [payload] = attrs.result.payloads
                turns.append(json.loads(payload.data)["usage"])
    assert [(u["input_tokens"], u["output_tokens"], u["calls"]) for u in turns] == [(1000, 40, 1), (1500, 60, 1)]
    analysis_cost = sum(u["cost_usd"] for u in turns)
    [attempt] = result.attempts
    assert attempt.usage.calls == 4 and summary.usage.calls == 4  # two analyzer calls, two fixer calls
    assert attempt.usage.input_tokens == result.usage.input_tokens >= 2500
    assert result.usage.cost_usd >= analysis_cost > 0
    assert "discount() returns the discount" in attempt.analysis
    await replays(client, handle)
    await Replayer(workflows=[FixOneTestWorkflow], data_converter=pydantic_data_converter).replay_workflow(history)
