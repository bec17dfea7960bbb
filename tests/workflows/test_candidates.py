"""``--candidates K``: K independent fixes asked for at once at each attempt, their own test
checked side by side, then those that pass validated whole smallest first (changed lines;
ties: the first asked), the smallest passing one kept and the others recorded;
``--candidates 1`` is today's single fixer conversation."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from temporalio.api.enums.v1 import EventType

from greenloop.domain.llm import LLMSettings
from greenloop.domain.states import Verdict
from greenloop.llm.client import usage_of
from greenloop.run_settings import BY_NAME
from greenloop.workflows.driver import child_id
from greenloop.workflows.fix_one_test import candidate_llm
from tests.test_run_settings import run_cli
from tests.workflows.conftest import drive, fix_request
from tests.workflows.test_scenarios import FIXED_LINE, SCENARIOS, TARGET, child_attempts, workspace_cart

BUG = "return round(self.total() * percent / 100, 2)  # bug: returns the discount, not the total"


def _edit(old: str, new: str) -> dict:
    return {"tool_calls": [{"name": "replace_in_file", "input": {"path": "shop/cart.py", "old_text": old,
                                                                  "new_text": new}}]}


# Candidate 1 fails the test (2 changed lines); candidate 2 passes with 4 changed lines;
# candidate 3 passes with 2: it is kept (it ties with candidate 1, which is tried first and fails).
THREE = {
    "name": "three-candidates",
    "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\ndiscount() is wrong."}},
        {"trigger": {"role": "fixer", "candidate": 1, "turn": 1},
         "response": _edit("self.total() * percent / 100", "self.total() - percent")},
        {"trigger": {"role": "fixer", "candidate": 2, "turn": 1},
         "response": _edit(BUG, "kept = 100 - percent\n        discounted = self.total() * kept / 100\n"
                                "        return round(discounted, 2)")},
        {"trigger": {"role": "fixer", "candidate": 3, "turn": 1},
         "response": _edit("self.total() * percent / 100", "self.total() * (100 - percent) / 100")},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "Changed discount()."}},
    ],
}


async def own_test_checks(env, handle) -> tuple[list[int], list[int]]:
    """The child's candidate checks (``check_batch`` activities): when each was scheduled
    and when each completed, as event ids of its workflow history."""
    history = await env.client.get_workflow_handle(child_id(handle.id, TARGET)).fetch_history()
    scheduled = [e.event_id for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                 and e.activity_task_scheduled_event_attributes.activity_type.name == "check_batch"]
    completed = [e.event_id for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
                 and e.activity_task_completed_event_attributes.scheduled_event_id in scheduled]
    return scheduled, completed


@pytest.mark.parametrize("validation", ["queue", "each"])
async def test_three_candidates_keep_the_smallest_passing_fix(temporal_env, demo_repo, scripted, tmp_path, validation):
    server = scripted(THREE)
    request = fix_request(demo_repo, tmp_path, select=[TARGET], candidates=3, validation=validation)
    summary, handle = await drive(temporal_env, request)
    assert summary.fixed == [TARGET] and summary.attempts == 1
    cart = workspace_cart(f"{request.run_dir}/workspace")
    assert FIXED_LINE in cart and "kept = 100 - percent" not in cart and "self.total() - percent" not in cart

    (attempt,) = await child_attempts(temporal_env, handle)
    assert attempt.verdict is Verdict.PASS
    assert [(c.number, c.size, c.verdict, c.kept) for c in attempt.candidates] == [
        (1, 2, Verdict.FAIL, False), (2, 4, None, False), (3, 2, Verdict.PASS, True)]
    assert "self.total() * (100 - percent) / 100" in attempt.diff

    # The three candidates' own test checks ran side by side: all scheduled before the first one completed.
    scheduled, completed = await own_test_checks(temporal_env, handle)
    assert len(scheduled) == len(completed) == 3 and max(scheduled) < min(completed)
    assert "its test passes alone; a smaller passing fix was kept" in attempt.candidates[1].reason

    # Three fixer conversations, told apart by their candidate number; every call counted.
    fixers = [(r.candidate, r.turn) for r in server.requests if r.role == "fixer"]
    assert sorted(fixers) == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]
    assert summary.usage.calls == len(server.requests) == 7 and attempt.usage.calls == 7

    # Each candidate had its share of the test runs (5) and commands (10) the conversation may make.
    kept = {p.name: json.loads(p.read_text())["hands"]
            for p in Path(request.run_dir, "conversations").glob("*/attempt-1*.json")}
    assert {name: (h["max_test_runs"], h["max_commands"]) for name, h in kept.items()} == {
        "attempt-1.json": (2, 4), "attempt-1-candidate-2.json": (2, 3), "attempt-1-candidate-3.json": (1, 3)}

    # The reports list all three.
    report = Path(summary.report_markdown or "").read_text()
    assert "candidate 1: 2 changed line(s), FAIL" in report
    assert "candidate 2: 4 changed line(s), not validated" in report
    assert "candidate 3: 2 changed line(s), PASS, kept" in report
    data = json.loads(Path(summary.report_json or "").read_text())
    assert "candidates" in json.dumps(data) and '"kept": true' in json.dumps(data)


async def test_when_no_candidate_passes_the_attempt_fails_with_each_ones_reason(temporal_env, demo_repo, scripted,
                                                                                tmp_path):
    scenario = {"name": "none-passes", "rules": [
        THREE["rules"][0], THREE["rules"][1],  # the analysis; candidate 1's wrong fix
        {"trigger": {"role": "fixer", "candidate": 2}, "response": {"text": "I see no fix."}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "Changed discount()."}}]}
    scripted(scenario)
    request = fix_request(demo_repo, tmp_path, select=[TARGET], candidates=2, max_attempts=1,
                          escalation_deadline_s=1)
    summary, handle = await drive(temporal_env, request)
    assert summary.fixed == [] and TARGET in summary.skipped
    (attempt,) = await child_attempts(temporal_env, handle)
    assert attempt.verdict is Verdict.FAIL and attempt.reason.startswith("none of 2 candidates passed")
    assert [(c.number, c.verdict, c.kept) for c in attempt.candidates] == [(1, Verdict.FAIL, False),
                                                                         (2, Verdict.FAIL, False)]
    assert "the fixer proposed no edit: I see no fix." in attempt.candidates[1].reason
    assert BUG in workspace_cart(f"{request.run_dir}/workspace")  # nothing of either stays


async def test_one_candidate_is_a_single_fixer_conversation(temporal_env, demo_repo, scripted, tmp_path):
    server = scripted(SCENARIOS / "fix-first-attempt.yaml")
    summary, handle = await drive(temporal_env, fix_request(demo_repo, tmp_path, select=[TARGET], candidates=1))
    assert summary.fixed == [TARGET]
    assert [(r.role, r.candidate, r.turn) for r in server.requests] == [
        ("analyzer", 1, 1), ("fixer", 1, 1), ("fixer", 1, 2)]
    (attempt,) = await child_attempts(temporal_env, handle)
    assert attempt.candidates == []


def test_candidates_setting_has_its_option_and_toml_key(tmp_path):
    setting = BY_NAME["candidates"]
    assert (setting.option, setting.toml, setting.default) == ("--candidates", "budgets.candidates", 1)
    assert run_cli(tmp_path, []).candidates == 1
    assert run_cli(tmp_path, ["--candidates", "3"]).candidates == 3
    (tmp_path / "greenloop.toml").write_text("[budgets]\ncandidates = 2\n")
    assert run_cli(tmp_path, []).candidates == 2  # the file's key
    assert run_cli(tmp_path, ["--candidates", "4"]).candidates == 4  # the flag beats the file


def test_the_candidates_share_the_money_left_and_the_test_runs_and_commands():
    llm = LLMSettings(left_usd=0.9, max_test_runs=5, max_commands=1)
    shares = [candidate_llm(llm, 3, c) for c in (1, 2, 3)]
    assert sum(s.left_usd or 0 for s in shares) == pytest.approx(0.9)
    assert [s.max_test_runs for s in shares] == [2, 2, 1] and [s.max_commands for s in shares] == [1, 0, 0]
    assert candidate_llm(LLMSettings(), 2, 1).left_usd is None  # no budget: none made up


async def test_the_candidates_stop_spending_at_the_dollar_budget(temporal_env, demo_repo, scripted, tmp_path):
    # Every call costs about $0.003 (1,000 input tokens at sonnet's price); each candidate keeps reading
    # files and would make 8 calls. The budget leaves each of the 3 candidates about $0.009.
    costly = {"input_tokens": 1000, "output_tokens": 10}
    read = {"tool_calls": [{"name": "read_file", "input": {"path": "shop/cart.py"}}], **costly}
    server = scripted({"name": "candidates-over-budget", "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\ndiscount() is wrong.", **costly}},
        {"trigger": {"role": "fixer"}, "response": read}]})
    budget = 0.03
    request = fix_request(demo_repo, tmp_path, select=[TARGET], candidates=3, max_attempts=1, escalation_deadline_s=5,
                          llm=LLMSettings(model="claude-scripted", max_tool_turns=8, budget_usd=budget))
    summary, handle = await drive(temporal_env, request)
    assert summary.fixed == []

    def cost(r) -> float:
        return usage_of("claude-scripted", SimpleNamespace(**r.response["usage"])).cost_usd
    analysis = sum(cost(r) for r in server.requests if r.role == "analyzer")
    share = (budget - analysis) / 3
    for c in (1, 2, 3):
        costs = [cost(r) for r in server.requests if r.role == "fixer" and r.candidate == c]
        assert 1 < len(costs) < 8, (c, costs)  # each stopped at its share, well before its turns ran out
        assert sum(costs[:-1]) < share <= sum(costs), (c, costs)  # no call started once the share was spent
    assert summary.usage.cost_usd == pytest.approx(sum(cost(r) for r in server.requests))
    assert summary.usage.cost_usd <= budget + 3 * max(cost(r) for r in server.requests)

    # The report says why: each candidate ran out of its share of the budget, and so did the test.
    (attempt,) = await child_attempts(temporal_env, handle)
    assert [c.verdict for c in attempt.candidates] == [Verdict.FAIL] * 3
    assert all("LLM budget" in c.reason and "used up" in c.reason for c in attempt.candidates)
    report = Path(summary.report_markdown or "").read_text()
    assert "none of 3 candidates passed" in report and "LLM budget" in report
    (test,) = summary.tests
    assert any("budget" in line for line in test.history), test.history
