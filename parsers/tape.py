"""tape (https://github.com/tape-testing/tape): TAP 13 in tape's own shape.

tape writes one flat TAP stream. Each test announces itself with a comment
line before its assertions, and each assertion is a test point::

    TAP version 13
    # adds numbers                  <- the test's name (t.name)
    ok 1 should be strictly equal   <- its assertions
    not ok 2 four
      ---
        operator: equal
        expected: 5
        actual:   4
        at: Test.<anonymous> (/abs/test/a.js:2:56)
      ...
    # SKIP skipped one              <- a skipped test: no assertions
    # TODO later                    <- a todo test: its failures carry # TODO
    not ok 3 not yet # TODO
    <blank>
    1..3                            <- the plan comes last, then the summary
    # tests 3
    # pass  2
    # fail  1

Mapping: one result per test (the ``# name`` line), id = its name, so the
id does not change with the assertions' texts. A test fails when one of its
assertions fails (``not ok`` without a directive); a ``# SKIP name`` test is
skipped, a ``# TODO name`` test skipped with native status ``todo``; a test
whose assertions were all skipped is skipped; a test with no assertions
passed (tape passes it). Assertions before any ``# name`` line (other TAP
producers) are tests of their own, named by their description. The comments
after the plan are tape's counters, not tests. A stream that ends before its
plan (the process crashed or was killed) fails the test that was running,
with the output's tail as its details. Subtests (``t.test``) are announced
the same way and are tests of their own; ``t.comment("x")`` prints the same
``# x`` line as a test name, so it shows as an (empty, passing) test.
Repeated names get `` [2]``, `` [3]``... The file and line are the test's
definition when its name occurs once in the sources (preferring the file of
a failing assertion's ``at``), else that ``at`` location.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .invocation import Invocation, test_files
from .js_results import RUNNER_PREFIX
from .locate import SourceIndex, literal_call, located_while_parsing
from .models import Status, TestReport, TestResult
from .run_output import RunOutput
from .tap import (
    PLAN_RE,
    SUBTEST_RE,
    VERSION_RE,
    TapPoint,
    TapReader,
    UniqueIds,
    point_failed,
    point_location,
    point_message,
)

FRAMEWORK = "tape"
# A test is found by its title alone, and the failure's stack location chooses among
# calls with the same title: that needs the output, so the parser places it.
locate = located_while_parsing
COMMAND_RE = [re.compile(RUNNER_PREFIX + r"(?:\S*/)?tape(?:\.js)?(?=\s|$)")]
OUTPUT_RE = [
    # tape's summary pads "pass" and "fail" to the width of "tests".
    re.compile(r"^# pass  \d+$", re.M),
    re.compile(r"^# fail  \d+$", re.M),
]
JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
TEST_FUNCTIONS = ("test", "tape", "t.test", "st.test", "it")


@dataclass
class _Test:
    name: str
    kind: str | None  # None, "skip" or "todo"
    line_no: int
    points: list[TapPoint] = field(default_factory=list)


def _stream_tests(run: RunOutput, stream: str) -> tuple[list[_Test], TapReader, bool] | None:
    """The tests of one stream, its reader, and whether the stream ended with
    its plan (complete); None when the stream has no TAP."""
    events: list[tuple[int, str, str]] = []  # (line, "heading"|"plan"|"version", text)

    def lines():
        for no, line in enumerate(run.lines(stream), start=1):
            if line.startswith("#") and not SUBTEST_RE.match(line):
                events.append((no, "heading", line[1:].strip()))
            elif PLAN_RE.match(line) and not line[:1].isspace():
                events.append((no, "plan", ""))
            elif VERSION_RE.match(line.strip()):
                events.append((no, "version", ""))
            yield line

    reader = TapReader(lines())
    points = list(reader)
    if not reader.saw_tap:
        return None
    merged: list[tuple[int, str, object]] = [(n, kind, text) for n, kind, text in events]
    merged += [(p.line_no, "point", p) for p in points]
    merged.sort(key=lambda x: x[0])
    tests: list[_Test] = []
    current: _Test | None = None
    after_plan = False
    for no, kind, item in merged:
        if kind == "version":
            after_plan, current = False, None
        elif kind == "plan":
            after_plan, current = True, None
        elif kind == "heading":
            text = str(item)
            if after_plan or not text:
                continue  # tape's counters (# tests N, # pass N, # ok)
            test_kind = None
            if m := re.match(r"^(SKIP|TODO)\s+(.*)$", text):
                test_kind, text = m.group(1).lower(), m.group(2)
            current = _Test(text, test_kind, no)
            tests.append(current)
        else:
            assert isinstance(item, TapPoint)
            after_plan = False
            if current is None:
                tests.append(_Test(item.description or f"#{item.number}", None, no, [item]))
            else:
                current.points.append(item)
    return tests, reader, after_plan


class _Parser:
    def __init__(self, run: RunOutput) -> None:
        self.run = run
        self.index = SourceIndex(run.sources_root)
        self.unique = UniqueIds()

    def parse(self) -> TestReport:
        report = TestReport(framework=FRAMEWORK)
        for stream in ("stdout", "stderr"):
            found = _stream_tests(self.run, stream)
            if found is None:
                continue
            tests, reader, complete = found
            interrupted = not complete and (self.run.exit_code not in (0, None) or self.run.killed_by_timeout)
            for k, test in enumerate(tests):
                report.tests.append(self.result(test, running=interrupted and k == len(tests) - 1))
            report.sources.append(f"tap:{stream}")
            report.warnings.extend(reader.warnings)
            if reader.bail_out is not None:
                report.warnings.append(f"the TAP stream bailed out: {reader.bail_out or '(no reason)'}")
            if interrupted:
                report.warnings.append("the TAP stream ended before its plan: the test run did not finish")
            break
        report.timed_out = self.run.killed_by_timeout or any(t.timed_out for t in report.tests)
        if not report.tests:
            report.per_test = False
            report.output_tail = self.run.tail()
            report.warnings.append("no tape results in the output; only the exit code is known")
        return report

    def result(self, test: _Test, running: bool) -> TestResult:
        failing = [p for p in test.points if point_failed(p)]
        native = message = details = None
        timed_out = False
        if test.kind == "skip":
            status, native = Status.SKIPPED, "skip"
        elif test.kind == "todo":
            status, native = Status.SKIPPED, "todo"
        elif failing:
            status = Status.FAILED
            message, details = point_message(failing[0])
            if len(failing) > 1:
                message = f"{message} (and {len(failing) - 1} more failed assertion(s))"
        elif running:
            status = Status.FAILED
            timed_out = self.run.killed_by_timeout
            message = ("the run was killed by timeout while this test was running" if timed_out
                       else "the test run ended before this test finished")
            details = self.run.tail()
        elif test.points and all(p.directive == "skip" for p in test.points):
            status, native = Status.SKIPPED, "skip"
        else:
            status = Status.PASSED
        file = line = None
        if status != Status.PASSED:
            file, line = self.locate(test, failing)
        return TestResult(id=self.unique(test.name), status=status, file=file, line=line, message=message,
                          details=details, native_status=native, timed_out=timed_out)

    def locate(self, test: _Test, failing: list[TapPoint]) -> tuple[str | None, int | None]:
        at_file, at_line = next((loc for p in failing if (loc := point_location(p))[0]), (None, None))
        at_file = self.index.relative(at_file)
        found = self.index.find_one(literal_call(TEST_FUNCTIONS, test.name), JS_SUFFIXES, prefer=at_file)
        if found:
            return found
        return at_file, at_line if at_file else None


def parse(run: RunOutput) -> TestReport:
    """Per-test results of a tape run (see the module docstring)."""
    return _Parser(run).parse()


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

RUNNER_BINS = ("tape",)
PACKAGE, PACKAGE_RANK = "tape", 6
NODE_RUN = True  # its test files are plain node programs (``node test/index.js``)
SELECT_VALUE_OPTIONS = {"-r", "--require", "-i", "--ignore", "--ignore-pattern"}
DEFAULT_INVOCATION = "npx tape"
DEFAULT_SUITE = "npx tape 'test/**/*.js'"


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    """tape has no name filter: the test's file runs whole, or the whole suite when its file is unknown."""
    return test_files(tests, inv)
