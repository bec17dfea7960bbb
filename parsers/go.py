"""Go: ``go test`` plain, ``-v`` and ``-json`` output (also test2json streams
written by ``gotestsum --jsonfile`` or redirected to a file).

* ``-json``: test2json events (``start run pause cont pass fail skip output
  bench``, and since Go 1.24 ``build-output``/``build-fail`` plus the
  ``FailedBuild`` field); before 1.24 a build failure is a plain
  ``FAIL pkg [build failed]`` line among the events, with the compiler
  errors (``# pkg`` blocks) on stderr;
* plain and ``-v``: each package's lines end with its ``ok``/``FAIL``/``?``
  line, so lines are buffered per package until then. Without ``-v`` only
  failures are printed: the other tests are listed from the sources
  (``func TestX``, ``ExampleX`` with an output comment, table-driven
  ``t.Run`` names, statically obvious skips), cut at a panic or a timeout;
* ``panic: test timed out after D`` (with ``running tests:`` since Go 1.20)
  leaves the running tests without a result: they fail with ``timed_out``.

Ids are ``<import path>::<test name as go prints it>``; a package that fails
to build or whose ``TestMain`` fails is one errored entry with the import
path as id. Import paths map to directories through the ``go.mod`` files.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..domain.errors import ErrorKind, GreenloopError
from . import go_work
from .command import command_words, unquote
from .invocation import Invocation, bin_name
from .locate import Location, SourceIndex
from .merge import add
from .models import Status, TestReport, TestResult
from .run_output import RunOutput, strip_ansi
from .source.go import GoSources, GoTestFlags

FRAMEWORK = "go"
COMMAND_RE = [
    re.compile(r"(?:^|[\s/;&|(])go\s+test(?:\s|$)"),
    re.compile(r"(?:^|[\s/])gotestsum(?:\s|$)"),
    re.compile(r"(?:^|\s)go\s+tool\s+test2json(?:\s|$)"),
]
OUTPUT_RE = [
    re.compile(r'^\{.*"Action":"(?:run|output|pass|fail|skip|start)".*"Package":"', re.M),
    re.compile(r"^(?:ok  |FAIL|\?   )\t\S+\t", re.M),
    re.compile(r"^=== RUN   \S+", re.M),
    re.compile(r"^\s*--- (?:PASS|FAIL|SKIP): \S+ \(\d+\.\d+s\)$", re.M),
    re.compile(r"^FAIL\t\S+ \[build failed\]$", re.M),
]

PKG_OK = re.compile(r"^ok\s+(?P<pkg>\S+)\s+(?P<rest>\(cached\)|\d+(?:\.\d+)?s|\[no test files\]).*$")
PKG_FAIL = re.compile(r"^FAIL\s+(?P<pkg>\S+)(?:\s+\[(?P<why>build failed|setup failed)\]"
                      r"|\s+(?:\d+(?:\.\d+)?s|\(cached\)).*)$")
PKG_NONE = re.compile(r"^\?\s+(?P<pkg>\S+)\s+\[no test files\]")
MARKER = re.compile(r"^=== (?P<kind>RUN|PAUSE|CONT|NAME)\s+(?P<name>\S+)\s*$")
RESULT = re.compile(r"^(?P<indent>\s*)--- (?P<word>PASS|FAIL|SKIP|BENCH): (?P<name>\S+)"
                    r"(?: \((?P<dur>\d+(?:\.\d+)?)s\))?\s*$")
BUILD_HEAD = re.compile(r"^# (?P<pkg>\[?[^\s\]]+\]?)(?: \[(?P<variant>[^\]]+)\])?\s*$")
COMPILE_ERR = re.compile(r"^(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.*)$")
TIMEOUT = re.compile(r"^panic: test timed out after (?P<after>\S+)")
RUNNING = re.compile(r"^\s+(?P<name>\S+) \((?P<for>[^)]*)\)$")
FRAME_TEST = re.compile(r"^(?P<pkg>\S+?)\.(?P<name>(?:Test|Example|Fuzz)[^.(\s]*)(?:\.func[\w.]*)?\(")
GOTESTSUM_FAIL = re.compile(r"^=== (?P<word>FAIL|SKIP): (?P<pkg>\S+) (?P<name>\S+)(?: \((?P<dur>[\d.]+)s\))?$")
TESTNAME_LINE = re.compile(r"^(?P<word>PASS|FAIL|SKIP) (?P<pkg>\S+?)\.(?P<name>(?:Test|Example|Fuzz|Benchmark)\S*)"
                           r"(?: \((?P<dur>[\d.]+)s\))?$")
TRIVIAL = re.compile(r"^(?:PASS|FAIL|exit status \d+|testing: warning: no tests to run|coverage: .*|ok\s.*|FAIL\s.*)$")
REDIRECT = re.compile(r"(?:^|\s)(?:1?>|>>|\|\s*tee(?:\s+-a)?)\s*(?P<path>[^\s|;&<>]+)")
WORD_STATUS = {"PASS": Status.PASSED, "FAIL": Status.FAILED, "SKIP": Status.SKIPPED, "BENCH": Status.PASSED}
ACTION_STATUS = {"pass": Status.PASSED, "fail": Status.FAILED, "skip": Status.SKIPPED}
# What a test is when its binary ended while it ran (os.Exit, a crash, out of memory): ``runner.crash`` resumes.
DIED = "no result (test binary died)"
MAX_TEST_LINES = 300
MAX_PKG_LINES = 400
MAX_MESSAGE_LINES = 40

# ---------------------------------------------------------------------------
# The run: packages and their tests.


@dataclass(slots=True)
class _Test:
    name: str
    status: Status | None = None
    started: bool = False
    duration: float | None = None
    lines: list[str] = field(default_factory=list)
    dropped: int = 0

    def add(self, line: str) -> None:
        if len(self.lines) < MAX_TEST_LINES:
            self.lines.append(line)
        else:
            self.dropped += 1

    def set(self, status: Status, duration: float | None = None) -> None:
        # -count=N runs a test N times: one failure is a failure.
        if self.status != Status.FAILED:
            self.status = status
        if duration is not None:
            self.duration = duration


@dataclass
class _Package:
    path: str
    tests: dict[str, _Test] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    result: str | None = None  # ok | fail | skip
    build: str | None = None  # "build failed" | "setup failed"
    failed_build: str | None = None  # the import path whose build output explains it
    verbose: bool = False  # tests announced themselves (-v / -json)
    timeout: str | None = None
    running: list[str] = field(default_factory=list)
    in_running: bool = False
    frames: list[str] = field(default_factory=list)
    panic_owner: str | None = None
    panicked: bool = False
    saw_pass: bool = False
    # text-mode attribution of output lines
    owner: str | None = None
    results: list[tuple[str, int]] = field(default_factory=list)  # '--- X' lines above, by indent
    example_output: bool = False

    def test(self, name: str) -> _Test:
        t = self.tests.get(name)
        if t is None:
            t = self.tests[name] = _Test(name)
        return t

    def add_line(self, line: str) -> None:
        if len(self.lines) < MAX_PKG_LINES:
            self.lines.append(line)

    def special(self, line: str) -> None:
        """Note a timeout panic, its 'running tests:' list (Go 1.20+) and the
        test functions in its goroutine dump (which test hung, before 1.20)."""
        if self.timeout is None:
            if line.startswith("panic: ") and TIMEOUT.match(line):
                self.timeout = line
            return
        if line == "running tests:":
            self.in_running = True
            return
        if self.in_running:
            if m := RUNNING.match(line):
                self.running.append(m.group("name"))
                return
            self.in_running = False
        m = FRAME_TEST.match(line)
        if m and m.group("name") not in self.frames:
            self.frames.append(m.group("name"))

    # -- plain / -v text -------------------------------------------------------

    def text(self, line: str) -> None:
        """One line of this package's plain or -v output."""
        if m := MARKER.match(line):
            self.verbose = True
            name, kind = m.group("name"), m.group("kind")
            self.test(name).started = True
            self.owner = None if kind == "PAUSE" else name
            self.results, self.example_output = [], False
            return
        if m := RESULT.match(line):
            t = self.test(m.group("name"))
            dur = float(m.group("dur")) if m.group("dur") else None
            t.set(WORD_STATUS[m.group("word")], dur)
            indent = len(m.group("indent").expandtabs())
            while self.results and self.results[-1][1] >= indent:
                self.results.pop()
            self.results.append((t.name, indent))
            self.example_output = False
            if self.owner == t.name:
                self.owner = None
            return
        self.special(line)
        if self.timeout is not None:
            self.add_line(line)
            if self.owner and self.tests[self.owner].status is None:
                self.tests[self.owner].add(line)
            return
        if self.panicked:
            if self.panic_owner:
                self.test(self.panic_owner).add(line)
            self.add_line(line)
            return
        if line.startswith(("panic: ", "fatal error: ")):
            self.panicked = True
            owner = self.results[-1][0] if self.results else None
            if owner is None or self.tests[owner].status != Status.FAILED:
                owner = self.owner
            self.panic_owner = owner
            if owner:
                self.test(owner).add(line)
            self.add_line(line)
            return
        if TRIVIAL.match(line):
            self.saw_pass = self.saw_pass or line == "PASS"
            return
        owner = self._line_owner(line)
        if owner is not None:
            self.test(owner).add(line)
        elif line:
            self.add_line(line)

    def _line_owner(self, line: str) -> str | None:
        if self.results:
            width = len(line.expandtabs()) - len(line.expandtabs().lstrip())
            for name, indent in reversed(self.results):
                if line.strip() and width > indent:
                    return name  # a log line printed under its '--- FAIL' line (non -v, Go < 1.14 -v)
            name = self.results[-1][0]
            if name.startswith("Example") and self.tests[name].status == Status.FAILED and \
                    (self.example_output or line in ("got:", "want:")):
                self.example_output = True
                return name
        if self.owner is not None and self.tests[self.owner].status is None:
            return self.owner
        return None

    # -- -json events ------------------------------------------------------------

    def output(self, test: str | None, text: str) -> None:
        """One Output of a test2json event (the test named, or the package)."""
        line = text[:-1] if text.endswith("\n") else text
        if "\x1b" in line:
            line = strip_ansi(line)
        if line.startswith("panic: "):
            self.special(line)
            if not TIMEOUT.match(line):
                self.panicked = True
        elif self.timeout is not None:
            self.special(line)
        if test is None:
            if line == "PASS":
                self.saw_pass = True
            if not TRIVIAL.match(line):
                self.add_line(line)
            return
        if line[:4] == "=== " or line.lstrip(" ")[:4] == "--- ":
            return  # the test's own RUN/PASS/FAIL lines: its actions say it
        t = self.tests.get(test)
        if t is None:
            t = self.test(test)
        t.add(line)


class _Reader:
    """Everything read from the output streams."""

    def __init__(self) -> None:
        self.packages: dict[str, _Package] = {}
        self.pending = _Package("")  # text lines waiting for their package's summary line
        self.builds: dict[str, list[str]] = {}
        self.build_key: str | None = None
        self.go_errors: list[str] = []
        self.json_events = 0
        self.bad_json = 0
        self.gotestsum: list[tuple[str, str, str]] = []

    def package(self, path: str) -> _Package:
        p = self.packages.get(path)
        if p is None:
            p = self.packages[path] = _Package(path)
        return p

    def event(self, ev: dict, action: object) -> None:
        """One test2json event (the hot path of a 100k-test stream: keep it lean)."""
        path = ev.get("Package")
        test = ev.get("Test")
        if type(path) is not str:
            if type(key := ev.get("ImportPath")) is str:  # Go 1.24+ build events
                if action == "build-output":
                    line = str(ev.get("Output") or "").rstrip("\n")
                    if not BUILD_HEAD.match(line):
                        self.builds.setdefault(key, []).append(strip_ansi(line))
                return
            path = ""  # test2json run on a test binary without -p
        pkg = self.packages.get(path) or self.package(path)
        if action == "output":
            out = ev.get("Output")
            if type(out) is str:
                pkg.output(test if type(test) is str and test else None, out)
            return
        status = ACTION_STATUS.get(action)  # type: ignore[arg-type]
        if type(test) is not str or not test:
            if status is not None:
                pkg.result = "ok" if action == "pass" else action  # type: ignore[assignment]
                if type(ev.get("FailedBuild")) is str:
                    pkg.failed_build = ev["FailedBuild"]
                    pkg.build = pkg.build or "build failed"
            return
        pkg.verbose = True
        t = pkg.tests.get(test) or pkg.test(test)
        if action == "run":
            t.started = True
        elif status is not None:
            if t.status is not Status.FAILED:  # -count=N: one failure is a failure
                t.status = status
            elapsed = ev.get("Elapsed")
            if type(elapsed) in (int, float):
                t.duration = elapsed

    def test_event(self, action: str, path: str, test: str, elapsed: str | None) -> None:
        """A test's run/pass/fail/skip event (the decoder-free fast path)."""
        pkg = self.packages.get(path) or self.package(path)
        pkg.verbose = True
        t = pkg.tests.get(test) or pkg.test(test)
        if action == "run":
            t.started = True
            return
        if t.status is not Status.FAILED:  # -count=N: one failure is a failure
            t.status = ACTION_STATUS[action]
        if elapsed is not None:
            try:
                t.duration = float(elapsed)
            except ValueError:
                pass

    def text(self, line: str) -> None:
        """One plain-text line (plain/-v output, or a non-JSON line in a JSON stream)."""
        if self.build_key is not None:
            if line.startswith("# ["):  # vet's sub-header
                return
            if COMPILE_ERR.match(line) or line.startswith(("\t", "note:", "vet:", "too many errors")):
                self.builds.setdefault(self.build_key, []).append(line)
                return
            self.build_key = None
        if m := BUILD_HEAD.match(line):
            self.build_key = m.group("pkg").strip("[]")
            self.builds.setdefault(self.build_key, [])
            return
        if m := PKG_FAIL.match(line):
            if m.group("why"):
                pkg = self.package(m.group("pkg"))
                pkg.result, pkg.build = "fail", m.group("why")
                return
            self._close(m.group("pkg"), "fail")
            return
        if m := PKG_OK.match(line):
            self._close(m.group("pkg"), "ok")
            return
        if m := PKG_NONE.match(line):
            self.package(m.group("pkg")).result = "skip"
            return
        if m := GOTESTSUM_FAIL.match(line) or TESTNAME_LINE.match(line):
            self.gotestsum.append((m.group("word"), m.group("pkg"), m.group("name")))
        if line.startswith(("go: ", "pattern ", "no Go files", "cannot find package")) and \
                not line.startswith(("go: downloading", "go: finding", "go: extracting")):
            self.go_errors.append(line)
        self.pending.text(line)

    def _close(self, path: str, result: str) -> None:
        """A package's summary line: the buffered lines were its output."""
        pending, self.pending = self.pending, _Package("")
        pkg = self.packages.get(path)
        if pkg is not None and (pkg.tests or pkg.verbose):
            pkg.result = result  # the JSON events already told its tests
            return
        pending.path = path
        pending.result = result
        self.packages[path] = pending

    def finish(self) -> None:
        """End of the streams: a package cut off (killed run) keeps its tests."""
        if self.pending.tests:
            self.packages.setdefault("", self.pending)
        self.pending = _Package("")


# ---------------------------------------------------------------------------
# The command.


def _flags(command: str) -> GoTestFlags:
    """The go test flags that decide which tests run and where JSON goes."""
    flags = GoTestFlags()
    words = command_words(command)
    for i, w in enumerate(words):
        name, _, val = w.lstrip("-").partition("=")
        name = name.removeprefix("test.")
        if not w.startswith("-"):
            continue
        nxt = words[i + 1] if i + 1 < len(words) else ""
        value = val if "=" in w else nxt
        if name == "run":
            flags.run = _split_pattern(value)
        elif name == "skip":
            flags.skip = _split_pattern(value)
        elif name == "short" and val in ("", "true"):
            flags.short = True
        elif name == "failfast" and val in ("", "true"):
            flags.failfast = True
        elif name == "json" and val in ("", "true"):
            flags.json = True
        elif name == "tags":
            flags.tags = {t for t in re.split(r"[,\s]+", value) if t}
        elif name == "jsonfile":
            flags.jsonfile = value
    if m := REDIRECT.search(command):
        flags.redirect = m.group("path")
    return flags


def _split_pattern(pattern: str) -> list[str]:
    """Split a -run pattern at slashes outside brackets/parens (testing's splitRegexp)."""
    parts, depth, cur = [], 0, ""
    for ch in pattern:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "/" and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return parts


def _selected(name: str, flags: GoTestFlags) -> bool:
    """Whether -run/-skip select a test (``Top`` or ``Top/sub``)."""
    levels = name.split("/")

    def hit(patterns: list[str], all_levels: bool) -> bool:
        for lvl, pat in zip(levels, patterns):
            try:
                if pat and re.search(pat, lvl) is None:
                    return False
            except re.error:
                return True
        return all_levels or len(levels) >= len(patterns)

    if flags.run and not hit(flags.run, True):
        return False
    if flags.skip and hit(flags.skip, False) and len(levels) >= len(flags.skip):
        return False
    return True


# ---------------------------------------------------------------------------


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``<import path>::<Test>[/<subtest>]``: the ``func`` of the top-level
    test in the package's directory, among the files the command's build tags
    compile; a subtest gets that file but no line (its ``t.Run`` call's line
    is not known). A package's own entry (a build or ``TestMain`` failure) is
    not a test: the parser places it where its error is."""
    src = GoSources(sources, _flags(run.command))
    out: dict[str, Location] = {}
    for t in tests:
        path, sep, name = t.id.partition("::")
        if not sep:
            continue
        top, sub, _ = name.partition("/")
        file, line = src.func_line(src.pkg_dir(t.suite or path), top)
        if file is not None:
            out[t.id] = Location(file, None if sub else line)
    return out


def parse(run: RunOutput) -> TestReport:
    """Parse ``go test`` output (plain, -v or -json) into a report."""
    report = TestReport(framework=FRAMEWORK)
    flags = _flags(run.command)
    reader = _Reader()
    json_file = flags.jsonfile or (flags.redirect if flags.json else None)
    streams: list[str] = []
    if json_file is not None:
        path = run.resolve(json_file)
        if path is not None and path.is_file():
            _read_stream(reader, RunOutput(stdout_path=path), "stdout")
            streams.append(f"test2json:{json_file}")
        else:
            report.warnings.append(f"JSON file {json_file} named in the command was not found; parsed the console")
    for stream in ("stdout", "stderr"):
        if json_file is not None and reader.json_events and stream == "stdout":
            # the console is a summary (gotestsum) of what the file has; keep its build errors
            for line in run.lines(stream):
                if BUILD_HEAD.match(line) or reader.build_key is not None:
                    reader.text(line)
            continue
        if _read_stream(reader, run, stream):
            streams.append("console")
        reader.finish()
    report.sources = list(dict.fromkeys(streams)) or ["console"]
    if reader.bad_json:
        report.warnings.append(f"{reader.bad_json} line(s) looked like JSON events but could not be decoded")
    index = SourceIndex(run.sources_root)
    src = GoSources(index, flags)
    tests: dict[str, TestResult] = {}
    for pkg in reader.packages.values():
        for t in _package_results(pkg, reader, src, flags, run, report):
            tests[t.id] = t
    if reader.gotestsum and not reader.json_events:
        _gotestsum_console(reader, tests, src)
    if not reader.packages and run.exit_code not in (0, None) and (reader.go_errors or reader.builds):
        mod = src.module_path() or "go"
        msg = "\n".join(reader.go_errors or [ln for v in reader.builds.values() for ln in v][:MAX_MESSAGE_LINES])
        tests[mod] = TestResult(id=mod, status=Status.ERRORED, message=msg or None, suite=mod)
        report.build_error = True
    report.tests = list(tests.values())
    # No summary_counts: go test prints no count of tests anywhere. A
    # package's ``ok``/``FAIL`` line says only how the package ended (the
    # parser turns a FAIL without a failing test into the package's entry),
    # and test2json's pass/fail/skip events are the per-test results
    # themselves: counting them would check the parser against itself.
    report.build_error = report.build_error or any(p.build for p in reader.packages.values())
    report.timed_out = run.killed_by_timeout or any(t.timed_out for t in report.tests)
    if not report.tests and not reader.packages:
        report.warnings.append("no go test results found in the output")
        report.output_tail = run.tail()
    return report


_SCAN = json.JSONDecoder().scan_once  # the C scanner, without json.loads' wrappers
# A test's own '=== RUN' / '--- PASS' output event repeats what its run/pass
# action says: such lines are skipped without decoding them (half of a stream).
_ECHO = re.compile(r'"Output": ?"(?:=== (?:RUN|PAUSE|CONT|NAME) |(?: {4})*--- (?:PASS|FAIL|SKIP|BENCH): )')
# A test's run/pass/fail/skip event as Go encodes it (fields in TestEvent's
# order, no escapes in the names): read without a JSON decoder.
_TEST_EVENT = re.compile(r'"Action":"(run|pass|fail|skip)","Package":"([^"\\]*)","Test":"([^"\\]+)"'
                         r'(?:,"Elapsed":(-?\d[\d.eE+-]*))?\}$')


def _read_stream(reader: _Reader, run: RunOutput, stream: str) -> bool:
    """Feed one stream; True when it had anything of go test's.

    JSON lines are read raw (ANSI escapes inside JSON strings are escaped,
    and Output values are stripped when stored); other lines are stripped."""
    seen = False
    events = 0
    scan = _SCAN
    event = reader.event
    text = reader.text
    echo = _ECHO.match
    test_event = _TEST_EVENT.match
    for line in run.lines(stream, ansi=True):
        if line[:1] == "{":
            i = line.find('"Output":')
            if i > 0:
                if echo(line, i) and '"Test":' in line:
                    events += 1
                    continue
            elif (m := test_event(line, line.find('"Action":"'))) is not None:
                reader.test_event(*m.groups())
                events += 1
                continue
            try:
                ev = scan(line, 0)[0]
            except (StopIteration, ValueError, RecursionError):
                if '"Action"' in line:
                    reader.bad_json += 1
                    continue
            else:
                if type(ev) is dict and (action := ev.get("Action")) is not None:
                    event(ev, action)
                    events += 1
                    continue
        text(strip_ansi(line))
        seen = seen or bool(reader.packages)
    reader.json_events += events
    return seen or events > 0


def _package_results(pkg: _Package, reader: _Reader, src: GoSources, flags: GoTestFlags, run: RunOutput,
                     report: TestReport) -> list[TestResult]:
    """The entries of one package."""
    path = pkg.path or _guess_path(pkg, src)
    directory = src.pkg_dir(path) if path else None
    out: list[TestResult] = []
    if pkg.result == "skip" and not pkg.tests:
        return out  # [no test files]
    if pkg.build:
        out.append(_build_entry(path, pkg, reader, src, directory))
        return out
    if not pkg.verbose and pkg.result in ("ok", "fail"):
        _add_static(pkg, src, directory, flags, report)
    killed = run.killed_by_timeout and pkg.result is None
    any_failed = False
    for t in pkg.tests.values():
        status, timed_out, native = t.status, False, None
        if status is None:
            if not t.started:
                continue
            # Still running when the binary stopped: at a -timeout alarm, when
            # the whole run was killed, or when another test crashed it.
            timed_out = pkg.timeout is not None or killed
            status, native = Status.FAILED, (None if timed_out else DIED)
        any_failed = any_failed or status == Status.FAILED
        if status is Status.PASSED:
            out.append(TestResult(id=f"{path}::{t.name}", status=status, duration_s=t.duration, suite=path))
            continue
        out.append(TestResult(
            id=f"{path}::{t.name}", status=status,
            message=_message(t, pkg, timed_out), details=_details(t), duration_s=t.duration,
            timed_out=timed_out, suite=path, native_status=native,
        ))
    if pkg.result == "fail" and not any_failed:
        lines = [ln for ln in pkg.lines if ln.strip() and not TRIVIAL.match(ln)]
        where = src.testmain(directory)
        out.append(TestResult(
            id=path, status=Status.ERRORED, file=where[0] if where else None, line=where[1] if where else None,
            message="\n".join(lines[:MAX_MESSAGE_LINES]) or f"FAIL {path}", details="\n".join(pkg.lines) or None,
            suite=path,
        ))
    return out


def _guess_path(pkg: _Package, src: GoSources) -> str:
    """The import path of a package whose summary line never came (killed run)."""
    for name in pkg.tests:
        top = name.split("/", 1)[0]
        for rel, _ in src.index.find(re.compile(rf"^func\s+{re.escape(top)}\s*\("), ["_test.go"]):
            path = src.import_path(str(PurePosixPath(rel).parent))
            if path:
                return path
    return src.module_path() or ""


def _add_static(pkg: _Package, src: GoSources, directory: str | None, flags: GoTestFlags, report: TestReport) -> None:
    """Without -v only failures are printed: list the package's other tests
    from the sources, up to where a panic or a timeout stopped the binary."""
    if directory is None:
        report.warnings.append(f"{pkg.path}: sources not found; only the tests go printed are listed")
        return
    printed = dict(pkg.tests)
    if pkg.result == "fail" and not printed and not pkg.timeout and not pkg.saw_pass:
        return  # TestMain (or init) failed before any test ran
    funcs = [f for f in src.funcs(directory) if _selected(f.name, flags)]
    stop = None
    if pkg.timeout is not None:
        names = pkg.running or pkg.frames
        stop = next((f.name for f in funcs if f.name in {n.split("/", 1)[0] for n in names}), None)
    elif pkg.panicked and pkg.panic_owner:
        stop = pkg.panic_owner.split("/", 1)[0]
    elif flags.failfast:
        stop = next((f.name for f in funcs if printed.get(f.name) and printed[f.name].status == Status.FAILED), None)
    pkg.tests = {}
    for f in funcs:
        t = printed.pop(f.name, None) or _Test(f.name)
        t.started = True
        if f.name == stop and pkg.timeout is not None:
            pkg.tests[f.name] = t  # the running test: no result
            break
        if t.status is None:
            t.status = Status.SKIPPED if f.skip is not None else Status.PASSED
            if f.skip:
                t.lines.append(f.skip)
        pkg.tests[f.name] = t
        for sub, skipped in (f.subtests or []) if f.skip is None and f.name != stop else []:
            full = f"{f.name}/{sub}"
            if not _selected(full, flags):
                continue
            st = printed.pop(full, None) or _Test(full)
            if st.status is None:
                st.status = Status.SKIPPED if skipped else Status.PASSED
            pkg.tests[full] = st
        for name in [n for n in printed if n.startswith(f.name + "/")]:
            pkg.tests[name] = printed.pop(name)
        if f.name == stop:
            break
    pkg.tests.update(printed)  # printed but not found in the sources
    note = ("go test without -v prints only failures: the other tests were listed from the sources "
            "(skips inferred from their code)")
    if note not in report.warnings:
        report.warnings.append(note)
    if any(f.subtests is None for f in funcs):
        report.warnings.append(f"{pkg.path}: some t.Run names could not be worked out from the sources; "
                               "those subtests are not listed")


def _build_entry(path: str, pkg: _Package, reader: _Reader, src: GoSources, directory: str | None) -> TestResult:
    """The errored entry of a package that did not build."""
    lines = reader.builds.get(pkg.failed_build or "") or reader.builds.get(path) or \
        next((v for k, v in reader.builds.items() if k.split(" ", 1)[0] == path), None) or \
        [ln for v in reader.builds.values() for ln in v]
    file = line = None
    for ln in lines:
        if m := COMPILE_ERR.match(ln.strip()):
            file, line = _source_file(m.group("file"), src, directory), int(m.group("line"))
            break
    msg = "\n".join(lines[:MAX_MESSAGE_LINES]).strip() or f"FAIL {path} [{pkg.build}]"
    return TestResult(id=path, status=Status.ERRORED, file=file, line=line, message=msg,
                      details="\n".join(lines) or None, suite=path)


def _source_file(printed: str, src: GoSources, directory: str | None) -> str | None:
    rel = src.index.relative(printed)
    files = src.index.files([".go"])
    if rel in files:
        return rel
    name = PurePosixPath(printed).name
    if directory is not None:
        cand = name if directory == "." else f"{directory}/{name}"
        if cand in files:
            return cand
    hits = [f for f in files if rel and f.endswith("/" + rel)]
    return hits[0] if len(hits) == 1 else rel


def _dedent(lines: list[str]) -> list[str]:
    widths = [len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()]
    cut = min(widths) if widths else 0
    return [ln[cut:] if ln[:cut].strip() == "" else ln for ln in lines]


LOG_LINE = re.compile(r"^(?P<indent>\s*)[\w.-]+\.go:\d+: ")


def _log_lines(lines: list[str]) -> list[str]:
    """The t.Log/t.Error lines (``file.go:N: text`` and their more-indented
    continuation lines), dedented; the test's own prints are left out."""
    out: list[str] = []
    indent: int | None = None
    for ln in lines:
        m = LOG_LINE.match(ln)
        if m:
            indent = len(m.group("indent"))
            out.append(ln[indent:])
        elif indent is not None and ln.strip() and len(ln) - len(ln.lstrip()) > indent:
            out.append(ln[indent:])
        else:
            indent = None
    return out


def _message(t: _Test, pkg: _Package, timed_out: bool) -> str | None:
    if t.status == Status.PASSED:
        return None
    lines = [ln for ln in t.lines if not MARKER.match(ln)]
    if timed_out and pkg.timeout:
        head = [pkg.timeout] + ([f"running tests: {', '.join(pkg.running)}"] if pkg.running else [])
        return "\n".join(head)
    for i, ln in enumerate(lines):
        if ln.startswith(("panic: ", "fatal error: ")):
            tail = []
            for more in lines[i:]:
                if not more.strip() or more.startswith("goroutine "):
                    break
                tail.append(more)
            return "\n".join(_dedent(lines[:i])[-10:] + tail[:MAX_MESSAGE_LINES]).strip() or None
    text = "\n".join((_log_lines(lines) or _dedent(lines))[:MAX_MESSAGE_LINES]).strip()
    if not text and t.status is None:
        return "no result: the test binary exited while this test was running"
    return text or None


def _details(t: _Test) -> str | None:
    if t.status == Status.PASSED or not t.lines:
        return None
    text = "\n".join(t.lines)
    return text + (f"\n...[{t.dropped} more lines]" if t.dropped else "")


def _gotestsum_console(reader: _Reader, tests: dict[str, TestResult], src: GoSources) -> None:
    """gotestsum's own formats (``=== FAIL: pkg Test``, ``PASS pkg.Test``) when no JSON was read."""
    module = src.module_path()
    for word, path, name in reader.gotestsum:
        if module and path != module and not path.startswith(module + "/") and \
                src.pkg_dir(f"{module}/{path}") is not None:
            path = f"{module}/{path}"  # gotestsum prints paths relative to the module
        add(tests, TestResult(id=f"{path}::{name}", status=WORD_STATUS[word], suite=path))


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

SELECT_VALUE_OPTIONS = {
    "-run", "-skip", "-timeout", "-count", "-tags", "-p", "-parallel", "-cpu", "-bench", "-benchtime",
    "-coverprofile", "-covermode", "-coverpkg", "-o", "-exec", "-shuffle", "-list", "-mod", "-ldflags", "-gcflags",
    "-modfile", "-C", "-outputdir", "-memprofile", "-cpuprofile", "-blockprofile", "-mutexprofile", "-trace", "-fuzz",
    "-fuzztime",
}
SELECT_OPTIONS = {"-run", "--run"}
DEFAULT_INVOCATION = "go test -json"
RESUMABLE = True
RESUME_PER_SUITE = True  # one package's test binary died; go goes on with the others


def runner_end(words: list[str]) -> int | None:
    return next((i + 2 for i in range(len(words) - 1)
                 if bin_name(words[i]) == "go" and unquote(words[i + 1]) == "test"), None)


def package_dir(test: TestResult) -> str:
    """The folder of a test's package, as ``go test`` takes it (``./sub``, or ``.``)."""
    if test.file and "/" in test.file:
        return "./" + test.file.rsplit("/", 1)[0]
    return "."


scope_folder = package_dir


def _run_pattern(name: str) -> str:
    # go test -run splits on '/' and matches each level as its own regex.
    return "/".join("^" + re.escape(part) + "$" for part in name.split("/"))


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    dirs = {package_dir(t) for t in tests}
    names = [t.id.partition("::")[2] for t in tests]
    if len(dirs) > 1:
        raise GreenloopError("cannot select go tests of several packages at once; run them one by one",
                             kind=ErrorKind.VALIDATION_ERROR, framework=FRAMEWORK)
    if not any(unquote(w).startswith("-count") for w in inv.options):
        inv.options.append("-count=1")
    if default:
        # Greenloop's own -race has a fallback without it (no cgo); one test need not race.
        inv.options = [w for w in inv.options if unquote(w) != "-race"]
    if not all(names):
        return [shlex.quote(dirs.pop())]  # a package-level entry: the package's tests decide
    if len(names) == 1:
        pattern = _run_pattern(names[0])
    elif all("/" not in n for n in names):
        pattern = "^(?:" + "|".join(re.escape(n) for n in names) + ")$"
    else:
        raise GreenloopError(f"cannot select several {FRAMEWORK} tests at once (subtests take one -run pattern "
                             "per level); run them one by one", kind=ErrorKind.VALIDATION_ERROR, framework=FRAMEWORK)
    return ["-run", shlex.quote(pattern), shlex.quote(dirs.pop())]


def list_command(inv: Invocation, folder: str) -> str:
    """The command that lists a package's top-level tests (``-list``), with the suite's build flags."""
    inv.options = [w for w in inv.options if unquote(w) not in ("-json", "-v")]
    return inv.render("-list", shlex.quote(".*"), shlex.quote(folder))


def listed(text: str) -> list[str]:
    """The top-level tests ``go test -list`` printed."""
    return [line.strip() for line in text.splitlines() if re.fullmatch(r"(?:Test|Example|Fuzz)\w*", line.strip())]


def rerun_command(command: str, invocation: Callable[[], Invocation], scope: str | None,
                  skip: list[TestResult], listed: tuple[str, list[str]] | None) -> str | None:
    """go test cannot leave tests out by name (-skip is Go 1.20+): the package's listed
    top-level tests not done run again, one at a time (``=== RUN`` names each)."""
    if listed is None:
        raise ValueError(f"{FRAMEWORK} runs are resumed from a listing of the package's tests")
    inv = invocation()
    folder, names = listed
    gone = {t.id.partition("::")[2].split("/", 1)[0] for t in skip}
    left = [n for n in names if n not in gone]
    if not left:
        return None
    inv.options = [w for w in inv.options if not unquote(w).startswith(("-count", "-parallel"))]
    return inv.render("-count=1", "-parallel=1", "-run", shlex.quote("^(?:" + "|".join(left) + ")$"),
                      shlex.quote(folder))


def suite_command(root: Path) -> tuple[str, list[str]]:
    """-race needs cgo and a C toolchain; the fallback is plain go test. A workspace's
    modules are named one by one (``go_work.patterns``)."""
    where = go_work.patterns(root)
    return f"go test -json -race {where}", [f"go test -json {where}"]
