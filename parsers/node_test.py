"""node:test (``node --test``): the tap, spec, dot and junit reporters, to
stdout or to files (``--test-reporter-destination``, several reporters at
once), Node 18 to 22.

Ids are the names of the enclosing describe()/test() blocks and the test's
own name joined with `` > ``. Suites (describe/suite) are not listed; a
test() that has t.test() subtests is a test of its own. Mapping:

* pass -> passed; skip -> skipped (native ``skip``); todo -> skipped
  (native ``todo``) whether or not its body threw;
* fail -> failed; a hook failure on a test (beforeEach) is a failure too;
* cancelled by a timeout (``test timed out after Nms``) -> failed with
  ``timed_out`` (native ``cancelled``);
* cancelled because its parent failed first (a before() hook threw:
  ``test did not finish before its parent and was cancelled``) -> errored
  (native ``cancelled``);
* a file that fails to load is reported by node as one failing test named
  by the file's absolute path -> errored, id as node prints it,
  ``build_error``; file/line from the loader's ``path:LINE`` error header.

The dot reporter names only failures (without their parents): the other
tests come from the test files (``SpecIndex`` from the Mocha parser), and
its character counts check the result. The summary counters (``# tests N``
/ ``ℹ tests N``) are checked against what was read.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

from .command import option_values, plain_words
from .invocation import Invocation, js_regex, test_files
from .junit_xml import JUnitCase, JUnitReader, line_stream, printed_document
from .locate import SourceIndex, glob_regex, located_while_parsing
from .mocha import effective_words
from .models import Status, TestReport, TestResult
from .run_output import RunOutput
from .source.js import JS_SUFFIXES, import_line
from .source.js_tests import SpecIndex, SpecNode, iter_nodes
from .tap import TapPoint, TapReader

FRAMEWORK = "node-test"
# The parser needs the spec node an entry maps to anyway (it tells a suite, which is
# dropped, from a test); the node's file, suite and line come with it.
locate = located_while_parsing
SEP = " > "

NODE_PREFIX = (
    r"^\s*(?:(?:[A-Za-z_]\w*=\S*|env|cross-env)\s+)*(?:timeout\s+(?:-\S+\s+)*\S+\s+)?"
    r"(?:(?:[A-Za-z_]\w*=\S*)\s+)*(?:(?:c8|nyc)(?:\s+-\S+)*\s+)?(?:\S*/)?node(?:js)?(?:\.exe)?"
)
COMMAND_RE = [
    # node [options] --test [files]
    re.compile(NODE_PREFIX + r"(?:\s+\S+)*?\s+--test(?=\s|$)"),
    # node [options] path/to/x.test.js: a test file run directly
    re.compile(NODE_PREFIX + r"(?:\s+-\S+)*\s+(?:\S*/)?(?:test/\S+|\S*[.\-_]test|test-\S*)\.[cm]?[jt]s(?=\s|$)"),
]
OUTPUT_RE = [
    re.compile(r"^\s*# Subtest: ", re.M),
    re.compile(r"^(?:#|ℹ) (?:suites|cancelled|todo) \d+$", re.M),
    re.compile(r"^(?:#|ℹ) duration_ms [\d.]+$", re.M),
    re.compile(r"^\s+duration_ms: [\d.]+$", re.M),
    re.compile(r"test did not finish before its parent and was cancelled|test timed out after \d+ms", re.M),
    re.compile(r"^\s*failureType: '\w+'$", re.M),
    re.compile(r"^✖ failing tests:$", re.M),
]

TIMEOUT_RE = re.compile(r"test timed out after \d+ ?ms")
CANCELLED_RE = re.compile(r"test did not finish before its parent and was cancelled|cancelledByParent")
SUBTESTS_FAILED_RE = re.compile(r"^\d+ subtests? failed$")
FILE_ID_RE = re.compile(r"^(?:/|<ROOT>|[A-Za-z]:[\\/]|file://).*\.[cm]?[jt]sx?$")
LOCATION_RE = re.compile(r"^(?P<file>.*?):(?P<line>\d+)(?::\d+)?$")
FILE_LINE_RE = re.compile(
    r"(?:file://)?(?P<file>(?:<ROOT>|/|(?<![\w:/])[A-Za-z]:[\\/])[^\s:()'\"]*\.[cm]?[jt]sx?):(?P<line>\d+)")
LOAD_ERROR_RE = re.compile(r"^(?:\w*Error\b|Cannot find module|Error \[ERR_)")
STACK_RE = re.compile(r"^\s*at ")
# spec: "✔ name (1.2ms)", "✖ name", "﹣ name (0.1ms) # reason", "▶ name"
SPEC_LINE_RE = re.compile(
    r"^(?P<indent> *)(?P<sym>[✔✖﹣▶√×])\s(?P<name>.*?)(?: \((?P<ms>\d+(?:\.\d+)?)m?s\))?(?: # (?P<dir>.*))?\s*$"
)
JUNIT_CAUSE_RE = re.compile(r"^\s*cause: (.+)$", re.M)
SPEC_COUNTER_RE = re.compile(r"^ℹ (?P<key>[a-z_]+) (?P<value>\d+(?:\.\d+)?)\s*$")
SPEC_FAILING_HEAD_RE = re.compile(r"^✖ failing tests:\s*$")
SPEC_TEST_AT_RE = re.compile(r"^(?:test|suite) at (?P<loc>\S.*?)\s*$")
DOT_RE = re.compile(r"^[.X]+$")
DOT_FAILED_HEAD_RE = re.compile(r"^Failed tests:\s*$")
DEFAULT_FILES_RE = re.compile(
    r"(?:^|/)test/(?:.*/)?[^/]+\.[cm]?[jt]s$|(?:^|/)[^/]*[.\-_]test\.[cm]?[jt]s$"
    r"|(?:^|/)test-[^/]*\.[cm]?[jt]s$|(?:^|/)test\.[cm]?[jt]s$"
)
SNIFF_LINES = 5_000
MAX_BLOCK_LINES = 300
MAX_BUFFER_LINES = 200


@dataclass
class _Entry:
    """One reported test before mapping (suites are dropped later)."""

    ancestry: tuple[str, ...]
    name: str
    outcome: str  # "pass", "fail", "skip", "todo"
    message: str | None = None
    details: str | None = None
    failure_type: str | None = None
    file: str | None = None
    line: int | None = None
    duration_s: float | None = None
    is_suite: bool | None = None  # None: not known from the output
    has_children: bool = False
    reason: str | None = None
    output: list[str] = field(default_factory=list)  # console lines before it (file-level failures)

    @property
    def id(self) -> str:
        return SEP.join((*self.ancestry, self.name))


class _Parser:
    def __init__(self, run: RunOutput) -> None:
        self.run = run
        self.report = TestReport(framework=FRAMEWORK)
        self.index = SourceIndex(run.sources_root)
        self.specs = SpecIndex(self.index, "node")
        self.words = effective_words(run)
        self.counters: dict[str, float] = {}

    # ------------------------------------------------------------------ inputs

    def reporters(self) -> list[tuple[str, str]]:
        """(reporter, destination) pairs from the command; the default
        reporter (tap or spec, by Node version and TTY) goes to stdout."""
        reps = option_values(self.words, "--test-reporter")
        dests = option_values(self.words, "--test-reporter-destination")
        if not reps:
            return [("auto", dests[0] if dests else "stdout")]
        return [(r.lower(), dests[k] if k < len(dests) else "stdout") for k, r in enumerate(reps)]

    def rel(self, path: str | None) -> str | None:
        if not path:
            return None
        path = path.strip().strip("'\"")
        if path.startswith("file://"):
            path = path[7:]
        return self.index.relative(path) or None

    def parse(self) -> TestReport:
        entries: list[_Entry] | None = None
        junit: list[_Entry] | None = None
        for rep, dest in self.reporters():
            if rep == "junit":
                got = self.from_junit(dest)
                junit = junit if got is None else got
                continue
            if entries is not None or rep not in ("auto", "tap", "spec", "dot"):
                continue
            lines = self.lines_of(dest)
            if lines is None:
                continue
            entries = self.from_console(lines, rep, dest)
        if entries is None and junit is not None:
            entries = junit
        for e in entries or []:
            self.add(e)
        if self.run.killed_by_timeout:
            self.report.timed_out = True
            if not any(t.timed_out for t in self.report.tests):
                self.hanging_test()
        self.report.timed_out = self.report.timed_out or any(t.timed_out for t in self.report.tests)
        self.check_counters()
        if not self.report.tests:
            if not self.report.warnings:
                self.report.warnings.append("no node:test results found in the output")
            self.report.output_tail = self.run.tail()
        return self.report

    def lines_of(self, dest: str) -> Iterator[str] | None:
        if dest in ("stdout", "stderr"):
            return self.run.lines(dest)
        p = self.run.resolve(dest)
        if p is None or not p.is_file():
            self.report.warnings.append(f"reporter destination {dest} does not exist")
            return None
        return RunOutput(stdout_path=p).lines("stdout")

    def from_console(self, lines: Iterator[str], rep: str, dest: str) -> list[_Entry] | None:
        """TAP, spec or dot, as the reporter says or as the text looks."""
        head: list[str] = []
        it = iter(lines)
        kind = rep if rep != "auto" else None
        for line in it:
            head.append(line)
            # Sniff a growing head: the tests' console output may come first.
            if kind is None and (len(head) in (50, 400) or len(head) >= SNIFF_LINES):
                kind = _sniff(head)
            if kind is not None or len(head) >= SNIFF_LINES:
                break
        if kind is None:
            kind = _sniff(head)
        if kind is None:
            return None

        def all_lines() -> Iterator[str]:
            yield from head
            yield from it

        self.report.sources.append(f"{kind}:{dest}")
        if kind == "tap":
            return self.from_tap(all_lines())
        if kind == "dot":
            return self.from_dot(all_lines())
        return self.from_spec(all_lines())

    # ------------------------------------------------------------------ tap

    def from_tap(self, lines: Iterator[str]) -> list[_Entry]:
        reader = TapReader(lines)
        out: list[_Entry] = []
        suite_types_seen = False
        for p in reader:
            e = _tap_entry(p)
            suite_types_seen = suite_types_seen or p.diag("type") is not None
            out.append(e)
        if suite_types_seen:
            # This Node prints type: 'suite' on suites: no type means a test.
            for e in out:
                e.is_suite = bool(e.is_suite)
        self.counters.update(reader.counters)
        self.report.warnings.extend(reader.warnings)
        if reader.bail_out is not None:
            self.report.warnings.append(f"TAP bail out: {reader.bail_out}")
        unfinished = reader.unfinished
        if unfinished and self.run.killed_by_timeout:
            out.append(_Entry(ancestry=unfinished[:-1], name=unfinished[-1], outcome="fail", failure_type="killed",
                              message="the run was killed by timeout while this test was running"))
        return out

    # ------------------------------------------------------------------ spec

    def from_spec(self, lines: Iterator[str]) -> list[_Entry]:
        """The spec reporter: a tree of results (``▶`` opens a parent), error
        blocks under failures, ``ℹ`` counters, then a "failing tests" recap
        whose ``test at file:line`` lines give the failures' locations."""
        out: list[_Entry] = []
        stack: list[str] = []  # names of open parents by level
        open_parent: dict[int, str] = {}
        block: list[str] | None = None
        block_indent = 0
        block_entry: _Entry | None = None
        buffer: list[str] = []  # console lines since the last result
        in_recap = False
        recap: list[_Entry] = []  # the failures again, with their locations
        location: str | None = None

        def end_block() -> None:
            nonlocal block, block_entry
            if block_entry is not None and block:
                block_entry.message, block_entry.details = _error_text(block)
            block, block_entry = None, None

        for line in lines:
            if block is not None:
                if not line.strip() or len(line) - len(line.lstrip(" ")) >= block_indent:
                    if len(block) < MAX_BLOCK_LINES:
                        block.append(line[block_indent:] if line.strip() else "")
                    continue
                end_block()
            if SPEC_FAILING_HEAD_RE.match(line):
                in_recap = True
                continue
            if cm := SPEC_COUNTER_RE.match(line):
                self.counters[cm.group("key")] = float(cm.group("value"))
                continue
            if in_recap:
                if tm := SPEC_TEST_AT_RE.match(line):
                    location = tm.group("loc")
                elif (sm := SPEC_LINE_RE.match(line)) and not sm.group("indent"):
                    r = _Entry(ancestry=(), name=sm.group("name"), outcome="fail")
                    if location is not None:
                        r.file, r.line = self._location(location)
                    recap.append(r)
                    location = None
                    block, block_indent, block_entry = [], 2, r
                continue
            m = SPEC_LINE_RE.match(line)
            if not m:
                if len(buffer) < MAX_BUFFER_LINES:
                    buffer.append(line)
                continue
            level = len(m.group("indent")) // 2
            sym, name = m.group("sym"), m.group("name")
            if sym == "▶" and m.group("ms") is None:
                del stack[level:]
                stack.extend([""] * (level - len(stack)))
                stack.append(name)
                open_parent[level] = name
                continue
            del stack[level:]
            e = _Entry(ancestry=tuple(stack), name=name, outcome="pass", output=buffer)
            buffer = []
            if m.group("ms"):
                e.duration_s = float(m.group("ms")) / 1000
            if open_parent.get(level) == name:
                e.has_children = True
                del open_parent[level]
            directive = m.group("dir")
            if sym == "﹣":
                e.outcome = "skip"
                e.reason = None if directive in (None, "SKIP") else directive
            elif directive is not None:
                e.outcome = "todo"
                e.reason = None if directive == "TODO" else directive
            elif sym in ("✖", "×"):
                e.outcome = "fail"
            elif sym == "▶":
                # Older spec reporters end a parent with "▶ name (ms)".
                e.has_children = True
            out.append(e)
            if sym in ("✖", "×"):
                block, block_indent, block_entry = [], len(m.group("indent")) + 2, e
        end_block()
        # The recap gives locations (and, on Nodes that print errors only
        # there, the errors): matched to the failures by name, in order.
        used: set[int] = set()
        for r in recap:
            e = next((x for x in out if x.name == r.name and x.outcome in ("fail", "todo") and id(x) not in used),
                     None)
            if e is None:
                continue
            used.add(id(e))
            if e.file is None and r.file is not None:
                e.file, e.line = r.file, r.line
            if e.message is None:
                e.message, e.details = r.message, r.details
        return out

    # ------------------------------------------------------------------ dot

    def from_dot(self, lines: Iterator[str]) -> list[_Entry]:
        """The dot reporter: ``.``/``X`` per finished test or suite, then
        "Failed tests:" with each failure's name (no parents) and error.
        Every other test comes from the test files."""
        marks = ""
        failures: list[_Entry] = []
        block: list[str] | None = None
        in_failed = False
        for line in lines:
            if DOT_FAILED_HEAD_RE.match(line):
                in_failed = True
                continue
            if not in_failed:
                if DOT_RE.match(line.strip()) and (not marks or line.strip()):
                    marks += line.strip()
                continue
            m = SPEC_LINE_RE.match(line)
            if m and not m.group("indent") and m.group("sym") in ("✖", "×"):
                if block is not None and failures:
                    failures[-1].message, failures[-1].details = _error_text(block)
                e = _Entry(ancestry=(), name=m.group("name"), outcome="todo" if m.group("dir") else "fail",
                           reason=None if m.group("dir") in (None, "TODO") else m.group("dir"))
                if m.group("ms"):
                    e.duration_s = float(m.group("ms")) / 1000
                failures.append(e)
                block = []
            elif block is not None and len(block) < MAX_BLOCK_LINES:
                block.append(line[2:] if line.startswith("  ") else line)
        if block is not None and failures:
            failures[-1].message, failures[-1].details = _error_text(block)
        return self._dot_from_sources(failures, marks)

    def _dot_from_sources(self, failures: list[_Entry], marks: str) -> list[_Entry]:
        # A file that failed as a whole ran none of its tests.
        failed_files = {self.rel(f.name) for f in failures if FILE_ID_RE.match(f.name)}
        files = [f for f in self.test_files() if f not in failed_files]
        nodes = [n for f in files for n in _completion_order(self.specs.tree(f))]
        if not nodes:
            self.report.warnings.append(
                "the dot reporter names only failing tests and the test files could not be read: "
                "passing and skipped tests are missing")
            return failures
        self.report.sources.append("sources")
        file_marks = sum(1 for f in failures if FILE_ID_RE.match(f.name))
        if self.run.killed_by_timeout and len(marks) < len(nodes) + file_marks:
            return self._dot_killed(nodes, marks)
        if marks and len(marks) != len(nodes) + file_marks:
            self.report.warnings.append(
                f"the dot reporter printed {len(marks)} results but the test files define {len(nodes)} "
                "tests and suites; tests created at run time may be missing")
        if marks and marks.count("X") != len(failures):
            self.report.warnings.append(f"{marks.count('X')} failure marks but {len(failures)} failures listed")
        assigned: dict[int, _Entry] = {}
        out: list[_Entry] = []
        for f in failures:
            node = next((n for n in nodes if id(n) not in assigned and n.matches(f.name)
                         and n.title is not None), None) or \
                next((n for n in nodes if id(n) not in assigned and n.matches(f.name)), None)
            if node is None:
                out.append(f)  # a file-level failure, or a test built at run time
                continue
            assigned[id(node)] = f
        for n in nodes:
            if n.kind != "test":
                continue
            ancestry = tuple(s.title or "" for s in n.suites)
            if any(s.title is None for s in [*n.suites, n]):
                self.report.warnings.append(f"{n.file}:{n.line}: a test name is built at run time; not listed")
                continue
            f = assigned.get(id(n))
            if f is not None:
                f.ancestry, f.name, f.file, f.line = ancestry, n.title or f.name, n.file, n.line
                f.is_suite = False
                f.has_children = any(c.kind == "test" for c in n.children)
                if n.todo_any and f.outcome == "fail":
                    f.outcome = "todo"
                out.append(f)
                continue
            outcome = "todo" if n.todo_any else "skip" if n.skipped else "pass"
            out.append(_Entry(ancestry=ancestry, name=n.title or "", outcome=outcome, file=n.file, line=n.line,
                              reason=n.reason, is_suite=False))
        return out

    def _dot_killed(self, nodes: list[SpecNode], marks: str) -> list[_Entry]:
        """A dot run killed by ``timeout``: the marks are the results of the
        first tests and suites in completion order (the "Failed tests" recap
        never came); the next test was hanging."""
        out: list[_Entry] = []
        for k, n in enumerate(nodes):
            if n.kind != "test" or any(s.title is None for s in [*n.suites, n]):
                continue
            ancestry = tuple(s.title or "" for s in n.suites)
            e = _Entry(ancestry=ancestry, name=n.title or "", outcome="pass", file=n.file, line=n.line,
                       is_suite=False, reason=n.reason)
            if k < len(marks):
                e.outcome = "fail" if marks[k] == "X" else "todo" if n.todo_any else "skip" if n.skipped else "pass"
            elif not (n.skipped or n.todo_any) and not any(c.kind == "test" for c in n.children):
                e.outcome, e.failure_type = "fail", "killed"
                e.message = "the run was killed by timeout while this test was running"
                out.append(e)
                break
            else:
                continue
            out.append(e)
        return out

    def test_files(self) -> list[str]:
        """The files ``node --test`` runs: the paths/globs given, else the
        default patterns (test/ directories, *.test.js, *-test.js, ...)."""
        files = self.index.files(JS_SUFFIXES)
        args = _positional(self.words)
        if not args and "--test" not in self.words:
            # A test file run directly: node path/to/x.test.js
            script = next((w for w in self.words if w.endswith(JS_SUFFIXES) and not w.startswith("-")), None)
            args = [script] if script else []
        if not args:
            return sorted(f for f in files if DEFAULT_FILES_RE.search(f))
        out: list[str] = []
        for a in args:
            a = (self.rel(a) or a).rstrip("/")
            if a in files:
                hits = [a]
            elif any(f.startswith(a + "/") for f in files):
                hits = [f for f in files if f.startswith(a + "/") and DEFAULT_FILES_RE.search(f[len(a):])]
            else:
                rx = glob_regex(a)
                hits = [f for f in files if rx.fullmatch(f)]
            out.extend(h for h in sorted(hits) if h not in out)
        return out

    def hanging_test(self) -> None:
        """The test running when coreutils ``timeout`` killed node (spec and
        dot print a test only when it ends): the first runnable test after
        the last one reported, in source order."""
        reported = {t.id for t in self.report.tests}
        order = [n for f in self.test_files() for n in iter_nodes(self.specs.tree(f)) if n.kind == "test"]
        ids = [SEP.join(t for t in (*(s.title for s in n.suites), n.title) if t is not None)
               if all(x.title is not None for x in (*n.suites, n)) else None for n in order]
        last = max((k for k, i in enumerate(ids) if i in reported), default=-1)
        for n, test_id in zip(order[last + 1:], ids[last + 1:]):
            if test_id is None or n.skipped or n.todo_any or test_id in reported \
                    or any(c.kind == "test" for c in n.children):
                continue
            self.report.tests.append(TestResult(
                id=test_id, status=Status.FAILED, file=n.file, line=n.line, timed_out=True, suite=n.file,
                message="the run was killed by timeout while this test was running "
                        "(the test after the last reported one)"))
            return

    # ------------------------------------------------------------------ junit

    def from_junit(self, dest: str) -> list[_Entry] | None:
        """node's JUnit reporter: suites and tests with subtests are
        ``<testsuite>`` elements, other tests ``<testcase>``."""
        if dest in ("stdout", "stderr"):
            reader = JUnitReader(dest, stream=line_stream(printed_document(self.run.lines(dest))))
        else:
            p = self.run.resolve(dest)
            if p is None or not p.is_file():
                self.report.warnings.append(f"JUnit report {dest} does not exist")
                return None
            reader = JUnitReader(p)
        out: list[_Entry] = []
        parents: dict[tuple[str, ...], bool] = {}
        for case in reader:
            out.append(_junit_entry(case))
            for k in range(1, len(case.suites) + 1):
                path = case.suites[:k]
                parents[path] = parents.get(path, False) or out[-1].outcome == "fail"
        self.report.warnings.extend(reader.warnings)
        if not out:
            return None
        self.report.sources.append(f"junit-xml:{dest}")
        # Tests with subtests are <testsuite>s here: the sources tell them apart.
        for path, failed in parents.items():
            node = self.specs.find(path[:-1], path[-1], kinds=("test", "suite"))
            if node is not None and node.kind == "test":
                out.append(_Entry(ancestry=path[:-1], name=path[-1], outcome="fail" if failed else "pass",
                                  has_children=True, is_suite=False,
                                  message="a subtest failed" if failed else None))
        return out

    # ------------------------------------------------------------------ mapping

    def _location(self, loc: str) -> tuple[str | None, int | None]:
        m = LOCATION_RE.match(loc.strip().strip("'\""))
        if not m:
            return self.rel(loc), None
        return self.rel(m.group("file")), int(m.group("line"))

    def add(self, e: _Entry) -> None:
        """Map one entry; suites are dropped."""
        if FILE_ID_RE.match(e.name) and not e.ancestry and e.outcome == "fail":
            self.add_file_failure(e)
            return
        given = self.rel(e.file) if e.file else None
        node = self.specs.find(e.ancestry, e.name, given, kinds=("test", "suite"))
        if node is None and given:
            node = self.specs.find(e.ancestry, e.name, None, kinds=("test", "suite"))
        if node is None:
            node = self.specs.find_title(e.name, kinds=("test", "suite"))
        if _is_suite(e, node):
            return
        file, line = (given, e.line) if given and e.line else (None, None)
        if node is not None and (file is None or node.file == file):
            file, line = node.file, node.line if line is None else line
        native = None
        timed_out = False
        message = e.message
        if e.outcome == "pass":
            status = Status.PASSED
        elif e.outcome == "skip":
            status, native, message = Status.SKIPPED, "skip", e.reason or message
        elif e.outcome == "todo":
            status, native = Status.SKIPPED, "todo"
            message = e.reason or message
        elif e.failure_type == "killed":
            status, timed_out = Status.FAILED, True
        elif e.failure_type == "testTimeoutFailure" or TIMEOUT_RE.search(e.message or ""):
            status, native, timed_out = Status.FAILED, "cancelled", True
        elif e.failure_type == "cancelledByParent" or CANCELLED_RE.search(e.message or ""):
            status, native = Status.ERRORED, "cancelled"
        else:
            status = Status.FAILED
        self.report.tests.append(TestResult(
            id=e.id, status=status, file=file, line=line, message=message, details=e.details,
            duration_s=e.duration_s, native_status=native, timed_out=timed_out, suite=file))

    def add_file_failure(self, e: _Entry) -> None:
        """A test file that failed as a whole (node names it by its path)."""
        text = [*e.output, *(e.details or "").splitlines()]
        file = self.rel(e.name)
        # an import node could not resolve: the file's line that imports it
        line = import_line(self.index, file, "\n".join(text[:40]))
        for ln in text if line is None else ():
            m = FILE_LINE_RE.search(ln)
            if m and not STACK_RE.match(ln) and self.rel(m.group("file")) == file:
                line = int(m.group("line"))
                break
        err = next((ln.strip() for ln in text if LOAD_ERROR_RE.match(ln.strip())), None)
        message = err or e.message or "test file failed"
        details = "\n".join(x for x in text if x.strip()) or e.message
        self.report.tests.append(TestResult(
            id=e.name, status=Status.ERRORED, file=file, line=line or e.line, message=message, details=details,
            native_status="fail", duration_s=e.duration_s, suite=file))
        self.report.build_error = True

    def check_counters(self) -> None:
        """node's own ``tests`` counter against the tests listed."""
        total = self.counters.get("tests")
        if total is not None:
            self.report.summary_counts["total"] = int(total)


# ============================================================================ helpers


def _sniff(head: list[str]) -> str | None:
    """Which console reporter printed these lines (None: cannot tell yet)."""
    for line in head:
        s = line.strip()
        if s.startswith("TAP version") or s.startswith("# Subtest:") or re.match(r"^(?:not )?ok \d+ - ", s):
            return "tap"
    if any(DOT_FAILED_HEAD_RE.match(ln) for ln in head):
        return "dot"
    if any(SPEC_LINE_RE.match(ln) or SPEC_COUNTER_RE.match(ln) for ln in head):
        return "spec"
    if any(DOT_RE.match(ln) for ln in head):
        return "dot"
    return None


def _tap_entry(p: TapPoint) -> _Entry:
    """A TAP point of node's TAP reporter."""
    e = _Entry(ancestry=p.ancestry, name=p.description, outcome="pass", has_children=p.has_children)
    if p.directive == "skip":
        e.outcome, e.reason = "skip", p.reason
    elif p.directive == "todo":
        e.outcome, e.reason = "todo", p.reason
    elif not p.ok:
        e.outcome = "fail"
    typ = p.diag("type")
    if typ is not None:
        e.is_suite = typ == "suite"
    dur = p.diag("duration_ms")
    if isinstance(dur, (int, float)):
        e.duration_s = dur / 1000
    loc = p.diag("location")
    if isinstance(loc, str) and (m := LOCATION_RE.match(loc)):
        e.file, e.line = m.group("file"), int(m.group("line"))
    if not p.ok or p.directive == "todo":
        err = p.diag("error")
        ftype = p.diag("failureType")
        e.failure_type = ftype if isinstance(ftype, str) else None
        if isinstance(err, str) and err.strip():
            name = p.diag("name")
            e.message = f"{name}: {err}" if isinstance(name, str) and not err.startswith(name) else err
        e.details = p.yaml_text
    e.output = [*p.comments, *p.trailing] if FILE_ID_RE.match(p.description) else []
    return e


def _junit_entry(case: JUnitCase) -> _Entry:
    # A skipped describe() is a <testcase> too: is_suite stays unknown so
    # that the sources decide.
    e = _Entry(ancestry=case.suites, name=case.name, outcome="pass", duration_s=case.time)
    if "skipped" in case.kinds:
        todo = case.outcome == "skipped" and (case.type == "todo")
        e.outcome = "todo" if todo else "skip"
        e.reason = case.message if case.message not in (None, "true") else None
    elif case.outcome in ("failure", "error"):
        e.outcome = "fail"
        e.failure_type = case.type
        e.message = case.message
        e.details = case.text
        cause = JUNIT_CAUSE_RE.search(case.text or "")
        if cause and (not e.message or e.message.startswith("failed running")):
            # "failed running beforeEach hook": the hook's own error says more.
            e.message = "\n".join(x for x in (e.message, cause.group(1).strip("'")) if x)
    return e


def _is_suite(e: _Entry, node: SpecNode | None) -> bool:
    """Suites are not tests. The output says so (TAP type: 'suite'); else
    the source (describe vs test); else a parent whose result was not a
    failure of its own is taken for a suite (describe is the common case)."""
    if e.is_suite is not None:
        return e.is_suite
    if node is not None:
        return node.kind == "suite"
    return e.has_children


def _error_text(block: list[str]) -> tuple[str | None, str | None]:
    """(message, details) of an error block: the message is the text up to
    the stack (a quoted string is unquoted: ``'test failed'``)."""
    while block and not block[0].strip():
        block = block[1:]
    while block and not block[-1].strip():
        block = block[:-1]
    if not block:
        return None, None
    msg: list[str] = []
    for ln in block:
        if STACK_RE.match(ln):
            break
        msg.append(ln.rstrip())
    message = "\n".join(msg).strip()
    if len(msg) == 1 and re.fullmatch(r"'.*'|\".*\"", message):
        message = message[1:-1]
    return message or block[0].strip(), "\n".join(block)


def _completion_order(nodes: list[SpecNode]) -> list[SpecNode]:
    """Tests and suites in the order node reports them: children first; a
    skipped suite is reported alone (its tests are not)."""
    out: list[SpecNode] = []
    for n in nodes:
        if n.kind == "hook":
            continue
        if not (n.kind == "suite" and n.skip):
            out.extend(_completion_order(n.children))
        out.append(n)
    return out


NODE_VALUE_OPTIONS = {
    "--test-reporter", "--test-reporter-destination", "--test-name-pattern", "--test-skip-pattern",
    "--test-concurrency", "--test-timeout", "--test-shard", "--import", "--require", "-r", "--loader",
    "--experimental-loader", "--env-file", "--conditions", "-C", "--test-coverage-include",
    "--test-coverage-exclude", "--input-type", "--watch-path",
}


def _positional(words: list[str]) -> list[str]:
    """Files/globs after ``node ... --test``."""
    start = next((i for i, w in enumerate(words) if w == "--test"), None)
    return [] if start is None else plain_words(words, start + 1, NODE_VALUE_OPTIONS)


def parse(run: RunOutput) -> TestReport:
    """Parse a ``node --test`` run (any reporter listed in the module docstring)."""
    return _Parser(run).parse()


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

NODE_FLAG = "--test"
SELECT_VALUE_OPTIONS = {
    "-r", "--require", "--import", "--loader", "--experimental-loader", "--test-reporter",
    "--test-reporter-destination", "--test-name-pattern", "--test-skip-pattern", "--test-concurrency",
    "--test-timeout", "--env-file", "-C", "--conditions",
}
SELECT_OPTIONS = {"--test-name-pattern", "--test-only"}
DEFAULT_INVOCATION = "node --test"
REPORT_OPTIONS = (" --test-reporter=spec --test-reporter-destination=stdout"
                  " --test-reporter=junit --test-reporter-destination={reports}/node.xml")
SELECTION_REPORTS = "options"  # node reads options only before its test files
OPTIONS_BEFORE_PATHS = True


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    # node:test matches each level's name; repeated patterns are alternatives.
    patterns = [f"--test-name-pattern={shlex.quote(js_regex(i.split(' > ')[-1]))}"
                for i in dict.fromkeys(t.id for t in tests)]
    return [*patterns, *test_files(tests, inv)]
