"""The last step of every parse, whatever the framework: one entry per id,
file and line filled in where the output did not say them (the framework's
``locate`` over the project's sources, else the id when it is a project
file), the per-test counts checked
against the framework's own summary, the report's timeout flag agreeing with
its tests, and a report without per-test results saying so (with the
output's tail for a human). Each rule that changes something or finds a
disagreement records a warning, so a parser bug shows instead of hiding.

An id a parser listed more than once is decided by ``merge.repeats``:
distinct tests that print one name are numbered apart, a test read twice
is merged by the one rule the parsers use too.
"""

from __future__ import annotations

from .locate import Location, SourceIndex
from .merge import repeats
from .models import Status, TestReport
from .run_output import RunOutput


def check_totals(report: TestReport) -> None:
    """Compare the tests with what the framework's summary counted
    (``report.summary_counts``: a status, statuses joined with ``+``, or
    ``total``) and say where they differ."""
    totals = report.totals
    wrong: list[tuple[str, int, int]] = []
    for key, said in report.summary_counts.items():
        names = key.split("+")
        if key == "total":
            have = len(report.tests)
        elif all(n in Status.__members__.values() for n in names):
            have = sum(getattr(totals, n) for n in names)
        else:
            continue
        if have != said:
            wrong.append((key, said, have))
    if wrong:
        said = ", ".join(f"{n} {k}" for k, n, _ in wrong)
        have = ", ".join(f"{h} {k}" for k, _, h in wrong)
        report.miscount = f"the {report.framework} summary counted {said}; the per-test results have {have}"
        report.warnings.append(report.miscount)


def fill_locations(report: TestReport, run: RunOutput) -> None:
    """Give every result without a file or a line the definition its
    framework's ``locate`` finds in the sources under the run's root, else
    the place the output gave for it (``report.output_locations``); a result
    whose id is a project file gets that file. What the output said of the
    result itself is kept: a file is only filled when missing, a line only
    when missing and the location is in the result's file."""
    from . import registry

    wanted = [t for t in report.tests if t.file is None or t.line is None]
    if not wanted:
        return
    index = SourceIndex(run.sources_root)
    found: dict[str, Location] = {}
    if report.framework in registry.BY_NAME:
        try:
            found = registry.parser(report.framework).locate(run, wanted, index)
        except Exception as exc:  # a locator bug must not lose the run
            report.warnings.append(f"locating the {report.framework} tests failed ({type(exc).__name__}: {exc})")
    for t in wanted:
        loc = found.get(t.id)
        if loc is None and t.id in report.output_locations:
            loc = Location(*report.output_locations[t.id])
        if loc is None and t.file is None and (rel := index.relative(t.id)) and index.exists(rel):
            loc = Location(rel)
        if loc is None:
            continue
        t.file = t.file or loc.file
        if t.line is None and t.file == loc.file:
            t.line = loc.line


def finish(report: TestReport, run: RunOutput) -> TestReport:
    """Apply the rules above to a parser's report (in place) and return it."""
    report.tests, said = repeats(report.tests, report.summary_counts.get("total"))
    if said:
        report.warnings.append(said)
    fill_locations(report, run)
    check_totals(report)
    report.timed_out = report.timed_out or any(t.timed_out for t in report.tests)
    if not report.tests and run.exit_code not in (0, None):
        report.per_test = False
        report.output_tail = report.output_tail or run.tail()
        if not report.warnings:
            report.warnings.append(f"no per-test results found; the command exited with {run.exit_code}")
    return report
