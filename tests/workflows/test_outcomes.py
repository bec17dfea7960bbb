"""Outcomes that never lie, on the real dev server with a real worker and sandbox:
a suite that crashes before results, finds no tests, times out or exits non-zero
with every test passing ends the run with that outcome and the reason (never
``completed``); a failure inside an attempt fails that attempt, rolled back, and
the run goes on; a default ``retry`` stops at the test's budgets."""

from __future__ import annotations

import asyncio
import textwrap
import uuid
from pathlib import Path

from temporalio.api.sdk.v1 import WorkflowMetadata

from greenloop.cli.exit_codes import ExitCode, for_summary
from greenloop.domain.states import FixState, RunOutcome, Verdict
from greenloop.reports.record import FixOneTestResult
from greenloop.sandbox.models import SandboxSettings
from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from tests.workflows.conftest import BACKEND, drive, fix_request

BUG = "return a - b  # bug: should add"
FIX = "return a + b"
TARGET = "tests/test_calc.py::test_add"


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def calc_project(root: Path, **extra: str) -> Path:
    """A small pytest project with one failing test (``test_add``) and an unrelated module."""
    return project(root, {
        "pytest.ini": "[pytest]\ntestpaths = tests\n",
        "calc/__init__.py": "",
        "calc/ops.py": f"def add(a, b):\n    {BUG}\n\n\ndef mul(a, b):\n    return a * b\n",
        "calc/extra.py": "def shout(text):\n    return text.upper()\n",
        "tests/test_calc.py": "from calc.ops import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                              "def test_mul():\n    assert mul(2, 3) == 6\n",
        **extra,
    })


async def drive_and_read_details(env, request) -> tuple:
    """Drive a run to its end; its summary, handle, and the current details the Web UI shows."""
    queue = f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(env.client, task_queue=queue):
        handle = await env.client.start_workflow(FixSuiteWorkflow.run, request, id=f"run-{uuid.uuid4().hex[:6]}",
                                                 task_queue=queue)
        summary = await handle.result()
        meta = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    return summary, handle, meta.current_details


async def stopped_early(env, repo: Path, tmp_path: Path, **overrides):
    summary, handle, details = await drive_and_read_details(env, fix_request(repo, tmp_path, **overrides))
    assert details.startswith(f"**finished: {summary.state.value}**") and summary.reason.strip() in details
    report = Path(summary.report_markdown or "").read_text()
    assert not summary.baseline_read and summary.attempts == 0 and summary.tests == []
    assert f"outcome: **{summary.state.value}**" in report and "completed" not in report.split("\n")[3]
    assert for_summary(summary) == ExitCode.SUITE_NOT_READ
    desc = await handle.describe()
    assert desc.search_attributes.get("GreenloopState") == [summary.state.value.upper()]
    return summary, report


async def test_a_suite_that_crashes_before_any_result_is_unreadable(temporal_env, tmp_path):
    # The test process crashes (SIGSEGV) while pytest loads the conftest: no test ever reports.
    repo = calc_project(tmp_path / "repo", **{"tests/conftest.py": "import ctypes\n\nctypes.string_at(0)\n"})
    summary, report = await stopped_early(temporal_env, repo, tmp_path)
    assert summary.state == RunOutcome.SUITE_UNREADABLE
    assert "exited 139 (killed by SIGSEGV) before any test reported" in summary.reason
    assert "before: not read" in report and "killed by SIGSEGV" in report


async def test_a_suite_with_no_tests_is_unreadable(temporal_env, tmp_path):
    repo = project(tmp_path / "repo", {"pytest.ini": "[pytest]\ntestpaths = tests\n",
                                       "tests/test_nothing.py": "VALUE = 1\n"})
    summary, _ = await stopped_early(temporal_env, repo, tmp_path)
    assert summary.state == RunOutcome.SUITE_UNREADABLE and "found no tests (exit 5)" in summary.reason


async def test_a_project_whose_language_cannot_be_told_ends_with_that_outcome(temporal_env, tmp_path):
    # What the CLI refuses up front (a local path) can still reach a run (a git URL, an API call):
    # it ends as suite_unreadable saying which setting to give, never a failed run left PREPARING.
    repo = project(tmp_path / "repo", {"README.md": "# notes\n", "check.sh": "echo fine\n"})
    summary, report = await stopped_early(temporal_env, repo, tmp_path)
    assert summary.state == RunOutcome.SUITE_UNREADABLE
    assert summary.reason.startswith("cannot tell how to test this project: Cannot detect programming language.")
    assert "Give its language" in summary.reason and "Give its language" in report


async def test_a_suite_that_times_out_says_so(temporal_env, tmp_path):
    repo = calc_project(tmp_path / "repo", **{"tests/test_slow.py": "import time\n\n\ndef test_slow():\n"
                                                                     "    time.sleep(60)\n"})
    summary, _ = await stopped_early(temporal_env, repo, tmp_path,
                                     sandbox=SandboxSettings(backend=BACKEND, timeout_s=4))
    assert summary.state == RunOutcome.SUITE_TIMED_OUT and "time limit" in summary.reason


async def test_a_non_zero_exit_with_every_test_passing_is_unreadable(temporal_env, tmp_path):
    repo = calc_project(tmp_path / "repo")
    (repo / "calc/ops.py").write_text((repo / "calc/ops.py").read_text().replace(BUG, FIX))
    summary, _ = await stopped_early(temporal_env, repo, tmp_path, framework="pytest",
                                     test_command="python -m pytest && exit 3")
    assert summary.state == RunOutcome.SUITE_UNREADABLE
    assert "every test that reported passed" in summary.reason and "exited 3" in summary.reason


def breaks_the_build_scenario() -> dict:
    fix = {"name": "replace_in_file", "input": {"path": "calc/ops.py", "old_text": BUG, "new_text": FIX}}
    broken = {"name": "replace_in_file",
              "input": {"path": "calc/extra.py", "old_text": "return text.upper()", "new_text": "return text.upper("}}
    return {"name": "breaks-the-build", "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\nadd() subtracts."}},
        {"trigger": {"role": "fixer", "iteration": 1, "turn": 1}, "response": {"tool_calls": [fix, broken]}},
        {"trigger": {"role": "fixer", "iteration": 2, "turn": 1}, "response": {"tool_calls": [fix]}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "add() adds now."}},
    ]}


async def test_a_fix_that_breaks_the_build_is_a_failed_attempt_rolled_back(temporal_env, scripted, tmp_path):
    # The test passes alone (no build for one test), the suite's build fails: the attempt is
    # rolled back with the reason, and the run goes on to the right fix.
    repo = calc_project(tmp_path / "repo")
    scripted(breaks_the_build_scenario())
    request = fix_request(repo, tmp_path, select=[TARGET], build_command="python -m compileall -q calc")
    summary, handle = await drive(temporal_env, request)
    assert summary.state == RunOutcome.COMPLETED and summary.fixed == [TARGET] and summary.attempts == 2
    result = await temporal_env.client.get_workflow_handle(
        child_id(handle.id, TARGET), result_type=FixOneTestResult).result()
    first, second = result.attempts
    assert first.verdict == Verdict.REGRESSION and "breaks the build" in first.reason
    assert "calc/extra.py" in first.files and second.verdict == Verdict.PASS and second.files == ["calc/ops.py"]
    workspace = Path(request.run_dir or "", "workspace")
    assert (workspace / "calc/extra.py").read_text() == (repo / "calc/extra.py").read_text()  # rolled back
    assert FIX in (workspace / "calc/ops.py").read_text()
    assert for_summary(summary) == ExitCode.GREEN
    assert "breaks the build" in Path(summary.report_markdown or "").read_text()


async def test_an_activity_failing_inside_an_attempt_fails_only_that_attempt(temporal_env, scripted, tmp_path):
    # The provider refuses the first fixer request (400: never retried): attempt 1 fails with
    # that reason; attempt 2 fixes the test; the run completes.
    repo = calc_project(tmp_path / "repo")
    fix = {"name": "replace_in_file", "input": {"path": "calc/ops.py", "old_text": BUG, "new_text": FIX}}
    scripted({"name": "refused-once", "rules": [
        {"priority": 100, "times": 1, "trigger": {"role": "fixer"},
         "response": {"error": {"status": 400, "message": "prompt is malformed"}}},
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\nadd() subtracts."}},
        {"trigger": {"role": "fixer", "turn": 1}, "response": {"tool_calls": [fix]}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "Fixed."}},
    ]})
    summary, handle = await drive(temporal_env, fix_request(repo, tmp_path, select=[TARGET]))
    assert summary.state == RunOutcome.COMPLETED and summary.fixed == [TARGET] and summary.attempts == 2
    result = await temporal_env.client.get_workflow_handle(
        child_id(handle.id, TARGET), result_type=FixOneTestResult).result()
    assert result.attempts[0].verdict == Verdict.FAIL
    assert result.attempts[0].reason.startswith("the fixer failed (invalid_request_error)")
    assert "prompt is malformed" in result.attempts[0].reason


async def test_a_default_retry_stops_at_the_run_budget(temporal_env, scripted, tmp_path):
    # Nobody answers, the default answer is retry and the fixer never finds a fix: the retries
    # stop when the run's time budget is used up, the test is left ESCALATED, the run ends.
    repo = calc_project(tmp_path / "repo")
    scripted(Path(__file__).resolve().parents[2] / "samples/scenarios/unfixable.yaml")
    request = fix_request(repo, tmp_path, select=[TARGET], max_attempts=1, escalation_deadline_s=1,
                          escalation_default="retry", run_budget_s=10)
    summary, handle = await asyncio.wait_for(drive(temporal_env, request), timeout=240)
    assert summary.state == RunOutcome.COMPLETED and summary.escalated == [TARGET]
    assert for_summary(summary) == ExitCode.TESTS_LEFT
    result = await temporal_env.client.get_workflow_handle(
        child_id(handle.id, TARGET), result_type=FixOneTestResult).result()
    assert result.state == FixState.ESCALATED and result.answer and result.answer.by == "deadline"
    assert 2 <= len(result.attempts) <= 60  # retried by default, then stopped
    view = next(v for v in summary.tests if v.test_id == TARGET)
    assert view.state == FixState.ESCALATED


async def test_a_test_out_of_memory_leaves_the_rest_of_the_run_intact(temporal_env, scripted, tmp_path):
    # One test allocates past the sandbox's memory limit: it is errored (out_of_memory), every other
    # result is kept, and the run fixes the failing test it was asked to fix.
    hog = "def test_hog():\n    blocks = [bytearray(1 << 20) for _ in range(600)]\n    assert blocks\n"
    repo = calc_project(tmp_path / "repo", **{"tests/test_hog.py": hog})
    fix = {"name": "replace_in_file", "input": {"path": "calc/ops.py", "old_text": BUG, "new_text": FIX}}
    scripted({"name": "fix-add", "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\nadd() subtracts."}},
        {"trigger": {"role": "fixer", "turn": 1}, "response": {"tool_calls": [fix]}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "Fixed."}},
    ]})
    request = fix_request(repo, tmp_path, select=[TARGET],
                          sandbox=SandboxSettings(backend=BACKEND, timeout_s=120, memory_mb=160))
    summary, _ = await drive(temporal_env, request)
    assert summary.state == RunOutcome.COMPLETED and summary.fixed == [TARGET]
    assert summary.initial and (summary.initial.passed, summary.initial.failed, summary.initial.errored) == (1, 1, 1)
    assert summary.still_failing == ["tests/test_hog.py::test_hog"]
    assert for_summary(summary) == ExitCode.TESTS_LEFT


def _cli_lines(summary) -> str:
    from greenloop.cli.runs import _print_summary, console

    with console.capture() as out:
        _print_summary(summary)
    return out.get()


async def test_a_suite_whose_output_passes_the_cap_says_so_everywhere(temporal_env, tmp_path):
    # output without end before the first test, under a 64 kB cap (the run's output_bytes setting)
    repo = calc_project(tmp_path / "repo", **{"tests/conftest.py": "while True:\n    print('x' * 1000)\n"})
    summary, report = await stopped_early(temporal_env, repo, tmp_path, framework="pytest",
                                          test_command="python -m pytest -s",
                                          sandbox=SandboxSettings(backend=BACKEND, timeout_s=120,
                                                                  output_bytes=64 * 1024))
    assert summary.state == RunOutcome.SUITE_UNREADABLE and summary.output_cut
    assert "printed more than the output cap (65536 bytes, setting output_bytes, --output-bytes)" in summary.reason
    assert "before any test reported" in summary.reason and "exited 143" not in summary.reason
    assert "output cap" in report
    cli = _cli_lines(summary)
    assert "--output-bytes" in cli and "run the test command by hand" not in cli


async def test_counts_that_disagree_with_the_runners_total_are_said_everywhere(temporal_env, tmp_path):
    # Every test passes, but one result line never reaches Greenloop: the runner said 3, the output shows 2.
    repo = project(tmp_path / "repo", {"test_three.py": """
        import unittest


        class T(unittest.TestCase):
            def test_one(self):
                pass

            def test_two(self):
                pass

            def test_three(self):
                pass
        """})
    summary, _, details = await drive_and_read_details(temporal_env, fix_request(
        repo, tmp_path, framework="unittest", test_command="python -m unittest -v 2>&1 | grep -v test_two"))
    said = "the unittest summary counted 3 total; the per-test results have 2 total"
    assert summary.state == RunOutcome.COMPLETED and summary.caveats == [said]
    assert f"**caution**: {said}" in details
    assert f"- caution: {said}" in Path(summary.report_markdown or "").read_text()
    assert said in Path(summary.report_html or "").read_text()
    assert f"caution: {said}" in _cli_lines(summary)
