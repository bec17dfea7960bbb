"""How a test and a run stand: the per-test state machine (``FixState``), an
attempt's verdict and the run's outcome. The workflows move them; the
activities, reports and the CLI record and show them.
"""

from __future__ import annotations

from enum import StrEnum


class FixState(StrEnum):
    """The per-test state machine, plus a person's last word."""

    PENDING = "PENDING"
    ANALYZING = "ANALYZING"
    FIXING = "FIXING"
    VALIDATING = "VALIDATING"
    FIXED = "FIXED"
    SKIPPED = "SKIPPED"
    ESCALATED = "ESCALATED"
    ABORTED = "ABORTED"



class RunOutcome(StrEnum):
    """How a run ended. ``completed`` only when the final suite ran and was read
    (every test passed, or was knowingly skipped, escalated or left flaky);
    otherwise the outcome names why the suite's state is not known."""

    RUNNING = "running"
    COMPLETED = "completed"
    ABORTED = "aborted"  # stopped by a person
    FAILED = "failed"  # the run itself failed (a workflow failure, not the suite's)
    SETUP_FAILED = "setup_failed"  # the project's environment could not be built
    SUITE_UNREADABLE = "suite_unreadable"  # no tests found, a crash before results, an exit code that lies
    SUITE_TIMED_OUT = "suite_timed_out"  # the suite was killed at its time limit


# Outcomes where the suite's state is unknown: nothing was (or could be) judged against it.
SUITE_NOT_READ = {RunOutcome.SETUP_FAILED, RunOutcome.SUITE_UNREADABLE, RunOutcome.SUITE_TIMED_OUT}



class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    REGRESSION = "REGRESSION"
