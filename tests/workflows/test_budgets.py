"""The run's budgets, checked before each test: when the time or
the LLM money is used up, the tests left are not lost — they end SKIPPED
(time) or ESCALATED to a person (money), each saying why."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import yaml

from greenloop.domain.llm import LLMSettings
from greenloop.domain.states import FixState
from greenloop.llm.client import usage_of
from greenloop.reports.record import RunSummary
from tests.workflows.conftest import DEMO, drive, fix_request, replays

SCENARIO = DEMO.parent / "scenarios" / "demo-python.yaml"


def slow_analysis(delay_s: float) -> dict:
    """The demo scenario with an analyzer that answers ``delay_s`` late."""
    data = yaml.safe_load(SCENARIO.read_text())
    for rule in data["rules"]:
        if rule["trigger"].get("role") == "analyzer":
            rule["response"]["delay_s"] = delay_s
    return data


def states(summary: RunSummary) -> dict[str, tuple[FixState, str]]:
    return {t.test_id: (t.state, t.history[-1] if t.history else "") for t in summary.tests}


async def test_time_budget_used_up_skips_the_tests_left(temporal_env, demo_repo, scripted, tmp_path):
    # The first test's analysis alone outlasts the whole-run budget; it is finished, the rest are skipped.
    scripted(slow_analysis(32))
    summary, _ = await drive(temporal_env, fix_request(demo_repo, tmp_path, run_budget_s=30))
    assert summary.state == "completed"
    assert len(summary.fixed) == 1 and len(summary.skipped) == 2
    for test_id in summary.skipped:
        state, why = states(summary)[test_id]
        assert state == FixState.SKIPPED and "time budget" in why
    assert summary.final.failed == 2 and sorted(summary.still_failing) == sorted(summary.skipped)


async def test_llm_budget_used_up_escalates_the_tests_left(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIO)
    # Each demo test costs about $0.01 of (scripted) model calls: the budget lasts for the first tests only.
    # (A short escalation deadline: a test escalated by its own failed attempts would end SKIPPED, not hang.)
    request = fix_request(demo_repo, tmp_path, escalation_deadline_s=5,
                          llm=LLMSettings(model="claude-scripted", max_tool_turns=8, budget_usd=0.015))
    summary, _ = await drive(temporal_env, request)
    assert summary.fixed and summary.escalated and len(summary.fixed) + len(summary.escalated) == 3
    assert summary.skipped == []
    assert summary.usage.cost_usd >= 0.015
    for test_id in summary.escalated:
        state, why = states(summary)[test_id]
        assert state == FixState.ESCALATED and "budget" in why


async def test_tests_in_flight_share_the_llm_budget(temporal_env, demo_repo, scripted, tmp_path):
    # Three tests start at once. Each seeing the whole budget, together they would spend about three
    # times it; each gets a third of what is left, and stops within one model call of its share.
    server = scripted(SCENARIO)
    budget = 0.012  # the demo's three tests cost $0.035 unbounded
    request = fix_request(demo_repo, tmp_path, concurrency=3, escalation_deadline_s=5,
                          llm=LLMSettings(model="claude-scripted", max_tool_turns=8, budget_usd=budget))
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)

    calls: dict[str, list[float]] = {}
    for r in server.requests:
        test_id = r.context.split("/", 1)[1]
        calls.setdefault(test_id, []).append(usage_of("claude-scripted", SimpleNamespace(**r.response["usage"])).cost_usd)
    assert sorted(calls) == sorted(t.test_id for t in summary.tests)
    for test_id, costs in calls.items():
        # it started no call once its share was spent
        assert sum(costs[:-1]) < budget / 3 + 1e-9, (test_id, costs)
    assert summary.usage.cost_usd == pytest.approx(sum(map(sum, calls.values())))
    assert summary.usage.cost_usd <= budget + 3 * max(c for costs in calls.values() for c in costs)
    assert summary.escalated, "a third of the budget fixes none of the demo's tests"
    for test_id in summary.escalated:
        state, why = states(summary)[test_id]
        assert state == FixState.ESCALATED and "LLM budget" in why
