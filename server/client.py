"""Connect to Temporal the same way everywhere (CLI, worker, tests): the
pydantic data converter, the OpenTelemetry tracing interceptor, and
Temporal's own environment configuration (TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS settings, config profiles)."""

from __future__ import annotations

import dataclasses
import hashlib

from temporalio import workflow
from temporalio.api.failure.v1 import Failure
from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DefaultFailureConverter, PayloadConverter
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime
from temporalio.service import RPCError

from ..domain.errors import ErrorKind, GreenloopError, Refused
from ..settings import settings

# A failure's message, stack trace and details past this many characters (bytes for details) are kept
# in a file and trimmed in the failure: Temporal refuses a failure past its size limit and keeps only
# "Failure exceeds size limit" (a long model answer, a long test output in a message would be lost).
FAILURE_TEXT_LIMIT = 16_000


class FailureConverter(DefaultFailureConverter):
    """Temporal's, except that a request a run refuses (``Refused``: an Update's bad input) travels
    without the worker's stack trace: the Web UI and the CLI show its message, which says what to type;
    and a long failure is kept by reference (``keep_long_failure``)."""

    def to_failure(self, exception: BaseException, payload_converter: PayloadConverter, failure: Failure) -> None:
        super().to_failure(exception, payload_converter, failure)
        # By its type's name: a workflow's sandbox has its own copy of the class.
        if failure.application_failure_info.type == Refused.__name__:
            failure.stack_trace = ""
        keep_long_failure(failure)


def keep_long_failure(failure: Failure, limit: int = FAILURE_TEXT_LIMIT) -> None:
    """Trim a too long message, stack trace or details of ``failure`` (its causes are converted each on
    their own), keeping its whole text in a file under $GREENLOOP_HOME/failures that the message names."""
    details = failure.application_failure_info.details if failure.HasField("application_failure_info") else None
    size = sum(p.ByteSize() for p in details.payloads) if details is not None else 0
    if len(failure.message) <= limit and len(failure.stack_trace) <= limit and size <= limit:
        return
    text = (f"message: {failure.message}\n\nstack trace:\n{failure.stack_trace}\n\ndetails:\n"
            + (b"\n".join(p.data for p in details.payloads).decode(errors="replace") if details else ""))
    kept = " (trimmed: a workflow keeps no files)"
    if not workflow.in_workflow():  # a workflow's code does no I/O: its own failures are only trimmed
        folder = settings().home / "failures"
        path = folder / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.txt"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            kept = f" (trimmed: the whole failure is in {path})"
        except (OSError, GreenloopError) as exc:
            kept = f" (trimmed: the whole failure could not be kept: {exc})"
    if len(failure.message) > limit:
        failure.message = failure.message[:limit] + " [...]"
    failure.message += kept
    failure.stack_trace = failure.stack_trace[-limit:]
    if details is not None and size > limit:
        failure.application_failure_info.ClearField("details")


DATA_CONVERTER = dataclasses.replace(pydantic_data_converter, failure_converter_class=FailureConverter)


def shared_queue() -> str:
    """The shared task queue (``GREENLOOP_TASK_QUEUE``), read when asked: an invalid variable
    is said by the command that meets it, never at import."""
    return settings().task_queue


def private_prefix() -> str:
    """The start of every private task queue's name (a run served by the command that started it)."""
    return f"{shared_queue()}-private-"


def private_queue(run_id: str) -> str:
    """The task queue of a run whose worker lives in the command that started it (``run --scripted``):
    only that command, or ``greenloop resume``, serves it."""
    return private_prefix() + run_id


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
            **config, data_converter=DATA_CONVERTER, interceptors=[TracingInterceptor()], runtime=runtime,
        )
    except ValueError as exc:  # the SDK refuses the address itself
        raise GreenloopError(f"{config['target_host']!r} is not a Temporal address: {exc}",
                             kind=ErrorKind.VALIDATION_ERROR, address=config["target_host"],
                             suggestion="give --address HOST:PORT (or set TEMPORAL_ADDRESS), e.g. localhost:7233") from None
    except RuntimeError as exc:
        raise GreenloopError(
            f"no Temporal server reachable at {config['target_host']} ({unreachable_because(exc)})",
            kind=ErrorKind.VALIDATION_ERROR, address=config["target_host"],
            suggestion="start one with `greenloop server` (or drop --address to use the embedded one), "
                       "or give the --address of a running cluster",
        ) from None


# What the SDK's transport error says, in a few words (its full text under GREENLOOP_DEBUG).
_TRANSPORT_REASONS = (("connection refused", "connection refused: nothing listens on that port"),
                      ("dns error", "the host name does not resolve"),
                      ("failed to lookup address", "the host name does not resolve"),
                      ("timed out", "the connection timed out"),
                      ("tls", "the TLS handshake failed"),
                      ("invalid uri", "not a host:port address"))


def unreachable_because(exc: Exception) -> str:
    """Why a connection failed, in a few words (never the transport's raw dump unless debugging)."""
    if settings().debug:
        return str(exc)
    text = str(exc).lower()
    return next((why for needle, why in _TRANSPORT_REASONS if needle in text), "the connection failed")


async def ensure_search_attributes(client: Client) -> None:
    """Register Greenloop's search attributes where the namespace lacks them (a dev server; a
    cluster that lets this client do it; otherwise its admin does it once, deploy/README.md).
    Already-registered ones are fine. Without them every run's first workflow task fails
    forever (BadSearchAttributes): a namespace that lacks them and cannot get them here is a
    typed error before any run starts or any worker polls."""
    from temporalio.api.enums.v1 import IndexedValueType
    from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest

    from . import search_attributes as search

    try:
        existing = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace))
        missing = {key.name: IndexedValueType.ValueType(key.indexed_value_type.value) for key in search.ALL
                   if key.name not in existing.custom_attributes}
        if missing:
            await client.operator_service.add_search_attributes(
                AddSearchAttributesRequest(search_attributes=missing, namespace=client.namespace))
    except RPCError as exc:
        raise GreenloopError(
            f"namespace {client.namespace} lacks Greenloop's search attributes and they cannot be "
            f"registered from here ({exc.message}); runs would fail at their first step",
            kind=ErrorKind.VALIDATION_ERROR,
            suggestion="register them once per namespace, as deploy/README.md says (section 1)") from None


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
