"""The setup phase inside a run: its own activity before the first suite
run, its environment used by every test run, and a failing setup that fails
the run once (typed ``setup_failed``, never retried, never "no tests")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType

from greenloop.domain.states import RunOutcome
from tests.projectenv.conftest import SRC_LAYOUT, git_init, write
from tests.workflows.conftest import drive, fix_request, replays


@pytest.fixture
def green_src_project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GREENLOOP_HOME", str(tmp_path / "home"))
    files = dict(SRC_LAYOUT)
    code = files["src/wordy/__init__.py"]
    files["src/wordy/__init__.py"] = code.replace("return a - b  # the bug", "return a + b  #")
    return git_init(write(tmp_path / "wordy", files))


async def test_a_run_sets_the_project_up_before_its_first_suite_run(temporal_env, green_src_project, tmp_path):
    request = fix_request(green_src_project, tmp_path)
    summary, handle = await drive(temporal_env, request)
    assert summary.state == "completed" and summary.initial.passed == 2 and summary.initial.failed == 0
    assert any(n.startswith("environment: a virtualenv with the project with extras test") for n in summary.notes)
    events = [json.loads(line) for line in (Path(request.run_dir) / "events.jsonl").read_text().splitlines()]
    kinds = [e["event_type"] for e in events]
    assert "environment" in kinds and kinds.index("environment") < kinds.index("suite_run")
    scheduled = [e.activity_task_scheduled_event_attributes.activity_type.name
                 async for e in handle.fetch_history_events()
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    assert scheduled.index("set_up_environment") < scheduled.index("run_suite")


async def test_a_failing_setup_ends_the_run_once_with_setup_failed(temporal_env, green_src_project, tmp_path):
    pyproject = green_src_project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"inflection==0.5.1"', '"greenloop-no-such-package-q7==1.0"'))
    git_init(green_src_project)
    request = fix_request(green_src_project, tmp_path)
    summary, handle = await drive(temporal_env, request, run_id="setup-fails")
    assert summary.state == RunOutcome.SETUP_FAILED and not summary.baseline_read
    assert "greenloop-no-such-package-q7" in summary.reason  # the end of the setup's log
    assert summary.initial is None and summary.final is None and not summary.fixed
    assert "setup_failed" in Path(summary.report_markdown).read_text()
    assert await replays(temporal_env.client, handle) == 1
    history = [e async for e in handle.fetch_history_events()]
    starts = [e.activity_task_started_event_attributes.attempt for e in history
              if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED]
    scheduled = [e.activity_task_scheduled_event_attributes.activity_type.name for e in history
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    assert scheduled[-2:] == ["set_up_environment", "finalize_run"] and "run_suite" not in scheduled
    # (each activity has one started event, written with its last attempt)
    assert dict(zip(scheduled, starts))["set_up_environment"] == 1  # tried once: another try cannot fix it


TWO_BUGS = {
    "src/wordy/mult.py": """
        def mul(a, b):
            return a + b
        """,
    "tests/test_mult.py": """
        from wordy.mult import mul


        def test_mul():
            assert mul(3, 4) == 12
        """,
}
FIX_BOTH = {
    "name": "wordy-two-fixes",
    "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\nthe wrong operator."}},
        {"trigger": {"role": "fixer", "turn": 1, "context": "test_add"}, "response": {"tool_calls": [
            {"name": "replace_in_file", "input": {"path": "src/wordy/__init__.py", "old_text": "return a - b",
                                                  "new_text": "return a + b"}}]}},
        {"trigger": {"role": "fixer", "turn": 1, "context": "test_mul"}, "response": {"tool_calls": [
            {"name": "replace_in_file", "input": {"path": "src/wordy/mult.py", "old_text": "return a + b",
                                                  "new_text": "return a * b"}}]}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "fixed the operator."}},
    ],
}


# Each mode: every test's fix is made and validated in its own worktree, then merged; queue mode:
# fixes are checked in batches in a scratch worktree, then accepted. Both judge a worktree's code.
ACCEPTED = {"each": "fix merged into the run workspace", "queue": "fix accepted in batch "}


@pytest.mark.parametrize("validation", ["queue", "each"])
async def test_fixes_made_in_worktrees_are_judged_on_their_own_code_not_the_users_checkout(
        temporal_env, scripted, tmp_path, monkeypatch, validation):
    """The issue's trap: the user's checkout has a .venv with an editable install of
    itself; under --sandbox local, tests used to import that unfixed checkout and every
    correct fix was judged FAIL. Now the run builds its own environment and each
    worktree's tests import the worktree's code."""
    import subprocess

    from greenloop.projectenv.python import base_python, uv_binary

    monkeypatch.setenv("GREENLOOP_HOME", str(tmp_path / "home"))
    repo = write(tmp_path / "wordy", {**SRC_LAYOUT, **TWO_BUGS})
    venv = repo / ".venv"
    subprocess.run([uv_binary(), "venv", "-q", "--python", base_python(), str(venv)], check=True)
    subprocess.run([uv_binary(), "pip", "install", "-q", "--python", str(venv / "bin/python"), "-e", f"{repo}[test]"],
                   check=True, capture_output=True, timeout=300)
    git_init(repo)
    scripted(FIX_BOTH)
    request = fix_request(repo, tmp_path, concurrency=2, validation=validation,
                          sandbox=fix_request(repo, tmp_path).sandbox.model_copy(update={"backend": "local"}))
    summary, _ = await drive(temporal_env, request)
    assert summary.state == "completed"
    assert sorted(summary.fixed) == ["tests/test_mult.py::test_mul", "tests/test_wordy.py::test_add"]
    assert summary.final.failed == 0 and summary.final.passed == 3
    assert any("the workspace's own .venv was not reused" in n and "editable" in n for n in summary.notes)
    for view in summary.tests:
        assert view.history[-1].startswith(ACCEPTED[validation]), view.history
    # The user's checkout is untouched (its editable install still imports the bugs).
    assert "return a - b" in (repo / "src/wordy/__init__.py").read_text()
