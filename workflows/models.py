"""The workflows' own payloads: the per-test child's input, what a run carries
across continue-as-new (``SuiteProgress``) and ``Continued``.

The other types that cross a boundary live below the workflows, where every
layer that needs them can import them: the run's request (``FixRequest``) in
``run_request.py``, each activity's input and result beside its activity
(``activities/<x>.py``), the run's record (``RunSummary``,
``FixOneTestResult``, ``FixStatusView``) in ``reports/record.py``, suite and
single-test runs in ``runner/runs.py``, and the shared states, answers,
attempts and ``Workspace`` in ``domain/``.

Payloads stay small: raw outputs and reports live in the run directory
(the artifact store) and travel as references plus bounded summaries.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..activities.workspace import AcceptedChange
from ..domain.workspace import Workspace
from ..reports.record import FixStatusView, RunSummary
from ..run_request import FixRequest
from ..runner.plan import SuitePlan
from ..runner.runs import SuiteRun


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


class WorkspaceMoved(BaseModel):
    """The run workspace was rebuilt on another worker (its worker was lost): a child
    working on ``lost`` takes its next steps on ``now``, with the suite run made there
    (its failure and its baseline) and the plan found there."""

    lost: Workspace
    now: Workspace
    plan: SuitePlan
    failure_run: SuiteRun
    baseline: SuiteRun


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
    # One bug, one conversation: a test of a root-cause group -> the group's root. A member is not
    # driven while its root is queued or in flight; the root's accepted fix usually fixes it along.
    followers: dict[str, str] = Field(default_factory=dict)
    # Every accepted fix, in order: with the repository source, all a rebuild on another worker needs.
    accepted: list[AcceptedChange] = Field(default_factory=list[AcceptedChange])
    # The round of driving: 1, the first suite run's failures; then one more each time the
    # final suite run shows failures the first could not (workflows/fix_suite.py, MOST_ROUNDS).
    round: int = 1
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
