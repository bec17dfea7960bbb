"""The LLM budget's three figures, each in its own field: the run's ceiling
(``budget_usd``, as the user set it) reaches every test's child unchanged,
the child gets its share (``share_usd``), and each conversation what is left
of that share (``left_usd``)."""

from __future__ import annotations

import json

import pytest
from temporalio.api.enums.v1 import EventType

from greenloop.domain.llm import LLMSettings
from tests.workflows.conftest import DEMO, drive, fix_request, replays

SCENARIO = DEMO.parent / "scenarios" / "demo-python.yaml"


async def test_a_child_gets_its_share_and_each_conversation_what_is_left_of_it(
        temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIO)
    budget = 0.012  # three tests start at once: a third each
    request = fix_request(demo_repo, tmp_path, concurrency=3, escalation_deadline_s=5,
                          llm=LLMSettings(model="claude-scripted", max_tool_turns=8, budget_usd=budget))
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)
    assert len(summary.tests) == 3
    for view in summary.tests:
        assert view.workflow_id is not None
        history = await temporal_env.client.get_workflow_handle(view.workflow_id).fetch_history()
        started = history.events[0].workflow_execution_started_event_attributes
        llm = json.loads(started.input.payloads[0].data)["request"]["llm"]
        assert llm["budget_usd"] == budget, view.test_id  # the run's ceiling, not the test's share
        assert llm["share_usd"] == pytest.approx(budget / 3), view.test_id
        assert llm["left_usd"] is None  # set per conversation, by the test's workflow
        turns = [json.loads(e.activity_task_scheduled_event_attributes.input.payloads[0].data)["llm"]
                 for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                 and e.activity_task_scheduled_event_attributes.activity_type.name.endswith("_turn")]
        assert turns, view.test_id
        lefts = [t["left_usd"] for t in turns]
        assert lefts[0] == pytest.approx(budget / 3)  # the first conversation: nothing spent yet
        assert all(0 <= left <= budget / 3 + 1e-12 for left in lefts), (view.test_id, lefts)
        assert lefts == sorted(lefts, reverse=True), (view.test_id, lefts)  # what is left only shrinks
        assert all(t["budget_usd"] == budget and t["share_usd"] == llm["share_usd"] for t in turns)
