"""The recorded histories of a workflow across continue-as-new: what replay
checks and the orchestration benchmark read."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory


async def run_chain(client: Client, workflow_id: str, first_run_id: str) -> list[WorkflowHistory]:
    """The histories of every run of a workflow, from ``first_run_id`` following continue-as-new."""
    histories: list[WorkflowHistory] = []
    run_id: str | None = first_run_id
    while run_id:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        histories.append(history)
        last = history.events[-1]
        run_id = (last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
                  if last.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW else None)
    return histories
