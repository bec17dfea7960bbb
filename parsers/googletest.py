"""GoogleTest: the console output of gtest binaries and their XML/JSON reports.

* console output: ``[ RUN      ] Suite.Name`` starts a test, ``[       OK ]``,
  ``[  FAILED  ]`` or ``[  SKIPPED ]`` ends it (``, where GetParam() = ...``
  / ``, where TypeParam = ...`` and `` (N ms)`` may follow the name);
  ``[ DISABLED ] Suite.DISABLED_Name`` lists a disabled test (newer gtest);
  the failure parts between start and end (``file:LINE: Failure``,
  ``unknown file: Failure``, MSVC ``file(LINE): error: ...``,
  ``file:LINE: Skipped``) are the message;
* the summary (``[==========] N tests from M test suites ran.``,
  ``[  PASSED  ] N tests.``, ``[  SKIPPED ] N tests``, ``YOU HAVE N DISABLED
  TESTS``) is used to cross-check and to complete what the output omits;
* ``--gtest_brief=1`` prints only failing tests: passed, skipped and disabled
  tests are then enumerated from the binary's sources (TEST/TEST_F/TEST_P
  with their instantiations, typed tests), filtered like ``--gtest_filter``,
  and accepted only when they agree with the summary counts;
* ``--gtest_output=xml:PATH`` / ``json:PATH`` (or the ``GTEST_OUTPUT``
  variable): the report is the main source (``status="notrun"`` ->
  disabled, ``result="skipped"`` -> skipped), cross-checked with the
  console; a missing or broken report falls back to the console;
* a crash (abort, segfault) mid-run: the test that started and never ended
  fails (``timed_out`` when coreutils ``timeout`` killed the run); tests
  that never started are not listed.

Ids are gtest's own names (``Suite.Name``, ``Prefix/Suite.Name/N`` for
TEST_P instances, ``Suite/N.Name`` for typed tests). file/line is the test's
definition (``TEST(Suite, Name)``), from the report or the sources.
"""

from __future__ import annotations

import html
import re
import shlex
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from . import generic
from .cmake_build import BuildErrors
from .command import command_words, raw_words, unquote
from .invocation import ENV_ASSIGNMENT, Invocation as RunnerCall
from .json_report import read_json_file
from .junit_xml import JUnitReader
from .locate import Location, SourceIndex
from .models import Status, TestReport, TestResult
from .run_output import RunOutput, strip_ansi
from .source.cpp import GTestSources, is_disabled

FRAMEWORK = "googletest"
COMMAND_RE = [
    # any command given a --gtest_* flag or GTEST_* variable is a gtest binary
    re.compile(r"(?:^|\s)--gtest_\w+"),
    re.compile(r"(?:^|\s)GTEST_(?:OUTPUT|FILTER|BRIEF|COLOR|ALSO_RUN_DISABLED_TESTS|REPEAT|SHUFFLE)=\S*\s+\S"),
    # a compiled test binary run by path: ./build/foo_tests, build/bin/unit_test, out/x_unittest
    # (other frameworks' runners by path, e.g. /usr/bin/ctest or .venv/bin/pytest, are not)
    re.compile(r"^(?:\w+=\S*\s+)*(?:\./|/|[\w.-]+/)(?:[\w.+-]+/)*"
               r"(?!(?:ctest|pytest|py\.test|gotestsum|phpunit|rspec)(?:\s|$))[\w+-]*test[\w+-]*(?:\s|$)", re.I),
]
OUTPUT_RE = [
    re.compile(r"^\[==========\] Running \d+ tests? from \d+ test (?:suites?|cases?)\.", re.M),
    re.compile(r"^\[ RUN      \] \S+", re.M),
    re.compile(r"^\[       OK \] \S+", re.M),
    re.compile(r"^\[  (?:FAILED|PASSED|SKIPPED) *\] ", re.M),
    re.compile(r"^Running main\(\) from .*gtest_main\.cc", re.M),
    re.compile(r"^\[==========\] \d+ tests? from \d+ test (?:suites?|cases?) ran\.", re.M),
]

# -- console lines (ANSI-stripped) ---------------------------------------------
RUN = re.compile(r"^\[ RUN      \] (?P<id>\S+?)(?:, where .*)?\s*$")
# "[  FAILED  ] Prefix/Suite.Name/2, where GetParam() = (1, 2) (0 ms)"
END = re.compile(r"^\[ *(?P<word>OK|FAILED|SKIPPED) *\] (?P<id>[^\s,]+)(?:, where (?P<where>.*?))?"
                 r"(?: \((?P<ms>\d+) ms\))?\s*$")
DISABLED = re.compile(r"^\[ DISABLED \] (?P<id>\S+)\s*$")
RUNNING = re.compile(r"^\[==========\] Running (?P<n>\d+) tests? from \d+ test (?:suites?|cases?)\.")
RAN = re.compile(r"^\[==========\] (?P<n>\d+) tests? from \d+ test (?:suites?|cases?) ran\.")
PASSED_N = re.compile(r"^\[  PASSED  \] (?P<n>\d+) tests?\.")
SKIPPED_N = re.compile(r"^\[  SKIPPED \] (?P<n>\d+) tests?(?:, listed below:|\.)")
FAILED_N = re.compile(r"^\[  FAILED  \] (?P<n>\d+) tests?, listed below:")
# "[  FAILED  ] FooTest: SetUpTestSuite or TearDownTestSuite" (summary of a suite-level failure)
SUITE_FAILED = re.compile(r"^\[  FAILED  \] (?P<suite>[^\s:]+): (?P<what>SetUpTestSuite or TearDownTestSuite|"
                          r"SetUpTestCase or TearDownTestCase)\s*$")
DISABLED_N = re.compile(r"^\s*YOU HAVE (?P<n>\d+) DISABLED TESTS?\s*$")
FILTER = re.compile(r"^Note: Google Test filter = (?P<filter>.*?)\s*$")
REPEAT = re.compile(r"^Repeating all tests \(iteration (?P<n>\d+)\)")
# Failure part headers: "path:17: Failure", "unknown file: Failure", "path(17): error: msg" (MSVC),
# "path:26: Skipped"
PART = re.compile(r"^(?P<file>(?:[A-Za-z]:)?[^\s:(][^:(]*?|unknown file)(?::(?P<line>\d+)|\((?P<mline>\d+)\))?: "
                  r"(?:(?P<kind>Failure|Skipped)\s*$|error: (?P<msg>.*)$)")
SUITE_LINE = re.compile(r"^\[----------\] \d+ tests? from (?P<suite>\S+?)(?:, where .*?)?(?: \(\d+ ms total\))?\s*$")
GLOBAL_SETUP = re.compile(r"^\[----------\] Global test environment (?:set-up|tear-down)")
# gtest's name for failures outside of any test suite (global environment), as its XML/JSON reports use it
ENV_FAILED_SUITE = "NonTestSuiteFailure"

# Signals as a shell reports a killed process (128+N).
SIGNALS = {129: "SIGHUP", 130: "SIGINT", 131: "SIGQUIT", 132: "SIGILL", 133: "SIGTRAP", 134: "SIGABRT",
           135: "SIGBUS", 136: "SIGFPE", 137: "SIGKILL", 139: "SIGSEGV", 141: "SIGPIPE", 143: "SIGTERM"}
# Lines on the crash path worth quoting in the crashed test's message.
CRASH_LINE = re.compile(r"(?i)terminate called|what\(\):|Assertion .* failed|Segmentation fault|Aborted|"
                        r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|core dumped|Killed|"
                        r"Floating point exception|Bus error|SUMMARY:")
MAX_PART_LINES = 60
MAX_PARTS = 10
MAX_OUTPUT_LINES = 80
CRASH_TAIL_LINES = 40


@dataclass
class Part:
    """One gtest test part result: a failure or a skip, with its location."""

    kind: str  # "failure" or "skip"
    file: str | None
    line: int | None
    lines: list[str] = field(default_factory=list)

    @property
    def header(self) -> str:
        where = self.file or "unknown file"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: {'Skipped' if self.kind == 'skip' else 'Failure'}"

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


@dataclass
class ConsoleTest:
    """One test as the console shows it."""

    id: str
    status: Status
    native_status: str | None = None
    where: str | None = None  # ", where GetParam() = ..." text
    duration_s: float | None = None
    parts: list[Part] = field(default_factory=list)
    output: list[str] = field(default_factory=list)  # lines the test printed outside of parts
    crashed: bool = False
    crash_lines: list[str] = field(default_factory=list)  # abort/sanitizer lines among its last lines

    def message(self) -> str | None:
        """The key lines: every failure part's text (the skip reason for a skipped test)."""
        want = "skip" if self.status == Status.SKIPPED else "failure"
        texts = [p.text for p in self.parts if p.kind == want and p.text]
        if not texts:
            texts = [p.text for p in self.parts if p.text]
        return "\n\n".join(texts) or None

    def details(self) -> str | None:
        chunks: list[str] = [f"where {self.where}"] if self.where else []
        if self.output:
            chunks.append("\n".join(self.output).strip("\n"))
        for p in self.parts:
            chunks.append(p.header + ("\n" + p.text if p.text else ""))
        text = "\n".join(c for c in chunks if c)
        return text or None

    def result(self) -> TestResult:
        """A TestResult without file/line (the caller locates the definition)."""
        return TestResult(id=self.id, status=self.status, native_status=self.native_status,
                          duration_s=self.duration_s, message=self.message(), details=self.details())


@dataclass
class Console:
    """What a gtest console output says, read line by line by :func:`read_console`."""

    tests: dict[str, ConsoleTest] = field(default_factory=dict)
    # Skip parts printed without a test name (brief mode prints no result line for skipped tests).
    orphan_skips: list[Part] = field(default_factory=list)
    # Failures outside of any test, by suite (SetUpTestSuite/TearDownTestSuite) or
    # ENV_FAILED_SUITE (global environment set-up/tear-down).
    orphan_failures: dict[str, list[Part]] = field(default_factory=dict)
    suite_failures: list[str] = field(default_factory=list)  # "[  FAILED  ] Suite: SetUpTestSuite or ..."
    running: str | None = None  # started and never finished (crash / kill)
    started: int | None = None  # "Running N tests"
    ran: int | None = None
    passed: int | None = None
    skipped: int | None = None
    failed: int | None = None
    disabled: int | None = None
    filter: str | None = None
    seen_gtest: bool = False
    brief: bool = False  # results without [ RUN ] lines
    saw_run: bool = False
    unnamed_crash: list[Part] = field(default_factory=list)  # brief mode: parts of a test that never ended

    def results(self) -> list[TestResult]:
        return [t.result() for t in self.tests.values()]


def _reason_only(p: Part) -> Part:
    """A skip part printed without its test's name (brief mode): only its first
    line is surely the reason; what follows is output of later, passing tests."""
    return Part(p.kind, p.file, p.line, p.lines[:1])


class ConsoleReader:
    """The line-by-line state machine behind :func:`read_console`: ``feed``
    each ANSI-stripped line, then ``finish`` once for the :class:`Console`."""

    def __init__(self) -> None:
        self.c = Console()
        self.current: ConsoleTest | None = None
        self.pending: list[Part] = []  # parts since the last result line (brief mode, crashes)
        self.pending_output: list[str] = []
        self.part: Part | None = None
        self.summary = False
        self.suite = ENV_FAILED_SUITE  # where failures outside of a test belong
        self.tail: deque[str] = deque(maxlen=CRASH_TAIL_LINES)  # the running test's last lines

    def _store(self, t: ConsoleTest) -> None:
        old = self.c.tests.get(t.id)
        # --gtest_repeat runs a test several times: a failure in any iteration stands
        if old is not None and old.status == Status.FAILED and t.status != Status.FAILED:
            return
        self.c.tests[t.id] = t

    def _add_to_part(self, line: str) -> bool:
        if self.part is not None and len(self.part.lines) < MAX_PART_LINES:
            self.part.lines.append(line)
            return True
        return self.part is not None

    def feed(self, line: str) -> None:
        if line[:1] == "[" and self._bracket(line):
            return
        if self.summary:
            if not (FILTER.match(line) or REPEAT.match(line)):
                self._summary_line(line)
                return
            self.summary = False  # the next binary of "cmd1; cmd2", or the next --gtest_repeat iteration
        self._text(line)

    def _bracket(self, line: str) -> bool:
        """gtest's own ``[ ... ]`` lines; False for anything else."""
        c = self.c
        if m := RUN.match(line):
            c.seen_gtest = c.saw_run = True
            self.summary = False
            if self.current is not None:  # a second start without an end: the first one crashed
                self._crash(self.current)
            self._close_orphans()
            self.current = ConsoleTest(id=m.group("id"), status=Status.PASSED)
            self.tail.clear()
            self.part = None
            c.running = self.current.id
            return True
        if self.summary:
            if not RUNNING.match(line):
                self._summary_line(line)
                return True
            self.summary = False
        if m := END.match(line):
            self._end(m)
            return True
        if m := DISABLED.match(line):
            c.seen_gtest = True
            self._store(ConsoleTest(id=m.group("id"), status=Status.SKIPPED, native_status="disabled"))
            self.part = None
            return True
        if m := RAN.match(line):
            c.seen_gtest, self.summary = True, True
            c.ran = (c.ran or 0) + int(m.group("n"))
            self._close_orphans()
            return True
        if m := RUNNING.match(line):
            c.seen_gtest = True
            c.started = (c.started or 0) + int(m.group("n"))
            return True
        if m := SUITE_LINE.match(line):
            if self.current is None:
                self._close_orphans()  # SetUpTestSuite/TearDownTestSuite failures of the suite before
                self.suite = m.group("suite")
            self.part = None
            return True
        if GLOBAL_SETUP.match(line):
            self._close_orphans()
            self.suite, self.part = ENV_FAILED_SUITE, None
            return True
        if line.startswith(("[----------] ", "[==========] ")):
            self.part = None
            return True
        return False

    def _text(self, line: str) -> None:
        """Any other line: a filter note, a repeat banner, a failure part header, or output."""
        c = self.c
        if line.startswith("Note: ") and (m := FILTER.match(line)):
            c.filter = m.group("filter")
            return
        if line.startswith("Repeating ") and (m := REPEAT.match(line)):
            if m.group("n") != "1":
                # --gtest_repeat: the counters of the last iteration stand (ids repeat, see _store)
                c.started = c.ran = c.passed = c.skipped = c.failed = c.disabled = None
            self.part = None
            return
        if ": " in line and (m := PART.match(line)):
            file = None if m.group("file") == "unknown file" else m.group("file")
            ln = m.group("line") or m.group("mline")
            kind = "skip" if m.group("kind") == "Skipped" else "failure"
            self.part = Part(kind=kind, file=file, line=int(ln) if ln else None)
            if m.group("msg"):
                self.part.lines.append(m.group("msg"))
            target = self.current.parts if self.current is not None else self.pending
            if len(target) < MAX_PARTS:
                target.append(self.part)
            return
        if self.current is not None:
            self.tail.append(line)
        if self._add_to_part(line):
            return
        out = self.current.output if self.current is not None else self.pending_output
        if len(out) < MAX_OUTPUT_LINES:
            out.append(line)

    def _end(self, m: re.Match[str]) -> None:
        c = self.c
        c.seen_gtest = True
        tid = m.group("id")
        word = m.group("word")
        status = {"OK": Status.PASSED, "FAILED": Status.FAILED, "SKIPPED": Status.SKIPPED}[word]
        if self.current is not None and self.current.id == tid:
            t = self.current
        else:
            # brief mode (or a lost RUN line): the parts printed since the last result are this test's
            c.brief = c.brief or self.current is None
            t = ConsoleTest(id=tid, status=status)
            if status == Status.FAILED:
                # a skip part followed by failure parts belongs to an earlier (skipped) test:
                # GTEST_SKIP ends a test, so only the parts after the last skip are this test's
                last_skip = max((i for i, p in enumerate(self.pending) if p.kind == "skip"), default=-1)
                mine = self.pending[last_skip + 1:]
                if not mine and last_skip >= 0:
                    mine = [self.pending[last_skip]]
                    last_skip -= 1
                c.orphan_skips.extend(_reason_only(p) for p in self.pending[: last_skip + 1] if p.kind == "skip")
                t.parts = mine
            else:
                t.parts = list(self.pending)
            t.output = self.pending_output
        t.status = status
        if status == Status.SKIPPED and t.native_status is None:
            t.native_status = "skipped (GTEST_SKIP)"
        t.where = m.group("where")
        if m.group("ms") is not None:
            t.duration_s = int(m.group("ms")) / 1000
        self._store(t)
        self.current, self.part = None, None
        self.pending, self.pending_output = [], []
        c.running = None

    def _close_orphans(self) -> None:
        """Parts printed outside of any test: skips of tests brief mode does not
        name, failures of SetUpTestSuite/TearDownTestSuite or of the global
        environment. (Brief mode prints no suite lines, so there every failure
        part is followed by its test's result line and never ends up here.)"""
        for p in self.pending:
            if p.kind == "skip":
                self.c.orphan_skips.append(_reason_only(p))
            else:
                self.c.orphan_failures.setdefault(self.suite, []).append(p)
        self.pending, self.pending_output, self.part = [], [], None

    def _summary_line(self, line: str) -> None:
        c = self.c
        if m := PASSED_N.match(line):
            c.passed = (c.passed or 0) + int(m.group("n"))
        elif m := SKIPPED_N.match(line):
            c.skipped = (c.skipped or 0) + int(m.group("n"))
        elif m := FAILED_N.match(line):
            c.failed = (c.failed or 0) + int(m.group("n"))
        elif m := SUITE_FAILED.match(line):
            if m.group("suite") not in c.suite_failures:
                c.suite_failures.append(m.group("suite"))
        elif m := DISABLED_N.match(line):
            c.disabled = (c.disabled or 0) + int(m.group("n"))

    def _crash(self, t: ConsoleTest) -> None:
        t.status, t.crashed, t.native_status = Status.FAILED, True, "crashed"
        t.crash_lines = [ln.strip() for ln in self.tail if CRASH_LINE.search(ln)][:5]
        self._store(t)

    def finish(self) -> Console:
        if self.current is not None:
            self._crash(self.current)
            self.c.running = self.current.id
            self.current = None
        elif not self.summary:
            if self.c.brief and any(p.kind == "failure" for p in self.pending):
                # brief mode names no test before it ends: these parts are an unnamed test's that never ended
                self.c.unnamed_crash = [p for p in self.pending if p.kind == "failure"]
                self.pending = [p for p in self.pending if p.kind == "skip"]
            self._close_orphans()
        return self.c


def read_console(lines: Iterable[str]) -> Console:
    """Read gtest console lines (ANSI-stripped) into a :class:`Console`.

    Safe to call on any text: lines that are not gtest's are kept as the
    running test's output. A test that started and never ended is marked
    ``crashed`` (status failed) and named in ``Console.running``.
    """
    reader = ConsoleReader()
    for line in lines:
        reader.feed(strip_ansi(line))
    return reader.finish()


def parse_console(lines: Iterable[str]) -> list[TestResult]:
    """The tests a gtest console output names, in order, without file/line.

    For use by other parsers that find gtest output inside their own logs
    (ctest ``--output-on-failure``). The test that started and never ended
    (crash) is failed with native status ``crashed``.
    """
    return read_console(lines).results()


# -- the command and its reports -------------------------------------------------------
SEGMENT_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
ENV_WORD = re.compile(r"^(?P<name>[A-Za-z_]\w*)=(?P<value>.*)$")
FLAG_WORD = re.compile(r"^--gtest_(?P<name>\w+)(?:=(?P<value>.*))?$")


@dataclass
class Invocation:
    """One gtest binary run by the command, with the flags that shape its output."""

    binary: str | None = None
    reports: list[tuple[str, str]] = field(default_factory=list)  # (xml|json, path as given)
    filter: str | None = None
    brief: bool = False
    also_run_disabled: bool = False


def _flag_on(value: str | None) -> bool:
    return value is None or value.strip().lower() not in ("0", "false", "no", "")


def invocations(command: str) -> list[Invocation]:
    """The gtest binaries a command runs (segments COMMAND_RE matches) and their flags
    (``--gtest_*`` or the ``GTEST_*`` environment variables before the binary)."""
    found: list[Invocation] = []
    for seg in SEGMENT_SPLIT.split(command.strip()):
        if not seg or not any(p.search(seg) for p in COMMAND_RE):
            continue
        inv = Invocation()
        settings: dict[str, str | None] = {}
        for word in command_words(seg):
            if inv.binary is None and (m := ENV_WORD.match(word)):
                if m.group("name").startswith("GTEST_"):
                    settings[m.group("name")[6:].lower()] = m.group("value")
                continue
            if inv.binary is None and word not in ("env", "exec", "command", "timeout") \
                    and not re.fullmatch(r"-\S*|\d+[smhd]?", word):
                inv.binary = word
                continue
            if m := FLAG_WORD.match(word):
                settings[m.group("name").lower()] = m.group("value")
        if "output" in settings and settings["output"]:
            kind, _, path = (settings["output"] or "").partition(":")
            kind = kind.lower()
            if kind in ("xml", "json"):
                if not path:
                    path = f"test_detail.{kind}"
                elif path.endswith(("/", "\\")):
                    name = PurePosixPath(inv.binary or "test_detail").name.removesuffix(".exe")
                    path = f"{path}{name}.{kind}"
                inv.reports.append((kind, path))
        inv.filter = settings.get("filter")
        inv.brief = "brief" in settings and _flag_on(settings["brief"])
        inv.also_run_disabled = "also_run_disabled_tests" in settings and _flag_on(settings["also_run_disabled_tests"])
        found.append(inv)
    return found


def _fix_bytes(text: str) -> str:
    """gtest's JSON writer escapes each UTF-8 byte as ``\\u00XX``: undo that mojibake."""
    if any("\x80" <= ch <= "\xff" for ch in text):
        try:
            return text.encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            return text
    return text


def _report_message(text: str | None) -> str | None:
    """A report's failure text without gtest's leading ``file:LINE`` location line."""
    if not text:
        return None
    first, sep, rest = text.partition("\n")
    if sep and (first.strip() == "unknown file" or re.fullmatch(r"\S.*?(?::\d+|\(\d+\))", first.strip())):
        return rest.strip("\n") or first
    return text


@dataclass
class _ReportCase:
    id: str
    status: Status
    native_status: str | None
    file: str | None
    line: int | None
    message: str | None
    details: str | None
    duration_s: float | None


def _xml_cases(path: Path, warnings: list[str]) -> tuple[list[_ReportCase], bool]:
    reader = JUnitReader(path)
    cases: list[_ReportCase] = []
    for c in reader:
        cls = c.classname or (c.suites[-1] if c.suites else "")
        if not c.name and not c.attrs.get("classname"):  # suite-level or environment failure (gtest writes an unnamed case)
            suite = c.suites[-1] if c.suites else ENV_FAILED_SUITE
            cases.append(_ReportCase(suite, Status.ERRORED, "suite failure", None, None,
                                     _report_message(c.message), c.text, c.time))
            continue
        tid = f"{cls}.{c.name}" if cls else c.name
        status_attr, result_attr = c.attrs.get("status", "run"), c.attrs.get("result", "")
        native = None
        if status_attr == "notrun" or result_attr == "suppressed":
            status, native = Status.SKIPPED, "disabled"
        elif c.outcome in ("failure", "error"):
            status = Status.FAILED
        elif c.outcome == "skipped" or result_attr == "skipped":
            status, native = Status.SKIPPED, "skipped (GTEST_SKIP)"
        else:
            status = Status.PASSED
        msg = c.message if c.outcome != "passed" else None
        cases.append(_ReportCase(tid, status, native, c.file, c.line, _report_message(msg),
                                 c.text or msg, c.time))
    warnings.extend(reader.warnings)
    return cases, reader.complete


def _json_cases(path: Path, warnings: list[str]) -> tuple[list[_ReportCase], bool]:
    if not path.is_file():
        warnings.append(f"report {path} does not exist")
        return [], False
    data, why = read_json_file(path)
    if why:
        warnings.append(f"report {path.name} is {why}")
        return [], False
    suites = data.get("testsuites") if isinstance(data, dict) else None
    if not isinstance(suites, list):
        warnings.append(f"report {path.name} has no 'testsuites' list")
        return [], False
    cases: list[_ReportCase] = []
    for suite in suites:
        if not isinstance(suite, dict):
            continue
        for t in suite.get("testsuite") or []:
            if not isinstance(t, dict):
                continue
            name, cls = str(t.get("name") or ""), str(t.get("classname") or suite.get("name") or "")
            failures = [_fix_bytes(str(f.get("failure", ""))) for f in t.get("failures") or [] if isinstance(f, dict)]
            skips = [_fix_bytes(str(f.get("message", ""))) for f in t.get("skipped") or [] if isinstance(f, dict)]
            status_attr, result_attr = str(t.get("status", "RUN")).upper(), str(t.get("result", "")).upper()
            native = None
            if not name and not t.get("classname"):
                cases.append(_ReportCase(str(suite.get("name") or ENV_FAILED_SUITE), Status.ERRORED, "suite failure",
                                         None, None, _report_message(failures[0]) if failures else None,
                                         "\n\n".join(failures) or None, None))
                continue
            if status_attr == "NOTRUN" or result_attr == "SUPPRESSED":
                status, native = Status.SKIPPED, "disabled"
            elif failures:
                status = Status.FAILED
            elif result_attr == "SKIPPED":
                status, native = Status.SKIPPED, "skipped (GTEST_SKIP)"
            else:
                status = Status.PASSED
            texts = failures if status == Status.FAILED else skips
            message = "\n\n".join(m for m in (_report_message(x) for x in texts) if m) or None
            dur = None
            if isinstance(t.get("time"), str) and (dm := re.fullmatch(r"([\d.]+)s", t["time"])):
                dur = float(dm.group(1))
            line = t.get("line") if isinstance(t.get("line"), int) else None
            cases.append(_ReportCase(f"{cls}.{name}" if cls else name, status, native,
                                     str(t["file"]) if t.get("file") else None, line, message,
                                     "\n\n".join(texts) or None, dur))
    return cases, True


# -- the parser ------------------------------------------------------------------------
def _signal_text(exit_code: int | None) -> str:
    if exit_code is not None and exit_code in SIGNALS:
        return f"{SIGNALS[exit_code]}, exit code {exit_code}"
    if exit_code is not None and exit_code < 0 and 128 - exit_code in SIGNALS:
        return f"{SIGNALS[128 - exit_code]}"
    return f"exit code {exit_code}" if exit_code is not None else "no exit code"


def _crash_result(t: ConsoleTest, run: RunOutput) -> TestResult:
    r = t.result()
    if run.killed_by_timeout:
        r.timed_out, r.native_status = True, "timeout"
        why = "the run was killed by timeout while this test was running"
    else:
        why = f"the test crashed ({_signal_text(run.exit_code)}) before reporting a result"
        if t.crash_lines:
            why += "\n" + "\n".join(t.crash_lines)
    r.message = f"{r.message}\n\n{why}" if r.message else why
    return r


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``Suite.Test`` (with ``Prefix/``, ``/N`` of parameterized and typed
    tests): the ``TEST``/``TEST_F``/``TEST_P``/``TYPED_TEST`` that defines it."""
    src = GTestSources(sources)
    return {t.id: Location(*loc) for t in tests if (loc := src.locate(t.id))}


def parse(run: RunOutput) -> TestReport:
    """Parse one run of gtest binaries (see the module docstring)."""
    report = TestReport(framework=FRAMEWORK)
    invs = invocations(run.command)
    console = read_console(run.all_lines())
    index = SourceIndex(run.sources_root)
    src = GTestSources(index)
    report.sources.append("console")

    results: dict[str, TestResult] = {}
    for inv in invs:
        for kind, rel in inv.reports:
            path = run.resolve(rel)
            if path is None:
                report.warnings.append(f"{kind} report {rel}: no directory to resolve it in")
                continue
            if console.running is not None:
                # gtest writes its report when the run ends: a crashed run wrote none (any file is stale)
                report.warnings.append(f"{kind} report {rel} ignored: the run crashed in {console.running}")
                continue
            warnings: list[str] = []
            cases, complete = (_xml_cases if kind == "xml" else _json_cases)(path, warnings)
            report.warnings.extend(warnings)
            if cases:
                report.sources.append(f"gtest-{kind}:{rel}")
            if not complete and (cases or path.is_file()):
                report.warnings.append(f"{kind} report {rel} is incomplete; the console fills the gaps")
            for case in cases:
                file = index.relative(html.unescape(case.file)) if case.file else None
                results[case.id] = TestResult(
                    id=case.id, status=case.status, native_status=case.native_status, file=file, line=case.line,
                    message=case.message, details=case.details, duration_s=case.duration_s)
    from_report = bool(results)
    if not console.seen_gtest and not from_report:
        return _without_gtest_output(run, report)

    # the console: results the report lacks, and the fuller messages (all failure parts)
    missing = 0
    for t in console.tests.values():
        r = _crash_result(t, run) if t.crashed else t.result()
        old = results.get(t.id)
        if old is None:
            results[t.id] = r
            missing += 1
            continue
        if old.status != r.status and not t.crashed:
            report.warnings.append(f"{t.id}: the report says {old.status.value}, the console {r.status.value}")
        if r.message and old.status == r.status:
            old.message, old.details = r.message, r.details
    if from_report and missing:
        report.warnings.append(f"{missing} test(s) in the console output are missing from the report")

    if not from_report:
        _complete(console, results, src, invs, report)

    # failures outside of any test (SetUpTestSuite/TearDownTestSuite, global environment): not a test
    # result of their own, so one errored entry per suite, named as gtest's reports name the suite
    for suite in [*console.orphan_failures, *console.suite_failures]:
        if suite in results and results[suite].status == Status.ERRORED:
            continue
        parts = console.orphan_failures.get(suite, [])
        what = ("global test environment set-up/tear-down" if suite == ENV_FAILED_SUITE
                else "SetUpTestSuite or TearDownTestSuite")
        holder = ConsoleTest(id=suite, status=Status.FAILED, parts=parts)
        results[suite] = TestResult(id=suite, status=Status.ERRORED, native_status=f"{what} failed",
                                    message=holder.message() or f"{suite}: {what} failed", details=holder.details())

    report.tests.extend(results.values())
    report.timed_out = any(r.timed_out for r in report.tests) or run.killed_by_timeout
    if console.unnamed_crash or (console.ran is None and console.running is None and not from_report
                                 and run.exit_code not in (0, 1, None)):
        # brief mode prints a test's name only when it ends: the one that crashed cannot be named
        report.warnings.append(f"the run ended ({_signal_text(run.exit_code)}) before gtest's summary; "
                               "a test that had not reported yet crashed or was killed")
    elif run.exit_code not in (0, None) and not report.failing and not run.killed_by_timeout:
        report.warnings.append(f"exit code {run.exit_code} although no test failed")
    _cross_check(console, report)
    if not report.tests:
        _no_tests(run, console, report)
    return report


def _complete(console: Console, results: dict[str, TestResult], src: GTestSources,
              invs: list[Invocation], report: TestReport) -> None:
    """Add what the console leaves out, from the binary's sources: every test of
    a ``--gtest_brief`` run (only failures are named) and disabled tests that
    older gtest versions do not list. Only done when the sources agree with
    the summary's counts."""
    n_disabled_seen = sum(1 for r in results.values() if r.native_status == "disabled")
    need_disabled = (console.disabled or 0) > n_disabled_seen
    brief = console.brief or any(i.brief for i in invs) or (console.ran is not None and not console.saw_run)
    if not (brief or need_disabled or console.orphan_skips):
        return
    if console.ran is None and brief:
        report.warnings.append("brief output without a summary: only the named failures are known")
        return
    inv = invs[0] if len(invs) == 1 else Invocation()
    files = src.binary_sources(inv.binary)
    listed = src.enumerate(files)
    if listed is None:
        report.warnings.append("the tests this binary defines could not be derived from the sources "
                               "(parameter names or counts not literal); passed/disabled tests not named")
        return
    matches = filter_matcher(inv.filter if inv.filter is not None else console.filter)
    selected = [(tid, d) for tid, d in listed if matches(tid)]
    runnable = [(tid, d) for tid, d in selected if inv.also_run_disabled or not is_disabled(tid)]
    disabled = [(tid, d) for tid, d in selected if not inv.also_run_disabled and is_disabled(tid)]

    if need_disabled:
        if len(disabled) == console.disabled:
            for tid, d in disabled:
                if tid not in results:
                    results[tid] = TestResult(id=tid, status=Status.SKIPPED, native_status="disabled",
                                              file=d.file, line=d.line)
            report.sources.append("sources")
        else:
            report.warnings.append(f"gtest reports {console.disabled} disabled test(s); the sources give "
                                   f"{len(disabled)}: disabled tests not named")

    if not (brief or console.orphan_skips):
        return
    run_ids = {tid for tid, _ in runnable}
    named_run = [tid for tid, r in results.items() if r.native_status != "disabled" and r.status != Status.ERRORED]
    if (console.ran is not None and len(runnable) != console.ran) or not set(named_run) <= run_ids:
        report.warnings.append(f"the sources define {len(runnable)} selected test(s), gtest ran {console.ran}: "
                               "tests the output does not name are left out")
        return
    # skip reasons printed without a name: the test whose definition encloses the skip's location
    unnamed = [(tid, d) for tid, d in runnable if tid not in results]
    for part in console.orphan_skips:
        rel = src.index.relative(part.file) if part.file else None
        cands = [(tid, d) for tid, d in unnamed if d.file == rel and part.line is not None and d.line <= part.line]
        if not cands:
            report.warnings.append(f"skip at {part.header} could not be tied to a test")
            continue
        best = max(d.line for _, d in cands)
        tid, d = next((tid, d) for tid, d in cands if d.line == best)
        t = ConsoleTest(id=tid, status=Status.SKIPPED, native_status="skipped (GTEST_SKIP)", parts=[part])
        results[tid] = TestResult(**{**t.result().model_dump(), "file": d.file, "line": d.line})
        unnamed.remove((tid, d))
    n_passed = len(unnamed)
    if console.passed is not None and n_passed != console.passed:
        report.warnings.append(f"gtest says {console.passed} passed; the sources leave {n_passed} unnamed tests")
        return
    for tid, d in unnamed:
        results[tid] = TestResult(id=tid, status=Status.PASSED, file=d.file, line=d.line)
    if "sources" not in report.sources:
        report.sources.append("sources")


def _cross_check(console: Console, report: TestReport) -> None:
    if console.passed is not None and not console.running:
        report.summary_counts["passed"] = console.passed
    if console.failed is not None:
        report.summary_counts["failed"] = console.failed


def _without_gtest_output(run: RunOutput, report: TestReport) -> TestReport:
    """No gtest line at all: the build before the binary failed (``cmake --build
    build && ./build/x_tests``), the binary did not start or crashed at once,
    or it is not a gtest binary. CMake/compiler errors are read by the ctest
    parser, other test outputs (TAP, JUnit XML) by the generic one."""
    build = BuildErrors(SourceIndex(run.sources_root))
    build.read(run.lines("stdout"))
    build.read(run.lines("stderr"))
    if errors := build.results(ran_tests=False):
        report.tests = errors
        report.build_error = True
        report.sources.append("console")
        report.warnings.insert(0, "no googletest output; the build failed (build errors read as ctest does)")
        report.timed_out = run.killed_by_timeout
        return report
    other = generic.parse(run)
    if other.tests:
        other.framework = FRAMEWORK
        other.warnings.insert(0, "no googletest output; results read by the generic parser")
        return other
    _no_tests(run, Console(), report)
    report.per_test = False
    if run.exit_code not in (0, None):
        report.warnings.append(f"the command ended with {_signal_text(run.exit_code)} without gtest output")
    report.timed_out = run.killed_by_timeout
    return report


def _no_tests(run: RunOutput, console: Console, report: TestReport) -> None:
    if console.seen_gtest:
        report.warnings.append("gtest ran no tests (empty filter or no tests defined)")
    else:
        report.warnings.append("no googletest output found")
    if run.exit_code not in (0, None):
        report.output_tail = run.tail()


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern) + r"\Z")


def filter_matcher(gtest_filter: str | None):  # type: ignore[no-untyped-def]
    """A predicate for ``--gtest_filter=POSITIVE[-NEGATIVE]`` (``:``-separated
    patterns with ``*`` and ``?``)."""
    text = (gtest_filter or "*").strip()
    pos, _, neg = text.partition("-")
    pos_pats = [_glob(p) for p in pos.split(":") if p] or [_glob("*")]
    neg_pats = [_glob(p) for p in neg.split(":") if p]

    def matches(test_id: str) -> bool:
        return any(p.match(test_id) for p in pos_pats) and not any(p.match(test_id) for p in neg_pats)
    return matches


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

# Crash resume: ``[ RUN      ] NAME`` without its end names the test at once; the binary
# runs again without the tests done (a negative ``--gtest_filter``).
RESUMABLE = True
DIED = "crashed"
SERIAL = True


def runner_end(words: list[str]) -> int | None:
    """The test binary is the first word that is not a ``VAR=value``."""
    return next((i + 1 for i, w in enumerate(words) if not ENV_ASSIGNMENT.match(unquote(w))), None)


def split_args(args: list[str], inv: RunnerCall) -> None:
    inv.options = [w for w in args if not unquote(w).startswith("--gtest_filter")]


def select(tests: list[TestResult], inv: RunnerCall, default: bool) -> list[str]:
    return [f"--gtest_filter={shlex.quote(':'.join(t.id for t in tests))}"]


def rerun_command(command: str, invocation: Callable[[], RunnerCall], scope: str | None,
                  skip: list[TestResult], listed: tuple[str, list[str]] | None) -> str | None:
    inv = invocation()
    given = next((unquote(w).split("=", 1)[1] for w in raw_words(command) if unquote(w).startswith(
        "--gtest_filter=")), "*")
    positive, _, negative = given.partition("-")
    negative = ":".join(filter(None, [negative, *(t.id for t in skip)]))
    return inv.render(f"--gtest_filter={shlex.quote((positive or '*') + '-' + negative)}")
