"""A suite run as JUnit XML, for CI systems that show test results (Jenkins,
GitLab, GitHub test reporters): one ``<testsuite>`` per run, one
``<testcase>`` per test, with ``<failure>``, ``<error>`` or ``<skipped>``.

xfailed tests count as skipped (expected failures, like pytest's own JUnit
output); xpassed tests pass."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..parsers.models import Status, TestReport

# Characters XML 1.0 cannot carry (test output has them: ANSI escapes, NUL...).
_ALLOWED = {0x9, 0xA, 0xD}


def _clean(text: str | None) -> str:
    return "".join(c if ord(c) >= 0x20 or ord(c) in _ALLOWED else "?" for c in (text or ""))


def _split_id(test_id: str) -> tuple[str, str]:
    """(classname, name) from a test id: the part before the last ``::``, ``.``, ``/`` or space."""
    for sep in ("::", " > ", "#", "/", "."):
        if sep in test_id:
            head, tail = test_id.rsplit(sep, 1)
            if head and tail:
                return head, tail
    return "", test_id


def junit_xml(report: TestReport, name: str) -> str:
    """The report as a JUnit XML document (one test suite named ``name``)."""
    counts = {s: 0 for s in Status}
    for t in report.tests:
        counts[t.status] += 1
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", {
        "name": name,
        "tests": str(len(report.tests)),
        "failures": str(counts[Status.FAILED]),
        "errors": str(counts[Status.ERRORED]),
        "skipped": str(counts[Status.SKIPPED] + counts[Status.XFAILED]),
        "time": f"{sum(t.duration_s or 0.0 for t in report.tests):.3f}",
    })
    props = ET.SubElement(suite, "properties")
    for key, value in (("framework", report.framework), ("command", report.command),
                       ("exit_code", "" if report.exit_code is None else str(report.exit_code))):
        ET.SubElement(props, "property", {"name": key, "value": _clean(value)})
    for t in report.tests:
        classname, short = _split_id(t.id)
        case = ET.SubElement(suite, "testcase", {"classname": _clean(classname), "name": _clean(short),
                                                 "time": f"{t.duration_s or 0.0:.3f}"})
        if t.file:
            case.set("file", _clean(t.file))
        if t.line is not None:
            case.set("line", str(t.line))
        message = _clean(t.message)[:2000]
        if t.status in (Status.FAILED, Status.ERRORED):
            tag = "failure" if t.status == Status.FAILED else "error"
            ET.SubElement(case, tag, {"message": message, "type": tag}).text = _clean(t.details or t.message)
        elif t.status in (Status.SKIPPED, Status.XFAILED):
            ET.SubElement(case, "skipped", {"message": message or t.status.value})
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_junit(report_path: str | Path, name: str, dest: Path) -> Path:
    """Write the suite run saved at ``report_path`` (its report.json) as JUnit XML to ``dest``."""
    report = TestReport.model_validate_json(Path(report_path).read_text())
    dest.write_text(junit_xml(report, name), encoding="utf-8")
    return dest
