"""Activity options: timeouts, heartbeats and retry policies in one place.

Bad input (a missing path, an unknown framework, an invalid config) is
non-retryable: activities raise ``ApplicationError`` typed with its
error kind, and these kinds are never retried.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TypedDict

from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityCancellationType

from ..domain.errors import NON_RETRYABLE

# Activities raise typed errors already marked non-retryable (activities/errors.py,
# activities/llm_errors.py); the policy lists the same kinds for errors raised any other way.
NON_RETRYABLE_KINDS = sorted(kind.value for kind in NON_RETRYABLE)

# A lost worker is noticed within the heartbeat timeout (every activity heartbeats while it runs).
DEFAULT_HEARTBEAT_S = 30


class ActivityOptions(TypedDict, total=False):
    """The keyword arguments of ``workflow.execute_activity`` these helpers set."""

    start_to_close_timeout: timedelta
    schedule_to_start_timeout: timedelta
    heartbeat_timeout: timedelta
    retry_policy: RetryPolicy
    cancellation_type: ActivityCancellationType
    task_queue: str


def quick_options(heartbeat_s: int = DEFAULT_HEARTBEAT_S) -> ActivityOptions:
    """Short file and git work (apply, roll back, record, merge, plan, analyse)."""
    return ActivityOptions(
        start_to_close_timeout=timedelta(minutes=2),
        heartbeat_timeout=timedelta(seconds=heartbeat_s),
        retry_policy=RetryPolicy(maximum_attempts=5, non_retryable_error_types=NON_RETRYABLE_KINDS),
    )


def llm_options(heartbeat_s: int) -> ActivityOptions:
    """Provider faults (429/529, 5xx, timeouts) are retried with backoff here,
    not inside the client, so every retry is visible in the history."""
    return ActivityOptions(
        start_to_close_timeout=timedelta(minutes=15),
        heartbeat_timeout=timedelta(seconds=heartbeat_s),
        retry_policy=RetryPolicy(
            initial_interval=timedelta(seconds=2), backoff_coefficient=2.0,
            maximum_interval=timedelta(minutes=1), maximum_attempts=6,
            non_retryable_error_types=NON_RETRYABLE_KINDS,
        ),
    )

def setup_options(heartbeat_s: int = DEFAULT_HEARTBEAT_S) -> ActivityOptions:
    """Copying, cloning, worktrees, finalizing: long, heartbeating."""
    return ActivityOptions(
        start_to_close_timeout=timedelta(minutes=20),
        heartbeat_timeout=timedelta(seconds=heartbeat_s),
        retry_policy=RetryPolicy(maximum_attempts=3, non_retryable_error_types=NON_RETRYABLE_KINDS),
    )


def on_host(host_queue: str | None, host_timeout_s: int, options: ActivityOptions) -> ActivityOptions:
    """``options`` for an activity on a run's files: sent to the worker that holds
    them (its host queue), and failed with a schedule-to-start timeout (which is
    never retried) when no worker polls that queue within ``host_timeout_s``: the
    host is lost and the workflow moves the run (``workflows/host.py``)."""
    if not host_queue:
        return options
    return {**options, "task_queue": host_queue, "schedule_to_start_timeout": timedelta(seconds=host_timeout_s)}


def test_run_options(timeout_s: float, heartbeat_s: int = 30) -> ActivityOptions:
    """Options for an activity that runs tests: long, heartbeating, so a lost
    worker is noticed within the heartbeat timeout and the run retried elsewhere.
    A cancelled run is waited for (its sandbox killed), so nothing rolls back or
    removes a workspace under a test process that is still running."""
    return ActivityOptions(
        start_to_close_timeout=timedelta(seconds=timeout_s + 300),
        heartbeat_timeout=timedelta(seconds=heartbeat_s),
        cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        retry_policy=RetryPolicy(maximum_attempts=3, non_retryable_error_types=NON_RETRYABLE_KINDS),
    )
