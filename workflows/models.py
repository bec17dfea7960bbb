"""The workflows' own inputs and what a run carries across continue-as-new:
the run's request (``FixRequest``), the per-test child's input, the run's
progress (``SuiteProgress``) and ``Continued``.

The other types that cross a boundary live below the workflows, where every
layer that needs them can import them: each activity's input and result beside
its activity (``activities/<x>.py``), the run's record (``RunSummary``,
``FixOneTestResult``, ``FixStatusView``) in ``reports/record.py``, suite and
single-test runs in ``runner/runs.py``, and the shared states, answers,
attempts and ``Workspace`` in ``domain/``.

Payloads stay small: raw outputs and reports live in the run directory
(the artifact store) and travel as references plus bounded summaries.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..activities.request import ProjectRequest
from ..activities.workspace import AcceptedChange
from ..domain.answers import AnswerChoice
from ..domain.llm import LLMSettings
from ..domain.workspace import Workspace
from ..reports.record import FixStatusView, RunSummary
from ..runner.plan import SuitePlan
from ..runner.runs import SuiteRun


class FixRequest(ProjectRequest):
    """What ``greenloop run`` asks for: the repository, its commands and sandbox
    (``ProjectRequest``, what the activities read) and how the run goes."""

    model_config = ConfigDict(extra="forbid")

    select: list[str] = Field(default_factory=list)   # glob patterns over test ids
    exclude: list[str] = Field(default_factory=list)
    max_attempts: int = Field(default=3, ge=1, le=10)
    per_test_budget_s: int = Field(default=3600, ge=60)
    run_budget_s: int = Field(default=3600, ge=10)
    concurrency: int = Field(default=1, ge=1, le=16)
    # How fixes are validated: "queue", the default (candidates validated in batches, one full-suite
    # run per batch, a failing batch bisected: workflows/merge_queue.py), or "each" (every attempt
    # runs its test alone and the full suite itself). Batches hold at most ``max_batch`` fixes.
    validation: Literal["queue", "each"] = "queue"
    max_batch: int = Field(default=32, ge=1, le=64)
    # Queue: map which tests run which files once (per-test coverage, where the framework gives it)
    # to add the tests a batch's files are run by to its quick check, and to order its bisection.
    test_impact: bool = True
    # Tests driven per workflow run before it continues as new, keeping each run's history
    # small (the server may suggest continuing sooner).
    tests_per_run: int = Field(default=100, ge=1, le=1000)
    escalation_deadline_s: int = Field(default=24 * 3600, ge=1)
    escalation_default: AnswerChoice = AnswerChoice.SKIP
    # How soon a lost worker is noticed in any activity it runs (its activities are then retried).
    heartbeat_timeout_s: int = Field(default=30, ge=2)
    # How long an activity for the worker holding the run's workspace (its host queue) may wait for
    # that worker to poll before the host counts as lost and the run moves to another worker, which
    # rebuilds the workspace from the history (schedule-to-start timeout of host-queue activities).
    host_timeout_s: int = Field(default=60, ge=2)
    # How many times a run may move to another worker before it fails.
    max_rebuilds: int = Field(default=5, ge=0, le=100)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    push: str | None = None  # push the run's branch to this remote of the repository (or URL) when tests were fixed
    pull_request: bool = False  # write pr.md and open a pull request with gh (needs push)


class FixOneTestInput(BaseModel):
    run_id: str
    workspace: Workspace
    plan: SuitePlan
    test_id: str
    # The suite run the failure comes from (details are read from its report)
    # and the statuses every validation is compared with.
    failure_run: SuiteRun
    baseline: SuiteRun
    request: FixRequest
    deadline_unix: float | None = None
    # Validation queue: the child proposes and sends its candidate to the run, which validates it in a batch.
    queue: bool = False


class SuiteProgress(BaseModel):
    """What a run carries across continue-as-new: where it is, not what it did
    (per-test results are recorded in the run directory as they finish)."""

    workspace: Workspace
    plan: SuitePlan
    initial: SuiteRun
    baseline: SuiteRun
    remaining: list[str]
    views: list[FixStatusView]
    summary: RunSummary
    deadline_unix: float
    applied: dict[str, int] = Field(default_factory=dict)  # fixed test -> its applied attempt
    # concurrency > 1: fixed test -> the patch its merge applied (how a rollback takes it back out)
    merged: dict[str, str] = Field(default_factory=dict)
    # concurrency > 1: tests whose fix did not merge, queued again to be fixed in the run workspace itself
    retrying: list[str] = Field(default_factory=list)
    # Queued tests that an accepted fix made pass too (they are not driven; they count as fixed).
    fixed_along: list[str] = Field(default_factory=list)
    # Every accepted fix, in order: with the repository source, all a rebuild on another worker needs.
    accepted: list[AcceptedChange] = Field(default_factory=list)
    rebuilds: int = 0  # times the run moved to another worker
    redriven: dict[str, int] = Field(default_factory=dict)  # test -> times it was driven again after a host loss
    batches: int = 0  # validation queue: batches validated so far (they are numbered across the whole run)
    batch_size: int = 0  # validation queue: the next batch's size (0: not started)
    # Validation queue: the test-impact map on the run's host (None: none; runner/impact.py).
    impact: str | None = None


class Continued(BaseModel):
    """A long run continuing as new: the request it was started with and where it is.
    The workflow takes one argument (``FixRequest | Continued``): Temporal drops
    type hints when the argument count differs from the hints."""

    model_config = ConfigDict(extra="forbid")

    request: FixRequest
    progress: SuiteProgress
