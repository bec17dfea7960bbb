"""The setup phase inside a run: its own activity before the first suite
run, its environment used by every test run, and a failing setup that fails
the run once (typed ``setup_failed``, never retried, never "no tests")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError

from tests.projectenv.conftest import SRC_LAYOUT, git_init, write
from tests.workflows.conftest import drive, fix_request


@pytest.fixture
def green_src_project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GREENLOOP_HOME", str(tmp_path / "home"))
    files = dict(SRC_LAYOUT)
    files["src/wordy/__init__.py"] = files["src/wordy/__init__.py"].replace("return a - b  # the bug", "return a + b  #")
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


async def test_a_failing_setup_fails_the_run_once_with_setup_failed(temporal_env, green_src_project, tmp_path):
    pyproject = green_src_project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"inflection==0.5.1"', '"greenloop-no-such-package-q7==1.0"'))
    git_init(green_src_project)
    request = fix_request(green_src_project, tmp_path)
    with pytest.raises(WorkflowFailureError) as caught:
        await drive(temporal_env, request, run_id="setup-fails")
    cause = caught.value.cause.cause
    assert cause.type == "setup_failed" and cause.non_retryable
    assert "greenloop-no-such-package-q7" in json.dumps(cause.details, default=str)
    handle = temporal_env.client.get_workflow_handle("setup-fails")
    history = [e async for e in handle.fetch_history_events()]
    starts = [e.activity_task_started_event_attributes.attempt for e in history
              if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED]
    scheduled = [e.activity_task_scheduled_event_attributes.activity_type.name for e in history
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    assert scheduled[-1] == "set_up_environment" and "run_suite" not in scheduled
    assert starts[-1] == 1  # tried once: another try cannot fix it
