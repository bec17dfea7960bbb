"""A test run as the rest of the run sees it: the whole suite (``SuiteRun``) or one
test (``SingleRun``), as references to the reports on disk plus bounded counts.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..parsers.models import Status, Totals


class SuiteRun(BaseModel):
    """One run of the whole suite, as a reference: the report and the per-test
    statuses stay on disk (they grow with the suite); counts travel, and of the
    ids only what the run was asked about (``focus``) and what changed against
    ``compare_to`` (regressions, bounded, and newly passing tests, which the
    run needs to spare tests fixed along with another)."""

    label: str
    report_path: str
    statuses_path: str
    totals: Totals
    build_error: bool
    timed_out: bool
    exit_code: int | None
    per_test: bool
    warnings: list[str] = Field(default_factory=list)
    # Why this run does not say the suite's state (runner.readable), None when it does.
    unreadable: str | None = None
    # Why its counts may not be the runner's, though it was read: they disagree
    # with the runner's own total, the output was cut at its cap.
    caveats: list[str] = Field(default_factory=list)
    output_cut: bool = False  # its output passed the cap (``Limits.output_bytes``) and it was stopped there
    duration_s: float = 0.0
    focus: str | None = None  # the test this run validates, when it validates one
    focus_status: Status | None = None  # its status in this run (None: not in the output)
    impact: str | None = None  # the test-impact map this run wrote, on its host (``SuiteInput.impact``)
    # The content digest of the files it ran on (``workspace.worktree.content_tree``), where recorded:
    # a later run of the same files may reuse this one (``SuiteInput.reuse``).
    tree: str | None = None
    # Set on a run reused instead of running again: the label of the run it stands for ("final").
    reused_as: str | None = None
    # Against the run it was compared with (``compare_to``), when one was given:
    regressions: list[str] = Field(default_factory=list)  # passed before, not now (or gone); the first 20
    regression_count: int = 0
    newly_passing: list[str] = Field(default_factory=list)
    passed_before: int = 0
    passed_now: int = 0

    @property
    def focus_failing(self) -> bool:
        """Whether the test this run validates failed in it."""
        return self.focus_status in (Status.FAILED, Status.ERRORED)

    def as_baseline(self) -> SuiteRun:
        """This run as what later runs are compared with: its own comparison
        stays behind (it would otherwise travel with every later test)."""
        return self.model_copy(update={"focus": None, "focus_status": None, "regressions": [],
                                       "regression_count": 0, "newly_passing": []})

    def broken_since(self, baseline: SuiteRun, by: str, after: str) -> str | None:
        """Why this run says the build or the suite broke since ``baseline``: ``by``
        ("the fix") broke the build, or it cannot be read after ``after`` ("the fix");
        None when neither."""
        if self.build_error and not baseline.build_error:
            return f"{by} breaks the build" + (f": {self.unreadable}" if self.unreadable else "")
        if self.unreadable and not baseline.unreadable:
            return f"the suite cannot be read after {after}: {self.unreadable}"
        return None



class SingleRun(BaseModel):
    test_id: str
    status: Status | None  # None: the test was not found in the output
    passed: bool
    message: str | None = None
    details: str | None = None  # its traceback or diff, as the framework reported it
    output_path: str
    duration_s: float = 0.0

    def failure_reason(self) -> str:
        """Why a test that did not pass alone failed its check."""
        if self.status is None and self.message:  # it did not run: the message says why (e.g. the build)
            return f"the test did not run: {self.message}"
        status = self.status.value if self.status else "not found in the output"
        return f"the test is still {status}: {self.message or ''}".strip().rstrip(":")
