"""What ``greenloop`` exits with, so scripts and CI can tell outcomes apart.

| code | meaning |
| --- | --- |
| 0 | the run completed and the suite is green (nothing left failing) |
| 1 | the run completed, but tests are left failing (escalated, skipped, not fixed) |
| 2 | bad input or a command that could not be carried out (the message says why and what to do) |
| 3 | the suite could not be run or read: ``setup_failed``, ``suite_unreadable``, ``suite_timed_out`` |
| 4 | the run was aborted, or failed, was cancelled or terminated |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

from enum import IntEnum

from ..domain.states import SUITE_NOT_READ, RunOutcome
from ..reports.record import RunSummary, tests_left


class ExitCode(IntEnum):
    GREEN = 0
    TESTS_LEFT = 1
    USAGE = 2
    SUITE_NOT_READ = 3
    STOPPED = 4
    INTERRUPTED = 130


def for_summary(summary: RunSummary) -> ExitCode:
    """The exit code of a finished run."""
    if summary.state in SUITE_NOT_READ:
        return ExitCode.SUITE_NOT_READ
    if summary.state != RunOutcome.COMPLETED:
        return ExitCode.STOPPED
    if tests_left(summary):
        return ExitCode.TESTS_LEFT
    return ExitCode.GREEN
