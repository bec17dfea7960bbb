"""Activities on a run's files, sent to the worker that holds them, and how the
workflows learn that this worker is lost.

A host is lost when no worker polls its host queue within the run's
``host_timeout_s`` (the activity fails with a schedule-to-start timeout,
which Temporal never retries), or when the worker that answers no longer has
the files (``WORKSPACE_LOST``: its disk was wiped). Either way the activity
raises ``HostLost``; the suite workflow then rebuilds the workspace on
another worker from its history, and a test's child ends, saying so, so that
its test is driven again there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError, TimeoutType

with workflow.unsafe.imports_passed_through():
    from ..domain.workspace import Workspace
    from ..run_request import FixRequest
    from .options import ActivityOptions, on_host

HOST_LOST = "host_lost"

P = TypeVar("P")
R = TypeVar("R")


class HostLost(ApplicationError):
    """The worker holding a workspace is gone (or lost its files). An
    ``ApplicationError``, so that if one ever escaped the workflow would fail
    with this message rather than retry its task forever."""

    def __init__(self, queue: str, reason: str) -> None:
        super().__init__(f"the worker holding the workspace ({queue}) is lost: {reason}", type=HOST_LOST,
                         non_retryable=True)
        self.queue, self.reason = queue, reason


def lost_reason(exc: ActivityError, queue: str, host_timeout_s: int) -> str | None:
    """Why ``exc`` means the host is lost, or None when it is an ordinary failure."""
    cause = exc.cause
    if isinstance(cause, TimeoutError) and cause.type == TimeoutType.SCHEDULE_TO_START:
        return f"no worker polled {queue} for {host_timeout_s} s"
    if isinstance(cause, ApplicationError) and cause.type == "workspace_lost":
        return cause.message
    return None


async def host_activity(activity: Callable[[P], Awaitable[R]], arg: P, ws: Workspace, request: FixRequest,
                        options: ActivityOptions) -> R:
    """Run ``activity(arg)`` on the worker holding ``ws`` (typed like ``workflow.execute_activity``:
    the activity's result); ``HostLost`` when that worker is gone."""
    try:
        return await workflow.execute_activity(activity, arg, **on_host(ws.host_queue, request.host_timeout_s, options))
    except ActivityError as exc:
        queue = ws.host_queue or workflow.info().task_queue
        if reason := lost_reason(exc, queue, request.host_timeout_s):
            raise HostLost(queue, reason) from exc
        raise
