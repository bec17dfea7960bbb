"""Kept histories of real runs (a queue run, an escalation answered, a worker lost, a fixer that runs
the test mid-conversation) replay with today's workflow code: a change that would break a run in
flight fails here (``tests/histories/``)."""

from __future__ import annotations

import pytest
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from greenloop.workflows.fix_one_test import FixOneTestWorkflow
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from tests.histories.kept import load_all

KEPT = load_all()
WANTED = {"queue-run", "escalation", "worker-lost", "hands"}


def test_the_kept_runs_are_there():
    assert WANTED <= {name.split("/")[0] for name, _, _ in KEPT}
    assert {t for _, t, _ in KEPT} == {"FixSuiteWorkflow", "FixOneTestWorkflow"}


@pytest.mark.parametrize("name, workflow_type, history", KEPT, ids=[name for name, _, _ in KEPT])
async def test_a_kept_history_replays(name, workflow_type, history):
    replayer = Replayer(workflows=[FixSuiteWorkflow, FixOneTestWorkflow], data_converter=pydantic_data_converter)
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, f"{name} no longer replays: {result.replay_failure}"
