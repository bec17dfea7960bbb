"""CTest (CMake's test driver) and the CMake build that precedes it.

Console output (stdout), as ``cmCTestRunTest`` prints it:

* ``Start  n: name`` when a test starts (with ``-j`` several start before
  any finishes), then one result line when it ends, in completion order:
  ``k/N Test  #n: name ....   Passed    0.01 sec``; failure kinds
  ``***Failed  [reason]``, ``***Timeout``, ``***Exception: SegFault``
  (``Illegal``, ``Interrupt``, ``Numerical``, or the signal text such as
  ``Subprocess aborted`` / ``Child aborted``), ``***Not Run`` (missing
  executable, failed fixture: counted as failed by ctest),
  ``***Not Run (Disabled)`` and ``***Skipped`` (both "did not run");
  ``MemCheck`` replaces ``Test`` under ``-T memcheck``;
* ``--output-on-failure``: the failed test's output right after its result
  line; ``-V``: every test's output as ``n: text`` lines;
* the summary ``P% tests passed, F tests failed out of T`` (ctest 4:
  ``P% tests passed out of T``), ``The following tests did not run:`` and
  ``The following tests FAILED:`` (``  n - name (Kind)``), used to
  cross-check and to add tests whose result line is missing.

Ids are ctest test names; ``gtest_discover_tests`` names them
``[prefix]Suite.Test[suffix]`` (``DISABLED_`` stripped, TEST_P instances
``Inst/Suite.Test/<param>``), which is how file/line are found in the
sources (the TEST/TEST_F/TEST_P definition). Messages come from the test's
output: gtest failure blocks, GTEST_SKIP reasons, or the key lines of any
other program; ``--output-junit FILE`` (relative to the test directory)
supplies the output of tests the console did not show.

Build failures (``cmake --build`` / ``make`` / ``ninja`` before the tests):
compiler ``file:line:col: error:`` diagnostics, linker errors, ``CMake
Error at file:line`` and make/ninja failures become one errored entry per
source file and set ``build_error``.
"""

from __future__ import annotations

import re
import shlex
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .cmake_build import BuildErrors
from .command import SEGMENT_SPLIT, command_words
from .googletest import Console, ConsoleReader, Part
from .invocation import Invocation, bin_name
from .junit_xml import JUnitCase, JUnitReader
from .locate import SourceIndex, located_while_parsing
from .models import Status, TestReport, TestResult
from .run_output import RunOutput, strip_ansi
from .source.cpp import GTestSources

FRAMEWORK = "ctest"
# A ctest test that runs a whole gtest binary is placed at the first gtest test its
# output says failed: the parser places it while it reads that output.
locate = located_while_parsing
_ENV = r"^\s*(?:\w+=\S*\s+)*"
COMMAND_RE = [
    re.compile(_ENV + r"(?:\S*/)?ctest(?:\.exe)?(?:\s|$)"),
    re.compile(_ENV + r"(?:\S*/)?cmake(?:\.exe)?\s+(?:.*\s)?--build(?:\s|$)"),
    # make/ninja driving CMake's own `test` target in a build directory
    re.compile(_ENV + r"(?:\S*/)?(?:g?make|ninja)\s+(?:.*\s)?-C\s*\S+\s+(?:.*\s)?test(?:\s|$)"),
]
OUTPUT_RE = [
    re.compile(r"^Test project \S", re.M),
    re.compile(r"^\s*\d+/\d+ (?:Test|MemCheck)\s+#\d+: .*(?:Passed|\*\*\*\w.*)\s+[\d.]+ sec$", re.M),
    re.compile(r"^\s*Start\s+\d+: \S", re.M),
    re.compile(r"^\d+% tests passed(?:, \d+ tests? failed)? out of \d+", re.M),
    re.compile(r"^Total Test time \(real\) =", re.M),
    re.compile(r"^Errors while running CTest", re.M),
    re.compile(r"^\[\s*\d+%\] (?:Building (?:C|CXX|CUDA|Fortran) object|Linking (?:C|CXX) executable|Built target)",
               re.M),
    re.compile(r"^CMake Error", re.M),
    re.compile(r"^The following tests (?:FAILED|did not run):", re.M),
    re.compile(r"^\s+\d+ - .+ \((?:Failed|Timeout|SEGFAULT|Not Run|Disabled|Skipped|OTHER_FAULT)\)", re.M),
    re.compile(r"^(?:Internal ctest changing into directory|UpdateCTestConfiguration  from) ", re.M),
]

# -- ctest console ------------------------------------------------------------
START = re.compile(r"^\s*Start\s+(?P<num>\d+): (?P<name>.+?)\s*$")
RESULT = re.compile(
    r"^\s*(?P<done>\d+)/\s*(?P<total>\d+) (?:Test|MemCheck)\s+#(?P<num>\d+): "
    r"(?P<rest>.*?)\s+(?P<time>\d+\.\d+) sec\s*$",
    re.S,
)
# the same prefix without a status: --progress prints it when a test starts; a
# PASS_REGULAR_EXPRESSION reason ("Regex=[a\nb\n]") spreads the result over lines
RESULT_HEAD = re.compile(r"^\s*\d+/\s*\d+ (?:Test|MemCheck)\s+#(?P<num>\d+): (?P<name>.*?)\s*$")
# the status part of a result line: "name ....   Passed" / "name ...***Failed  reason"
RESULT_STATUS = re.compile(r"^(?P<name>.*?)(?:\s+\.*)?(?:\s{3}(?P<passed>Passed)\b.*|\*\*\*(?P<kind>.*?))$", re.S)
VERBOSE = re.compile(r"^(?P<num>\d+): ?(?P<text>.*)$")
VERBOSE_NOISE = re.compile(r"^(?:(?:Test|MemCheck) command: |Working Directory: |Test timeout computed to be: |"
                           r"Environment variables?(?: modifications)?: |Test timeout changed to )")
SUMMARY = re.compile(r"^(?P<pct>\d+)% tests passed(?:, (?P<failed>\d+) tests? failed)? out of (?P<total>\d+)")
LIST_HEAD = re.compile(r"^The following tests (?P<which>FAILED|did not run):\s*$")
LIST_ITEM = re.compile(r"^\s+(?P<num>\d+) - (?P<name>.+) \((?P<kind>[^()]+)\)(?:\s+[^()]*)?$")
END_OF_TESTS = re.compile(r"^(?:\d+% tests passed|Total Test time \(real\)|The following tests |"
                          r"Label Time Summary:|Subproject Time Summary:|Errors while running CTest|"
                          r"No tests were found)")
# any line ctest itself may print (a cheap test before the specific patterns)
CTEST_LINE = re.compile(r"^\s*(?:\d|Start\s|Test project |The following tests |Total Test time|Label Time Summary|"
                        r"Subproject Time Summary|Errors while running CTest|No tests were found)")
TEST_PROJECT = re.compile(r"^Test project (?P<dir>.+?)\s*$")
NO_TESTS = re.compile(r"^No tests were found!*\s*$")
# why a test did not run (ctest prints these on stderr, in start order)
NOT_RUN_WHY = re.compile(r"^(?:Unable to find executable: .*|Could not find executable .*|"
                         r"Unable to find required file: .*|Failed test dependencies: .*|"
                         r"Test not available (?:without configuration|in configuration).*)$")
# the kinds of the summary lists, as result-line kinds
LIST_KINDS = {"SEGFAULT": "Exception: SegFault", "ILLEGAL": "Exception: Illegal", "INTERRUPT": "Exception: Interrupt",
              "NUMERICAL": "Exception: Numerical", "OTHER_FAULT": "Exception: Other", "BAD_COMMAND": "Not Run",
              "Disabled": "Not Run (Disabled)"}

# -- the output of a test ------------------------------------------------------------
# key lines of non-gtest test programs (assert.h, uncaught exceptions, Catch2, doctest, Boost.Test...)
KEY_LINE = re.compile(r"(?i)\b(?:assert(?:ion)?|fail(?:ed|ure)?|error|exception|terminate called|what\(\)|"
                      r"abort(?:ed)?|panic)\b")
MAX_PARTIAL_LINES = 8
MAX_BLOCKS = 8
HEAD_LINES = 80
TAIL_LINES = 80

# -- Testing/Temporary/LastTest.log -------------------------------------------------
LAST_TEST_LOG = "Testing/Temporary/LastTest.log"
LOG_TEST = re.compile(r"^\d+/\d+ Test: (?P<name>.+?)\s*$")

# -- sources ----------------------------------------------------------------------
CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".c", ".h", ".hh", ".hpp", ".hxx", ".ipp", ".inl", ".cu", ".mm")
STRING_CASE_DEF = re.compile(r"\b(?:TEST_CASE|SCENARIO|TEST_CASE_METHOD|TEMPLATE_TEST_CASE|BOOST_AUTO_TEST_CASE|"
                             r"BOOST_FIXTURE_TEST_CASE)\s*\(\s*(?:\w+\s*,\s*)?(?:\"(?P<title>(?:[^\"\\]|\\.)*)\"|"
                             r"(?P<ident>\w+))")
ADD_TEST = re.compile(r"^\s*add_test\s*\(\s*(?:NAME\s+)?(?P<name>\"[^\"]+\"|[^\s)]+)(?P<rest>[^)]*)", re.I)
ADD_EXECUTABLE = re.compile(r"^\s*add_executable\s*\(\s*(?P<target>[^\s)]+)(?P<rest>[^)]*)", re.I)
MAIN_DEF = re.compile(r"\bint\s+main\s*\(")

@dataclass
class _Output:
    """A test's output, read line by line into what a report needs: gtest
    failure parts and skip reasons (read by googletest's console reader),
    key lines of other programs, and a bounded head/tail."""

    head: list[str] = field(default_factory=list)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    count: int = 0
    filled: int = 0  # non-blank lines
    keys: list[str] = field(default_factory=list)
    _reader: ConsoleReader = field(default_factory=ConsoleReader)
    _gtest: Console | None = None

    def add(self, line: str) -> None:
        line = strip_ansi(line)
        self.count += 1
        self.filled += bool(line.strip())
        if len(self.head) < HEAD_LINES:
            self.head.append(line)
        else:
            self.tail.append(line)
        self._reader.feed(line)
        if len(self.keys) >= 5 or self._reader.c.seen_gtest:
            return
        if line.strip() and KEY_LINE.search(line):
            self.keys.append(line.strip())

    @property
    def gtest(self) -> Console:
        """The gtest console inside the output (read to its end on first use)."""
        if self._gtest is None:
            self._gtest = self._reader.finish()
        return self._gtest

    def _parts(self, kind: str) -> list[Part]:
        c = self.gtest
        parts = [p for t in c.tests.values() for p in t.parts if p.kind == kind]
        if kind == "skip":
            parts += c.orphan_skips
        else:
            parts += [p for ps in c.orphan_failures.values() for p in ps] + c.unnamed_crash
        return parts[:MAX_BLOCKS]

    @property
    def failures(self) -> list[Part]:
        return self._parts("failure")

    @property
    def running(self) -> str | None:
        """The gtest test that started and never ended (crash/timeout)."""
        return self.gtest.running

    @property
    def failed_names(self) -> list[str]:
        """gtest tests that failed or crashed."""
        return [t.id for t in self.gtest.tests.values() if t.status == Status.FAILED][:5]

    @property
    def text(self) -> str | None:
        if not self.count:
            return None
        skipped = self.count - len(self.head) - len(self.tail)
        parts = self.head + ([f"...[{skipped} lines]..."] if skipped > 0 else []) + list(self.tail)
        return "\n".join(parts).strip("\n") or None

    def failure_message(self) -> str | None:
        if failures := self.failures:
            return "\n\n".join(p.text for p in failures if p.text.strip()) or None
        if self.keys:
            return "\n".join(self.keys)
        last = [s.strip() for s in self.tail if s.strip()] or [s.strip() for s in self.head if s.strip()]
        return "\n".join(last[-3:]) or None

    def skip_message(self) -> str | None:
        return "\n\n".join(p.text for p in self._parts("skip")) or None


@dataclass
class _Test:
    num: int | None
    name: str
    status: Status | None = None
    native: str | None = None
    reason: str | None = None  # ctest's own failure reason (regex checks)
    duration: float | None = None
    timed_out: bool = False
    output: _Output | None = None
    started: bool = False
    progress: bool = False  # announced by --progress, which prints no result line for passing tests
    junit: JUnitCase | None = None


@dataclass
class _Console:
    tests: dict[int | str, _Test] = field(default_factory=dict)
    order: list[int | str] = field(default_factory=list)
    summary: tuple[int, int] | None = None  # failed, total
    listed: dict[str, tuple[int, str, str]] = field(default_factory=dict)  # name -> (num, kind, list)
    test_dir: str | None = None
    seen_ctest: bool = False
    no_tests: bool = False
    not_run_why: list[str] = field(default_factory=list)

    def get(self, num: int | None, name: str) -> _Test:
        key: int | str = num if num is not None else name
        t = self.tests.get(key)
        if t is None:
            t = self.tests[key] = _Test(num, name)
            self.order.append(key)
        return t


def _status_of(kind: str) -> tuple[Status, str, bool]:
    """(status, native status, timed out) of a result line's ``***`` kind
    (or a summary list's kind)."""
    kind = LIST_KINDS.get(kind.strip(), kind.strip())
    if kind.startswith("Timeout"):
        return Status.FAILED, "Timeout", True
    if kind.startswith("Skipped"):
        return Status.SKIPPED, "Skipped", False
    if kind.startswith("Not Run (Disabled)"):
        return Status.SKIPPED, "Not Run (Disabled)", False
    if kind.startswith("Not Run"):
        return Status.FAILED, "Not Run", False
    if kind.startswith("Failed"):
        return Status.FAILED, "Failed", False
    if kind.startswith("Exception:"):
        return Status.FAILED, kind, False
    # a list kind that is the text of an abnormal exit ("Subprocess aborted")
    return Status.FAILED, f"Exception: {kind}", False


def _result(con: _Console, started: dict[int, str], num: int, rest: str, time: str | None) -> _Test | None:
    """Record one result line (``rest`` is what follows ``#n: ``)."""
    s = RESULT_STATUS.match(rest)
    if s is None:
        return None
    name = started.get(num) or s.group("name").rstrip(" .")
    t = con.get(num, name)
    t.name = name
    con.seen_ctest = True
    t.duration = float(time) if time else None
    if s.group("passed"):
        t.status, t.native, t.timed_out, t.reason = Status.PASSED, None, False, None
    else:
        kind = s.group("kind").strip()
        t.status, t.native, t.timed_out = _status_of(kind)
        reason = re.sub(r"^(?:Failed|Not Run(?: \(Disabled\))?)\s*", "", kind)
        t.reason = reason if t.native in ("Failed", "Not Run") and reason else None
    return t


def _read_console(lines: Iterable[str]) -> _Console:
    """One pass over ctest's stdout."""
    con = _Console()
    started: dict[int, str] = {}
    verbose: dict[int, _Output] = {}
    block: _Output | None = None  # output printed after a result line (--output-on-failure)
    pending: list[str] = []  # why-not-run lines since the last result line
    listing: str | None = None
    partial: list[str] = []  # a result line spread over lines by a multi-line reason
    source = iter(lines)
    replay: deque[str] = deque()  # lines read ahead for a result line that did not end after all
    while (line := replay.popleft() if replay else next(source, None)) is not None:
        t: _Test | None = None
        if block is not None and not partial and not CTEST_LINE.match(line):
            block.add(line)  # the bulk of a long log: a failed test's output
            continue
        if partial:
            partial.append(line)
            joined = "\n".join(partial)
            # ctest's own next line (not the rest of a reason) means the line ended without a time
            ours = START.match(line) or RESULT_HEAD.match(line) or END_OF_TESTS.match(line)
            m = None if ours else RESULT.match(joined)
            if not m and not ours and len(partial) < MAX_PARTIAL_LINES:
                continue
            if m:
                t = _result(con, started, int(m.group("num")), m.group("rest"), m.group("time"))
            else:
                h = RESULT_HEAD.match(partial[0])
                assert h is not None
                t = _result(con, started, int(h.group("num")), h.group("name"), None)
                replay.extend(partial[1:])
            partial = []
        elif m := START.match(line):
            block, listing = None, None
            started[int(m.group("num"))] = m.group("name")
            st = con.get(int(m.group("num")), m.group("name"))
            st.started, st.name = True, m.group("name")
            con.seen_ctest = True
            continue
        elif m := RESULT.match(line):
            t = _result(con, started, int(m.group("num")), m.group("rest"), m.group("time"))
        elif (h := RESULT_HEAD.match(line)) and "***" in line:
            partial = [line]
            continue
        elif h and block is None:
            # --progress: a test starting (its result line comes only if it does not pass)
            num = int(h.group("num"))
            st = con.get(num, started.get(num) or h.group("name"))
            st.started = st.progress = True
            con.seen_ctest = True
            continue
        if t is not None:
            if t.native == "Not Run" and pending:
                t.reason = pending[-1]
            t.output = verbose.pop(t.num, None) if t.num is not None else None
            block = None
            if t.status != Status.PASSED and t.output is None:
                t.output = block = _Output()  # -V already captured the output of the others
            pending = []
            continue
        if END_OF_TESTS.match(line):
            block = None
        if m := SUMMARY.match(line):
            con.summary = (int(m.group("failed") or 0), int(m.group("total")))
            listing = None
            continue
        if m := LIST_HEAD.match(line):
            listing = m.group("which")
            continue
        if listing:
            if m := LIST_ITEM.match(line):
                con.listed[m.group("name")] = (int(m.group("num")), m.group("kind").strip(), listing)
                continue
            if line.strip():
                listing = None
        if m := TEST_PROJECT.match(line):
            con.test_dir = m.group("dir")
            con.seen_ctest = True
            continue
        if NO_TESTS.match(line):
            con.no_tests = True
            continue
        if block is not None:
            block.add(line)
            continue
        if (m := VERBOSE.match(line)) and int(m.group("num")) in started:
            text = m.group("text")
            if not VERBOSE_NOISE.match(text):
                verbose.setdefault(int(m.group("num")), _Output()).add(text)
            continue
        if NOT_RUN_WHY.match(line.strip()):
            con.not_run_why.append(line.strip())
            pending.append(line.strip())
            del pending[:-5]
    return con


# -- locating test definitions ------------------------------------------------------


class _Defs:
    """Test definitions in the project's C/C++ sources and CMake files."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self._gtest = GTestSources(index)
        self._titles: dict[str, tuple[str, int]] | None = None
        self._add_tests: dict[str, tuple[str, int, str]] | None = None

    def gtest(self, suite: str, name: str) -> tuple[str, int] | None:
        """Where ``TEST(suite, name)`` (or TEST_F/TEST_P/TYPED_TEST...) is defined."""
        d = self._gtest.definitions().get((suite, name))
        return (d.file, d.line) if d else None

    def title(self, title: str) -> tuple[str, int] | None:
        """Where a Catch2/doctest/Boost.Test case with this title is defined."""
        if self._titles is None:
            self._titles = {}
            for rel in self.index.files(CXX_SUFFIXES):
                lines = self.index.lines(rel)
                if not any(("TEST" in s or "SCENARIO" in s) for s in lines):
                    continue
                for i, text in enumerate(lines):
                    if "TEST" not in text and "SCENARIO" not in text:
                        continue
                    # a macro call split over lines: join the next ones
                    joined = text if ")" in text else " ".join([text, *lines[i + 1:i + 3]])
                    for m in STRING_CASE_DEF.finditer(joined):
                        name = m.group("title") if m.group("title") is not None else m.group("ident")
                        self._titles.setdefault(name.replace('\\"', '"'), (rel, i + 1))
        return self._titles.get(title)

    def add_test(self, name: str) -> tuple[str, int, str] | None:
        """(CMake file, line, rest of the call) of ``add_test(NAME name ...)``."""
        if self._add_tests is None:
            self._add_tests = {}
            for rel in self.index.files((".txt", ".cmake")):
                if not (rel.endswith("CMakeLists.txt") or rel.endswith(".cmake")):
                    continue
                for i, text in enumerate(self.index.lines(rel)):
                    if m := ADD_TEST.match(text):
                        self._add_tests.setdefault(m.group("name").strip('"'), (rel, i + 1, m.group("rest")))
        return self._add_tests.get(name)

    def executable_source(self, cmake_file: str, target: str) -> tuple[str, int] | None:
        """The source with ``main`` of an ``add_executable(target ...)``."""
        base = PurePosixPath(cmake_file).parent
        for i, text in enumerate(self.index.lines(cmake_file)):
            m = ADD_EXECUTABLE.match(text)
            if not m or m.group("target") != target:
                continue
            for word in m.group("rest").split():
                rel = (base / word).as_posix() if str(base) != "." else word
                if self.index.exists(rel):
                    line = self.index.find_in(rel, MAIN_DEF)
                    if line is not None:
                        return rel, line
            return cmake_file, i + 1
        return None


def _gtest_candidates(name: str) -> Iterator[tuple[str, str]]:
    """(suite, test) pairs a ctest name from gtest_discover_tests may stand
    for: ``[prefix]Suite.Test[suffix]``, ``Inst/Suite.Test/param``,
    ``Inst/Suite/Type.Test``, with ``DISABLED_`` stripped by CMake."""
    for i, ch in enumerate(name):
        if ch != ".":
            continue
        left, right = name[:i], name[i + 1:]
        tm = re.match(r"\w+", right)
        sm = re.findall(r"\w+", left)
        if not tm or not sm:
            continue
        tests = [tm.group(0)]
        # TEST_SUFFIX glued to the name: try shorter ones
        tests += [tm.group(0)[:j] for j in range(len(tm.group(0)) - 1, 0, -1) if tm.group(0)[j] == "_"]
        suites: list[str] = []
        for word in reversed(sm):  # the last word before the dot first; earlier ones for typed tests
            suites.append(word)
            suites += [word[j + 1:] for j in range(len(word)) if word[j] == "_"]  # TEST_PREFIX glued on
        for s in suites:
            for t in tests:
                for ds in (s, "DISABLED_" + s):
                    for dt in (t, "DISABLED_" + t):
                        yield ds, dt


def _locate(name: str, defs: _Defs) -> tuple[str | None, int | None]:
    for suite, test in _gtest_candidates(name):
        if hit := defs.gtest(suite, test):
            return hit
    if hit := defs.title(name):
        return hit
    if at := defs.add_test(name):
        cmake_file, line, rest = at
        words = command_words(rest)
        if "COMMAND" in words and words.index("COMMAND") + 1 < len(words):
            exe = words[words.index("COMMAND") + 1]
        else:
            exe = words[0] if words else ""
        exe = re.sub(r"^\$<TARGET_FILE:(.+)>$", r"\1", exe)
        src = defs.executable_source(cmake_file, PurePosixPath(exe).name) if exe else None
        return src or (cmake_file, line)
    return None, None


# -- the command -----------------------------------------------------------------------


@dataclass
class _Flags:
    junit: str | None = None
    test_dir: str | None = None
    cd: str | None = None
    ctest: bool = False


def _flags(command: str) -> _Flags:
    flags = _Flags()
    cd: str | None = None
    for seg in SEGMENT_SPLIT.split(command.strip()):
        words = command_words(seg)
        if words[:1] == ["cd"] and len(words) > 1:
            cd = words[1] if cd is None or words[1].startswith("/") else f"{cd}/{words[1]}"
            continue
        if not COMMAND_RE[0].search(seg):
            continue
        flags.ctest, flags.cd = True, cd
        for i, w in enumerate(words):
            nxt = words[i + 1] if i + 1 < len(words) else None
            if w == "--output-junit" and nxt:
                flags.junit = nxt
            elif w.startswith("--output-junit="):
                flags.junit = w.split("=", 1)[1]
            elif w == "--test-dir" and nxt:
                flags.test_dir = nxt
            elif w.startswith("--test-dir="):
                flags.test_dir = w.split("=", 1)[1]
    return flags


def _test_dir_file(run: RunOutput, flags: _Flags, con: _Console, name: str) -> tuple[Path | None, str]:
    """A file ctest reads or writes relative to its test directory (``--test-dir``,
    the ``cd`` before it, or the ``Test project DIR`` it printed), falling back
    to the command's cwd: (path, as shown in ``report.sources``)."""
    if Path(name).is_absolute():
        return Path(name), name
    bases: list[str] = []
    if flags.test_dir:
        bases.append(f"{flags.cd}/{flags.test_dir}" if flags.cd and not flags.test_dir.startswith("/")
                     else flags.test_dir)
    if con.test_dir:
        rel = SourceIndex(None).relative(con.test_dir) if con.test_dir.startswith("<ROOT>") else con.test_dir
        if rel is not None:
            bases.append(rel)
    if flags.cd:
        bases.append(flags.cd)
    bases.append(".")
    first: tuple[Path | None, str] = (None, name)
    for base in bases:
        shown = f"{base}/{name}" if base != "." else name
        p = run.resolve(shown)
        if p is None:
            continue
        if first[0] is None:
            first = (p, shown)
        if p.is_file():
            return p, shown
    return first


def _read_last_test_log(path: Path, wanted: dict[str, _Test]) -> int:
    """Fill the output of ``wanted`` tests from ctest's ``LastTest.log``
    (every test's full output, written by each run); returns how many."""
    filled = 0
    current: _Test | None = None
    out: _Output | None = None
    state = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                line = raw.rstrip("\r\n")
                if state == "output":
                    if line == "<end of output>":
                        state, out = "", None
                    elif out is not None:
                        out.add(line)
                    continue
                if m := LOG_TEST.match(line):
                    current, state = wanted.get(m.group("name")), ""
                elif line == "Output:" and current is not None:
                    state = "dashes"
                elif state == "dashes":
                    out = _Output()
                    current.output, current = out, None  # type: ignore[union-attr]
                    filled += 1
                    state = "output"
    except OSError:
        return filled
    return filled


# -- the report ---------------------------------------------------------------------------


def _before_ctest(lines: Iterable[str]) -> Iterator[str]:
    """The lines before ctest starts printing (the build of ``build && ctest``)."""
    for line in lines:
        if TEST_PROJECT.match(line) or START.match(line) or RESULT_HEAD.match(line):
            return
        yield line


def _output_of(text: str | None) -> _Output | None:
    if not text:
        return None
    out = _Output()
    for line in text.splitlines():
        out.add(line)
    return out


def _junit_status(case: JUnitCase) -> tuple[Status, str | None]:
    status = case.attrs.get("status", "")
    if status == "run":
        return Status.PASSED, None
    if status == "disabled":
        return Status.SKIPPED, "Not Run (Disabled)"
    if status == "notrun":
        if (case.message or "").startswith("SKIP_") or case.outcome == "skipped" and not case.message:
            return Status.SKIPPED, "Skipped"
        return Status.FAILED, "Not Run"
    if case.outcome == "skipped":
        return Status.SKIPPED, "Skipped"
    if case.outcome in ("failure", "error") or status == "fail":
        return Status.FAILED, "Failed"
    return Status.PASSED, None


def _message(t: _Test) -> tuple[str | None, str | None]:
    out = t.output
    details = out.text if out else None
    if t.status == Status.SKIPPED:
        msg = out.skip_message() if out else None
        if msg is None and t.junit is not None and t.junit.message and t.native != "Not Run (Disabled)":
            msg = t.junit.message
        return msg, details
    if t.status != Status.FAILED:
        return None, details
    parts: list[str] = []
    if t.timed_out:
        parts.append(f"Timeout: the test ran for {t.duration:.2f} sec" if t.duration is not None else "Timeout")
    elif t.native and t.native.startswith("Exception"):
        parts.append(t.native)
    if t.reason:
        parts.append(t.reason)
    if out is not None:
        if out.running and (t.timed_out or (t.native or "").startswith("Exception")):
            parts.append(f"while running {out.running}")
        if (t.timed_out or (t.native or "").startswith("Exception")) and not (out.failures or out.keys):
            pass  # the output has no failure of its own: the kind says it all
        elif msg := out.failure_message():
            parts.append(msg)
    return ("\n".join(parts) or None), details


def parse(run: RunOutput) -> TestReport:
    """Parse a ctest run (or the CMake build before it) into a report."""
    report = TestReport(framework=FRAMEWORK)
    index = SourceIndex(run.sources_root)
    flags = _flags(run.command)
    con = _read_console(run.lines("stdout"))
    # ctest prints its results on stdout; a few lines (the FAILED list on old versions) go to stderr
    err_con = _read_console(run.lines("stderr"))
    for name, item in err_con.listed.items():
        con.listed.setdefault(name, item)
    con.summary = con.summary or err_con.summary
    report.sources.append("console")
    build = BuildErrors(index)
    build.read(_before_ctest(run.lines("stdout")))  # tests' own output must not count as compiler errors
    build.read(run.lines("stderr"))

    # --output-junit: fills in output the console did not show, and tests it lost
    if flags.junit and not con.seen_ctest and build.failed:
        # the build failed before ctest ran: a report there is from an earlier run
        report.warnings.append(f"ctest did not run; ignored the JUnit report {flags.junit}")
    elif flags.junit:
        path, _ = _test_dir_file(run, flags, con, flags.junit)
        if path is None or not path.is_file():
            report.warnings.append(f"JUnit report {flags.junit} named in the command was not found")
        else:
            reader = JUnitReader(path)
            by_name = {t.name: t for t in con.tests.values()}
            added = 0
            for case in reader:
                t = by_name.get(case.name)
                if t is None:
                    t = con.get(None, case.name)
                    by_name[case.name] = t
                    added += 1
                t.junit = case
                if t.status is None:
                    t.status, t.native = _junit_status(case)
                    t.duration = case.time
            report.warnings.extend(reader.warnings)
            report.sources.append(f"junit-xml:{flags.junit}")
            if added and con.seen_ctest:
                report.warnings.append(f"{added} test(s) in the JUnit report had no result line in the console")

    # no output shown for a failed/skipped test (no --output-on-failure): ctest's own log has it
    wanted = {t.name: t for t in con.tests.values()
              if t.status in (Status.FAILED, Status.SKIPPED) and not (t.output and t.output.filled)
              and not (t.junit and t.junit.system_out)}
    if wanted and con.seen_ctest:
        log, shown = _test_dir_file(run, flags, con, LAST_TEST_LOG)
        if log is not None and log.is_file() and _read_last_test_log(log, wanted):
            report.sources.append(f"ctest-log:{shown}")

    # the summary lists: tests whose result line is missing
    names = {t.name: t for t in con.tests.values()}
    for name, (num, kind, which) in con.listed.items():
        t = names.get(name)
        if t is None:
            t = con.get(num, name)
            t.status, t.native, t.timed_out = _status_of(kind)
            if which == "FAILED" and t.status != Status.FAILED:
                t.status = Status.FAILED
            report.warnings.append(f"{name}: no result line; taken from ctest's summary list ({kind})")
        elif which == "FAILED" and t.status not in (Status.FAILED, None):
            report.warnings.append(f"{name}: listed as FAILED ({kind}) but its result line says {t.status.value}")

    # "Unable to find executable: ..." (stderr, in start order) for tests that did not run
    why = iter(err_con.not_run_why)
    for key in con.order:
        t = con.tests[key]
        if t.native == "Not Run" and not t.reason:
            t.reason = next(why, None)

    killed = run.killed_by_timeout
    defs = _Defs(index)
    for key in con.order:
        t = con.tests[key]
        if t.status is None and t.progress and con.summary is not None:
            t.status = Status.PASSED  # --progress prints no result line for a passing test
        if t.status is None:
            if not (t.started and (killed or con.summary is None)):
                continue
            # started, never finished: the run was killed (or cut) while it ran
            t.status, t.native = Status.FAILED, "no result"
            t.timed_out = killed
            t.reason = ("the run was killed by timeout while this test was running" if killed
                        else "the test started but the output ends before its result")
        if not (t.output and t.output.filled) and t.junit is not None:
            t.output = _output_of(t.junit.system_out) or t.output  # the console did not show it
        message, details = _message(t)
        file, line = _locate(t.name, defs)
        out = t.output
        if (file is None or file.endswith(("CMakeLists.txt", ".cmake"))) and out is not None:
            # one ctest test running a whole gtest binary: point at the first gtest test that failed
            for name in out.failed_names + ([out.running] if out.running else []):
                if (hit := _locate(name, defs))[0] is not None:
                    file, line = hit
                    break
        report.tests.append(TestResult(
            id=t.name, status=t.status, file=file, line=line, message=message, details=details,
            duration_s=t.duration, timed_out=t.timed_out, native_status=t.native,
        ))

    if con.summary is not None and report.tests:
        failed, total = con.summary
        # ctest lists disabled tests but does not count them.
        disabled = sum(1 for t in report.tests if t.native_status == "Not Run (Disabled)")
        report.summary_counts = {"failed": failed, "total": total + disabled}

    errored = build.results(ran_tests=bool(report.tests) or con.seen_ctest)
    if errored:
        report.tests[:0] = errored
        report.build_error = True

    report.timed_out = killed or any(t.timed_out for t in report.tests)
    if not report.tests:
        if con.no_tests:
            report.warnings.append("ctest found no tests")
        else:
            report.warnings.append("no ctest results or build errors found in the output")
        if run.exit_code not in (0, None) or killed:
            report.output_tail = run.tail()
    return report


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

SELECT_VALUE_OPTIONS = {
    "-R", "--tests-regex", "-E", "--exclude-regex", "-L", "--label-regex", "-LE", "-I", "--tests-information",
    "--test-dir", "--output-junit", "-j", "--parallel", "-C", "--build-config", "--timeout", "--repeat", "-O",
    "--output-log", "--resource-spec-file", "--stop-time", "--test-load", "-T", "-D", "-S", "-M",
    "--schedule-random-seed",
}
SELECT_OPTIONS = {"-R", "--tests-regex", "-I", "--tests-information", "-E", "--exclude-regex", "-L",
                  "--label-regex", "-LE", "--rerun-failed"}
DEFAULT_INVOCATION = "ctest --test-dir build --output-on-failure"
REPORT_OPTIONS = " --output-junit ../{reports}/ctest.xml"  # relative to the build folder
# The list of failed tests at the end: "  3 - name (Subprocess killed)".
FAILED_LINE = re.compile(r"^\s*\d+ - (?P<name>.+?) \((?P<kind>[^()]*)\)\s*$")
PROCESS_DIED = re.compile(r"Subprocess aborted|Child aborted|Subprocess killed|SegFault|Exception", re.I)


def runner_end(words: list[str]) -> int | None:
    return next((i + 1 for i, w in enumerate(words) if bin_name(w) == "ctest"), None)


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    ids = [t.id for t in tests]
    return ["-R", shlex.quote("^(?:" + "|".join(re.escape(i) for i in ids) + ")$" if len(ids) > 1
                              else "^" + re.escape(ids[0]) + "$")]


def isolated_deaths(output_end: str, tests: Sequence[TestResult]) -> dict[str, str]:
    """ctest runs each test in a process of its own and outlives it: the failed tests
    whose process died (``Subprocess aborted``, ``SegFault``, ``Subprocess killed``), with how."""
    kinds = {m.group("name"): m.group("kind") for line in output_end.splitlines()
             if (m := FAILED_LINE.match(line))}
    out: dict[str, str] = {}
    for t in tests:
        kind = kinds.get(t.id) or ""
        if t.status == Status.FAILED and not t.timed_out and (
                PROCESS_DIED.search(kind) or (t.native_status or "").startswith("Exception")):
            out[t.id] = kind
    return out
