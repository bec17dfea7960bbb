"""Histories of real runs, kept so that every change to the workflows is replayed against them.

``RECORD_HISTORIES=tests/histories pytest tests/workflows -k "<the runs>"`` saves them (a run's
histories across continue-as-new, then each child's) as ``NAME/NN-<workflow type>.json``;
``tests/workflows/test_kept_histories.py`` replays every one with today's workflow code. A kept
history that stops replaying is a determinism break that a run in flight would hit: keep the old
path behind ``workflow.patched`` or record the history again before a release, and say which.
"""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

HERE = Path(__file__).resolve().parent


def child_ids(history: WorkflowHistory) -> list[str]:
    """The children a run started, in order."""
    return [e.start_child_workflow_execution_initiated_event_attributes.workflow_id for e in history.events
            if e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED]


async def save(client: Client, runs: list[WorkflowHistory], folder: Path) -> None:
    """Write a run's histories and its children's (first run of each child only) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    n = 0
    for history in runs:
        _write(folder / f"{n:02d}-FixSuiteWorkflow.json", history)
        n += 1
    for child in dict.fromkeys(c for history in runs for c in child_ids(history)):
        _write(folder / f"{n:02d}-FixOneTestWorkflow.json", await client.get_workflow_handle(child).fetch_history())
        n += 1


def _write(path: Path, history: WorkflowHistory) -> None:
    # The workflow id is part of what replays (a child's id is made from its parent's).
    path.write_text(json.dumps({"workflow_id": history.workflow_id, "history": json.loads(history.to_json())}))


def load_all() -> list[tuple[str, str, WorkflowHistory]]:
    """Every kept history: (name, workflow type, history)."""
    out = []
    for path in sorted(HERE.glob("*/*.json")):
        workflow_type = path.stem.split("-", 1)[1]
        data = json.loads(path.read_text())
        out.append((f"{path.parent.name}/{path.name}", workflow_type,
                    WorkflowHistory.from_json(data["workflow_id"], data["history"])))
    return out
