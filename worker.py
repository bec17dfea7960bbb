"""The Greenloop worker: registers every workflow and activity on the shared
task queue, and the activities on the run's files on its own host queue
(``activities/host.py``: Temporal's worker-specific task queues), with the
pydantic data converter and OpenTelemetry tracing (through
``server.client.connect``), and shuts down gracefully on SIGINT/SIGTERM,
letting running activities finish within the grace period."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from datetime import timedelta
from pathlib import Path
from types import TracebackType

from temporalio.client import Client
from temporalio.worker import Worker

from . import sandbox, telemetry
from .activities import analysis, batch, bench, conversation, edits, environment, testing, workspace
from .activities.host import host_queue
from .server.client import connect, shared_queue
from .settings import settings
from .workflows.bench import BenchMutantsWorkflow
from .workflows.fix_one_test import FixOneTestWorkflow
from .workflows.fix_suite import FixSuiteWorkflow

WORKFLOWS = [FixSuiteWorkflow, FixOneTestWorkflow, BenchMutantsWorkflow]
ACTIVITIES = [
    workspace.prepare_workspace, workspace.rebuild_workspace, workspace.record_result, workspace.finalize_run,
    workspace.create_worktree, workspace.merge_worktree, workspace.remove_worktree,
    testing.plan_tests, environment.set_up_environment, testing.run_suite, testing.run_single_test,
    analysis.analyze_suite,
    analysis.start_analysis, conversation.analyzer_turn, conversation.analyzer_tools, conversation.analyzer_run,
    analysis.finish_analysis,
    conversation.start_fix, conversation.fixer_turn, conversation.fixer_tools, conversation.fixer_run,
    conversation.finish_fix,
    edits.apply_edits, edits.rollback_edits,
    batch.check_batch, batch.accept_batch, batch.rebase_batch,
    bench.measure_mutant, bench.write_bench_report,
]


class Workers:
    """One worker process's two Temporal workers, run together (``async with``):
    the shared queue (workflows, and the activities any worker can do: preparing
    and rebuilding workspaces) and this host's queue (the activities on the run
    files it holds). The host queue has more slots than the shared one: a run's
    activities must never wait behind other runs' long test runs, or a busy host
    would look lost (a schedule-to-start timeout); each run bounds its own load by
    its concurrency."""

    def __init__(self, shared: Worker, host: Worker) -> None:
        self.shared, self.host = shared, host
        self.host_queue = host.task_queue
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> Workers:
        self._stack = AsyncExitStack()
        await self._stack.__aenter__()
        await self._stack.enter_async_context(self.shared)
        await self._stack.enter_async_context(self.host)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._stack is not None
        await self._stack.__aexit__(exc_type, exc, tb)


def build_worker(client: Client, task_queue: str | None = None, max_activities: int | None = None) -> Workers:
    """The workers for every Greenloop workflow and activity: ``task_queue`` (default: the shared
    one) and this host's queue (their spans exported when OTLP is configured)."""
    task_queue = task_queue or shared_queue()
    telemetry.setup_tracing()
    slots = max_activities or settings().max_activities
    shared = Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=ACTIVITIES,
        max_concurrent_activities=slots,
        graceful_shutdown_timeout=timedelta(seconds=30),
    )
    host = Worker(
        client,
        task_queue=host_queue(task_queue),
        activities=ACTIVITIES,
        max_concurrent_activities=max(slots, settings().host_slots),
        graceful_shutdown_timeout=timedelta(seconds=30),
    )
    return Workers(shared, host)


async def serve(address: str | None = None, namespace: str | None = None, task_queue: str | None = None,
                metrics_port: int | None = None, scripted: Path | None = None,
                on_ready: Callable[[Workers], None] | None = None) -> None:
    """Run a worker until SIGINT/SIGTERM; with ``metrics_port``, Prometheus metrics on that port;
    with ``scripted``, its LLM is the scripted one (a scenario file) served in this process."""
    runtime = telemetry.metrics_runtime(metrics_port) if metrics_port else None
    client = await connect(address, namespace, runtime=runtime)
    escalations = asyncio.ensure_future(telemetry.report_escalations(
        client, runtime.metric_meter, settings().escalations_poll_s)) if runtime else None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        with ExitStack() as stack:
            if scripted is not None:
                from .llm.scripted_server import scripted_llm

                stack.enter_context(scripted_llm(scripted))
            async with build_worker(client, task_queue) as workers:
                if on_ready is not None:
                    on_ready(workers)
                await stop.wait()
    finally:
        if escalations is not None:
            escalations.cancel()
        telemetry.flush_traces()
        sandbox.shutdown()  # warm containers go with the worker


if __name__ == "__main__":
    asyncio.run(serve())
