"""The reusable scripted-LLM scenarios (samples/scenarios) on the demo
repository's test_discount: each ends in the expected state with the
repository in the expected content, asserted on the workflow's own record
and on the scripted LLM's request log."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowHandle

from greenloop.domain.answers import Answer, AnswerChoice
from greenloop.domain.states import FixState, Verdict
from greenloop.llm.scripted_server import message_text
from greenloop.reports.record import FixOneTestResult, RunSummary
from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from tests.workflows.conftest import DEMO, drive, fix_request, wait_for_view

SCENARIOS = DEMO.parent / "scenarios"
TARGET = "tests/test_cart.py::test_discount"
FIXED_LINE = "return round(self.total() * (100 - percent) / 100, 2)"


async def run_scenario(env, repo: Path, tmp_path: Path, **overrides) -> tuple[RunSummary, WorkflowHandle, str]:
    request = fix_request(repo, tmp_path, select=[TARGET], **overrides)
    summary, handle = await drive(env, request)
    return summary, handle, f"{request.run_dir}/workspace"


def workspace_cart(ws: str) -> str:
    return Path(ws, "shop/cart.py").read_text()


async def child_attempts(env, handle: WorkflowHandle) -> list:
    child = env.client.get_workflow_handle(child_id(handle.id, TARGET), result_type=FixOneTestResult)
    return (await child.result()).attempts


async def test_fix_on_first_attempt(temporal_env, demo_repo, scripted, tmp_path):
    server = scripted(SCENARIOS / "fix-first-attempt.yaml")
    summary, handle, ws = await run_scenario(temporal_env, demo_repo, tmp_path)
    assert summary.fixed == [TARGET] and summary.attempts == 1
    assert FIXED_LINE in workspace_cart(ws)
    assert [(r.role, r.turn) for r in server.requests] == [("analyzer", 1), ("fixer", 1), ("fixer", 2)]
    assert summary.usage.calls == 3 and summary.usage.input_tokens > 0 and summary.usage.cost_usd > 0


async def test_wrong_fix_then_right_fix_gets_the_feedback(temporal_env, demo_repo, scripted, tmp_path):
    server = scripted(SCENARIOS / "wrong-then-right.yaml")
    summary, handle, ws = await run_scenario(temporal_env, demo_repo, tmp_path)
    assert summary.fixed == [TARGET] and summary.attempts == 2
    attempts = await child_attempts(temporal_env, handle)
    assert [a.verdict for a in attempts] == [Verdict.FAIL, Verdict.PASS]
    assert attempts[0].reason.startswith("the test is still failed")
    # The failed validation's output reached the second attempt's prompt.
    second = [r for r in server.requests if r.role == "fixer" and r.iteration == 2 and r.turn == 1][0]
    prompt = message_text(second.body["messages"][0])  # text or content blocks (cache breakpoints)
    assert "Attempt 1: FAIL" in prompt and "self.total() - percent" in prompt and "DIFFERENT approach" in prompt
    assert FIXED_LINE in workspace_cart(ws) and "self.total() - percent" not in workspace_cart(ws)


async def test_regression_is_rolled_back(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIOS / "regression.yaml")
    summary, handle, ws = await run_scenario(temporal_env, demo_repo, tmp_path)
    attempts = await child_attempts(temporal_env, handle)
    assert [a.verdict for a in attempts] == [Verdict.REGRESSION, Verdict.PASS]
    assert "test_skus_sorted" in attempts[0].reason
    assert summary.regressions_prevented == 1 and summary.fixed == [TARGET]
    cart = workspace_cart(ws)
    assert "return sorted(self.lines)" in cart and FIXED_LINE in cart


async def test_unfixable_test_escalates_and_a_person_skips_it(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIOS / "unfixable.yaml")
    queue = f"q-{uuid.uuid4().hex[:6]}"
    request = fix_request(demo_repo, tmp_path, select=[TARGET], max_attempts=2)
    client = temporal_env.client
    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"sc-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue)
        child = client.get_workflow_handle(child_id(handle.id, TARGET))
        view = await wait_for_view(client, child.id, lambda v: v.state == FixState.ESCALATED, "ESCALATED")
        assert view.state == FixState.ESCALATED and view.attempt == 2
        # The validator refuses what the state cannot take; a real answer is taken.
        state = await child.execute_update("answer", Answer(choice=AnswerChoice.SKIP, by="tester", note="later"),
                                           result_type=str)
        assert state == "SKIPPED"
        summary = await handle.result()
    assert summary.skipped == [TARGET] and summary.fixed == []
    assert "percent / 100, 2)  # bug" in workspace_cart(f"{request.run_dir}/workspace")  # nothing left applied


async def test_escalation_deadline_applies_the_default_answer(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIOS / "unfixable.yaml")
    summary, _, _ = await run_scenario(temporal_env, demo_repo, tmp_path, max_attempts=1, escalation_deadline_s=1,
                                       escalation_default=AnswerChoice.SKIP)
    assert summary.skipped == [TARGET]


async def test_rate_limited_provider_is_retried_with_backoff(temporal_env, demo_repo, scripted, tmp_path):
    server = scripted(SCENARIOS / "rate-limited.yaml")
    summary, _, ws = await run_scenario(temporal_env, demo_repo, tmp_path)
    assert summary.fixed == [TARGET] and summary.attempts == 1
    assert [r.status for r in server.requests if r.role == "fixer"][:2] == [429, 529]
    assert FIXED_LINE in workspace_cart(ws)


async def test_malformed_tool_call_fails_the_attempt_with_the_reason(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIOS / "malformed-tool-call.yaml")
    summary, handle, ws = await run_scenario(temporal_env, demo_repo, tmp_path)
    attempts = await child_attempts(temporal_env, handle)
    assert attempts[0].verdict == Verdict.FAIL and "malformed tool call" in attempts[0].reason
    assert "patch_file" in attempts[0].reason
    assert summary.fixed == [TARGET] and len(attempts) == 2


async def test_edit_outside_the_repository_is_refused(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIOS / "edit-outside-repo.yaml")
    summary, handle, ws = await run_scenario(temporal_env, demo_repo, tmp_path, max_attempts=1,
                                             escalation_deadline_s=1, escalation_default=AnswerChoice.ABORT)
    attempts = await child_attempts(temporal_env, handle)
    assert attempts[0].verdict == Verdict.FAIL and "edits refused" in attempts[0].reason
    assert summary.aborted == [TARGET]
    assert not list(tmp_path.rglob("greenloop-escape.txt"))
    assert not Path(ws, ".git/hooks/pre-commit").exists()


@pytest.mark.parametrize("policy, state", [("reject", "skipped"), ("escalate", "skipped")])
async def test_fake_fix_is_rejected(temporal_env, demo_repo, scripted, tmp_path, policy, state):
    from greenloop.domain.llm import LLMSettings

    scripted(SCENARIOS / "fake-fix.yaml")
    summary, handle, ws = await run_scenario(
        temporal_env, demo_repo, tmp_path, max_attempts=2, escalation_deadline_s=1,
        llm=LLMSettings(model="claude-scripted", max_tool_turns=8, fake_fix_policy=policy))
    attempts = await child_attempts(temporal_env, handle)
    assert "rejected as a fake fix" in attempts[0].reason and "skip" in attempts[0].reason
    # "escalate" hands the test to a person after the first rejection; "reject" uses up the attempts.
    assert len(attempts) == (1 if policy == "escalate" else 2)
    assert getattr(summary, state) == [TARGET]
    assert "@pytest.mark.skip" not in Path(ws, "tests/test_cart.py").read_text()
