"""Who must act: a test's child tells its run each state it enters, so the run's
status and its Web UI details show the tests in flight as they are, and name
every test that waits for a person, with a link to its workflow and the exact
payload that answers it.

The child sends its ``FixStatusView`` (without its history) over the run's
``test_state`` signal (``StateReporter``), one signal at a time and in order,
and waits for the last one to be delivered before it completes: the run never
hears of a state after the child's result. ``waiting_details`` is the part of
the run's details that lists the tests waiting for a person.

Pure workflow code: no I/O.
"""

from __future__ import annotations

import asyncio
import urllib.parse

from temporalio import workflow
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from ..reports.record import FixStatusView
    from .control import ANSWER_HINT

# The run's signal a child tells its state with (by name: the run's module imports the child's).
TEST_STATE_SIGNAL = "test_state"
# The Web UI's saved-list (visibility) query for the tests waiting for a person (README: Web UI).
WAITING_QUERY = "WorkflowType = 'FixOneTestWorkflow' AND GreenloopState = 'ESCALATED' AND ExecutionStatus = 'Running'"


def workflow_link(workflow_id: str) -> str:
    """A workflow's page in the Web UI, relative to the Web UI's own address."""
    namespace = urllib.parse.quote(workflow.info().namespace, safe="")
    return f"/namespaces/{namespace}/workflows/{urllib.parse.quote(workflow_id, safe='')}"


def waiting_details(views: list[FixStatusView]) -> str:
    """The run's details (Markdown) that name each test waiting for a person ("" when none does)."""
    waiting = [v for v in views if v.waiting and v.workflow_id]
    if not waiting:
        return ""
    lines = [f"**waiting for a person ({len(waiting)}):**", ""]
    for v in waiting:
        lines.append(f"- [{v.test_id}]({workflow_link(v.workflow_id or '')}) (workflow `{v.workflow_id}`, "
                     f"attempt {v.attempt}): {ANSWER_HINT}")
    return "\n".join(lines)


class StateReporter:
    """Tells the child's parent run each state the test enters: in order, one signal at a
    time, the latest state only when several came while a signal was on its way."""

    def __init__(self) -> None:
        self._latest: FixStatusView | None = None
        self._sent: FixStatusView | None = None
        self._sending = False

    def tell(self, view: FixStatusView) -> None:
        parent = workflow.info().parent
        if parent is None:  # started alone (not by a run): nobody to tell
            return
        self._latest = view
        if not self._sending:
            self._sending = True
            asyncio.ensure_future(self._send(parent.workflow_id))

    async def _send(self, parent_id: str) -> None:
        handle = workflow.get_external_workflow_handle(parent_id)
        try:
            while self._latest is not None and self._latest is not self._sent:
                latest = self._latest
                await handle.signal(TEST_STATE_SIGNAL, latest)
                self._sent = latest
        except (FailureError, asyncio.CancelledError):
            pass  # the run is gone (terminated): its status no longer matters
        finally:
            self._sending = False

    async def delivered(self) -> None:
        """Wait until the run has the last state told (before the child completes)."""
        await workflow.wait_condition(lambda: not self._sending)
