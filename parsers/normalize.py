"""The last step of every parse, whatever the framework: one entry per id,
file filled in where the id is a project file, the report's timeout flag
agreeing with its tests, and a report without per-test results saying so
(with the output's tail for a human). Each rule that changes something
records a warning, so a parser bug shows instead of hiding.
"""

from __future__ import annotations

from greenloop.parsers.locate import SourceIndex
from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.parsers.run_output import RunOutput

# When one id is reported twice, the entry that needs a fix wins.
RANK = {Status.PASSED: 0, Status.SKIPPED: 1, Status.XFAILED: 2, Status.XPASSED: 3, Status.FAILED: 4,
        Status.ERRORED: 5}


def _merge(kept: TestResult, again: TestResult) -> None:
    if RANK[again.status] > RANK[kept.status]:
        kept.status, kept.message, kept.details = again.status, again.message or kept.message, \
            again.details or kept.details
    for name in ("file", "line", "message", "details", "duration_s", "native_status", "suite"):
        if getattr(kept, name) is None and getattr(again, name) is not None:
            setattr(kept, name, getattr(again, name))
    kept.timed_out = kept.timed_out or again.timed_out


def finish(report: TestReport, run: RunOutput) -> TestReport:
    """Apply the rules above to a parser's report (in place) and return it."""
    by_id: dict[str, TestResult] = {}
    twice: list[str] = []
    for t in report.tests:
        if t.id in by_id:
            _merge(by_id[t.id], t)
            twice.append(t.id)
        else:
            by_id[t.id] = t
    if twice:
        report.tests = list(by_id.values())
        report.warnings.append(f"{len(twice)} result(s) repeated an id and were merged: {', '.join(twice[:5])}")
    index: SourceIndex | None = None
    for t in report.tests:
        if t.file is None:
            index = index or SourceIndex(run.sources_root)
            rel = index.relative(t.id)
            if rel and index.exists(rel):
                t.file = rel
    report.timed_out = report.timed_out or any(t.timed_out for t in report.tests)
    if not report.tests and run.exit_code not in (0, None):
        report.per_test = False
        report.output_tail = report.output_tail or run.tail()
        if not report.warnings:
            report.warnings.append(f"no per-test results found; the command exited with {run.exit_code}")
    return report
