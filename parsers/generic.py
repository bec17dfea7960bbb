"""Fallback for output no framework parser recognises.

It still gives per-test results when the run left a machine-readable trace:

1. JUnit/xUnit XML reports the command names (``--junitxml=x.xml``,
   ``--output-junit x``, ``--log-junit x``, ``--gtest_output=xml:dir/``,
   ``--reporter-option output=x``, ``JEST_JUNIT_OUTPUT_DIR=dir``, any word
   or ``option=value`` ending in ``.xml``...);
2. a TAP stream on stdout (or stderr);
3. a JUnit XML document printed on stdout;
4. JUnit XML at a conventional path under the directory the command ran in
   (``junit.xml``, ``test-results.xml``, ``reports/*.xml``,
   ``target/surefire-reports/TEST-*.xml``, ``build/test-results/**/*.xml``...).

Otherwise the report is exit-code-only: ``per_test=False``, the output's
tail kept and a warning saying no per-test results were found.

Mapping:

* JUnit: id ``classname.name`` (``name`` alone when the case has no
  classname and no enclosing named suite, else ``suite > name``);
  ``<failure>`` -> failed, ``<error>`` -> errored, ``<skipped>`` -> skipped,
  otherwise passed; file/line from the case (or its suite's ``file``).
* TAP: id = the enclosing subtest names and the description joined with
  `` > ``; ``ok`` -> passed, ``not ok`` -> failed, ``# SKIP`` -> skipped
  (native ``skip``), ``# TODO`` -> skipped (native ``todo``); the message
  from the YAML diagnostics (``message``/``error``) or the lines after a
  TAP 12 point.

Ids are made unique by appending `` [2]``, `` [3]``... to repeats.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from .command import command_words
from .junit_xml import JUnitCase, JUnitReader, line_stream, looks_like_junit, printed_document
from .locate import SourceIndex, located_while_parsing
from .models import Status, TestReport, TestResult
from .run_output import RunOutput
from .tap import TapPoint, TapReader

FRAMEWORK = "generic"
# No language, so no source indexer: a test is placed only where its report or its TAP
# diagnostics say.
locate = located_while_parsing
# Empty on purpose: the generic parser is never chosen by detection.
COMMAND_RE: list[re.Pattern[str]] = []
OUTPUT_RE: list[re.Pattern[str]] = []

XML_VALUE_RE = re.compile(r"^(?:[\w.-]+=)?(?:xml:)?(?P<path>[^=\s]+\.xml)$", re.I)
XML_DIR_OPTIONS = re.compile(r"^(?:--gtest_output=xml:|JEST_JUNIT_OUTPUT_DIR=|--reports-dir=|--junit-dir=)(?P<dir>.+)$")
REPORTISH_RE = re.compile(r"junit|xunit|report|result|output", re.I)
JEST_JUNIT_NAME_RE = re.compile(r"^JEST_JUNIT_OUTPUT_NAME=(?P<name>.+)$")
CONVENTIONAL_GLOBS = (
    "junit.xml", "junit-report.xml", "test-results.xml", "test-report.xml", "report.xml", "results.xml",
    "TEST-*.xml", "reports/*.xml", "reports/junit/*.xml", "test-results/*.xml", "test-results/*/*.xml",
    "test-reports/*.xml", "junit/*.xml", "target/surefire-reports/*.xml", "target/failsafe-reports/*.xml",
    "target/test-reports/*.xml", "build/test-results/*/*.xml", "build/test-results/*.xml",
    "out/test-results/*.xml",
)
MAX_REPORTS = 500
HEAD_CHARS = 4096
TAP_MESSAGE_KEYS = ("message", "error", "msg", "reason")
TAP_DETAIL_KEYS = ("stack", "at", "found", "wanted", "actual", "expected", "operator")
SEP = " > "


def _head(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(HEAD_CHARS)
    except OSError:
        return ""


class _Parser:
    def __init__(self, run: RunOutput) -> None:
        self.run = run
        self.report = TestReport(framework=FRAMEWORK)
        self.index = SourceIndex(run.sources_root)
        self.seen: dict[str, int] = {}

    # ------------------------------------------------------------------ inputs

    def named_reports(self) -> list[tuple[str, Path]]:
        """XML reports the command names, as (label, path), existing only."""
        found: list[tuple[str, Path]] = []
        words = command_words(self.run.command)
        jest_name = next((m.group("name") for w in words if (m := JEST_JUNIT_NAME_RE.match(w))), "junit.xml")
        for k, w in enumerate(words):
            candidates: list[str] = []
            if m := XML_DIR_OPTIONS.match(w):
                d = m.group("dir")
                if d.endswith(".xml"):
                    candidates.append(d)
                else:
                    p = self.run.resolve(d)
                    if p is not None and p.is_dir():
                        candidates.extend(str(x) for x in sorted(p.glob("*.xml"))[:MAX_REPORTS])
                    if w.startswith("JEST_JUNIT_OUTPUT_DIR="):
                        candidates.append(f"{d.rstrip('/')}/{jest_name}")
            elif m := XML_VALUE_RE.match(w):
                candidates.append(m.group("path"))
            elif w.startswith("output=") or (k > 0 and words[k - 1] in ("--reporter-option", "--reporter-options")):
                for part in w.split(","):
                    key, _, value = part.partition("=")
                    if key.strip() == "output" and value.strip():
                        candidates.append(value.strip())
            for c in candidates:
                p = self.run.resolve(c)
                if p is None or not p.is_file():
                    if REPORTISH_RE.search(w):
                        self.report.warnings.append(f"the report {c} named by the command does not exist")
                    continue
                if all(p != q for _, q in found):
                    found.append((self._label(c, p), p))
        return found

    def _label(self, given: str, path: Path) -> str:
        """How a report is named in ``sources``: relative to cwd if it can be."""
        if self.run.cwd is not None:
            try:
                return path.resolve().relative_to(self.run.cwd.resolve()).as_posix()
            except (ValueError, OSError):
                pass
        return given

    def conventional_reports(self) -> list[tuple[str, Path]]:
        """JUnit XML files at the usual paths under the command's cwd."""
        if self.run.cwd is None or not self.run.cwd.is_dir():
            return []
        found: list[tuple[str, Path]] = []
        for pattern in CONVENTIONAL_GLOBS:
            for p in sorted(self.run.cwd.glob(pattern)):
                if p.is_file() and all(p != q for _, q in found) and looks_like_junit(_head(p)):
                    found.append((p.relative_to(self.run.cwd).as_posix(), p))
                if len(found) >= MAX_REPORTS:
                    return found
        return found

    # ------------------------------------------------------------------ parse

    def parse(self) -> TestReport:
        junit_named = [(label, p) for label, p in self.named_reports() if looks_like_junit(_head(p))]
        if junit_named:
            for label, p in junit_named:
                self.read_junit(JUnitReader(p), f"junit-xml:{label}")
        if not self.report.tests:
            self.read_tap()
        if not self.report.tests and not junit_named:
            self.read_junit_stdout()
        if not self.report.tests and not junit_named:
            for label, p in self.conventional_reports():
                self.read_junit(JUnitReader(p), f"junit-xml:{label}")
            if self.report.tests:
                self.report.warnings.append(
                    "results read from a JUnit report at a conventional path the command did not name; "
                    "it may be left over from an earlier run")
        self.report.timed_out = self.report.timed_out or self.run.killed_by_timeout \
            or any(t.timed_out for t in self.report.tests)
        if not self.report.tests:
            return self.exit_code_only()
        return self.report

    def exit_code_only(self) -> TestReport:
        """No per-test results: only the exit code is known."""
        warnings = list(self.report.warnings)
        return TestReport(
            framework=FRAMEWORK,
            per_test=False,
            timed_out=self.run.killed_by_timeout,
            output_tail=self.run.tail(),
            warnings=["no per-test results could be read from this output; only the exit code is known", *warnings],
            sources=["exit-code"],
        )

    # ------------------------------------------------------------------ junit

    def unique(self, test_id: str) -> str:
        n = self.seen.get(test_id, 0) + 1
        self.seen[test_id] = n
        return test_id if n == 1 else f"{test_id} [{n}]"

    def read_junit(self, reader: JUnitReader, label: str) -> None:
        count = 0
        for case in reader:
            self.report.tests.append(self.junit_result(case))
            count += 1
        self.report.warnings.extend(reader.warnings)
        for err in reader.suite_errors:
            where = SEP.join(s for s in err.suites if s) or "a test suite"
            self.report.warnings.append(f"{label}: {where} reports an {err.kind}: {err.message or err.text or ''}"
                                        .rstrip(": "))
        if count or reader.complete:
            self.report.sources.append(label)

    def junit_result(self, case: JUnitCase) -> TestResult:
        """One ``<testcase>``: id ``classname.name``, else ``suite > name``."""
        if case.classname:
            test_id = case.name if case.name.startswith(case.classname + ".") else f"{case.classname}.{case.name}"
        else:
            suites = [s for s in case.suites if s]
            test_id = SEP.join((suites[-1], case.name)) if suites else case.name
        status = {"failure": Status.FAILED, "error": Status.ERRORED, "skipped": Status.SKIPPED}.get(
            case.outcome, Status.PASSED)
        message = case.message
        if status in (Status.FAILED, Status.ERRORED) and not message and case.text:
            message = next((ln.strip() for ln in case.text.splitlines() if ln.strip()), None)
        file = self.index.relative(case.file or case.suite_file) if (case.file or case.suite_file) else None
        return TestResult(
            id=self.unique(test_id or "(unnamed)"), status=status, file=file, line=case.line,
            message=message, details=case.text if status != Status.PASSED else None,
            duration_s=case.time, native_status=case.outcome if status == Status.SKIPPED else None,
            suite=case.classname or (case.suites[-1] if case.suites else None))

    def read_junit_stdout(self) -> None:
        """A JUnit document printed on stdout (after any other output)."""

        if not looks_like_junit("\n".join(_first(printed_document(self.run.lines("stdout")), 40))):
            return
        self.read_junit(JUnitReader("stdout", stream=line_stream(printed_document(self.run.lines("stdout")))), "junit-xml:stdout")

    # ------------------------------------------------------------------ tap

    def read_tap(self) -> None:
        """Test points of a TAP stream on stdout, else on stderr."""
        for stream in ("stdout", "stderr"):
            reader = TapReader(self.run.lines(stream))
            points = list(reader)
            if not points and not (reader.unfinished and self.run.killed_by_timeout):
                continue
            results = [self.tap_result(p) for p in points]
            self.report.tests.extend(results)
            self.report.sources.append(f"tap:{stream}")
            self.report.warnings.extend(reader.warnings)
            if reader.bail_out is not None:
                self.report.warnings.append(f"the TAP stream bailed out: {reader.bail_out or '(no reason)'}")
            top = sum(1 for p in points if p.depth == 0)
            if reader.plan is not None and reader.plan.count != top:
                self.report.warnings.append(
                    f"the TAP plan announced {reader.plan.count} tests but {top} were read")
            if reader.unfinished and self.run.killed_by_timeout:
                self.report.tests.append(TestResult(
                    id=self.unique(SEP.join(reader.unfinished)), status=Status.FAILED, timed_out=True,
                    message="the run was killed by timeout while this test was running"))
            return

    def tap_result(self, p: TapPoint) -> TestResult:
        test_id = SEP.join((*p.ancestry, p.description or f"#{p.number}"))
        native = None
        if p.directive == "skip":
            status, native = Status.SKIPPED, "skip"
        elif p.directive == "todo":
            status, native = Status.SKIPPED, "todo"
        else:
            status = Status.PASSED if p.ok else Status.FAILED
        message = details = None
        if status == Status.SKIPPED:
            message = p.reason
        elif status == Status.FAILED:
            if p.diagnostics:
                message = next((str(p.diag(k)) for k in TAP_MESSAGE_KEYS if p.diag(k) not in (None, "")), None)
                details = p.yaml_text
            elif p.trailing:
                lines = [ln.strip() for ln in p.trailing if ln.strip()]
                message = lines[0] if lines else None
                details = "\n".join(p.trailing).strip() or None
        file = line = None
        at = p.diag("at") or p.diag("location")
        if isinstance(at, dict):
            file, line = at.get("file"), at.get("line") if isinstance(at.get("line"), int) else None
        elif isinstance(at, str) and (m := re.match(r"^(.*?):(\d+)(?::\d+)?$", at.strip())):
            file, line = m.group(1), int(m.group(2))
        file = self.index.relative(str(file)) if file else None
        dur = p.diag("duration_ms")
        return TestResult(id=self.unique(test_id), status=status, file=file, line=line if file else None,
                          message=message, details=details, native_status=native,
                          duration_s=dur / 1000 if isinstance(dur, (int, float)) else None)


def _first(lines: Iterator[str], n: int) -> list[str]:
    out = []
    for line in lines:
        out.append(line)
        if len(out) >= n:
            break
    return out


def parse(run: RunOutput) -> TestReport:
    """Per-test results from JUnit XML or TAP when the run left some,
    otherwise an exit-code-only report (see the module docstring)."""
    return _Parser(run).parse()
