"""Fallback for output no framework parser recognises: an exit-code-only
report that says it knows no per-test results and keeps the output's tail."""

from __future__ import annotations

import re

from parsers.models import TestReport
from parsers.run_output import RunOutput

FRAMEWORK = "generic"
COMMAND_RE: list[re.Pattern[str]] = []
OUTPUT_RE: list[re.Pattern[str]] = []


def parse(run: RunOutput) -> TestReport:
    """Exit-code-only report: no per-test results, the output's tail kept."""
    return TestReport(
        framework=FRAMEWORK,
        per_test=False,
        timed_out=run.killed_by_timeout,
        output_tail=run.tail(),
        warnings=["no per-test results could be read from this output; only the exit code is known"],
        sources=["exit-code"],
    )
