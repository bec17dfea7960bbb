"""Connect to Temporal the same way everywhere (CLI, worker, tests): the
pydantic data converter, the OpenTelemetry tracing interceptor, and
Temporal's own environment configuration (TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS settings, config profiles)."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime

from ..domain.errors import ErrorKind, GreenloopError
from ..settings import settings

TASK_QUEUE = settings().task_queue
PRIVATE_PREFIX = f"{TASK_QUEUE}-private-"


def private_queue(run_id: str) -> str:
    """The task queue of a run whose worker lives in the command that started it (``run --scripted``):
    only that command, or ``greenloop resume``, serves it."""
    return PRIVATE_PREFIX + run_id


def configured_address() -> str | None:
    """The cluster address from Temporal's env config or profile, if any is configured."""
    try:
        return ClientConfig.load_client_connect_config().get("target_host")
    except Exception:  # a broken profile file: treated as not configured, connect() reports it
        return None


async def connect(address: str | None = None, namespace: str | None = None, runtime: Runtime | None = None) -> Client:
    """A client for ``address`` (or the configured cluster), typed errors when unreachable.
    ``runtime``: a Temporal runtime of its own (one serving metrics, see greenloop.telemetry)."""
    config = dict(ClientConfig.load_client_connect_config())
    if address:
        config["target_host"] = address
    if namespace:
        config["namespace"] = namespace
    config.setdefault("target_host", "localhost:7233")
    try:
        return await Client.connect(
            **config, data_converter=pydantic_data_converter, interceptors=[TracingInterceptor()], runtime=runtime,
        )
    except RuntimeError as exc:
        raise GreenloopError(
            f"no Temporal server reachable at {config['target_host']}: {exc}",
            kind=ErrorKind.VALIDATION_ERROR, address=config["target_host"],
            suggestion="start one with `greenloop server` (or drop --address to use the embedded one), "
                       "or give the --address of a running cluster",
        ) from None


async def ensure_search_attributes(client: Client) -> None:
    """Register Greenloop's search attributes (dev servers; a cluster's admin
    does it once, see deploy/README.md). Already-registered ones are fine."""
    from temporalio.api.enums.v1 import IndexedValueType
    from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest

    from . import search_attributes as search

    existing = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace))
    missing = {key.name: IndexedValueType.ValueType(key.indexed_value_type.value) for key in search.ALL
               if key.name not in existing.custom_attributes}
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(search_attributes=missing, namespace=client.namespace))


async def queue_pollers(client: Client, task_queue: str, within_s: float = 90.0) -> list[str]:
    """The identities of workers that polled ``task_queue`` (workflows or activities)
    within the last ``within_s`` seconds (a worker's long poll lasts about a minute)."""
    import time

    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    seen: set[str] = set()
    for kind in (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY):
        resp = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=task_queue), task_queue_type=kind))
        for poller in resp.pollers:
            if poller.last_access_time.ToSeconds() >= time.time() - within_s:
                seen.add(poller.identity)
    return sorted(seen)
