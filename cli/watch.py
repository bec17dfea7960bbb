"""Why a run is not moving, said within seconds rather than waited out in silence:
no worker polls its task queue, or an activity keeps failing and is being retried."""

from __future__ import annotations

import shlex

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from ..server.client import private_prefix

# An activity failing this many times in a row is worth saying (the first retry is routine).
RETRIES_WORTH_SAYING = 2


async def has_pollers(client: Client, task_queue: str) -> bool:
    """Whether any worker polled ``task_queue`` for workflow tasks lately (Temporal's DescribeTaskQueue)."""
    resp = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
        namespace=client.namespace, task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW))
    return len(resp.pollers) > 0


def no_worker(task_queue: str, run_id: str) -> str:
    resume = f"`greenloop resume {shlex.quote(run_id)}` serves it from a command"
    if task_queue.startswith(private_prefix()):  # its worker was the command that started it
        return f"no worker is polling the run's own task queue {task_queue!r}: the run waits until one does. {resume}"
    return (f"no worker is polling task queue {task_queue!r}: the run waits until one does. "
            f"Start one with `greenloop worker` (same --address and namespace), or {resume}")


async def stalls(client: Client, handle: WorkflowHandle, task_queue: str) -> list[str]:
    """What keeps a running workflow from progressing now (empty: nothing known)."""
    said: list[str] = []
    try:
        if not await has_pollers(client, task_queue):
            said.append(no_worker(task_queue, handle.id))
        desc = await handle.describe()
    except RPCError:
        return said
    for act in desc.raw_description.pending_activities:
        if act.attempt >= RETRIES_WORTH_SAYING and act.last_failure.message:
            said.append(f"{act.activity_type.name} failed {act.attempt - 1} time(s) and is being retried: "
                        f"{act.last_failure.message.splitlines()[0][:300]}")
    return said
