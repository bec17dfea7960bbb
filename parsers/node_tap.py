"""node-tap (the ``tap`` package, https://node-tap.org) with its TAP reporter
(``tap --reporter=tap``; a test file run with plain ``node`` prints the same).

node-tap prints TAP 14: every test file, and every ``t.test`` inside it, is
a subtest (an indented ``# Subtest: name`` block closed by its own test
point), and every assertion is a test point inside its test::

    # Subtest: test/a.js
        # Subtest: adds numbers
            ok 1 - should be equal
            not ok 2 - four
              ---
              at:
                fileName: test/a.js
                lineNumber: 2
              ...
            1..2
        not ok 1 - adds numbers # time=31ms
        ok 2 - skipped # SKIP later
        1..2
    not ok 1 - test/a.js # time=60ms

Mapping: a point whose children are all assertions (no grandchildren) is a
test; its id is the enclosing subtests' names and its own joined with
`` > `` (``test/a.js > adds numbers``), its status its own point's (``not
ok`` -> failed, ``# SKIP`` -> skipped, ``# TODO`` -> skipped with native
``todo``), its message the first failing assertion's. In a subtest that
holds other subtests (a file, a group), each point without children is a
test of its own (a skipped ``t.test``, an assertion made outside any
``t.test``), and the subtest itself is reported only when it failed with
nothing inside it failing (a crash, a timeout, a missing plan). A top-level
point without children (a file that could not load) is a test. Repeated ids
get `` [2]``, `` [3]``... The file is the first enclosing name that is a
source file, else the failing assertion's ``at``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..domain.errors import ErrorKind, GreenloopError
from .invocation import Invocation, js_regex
from .js_results import RUNNER_PREFIX
from .locate import SourceIndex, located_while_parsing
from .models import Status, TestReport, TestResult
from .package_json import package_json
from .run_output import RunOutput
from .tap import TapPoint, TapReader, UniqueIds, point_failed, point_location, point_message

FRAMEWORK = "node-tap"
# A subtest's file comes from its parents' and the failing points' locations in the
# output: the parser places it while it reads them.
locate = located_while_parsing
COMMAND_RE = [re.compile(RUNNER_PREFIX + r"(?:\S*/)?tap(?:\.m?js)?(?=\s|$)")]
OUTPUT_RE = [
    # node-tap's closing counters and per-test times.
    re.compile(r"^# \{ total: \d+, pass: \d+", re.M),
    re.compile(r"^\s*(?:not )?ok \d+ - .* # time=[\d.]+m?s$", re.M),
]
SEP = " > "
SOURCE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")


@dataclass
class _Node:
    point: TapPoint
    children: list[_Node] = field(default_factory=list)

    @property
    def is_group(self) -> bool:
        return any(c.children for c in self.children)


def _tree(points: list[TapPoint]) -> list[_Node]:
    """Rebuild the subtest tree from points in stream order (children first)."""
    waiting: dict[int, list[_Node]] = {}
    for p in points:
        node = _Node(p, waiting.pop(p.depth + 1, []) if p.has_children else [])
        waiting.setdefault(p.depth, []).append(node)
    roots = waiting.pop(0, [])
    for depth in sorted(waiting):  # a truncated stream: children whose parent never reported
        roots.extend(waiting[depth])
    return roots


class _Parser:
    def __init__(self, run: RunOutput) -> None:
        self.run = run
        self.index = SourceIndex(run.sources_root)
        self.unique = UniqueIds()
        self.tests: list[TestResult] = []

    def parse(self) -> TestReport:
        report = TestReport(framework=FRAMEWORK)
        for stream in ("stdout", "stderr"):
            reader = TapReader(self.run.lines(stream))
            points = list(reader)
            if not points:
                continue
            for node in _tree(points):
                self.visit(node)
            report.tests = self.tests
            report.sources.append(f"tap:{stream}")
            report.warnings.extend(reader.warnings)
            if reader.bail_out is not None:
                report.warnings.append(f"the TAP stream bailed out: {reader.bail_out or '(no reason)'}")
            if reader.unfinished:
                running = SEP.join(reader.unfinished)
                timed_out = self.run.killed_by_timeout
                report.tests.append(TestResult(
                    id=self.unique(running), status=Status.FAILED, timed_out=timed_out,
                    file=self.file_of(reader.unfinished, []),
                    message=("the run was killed by timeout while this test was running" if timed_out
                             else "the test run ended before this test finished"),
                    details=self.run.tail()))
            break
        report.timed_out = self.run.killed_by_timeout or any(t.timed_out for t in report.tests)
        if not report.tests:
            report.per_test = False
            report.output_tail = self.run.tail()
            report.warnings.append("no node-tap results in the output; only the exit code is known")
        return report

    def visit(self, node: _Node) -> None:
        if not node.children or not node.is_group:
            self.tests.append(self.result(node))
            return
        for child in node.children:
            if child.children:
                self.visit(child)
            else:
                self.tests.append(self.result(child))
        if point_failed(node.point) and not self._anypoint_failed(node):
            self.tests.append(self.result(node))

    def _anypoint_failed(self, node: _Node) -> bool:
        return any(point_failed(c.point) or self._anypoint_failed(c) for c in node.children)

    def result(self, node: _Node) -> TestResult:
        p = node.point
        failing = [c.point for c in node.children if point_failed(c.point)]
        names = (*p.ancestry, p.description or f"#{p.number}")
        native = message = details = None
        if p.directive == "skip":
            status, native = Status.SKIPPED, "skip"
        elif p.directive == "todo":
            status, native = Status.SKIPPED, "todo"
        elif not p.ok:
            status = Status.FAILED
            message, details = point_message(failing[0] if failing else p)
            if len(failing) > 1:
                message = f"{message} (and {len(failing) - 1} more failed assertion(s))"
        else:
            status = Status.PASSED
        file = line = None
        if status != Status.PASSED:
            file = self.file_of(names[:-1], failing or [p])
            at_file, at_line = point_location(p)
            if at_file and self.index.relative(at_file) == file:
                line = at_line
        dur = p.diag("duration_ms")
        return TestResult(id=self.unique(SEP.join(names)), status=status, file=file, line=line,
                          message=message, details=details, native_status=native,
                          duration_s=dur / 1000 if isinstance(dur, (int, float)) else None)

    def file_of(self, enclosing: tuple[str, ...] | list[str], points: list[TapPoint]) -> str | None:
        for name in enclosing:
            if name.endswith(SOURCE_SUFFIXES):
                return self.index.relative(name)
        for p in points:
            file, _ = point_location(p)
            if file:
                return self.index.relative(file)
        return None


def parse(run: RunOutput) -> TestReport:
    """Per-test results of a node-tap run (see the module docstring)."""
    return _Parser(run).parse()


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

RUNNER_BINS = ("tap",)
PACKAGE, PACKAGE_RANK = "tap", 5
NODE_RUN = True  # its test files are plain node programs (``node test/index.js``)
WATCH_FLAGS = {"-w"}
SELECT_VALUE_OPTIONS = {"-R", "--reporter", "-g", "--grep", "-t", "--timeout", "-j", "--jobs", "-o", "--output-file",
                        "--node-arg", "-i", "--include", "--exclude", "-c", "--config"}
SELECT_OPTIONS = {"-g", "--grep", "-O", "--only", "--changed"}
DEFAULT_INVOCATION = "npx tap --reporter=tap"


def suite_options(command: str, root: Path) -> str:
    """Its TAP reporter, and coverage off: node-tap fails a run whose coverage is below 100%
    (from version 18) or below its check level, and coverage is not what Greenloop tests.
    The flag is spelled per major version (``--disable-coverage`` from 18 on,
    ``--no-coverage`` before); nothing when the version is unknown."""
    if not re.search(r"(?:^|\s)npx tap(?=\s|$)", command):
        return ""
    version = str(package_json(root / "node_modules" / "tap").get("version") or "")
    if not version:
        deps = package_json(root)
        version = str({**(deps.get("dependencies") or {}), **(deps.get("devDependencies") or {})}.get("tap", ""))
    m = re.search(r"(\d+)", version)
    coverage = "" if not m else " --disable-coverage" if int(m.group(1)) >= 18 else " --no-coverage"
    return " --reporter=tap" + coverage


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    if len(tests) != 1:
        raise GreenloopError(f"cannot select several {FRAMEWORK} tests at once (its --grep patterns apply per "
                             "level); run them one by one", kind=ErrorKind.VALIDATION_ERROR, framework=FRAMEWORK)
    t = tests[0]
    levels = t.id.split(" > ")
    file = shlex.quote(t.file) if t.file else None
    if file and levels and levels[0] == t.file:
        levels = levels[1:]
    greps = [f"--grep={shlex.quote(js_regex(level))}" for level in levels]
    return [*greps, file] if file else [*greps, *inv.positionals]
