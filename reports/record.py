"""What a run records and every report renders: each test's result
(``FixOneTestResult``, the child workflow's result, kept in ``results/``), each
test's view (``FixStatusView``, the ``status`` query) and the run's summary
(``RunSummary``, the run's result), with the one line that says how it ended.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..domain.answers import Answer
from ..domain.attempts import AttemptRecord
from ..domain.changes import FileChange
from ..domain.llm import Usage
from ..domain.states import FixState, RunOutcome, Verdict
from ..parsers.models import Totals
from ..runner.runs import SuiteRun


class FixOneTestResult(BaseModel):
    test_id: str
    state: FixState
    attempts: list[AttemptRecord]
    usage: Usage = Field(default_factory=Usage)
    regressions_prevented: int = 0
    answer: Answer | None = None
    applied_attempt: int | None = None  # the attempt whose edits stay in the workspace
    suite_after: SuiteRun | None = None  # the full suite after the accepted fix
    # The accepted attempt's changes, compact (a rebuild replays them), on the files it read.
    applied_changes: list[FileChange] | None = None
    # The worker holding the test's workspace was lost (why): nothing of this child stays, the run
    # rebuilds its workspace elsewhere and drives the test again.
    host_lost: str | None = None
    host_queue: str | None = None  # the lost worker's queue
    batch: int | None = None  # validation queue: the batch that accepted the fix
    # Validation queue: attempts made again on the current files (written on files a fix accepted
    # meanwhile changed; not counted as attempts), with what their model calls cost and why.
    remade: list[AttemptRecord] = Field(default_factory=list)



class FixStatusView(BaseModel):
    """What the ``status`` query shows for one test."""

    test_id: str
    state: FixState
    attempt: int = 0
    last_verdict: Verdict | None = None
    history: list[str] = Field(default_factory=list)
    workflow_id: str | None = None
    usage: Usage | None = None  # what the test's LLM calls cost so far (its own workflow's view)
    waiting: bool = False  # ESCALATED and waiting for a person's answer (while its workflow runs)



class RunSummary(BaseModel):
    run_id: str
    repo: str
    state: RunOutcome = RunOutcome.RUNNING
    reason: str = ""  # why the run ended as it did, when it is not plainly completed
    baseline_read: bool = True  # False: the first suite run was not read, and the run stopped there
    framework: str | None = None
    fixed: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    escalated: list[str] = Field(default_factory=list)
    aborted: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    still_failing: list[str] = Field(default_factory=list)
    regressions_prevented: int = 0
    attempts: int = 0
    # Validation queue: fixes put on files that a fix accepted meanwhile changed, by a three-way merge
    # (``rebased``), and those whose merge conflicted, sent back to the model with the conflict (``reasked``).
    rebased: int = 0
    reasked: int = 0
    usage: Usage = Field(default_factory=Usage)
    initial: Totals | None = None
    final: Totals | None = None
    report_markdown: str | None = None
    report_json: str | None = None
    report_html: str | None = None  # the self-contained HTML report
    junit_before: str | None = None  # the suite before and after, as JUnit XML (for CI systems)
    junit_after: str | None = None
    patch: str | None = None
    branch: str | None = None
    base_commit: str | None = None  # the user's commit the run started from (the fixes apply to it)
    # The user's branch head at the end when it moved during the run, and whether the fixes were
    # rebased onto it (``head_conflicts``: the files whose replay conflicted; the fixes stay on the base).
    moved_to: str | None = None
    rebased_onto: str | None = None
    head_conflicts: list[str] = Field(default_factory=list)
    pushed: str | None = None  # where the branch was pushed (--push REMOTE)
    pr_markdown: str | None = None  # pr.md: the pull request's title and body (--pr)
    pr_url: str | None = None  # the pull request, when `gh pr create` opened it
    notes: list[str] = Field(default_factory=list)
    # Why the first suite run's counts may not be the runner's (``SuiteRun.caveats``):
    # every view of the run says them beside its counts.
    caveats: list[str] = Field(default_factory=list)
    output_cut: bool = False  # the first suite run was stopped at the output cap
    started_at: str | None = None  # UTC, ISO 8601: the run's first logged step
    duration_s: float | None = None  # from its first logged step to its report
    tests: list[FixStatusView] = Field(default_factory=list)  # every test's final state, set when the run ends


def tests_left(summary: RunSummary) -> bool:
    """A completed run that left tests failing (not fixed, skipped, escalated)."""
    return bool(summary.still_failing or summary.escalated)


def outcome_label(summary: RunSummary) -> str:
    """The outcome a reader needs first: ``completed`` says whether the suite is green."""
    if summary.state != RunOutcome.COMPLETED:
        return summary.state.value
    return "completed: tests still failing" if tests_left(summary) else "completed: all green"


def duration(seconds: float | None) -> str:
    """``1h 02m 03s``, ``4m 05s``, ``6s``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    s = round(seconds)
    h, m, s = s // 3600, s // 60 % 60, s % 60
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s" if m else f"{s}s"


def headline(summary: RunSummary) -> str:
    """One line: the outcome and what became of the tests."""
    return (f"{summary.state.value}: fixed {len(summary.fixed)}, skipped {len(summary.skipped)}, "
            f"escalated {len(summary.escalated)}, flaky {len(summary.flaky)}, "
            f"still failing {len(summary.still_failing)}")
