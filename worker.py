"""The Greenloop worker: registers every workflow and activity on the task
queue, with the pydantic data converter and OpenTelemetry tracing (through
``server.client.connect``), and shuts down gracefully on SIGINT/SIGTERM,
letting running activities finish within the grace period."""

from __future__ import annotations

import asyncio
import os
import signal
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker

from greenloop import sandbox, telemetry
from greenloop.activities import analysis, edits, environment, fixing, testing, workspace
from greenloop.server.client import TASK_QUEUE, connect
from greenloop.workflows.fix_one_test import FixOneTestWorkflow
from greenloop.workflows.fix_suite import FixSuiteWorkflow

WORKFLOWS = [FixSuiteWorkflow, FixOneTestWorkflow]
ACTIVITIES = [
    workspace.prepare_workspace, workspace.record_result, workspace.finalize_run,
    workspace.create_worktree, workspace.merge_worktree, workspace.remove_worktree,
    testing.plan_tests, environment.set_up_environment, testing.run_suite, testing.run_single_test,
    analysis.analyze_suite, analysis.analyze_failure,
    fixing.propose_fix,
    edits.apply_edits, edits.rollback_edits,
]


def build_worker(client: Client, task_queue: str = TASK_QUEUE, max_activities: int | None = None) -> Worker:
    """A worker for every Greenloop workflow and activity (its spans exported when OTLP is configured)."""
    telemetry.setup_tracing()
    return Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=ACTIVITIES,
        max_concurrent_activities=max_activities or int(os.environ.get("GREENLOOP_MAX_ACTIVITIES", "4")),
        graceful_shutdown_timeout=timedelta(seconds=30),
    )


async def serve(address: str | None = None, namespace: str | None = None, task_queue: str = TASK_QUEUE,
                metrics_port: int | None = None) -> None:
    """Run a worker until SIGINT/SIGTERM; with ``metrics_port``, Prometheus metrics on that port."""
    runtime = telemetry.metrics_runtime(metrics_port) if metrics_port else None
    client = await connect(address, namespace, runtime=runtime)
    worker = build_worker(client, task_queue)
    escalations = asyncio.ensure_future(telemetry.report_escalations(
        client, runtime.metric_meter, float(os.environ.get("GREENLOOP_ESCALATIONS_POLL_S", "10")))) if runtime else None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with worker:
            await stop.wait()
    finally:
        if escalations is not None:
            escalations.cancel()
        telemetry.flush_traces()
        sandbox.shutdown()  # warm containers go with the worker


if __name__ == "__main__":
    asyncio.run(serve())
