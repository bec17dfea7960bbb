"""PHPUnit (9, 10, 11): the default progress printer, ``--testdox``, forced
colours, ``--log-junit FILE`` and PHP fatal/parse errors.

* progress (default): one character per test (``. F E W S I R D N``) with a
  ``n / m (p%)`` counter, then defect sections (``There were 2 errors:``,
  ``failures``, ``warnings``, ``risky tests`` and, with ``-v`` /
  ``--display-*``, ``incomplete tests`` / ``skipped tests``) whose entries
  ``N) Class::method[ with data set ...]`` carry the message and a
  ``/path/File.php:LINE`` trace. Tests that no section names (passed, and
  skipped/incomplete without ``-v``) are named by walking the test suite
  PHPUnit builds from the sources (``_Suite``: configured test directories
  sorted by path, test methods in declaration order, data-provider rows) and
  aligning it with the progress characters between named anchors;
* ``--testdox``: ``Class header`` lines and `` ✔ / ✘ / ↩ / ∅ / ☢ / ⚠ name``
  lines with humanised names, mapped back to methods through PHPUnit's own
  prettifier rules; ``✘`` is both error and failure, told apart by colour
  (yellow = error), defect sections, the JUnit log or the message shape
  checked against the summary counts;
* ``--log-junit FILE``: read with ``JUnitReader`` (nested suites for data
  providers, ``file``/``line`` of the method, ``<skipped/>`` for skipped and
  incomplete, risky tests logged as ``<error>``), cross-checked with the
  console, which also fills in what a truncated log lost;
* ``PHP Parse error`` / ``PHP Fatal error: Uncaught ParseError`` / PHPUnit's
  ``An error occurred inside PHPUnit`` while loading test files (exit 255,
  no results): one errored entry keyed by the file, ``build_error``.

Mapping (shared/corpus/README.md): errors -> errored, failures -> failed,
skipped -> skipped, incomplete -> skipped (native ``incomplete``), risky ->
passed (native ``risky``); warnings, deprecations and notices leave the test
passed with the issue as native status. Ids: ``Class::method`` plus
`` with data set "name"`` / `` with data set #N`` (never the printed data).
File and line: the test method's definition.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from defusedxml.ElementTree import fromstring as xml_fromstring

from .command import command_words, tool_words
from .invocation import Invocation, bin_name
from .junit_xml import JUnitCase, JUnitReader
from .locate import Location, SourceIndex
from .models import Status, TestReport, TestResult
from .run_output import ANSI_RE, RunOutput
from .source.php import MAX_TEST_FILES, PhpSources, PhpTest, pretty_class

FRAMEWORK = "phpunit"
COMMAND_RE = [
    re.compile(
        r"^(?:\w+=\S*\s+)*(?:timeout\s+(?:-\S+\s+)*\S+\s+)?"
        r"(?:php[\d.]*\s+(?:-\S+(?:\s+[^-\s]\S*)?\s+)*)?(?:\S*/)?(?:phpunit|paratest)(?:\.phar)?(?:\s|$)"
    ),
]
OUTPUT_RE = [
    re.compile(r"^PHPUnit \d+\.\d+(?:\.\d+)?\S* by Sebastian Bergmann and contributors\.", re.M),
    re.compile(r"^Tests: \d+, Assertions: \d+", re.M),
    re.compile(r"^OK \(\d+ tests?, \d+ assertions?\)$", re.M),
    re.compile(r"^There (?:was 1|were \d+) (?:errors?|failures?|risky tests?|incomplete tests?|skipped tests?):$", re.M),
    re.compile(r"^[.FEWSIRDN]+ +\d+ / \d+ \(\s*\d+%\)", re.M),
    re.compile(r"PHPUnit[/\\](?:TextUI|Framework|Util)[/\\]\w+\.php", re.M),
]

# ---------------------------------------------------------------- console lines
BANNER = re.compile(r"^PHPUnit (?P<version>\d+)\.\d+\S* (?:by Sebastian Bergmann|\(c\))")
PROGRESS = re.compile(r"^(?P<chars>[.FEWSIRDN]*)\s*(?P<n>\d+) / (?P<m>\d+) \(\s*\d+%\)")
PROGRESS_RUN = re.compile(r"^[.FEWSIRDN]+")
TIME_LINE = re.compile(r"^Time: \d")
HEADER_INFO = re.compile(r"^(?:Runtime|Configuration|Random [Ss]eed|Test results|Warning|Processes|Using):\s")
SECTION = re.compile(r"^There (?:was|were) (?P<n>\d+) (?P<kind>.+?):$")
ENTRY = re.compile(r"^(?P<n>\d+)\) (?P<name>.+)$")
TRACE = re.compile(r"^(?P<file>(?:[A-Za-z]:)?[^\s:][^:]*\.(?:php|phpt|inc)):(?P<line>\d+)$")
TEST_NAME = re.compile(r"^(?P<cls>[A-Za-z_\x80-\uffff\\][\w\x80-\uffff\\]*)::(?P<method>\w+)(?P<rest>.*)$")
# PHPUnit 10+ names a failing setUpBeforeClass() by its class alone
CLASS_NAME = re.compile(r"^[A-Za-z_\x80-\uffff\\][\w\x80-\uffff\\]*$")
DATA_SET = re.compile(r'^ with data set (?P<ds>#\d+|"(?P<name>.*?)")(?= \(|$)')
SUMMARY = re.compile(r"^Tests: (?P<tests>\d+), Assertions: \d+(?P<rest>.*?)\.?$")
SUMMARY_PART = re.compile(r"(?P<kind>[A-Za-z][A-Za-z ]*?): (?P<n>\d+)")
OK_LINE = re.compile(r"^OK \((?P<tests>\d+) tests?, \d+ assertions?\)")
VERDICT = re.compile(r"^(?:OK, but |ERRORS!|FAILURES!|WARNINGS!|No tests executed!)")
# PHPUnit 9's stand-in tests for problems found while building the suite
PSEUDO_NAMES = {"Error", "Warning"}
PSEUDO_HEADER = re.compile(r"\(PHPUnit\\Framework\\(?:Error|Warning)TestCase\)$")
PROVIDER_INVALID = re.compile(r"data provider specified for (?P<id>\S+::\w+) is invalid")
DEBUG_LINE = re.compile(r"^Test '(?P<name>.+)' (?P<event>started|ended)$")
TRIGGERED_BY = re.compile(r"^\* (?P<name>\S+::\S.*)$")
SEPARATOR = "--"

# testdox
TESTDOX_LINE = re.compile(r"^ (?P<sym>[✔✘↩∅☢⚠?]) (?P<name>.*?)(?: \[\d+(?:\.\d+)? ms\]|\s+\d+ ms)?$")
TESTDOX_BODY = re.compile(r"^   [│┐├┊╵┴](?: (?P<text>.*))?$")
SPINNER = re.compile(r"^\s*[◐◓◑◒] running tests")
SUMMARY_NON_SUCCESS = "Summary of non-successful tests:"
SYM_STATUS = {"✔": "passed", "✘": "problem", "↩": "skipped", "∅": "incomplete", "☢": "risky", "⚠": "warning"}

# PHP fatal errors while loading tests, and PHPUnit 10+'s crash message
PHP_FATAL = re.compile(
    r"^(?:PHP )?(?P<kind>Parse error|Fatal error):\s+(?P<msg>.*?) in (?P<file>\S+?)"
    r"(?::(?P<line1>\d+)| on line (?P<line2>\d+))\s*$"
)
CRASH = "An error occurred inside PHPUnit."
CRASH_MESSAGE = re.compile(r"^Message:\s+(?P<msg>.*)$")
CRASH_LOCATION = re.compile(r"^Location: (?P<file>.+?):(?P<line>\d+)$")

# an exception rendered as "Class: message" is an error, never a failure
ERROR_SHAPE = re.compile(r"^\\?(?:[A-Za-z_]\w*\\)*[A-Za-z_]\w*(?:Error|Exception)(?: \(\d+\))?: ")
FAILURE_SHAPE = re.compile(r"Failed asserting that|^--- Expected$|^Expectation failed")
# messages of PHP warnings/notices that PHPUnit 9 turns into errors
PHP_ISSUE_SHAPE = re.compile(
    r"^(?:Undefined |Uninitialized |Trying to access|Attempt to |Division by zero|Array to string|"
    r"A non-numeric|Cannot |Creation of dynamic|Only variables|Object of class|Illegal |"
    r"\w+\(.*\): )"
)

CHAR_KIND = {".": "passed", "F": "failure", "E": "error", "W": "warning", "S": "skipped",
             "I": "incomplete", "R": "risky", "D": "deprecation", "N": "notice"}
KIND_CHAR = {v: k for k, v in CHAR_KIND.items()}
# section titles (singular) -> kind
SECTION_KIND = {
    "error": "error", "failure": "failure", "warning": "warning", "risky test": "risky",
    "incomplete test": "incomplete", "skipped test": "skipped", "deprecation": "deprecation",
    "notice": "notice", "php deprecation": "deprecation", "php notice": "notice", "php warning": "warning",
    "phpunit deprecation": "deprecation", "phpunit warning": "warning", "phpunit notice": "notice",
    "phpunit error": "error",
}
KIND_STATUS = {
    "passed": (Status.PASSED, None), "failure": (Status.FAILED, None), "error": (Status.ERRORED, None),
    "skipped": (Status.SKIPPED, None), "incomplete": (Status.SKIPPED, "incomplete"),
    "risky": (Status.PASSED, "risky"), "warning": (Status.PASSED, "warning"),
    "deprecation": (Status.PASSED, "deprecation"), "notice": (Status.PASSED, "notice"),
}
MAX_BODY_LINES = 400
MAX_SECTION_ENTRIES = 100_000


@dataclass
class _Entry:
    """One test as a console block or testdox line describes it."""

    name: str  # as printed (data shown after a data set name is kept here)
    kind: str
    body: list[str] = field(default_factory=list)
    colour: str | None = None  # testdox: the ANSI colour of the symbol
    header: str | None = None  # testdox: the class header above it
    pseudo: bool = False  # a stand-in that is no test (PHPUnit 9 "Warning: No tests found...")

    @property
    def trace(self) -> list[tuple[str, int]]:
        """The trailing ``file:line`` lines of the body."""
        out: list[tuple[str, int]] = []
        for line in reversed(self.body):
            m = TRACE.match(line.strip())
            if not m:
                if line.strip():
                    break
                continue
            out.append((m["file"], int(m["line"])))
        return out[::-1]

    @property
    def message(self) -> str | None:
        """The message lines (before the diff and the trace)."""
        lines = list(self.body)
        while lines and (not lines[-1].strip() or TRACE.match(lines[-1].strip())):
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        for stop in ("--- Expected", "Stack trace:"):
            if stop in lines and lines.index(stop) > 0:
                lines = lines[: lines.index(stop)]
        text = "\n".join(lines).rstrip()
        return text or None

    @property
    def details(self) -> str | None:
        text = "\n".join(self.body).strip("\n")
        return text or None


@dataclass
class _Console:
    """What the console output says, read in one streaming pass."""

    version: int | None = None
    chars: list[str] = field(default_factory=list)
    # defect sections, by kind, in print order
    sections: dict[str, list[_Entry]] = field(default_factory=dict)
    issues: dict[str, str] = field(default_factory=dict)  # test name -> issue kind (PHPUnit 10 "Triggered by")
    testdox: list[_Entry] = field(default_factory=list)
    summary: dict[str, int] | None = None
    fatal: tuple[str, str, int | None, str] | None = None  # (file, message, line, details)
    runner_warnings: list[str] = field(default_factory=list)
    saw_time: bool = False
    # --debug: "Test 'C::m' started/ended" lines, in order
    debug_started: list[str] = field(default_factory=list)
    debug_ended: set[str] = field(default_factory=set)


def _resolve_pseudo(e: _Entry) -> None:
    """PHPUnit 9 reports a broken data provider as a test named ``Error``
    (it stands for the test method) and suite problems as ``Warning``
    (no test at all)."""
    m = PROVIDER_INVALID.search("\n".join(e.body))
    if m:
        e.name = m["id"]
        e.kind = "error"
    else:
        e.pseudo = True


def _strip(raw: str) -> str:
    return ANSI_RE.sub("", raw) if "\x1b" in raw else raw


def _symbol_colour(raw: str) -> str | None:
    """The SGR colour code right before a testdox symbol (``31`` red, ``33`` yellow)."""
    m = re.match(r"^ ?((?:\x1b\[[0-9;]*m)+) ?[✔✘↩∅☢⚠?]", raw)
    if not m:
        return None
    codes = re.findall(r"\d+", m.group(1))
    for code in reversed(codes):
        if code in {"31", "33", "32", "36", "41", "43"}:
            return code
    return None


class _Scanner:
    """Streaming state machine over the console lines."""

    def __init__(self) -> None:
        self.c = _Console()
        self.section: str | None = None
        self.entry: _Entry | None = None
        self.next_no = 1
        self.pending_chars: list[str] = []
        self.testdox_header: str | None = None
        self.candidate_header: str | None = None
        self.prev_blank = True
        self.in_non_success_summary = False
        self.crash = False
        self.crash_msg: str | None = None
        self.fatal_tail = 0
        self._tdx: _Entry | None = None

    def feed(self, raw: str) -> None:
        line = _strip(raw)
        # the testdox spinner leaves " ◐ running tests" before a result line
        while SPINNER.match(line):
            line = SPINNER.sub("", line, count=1)
            raw = line
        self._line(raw, line)
        self.prev_blank = not line.strip()

    def _line(self, raw: str, line: str) -> None:
        c = self.c
        if self._fatal(line):
            return
        if c.version is None and (m := BANNER.match(line)):
            c.version = int(m["version"])
            return
        if TIME_LINE.match(line):
            self._close_entry()
            c.saw_time = True
            self.section = None
            return
        if (m := SUMMARY.match(line)) or (m := OK_LINE.match(line)):
            self._close_entry()
            self.section = None
            counts = {"tests": int(m["tests"])}
            for part in SUMMARY_PART.finditer(m.groupdict().get("rest") or ""):
                counts[part["kind"].strip().lower()] = int(part["n"])
            c.summary = counts
            return
        if m := SECTION.match(line):
            self._close_entry()
            kind = m["kind"].lower()
            if kind not in SECTION_KIND and kind.endswith("s"):
                kind = kind[:-1]
            self.section = SECTION_KIND.get(kind, "other:" + m["kind"])
            self.next_no = 1
            return
        if VERDICT.match(line):
            self._close_entry()
            self.section = None
            if line.startswith("No tests executed!") and c.summary is None:
                c.summary = {"tests": 0}
            return
        if self.section is not None:
            self._section_line(line)
            return
        if line == SUMMARY_NON_SUCCESS:
            self._close_entry()
            self.in_non_success_summary = True
            return
        self._run_line(raw, line)

    def _fatal(self, line: str) -> bool:
        c = self.c
        if line.strip() == CRASH:
            self.crash = True
            return True
        if self.crash:
            if (m := CRASH_MESSAGE.match(line)) and self.crash_msg is None:
                self.crash_msg = m["msg"].strip()
                return True
            if (m := CRASH_LOCATION.match(line)) and c.fatal is None:
                c.fatal = (m["file"], f"{CRASH} {self.crash_msg or ''}".strip(), int(m["line"]), "")
                self.fatal_tail = 40
                return True
        m = PHP_FATAL.match(line.strip())
        if m and c.fatal is None:
            c.fatal = (m["file"], line.strip(), int(m["line1"] or m["line2"]), line.strip())
            self.fatal_tail = 40
            return True
        if self.fatal_tail and c.fatal is not None and line.strip():
            # keep a few lines of the stack trace as details
            self.fatal_tail -= 1
            file, msg, ln, det = c.fatal
            c.fatal = (file, msg, ln, (det + "\n" + line).strip("\n"))
            return True
        return False

    def _section_line(self, line: str) -> None:
        m = ENTRY.match(line)
        if m and int(m["n"]) == self.next_no and self.next_no <= MAX_SECTION_ENTRIES:
            self._close_entry()
            self.next_no += 1
            self.entry = _Entry(name=m["name"].strip(), kind=self.section or "other")
            return
        if line == SEPARATOR and (self.entry is None or not self.entry.body or not self.entry.body[-1].strip()):
            self._close_entry()
            self.section = None
            return
        if self.entry is not None:
            if (t := TRIGGERED_BY.match(line.strip())) and self.section in ("deprecation", "notice", "warning"):
                self.c.issues.setdefault(t["name"], self.section)
            if len(self.entry.body) < MAX_BODY_LINES:
                self.entry.body.append(line)

    def _close_entry(self) -> None:
        e = self.entry
        self.entry = None
        if e is None:
            return
        if e.kind == "testdox":
            return
        if e.name in PSEUDO_NAMES and e.kind in ("error", "warning"):
            _resolve_pseudo(e)
            if e.pseudo:
                msg = (e.message or "").splitlines()
                self.c.runner_warnings.append(f"{e.name}: {msg[0] if msg else ''}".strip())
            self.c.sections.setdefault(e.kind if not e.pseudo else "warning", []).append(e)
            return
        defect = e.kind in ("error", "failure", "risky", "incomplete", "skipped")
        if e.kind.startswith("other:") or not (TEST_NAME.match(e.name) or (defect and CLASS_NAME.match(e.name))):
            # runner warnings and issues keyed by a source location are not tests
            msg = (e.message or "").splitlines()
            self.c.runner_warnings.append(f"{e.name}: {msg[0] if msg else ''}".strip())
            return
        self.c.sections.setdefault(e.kind, []).append(e)

    def _run_line(self, raw: str, line: str) -> None:
        c = self.c
        # testdox
        if (m := TESTDOX_LINE.match(line)) and not PROGRESS.match(line):
            self._close_testdox()
            if self.in_non_success_summary:
                return
            if self.candidate_header is not None:
                self.testdox_header = self.candidate_header
                self.candidate_header = None
            e = _Entry(name=m["name"], kind=SYM_STATUS[m["sym"]], colour=_symbol_colour(raw),
                       header=self.testdox_header)
            c.testdox.append(e)
            self._tdx = e
            return
        if (m := TESTDOX_BODY.match(line)) and self._tdx is not None:
            if len(self._tdx.body) < MAX_BODY_LINES:
                self._tdx.body.append(m["text"] or "")
            return
        self._close_testdox()
        if c.saw_time:
            return
        if m := DEBUG_LINE.match(line):
            (c.debug_started.append if m["event"] == "started" else c.debug_ended.add)(m["name"])
            return
        # progress
        if m := PROGRESS.match(line):
            chars = list(m["chars"])
            n = int(m["n"])
            have = len(c.chars)
            if have + len(self.pending_chars) + len(chars) == n:
                c.chars.extend(self.pending_chars + chars)
            elif have + len(chars) == n:
                c.chars.extend(chars)
            else:
                c.chars.extend(self.pending_chars + chars)
            self.pending_chars = []
            return
        if HEADER_INFO.match(line):
            return
        if (m := PROGRESS_RUN.match(line)) and c.version is not None and not c.testdox and self.candidate_header is None:
            # a progress line cut by a test's own output; a capital that
            # starts a word ("Stack trace") is not a result
            run = m.group(0)
            if run[-1].isalpha() and line[len(run): len(run) + 1].islower():
                run = run[:-1]
            if run:
                self.pending_chars.extend(run)
                return
        # a testdox class header: text at column 0, confirmed by the test line after it
        if line.strip() and not line[0].isspace() and c.version is not None:
            self.candidate_header = line.strip() if self.prev_blank or not c.testdox else None
            return

    def _close_testdox(self) -> None:
        self._tdx = None

    def finish(self) -> _Console:
        self._close_entry()
        if self.pending_chars and not self.c.testdox:
            self.c.chars.extend(self.pending_chars)
        return self.c


def scan_console(run: RunOutput) -> _Console:
    """Read stdout then stderr once."""
    s = _Scanner()
    for raw in run.all_lines(ansi=True):
        s.feed(raw)
    return s.finish()


# ============================================================== the suite plan
VALUE_OPTIONS = {
    "--filter", "--testsuite", "--exclude-testsuite", "--group", "--exclude-group", "--covers", "--uses",
    "-c", "--configuration", "--bootstrap", "--log-junit", "--log-teamcity", "--testdox-html", "--testdox-text",
    "--testdox-xml", "--coverage-clover", "--coverage-cobertura", "--coverage-crap4j", "--coverage-html",
    "--coverage-php", "--coverage-xml", "--include-path", "-d", "--printer", "--order-by", "--random-order-seed",
    "--cache-result-file", "--cache-directory", "--columns", "--log-events-text", "--log-events-verbose-text",
    "--test-suffix", "--whitelist", "--extension", "--loader", "--repeat", "--coverage-filter",
    "--generate-baseline", "--use-baseline", "--list-tests-xml", "--processes", "-p", "--runner",
    "--requires-php-extension", "--log-otr", "--testdox-summary",
}
CONFIG_NAMES = ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")


@dataclass
class _Args:
    """What the command line says about the run."""

    paths: list[str] = field(default_factory=list)
    filter: str | None = None
    testsuites: list[str] = field(default_factory=list)
    exclude_testsuites: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    exclude_groups: list[str] = field(default_factory=list)
    config: str | None = None
    no_config: bool = False
    junit: str | None = None
    testdox: bool = False
    suffixes: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # --order-by values


PHPUNIT_WORD = re.compile(r"(?:^|/)(?:phpunit|paratest)(?:\.phar)?$")


def _args(command: str) -> _Args:
    """Options of the last phpunit/paratest segment of ``command``."""
    out = _Args()
    words = tool_words(command_words(command), lambda _, w: PHPUNIT_WORD.search(w) is not None)
    if words is None:
        return out
    i = 0
    while i < len(words):
        w = words[i]
        opt, eq, val = w.partition("=")
        if opt.startswith("-") and not eq and opt in VALUE_OPTIONS and i + 1 < len(words):
            val = words[i + 1]
            i += 1
        elif opt.startswith("-") and not eq:
            val = ""
        if opt == "--filter":
            out.filter = val
        elif opt == "--testsuite":
            out.testsuites += [s.strip() for s in val.split(",") if s.strip()]
        elif opt == "--exclude-testsuite":
            out.exclude_testsuites += [s.strip() for s in val.split(",") if s.strip()]
        elif opt == "--group":
            out.groups += [s.strip() for s in val.split(",") if s.strip()]
        elif opt == "--exclude-group":
            out.exclude_groups += [s.strip() for s in val.split(",") if s.strip()]
        elif opt in ("-c", "--configuration"):
            out.config = val
        elif opt == "--no-configuration":
            out.no_config = True
        elif opt == "--log-junit":
            out.junit = val
        elif opt == "--testdox":
            out.testdox = True
        elif opt == "--test-suffix":
            out.suffixes = [s for s in val.split(",") if s]
        elif opt == "--order-by":
            out.order += [v.strip() for v in val.split(",") if v.strip()]
        elif opt in ("--random-order", "--random-order-seed"):
            out.order.append("random")
        elif opt == "--reverse-order":
            out.order.append("reverse")
        elif not w.startswith("-"):
            out.paths.append(w)
        i += 1
    return out


@dataclass
class _Config:
    path: str | None = None  # project-relative
    dirs: list[tuple[str, str, str]] = field(default_factory=list)  # (suite, dir, suffix) and files (suite, file, "")
    excludes: list[str] = field(default_factory=list)
    include_groups: list[str] = field(default_factory=list)
    exclude_groups: list[str] = field(default_factory=list)
    junit: str | None = None
    testdox: bool = False
    order: list[str] = field(default_factory=list)


def _config(args: _Args, index: SourceIndex) -> _Config:
    """The PHPUnit XML configuration the run used (``-c`` or the default names)."""
    cfg = _Config()
    if args.no_config or index.root is None:
        return cfg
    names = [args.config] if args.config else list(CONFIG_NAMES)
    rel = None
    for name in names:
        cand = index.relative(name) or name
        if args.config and not cand.endswith(".xml") and not cand.endswith(".dist"):
            for dflt in CONFIG_NAMES:
                if index.lines(f"{cand.rstrip('/')}/{dflt}"):
                    cand = f"{cand.rstrip('/')}/{dflt}"
                    break
        if index.lines(cand):
            rel = cand
            break
    if rel is None:
        return cfg
    cfg.path = rel
    base = str(PurePosixPath(rel).parent)
    base = "" if base == "." else base + "/"
    try:
        root = xml_fromstring("\n".join(index.lines(rel)))
    except Exception:  # malformed or hostile config: no plan
        return cfg
    cfg.testdox = root.get("testdox", "").lower() == "true"
    cfg.order = [v.strip() for v in root.get("executionOrder", "").split(",") if v.strip()]
    for suite in root.iter("testsuite"):
        sname = suite.get("name", "")
        for el in suite:
            text = (el.text or "").strip()
            if not text:
                continue
            path = _join(base, text)
            if el.tag == "directory":
                cfg.dirs.append((sname, path, el.get("suffix") or "Test.php"))
            elif el.tag == "file":
                cfg.dirs.append((sname, path, ""))
            elif el.tag == "exclude":
                cfg.excludes.append(path)
    for groups in root.iter("groups"):
        for el in groups:
            names_ = [(g.text or "").strip() for g in el.iter("group")]
            if el.tag == "include":
                cfg.include_groups += [n for n in names_ if n]
            elif el.tag == "exclude":
                cfg.exclude_groups += [n for n in names_ if n]
    for log in root.iter("junit"):
        if log.get("outputFile"):
            cfg.junit = _join(base, log.get("outputFile", ""))
    for log in root.iter("log"):
        if log.get("type") == "junit" and log.get("target"):
            cfg.junit = _join(base, log.get("target", ""))
    return cfg


def _join(base: str, path: str) -> str:
    path = path.strip()
    if path.startswith("/") or path.startswith("<ROOT>"):
        return path
    joined = PurePosixPath(base + path).as_posix()
    parts: list[str] = []
    for p in joined.split("/"):
        if p == "..":
            if parts:
                parts.pop()
        elif p not in (".", ""):
            parts.append(p)
    return "/".join(parts)


def _files(index: SourceIndex, path: str, suffixes: list[str], excludes: list[str]) -> list[str]:
    """Test files under ``path`` sorted like php-file-iterator (by full path)."""
    rel = index.relative(path) or path
    rel = rel.rstrip("/")
    all_files = index.files()
    if rel in all_files:
        return [rel]
    prefix = f"{rel}/" if rel not in ("", ".") else ""
    out = [
        f for f in all_files
        if f.startswith(prefix) and f.endswith(tuple(suffixes))
        and not any(f == e or f.startswith(e.rstrip("/") + "/") for e in excludes)
    ]
    return sorted(out)


def _php_filter(expr: str) -> re.Pattern[str] | None:
    """PHPUnit's ``--filter``: a delimited regex, or a pattern wrapped as ``/.../i``
    after the ``name#N`` / ``name#N-M`` / ``name@dataset`` shorthands."""
    m = re.fullmatch(r"([^\w\s\\])(.*)\1([imsxuADU]*)", expr, re.S)
    flags = 0
    if m:
        body, mods = m.group(2), m.group(3)
        flags |= re.I if "i" in mods else 0
        flags |= re.S if "s" in mods else 0
        flags |= re.M if "m" in mods else 0
        flags |= re.X if "x" in mods else 0
    else:
        body = expr
        if mm := re.fullmatch(r"(.*?)#(\d+)(?:-(\d+))?", expr):
            if mm.group(3) and int(mm.group(2)) < int(mm.group(3)):
                rng = "|".join(str(i) for i in range(int(mm.group(2)), int(mm.group(3)) + 1))
                body = f"{mm.group(1)}.*with data set #(?:{rng})$"
            else:
                body = f"{mm.group(1)}.*with data set #{mm.group(2)}$"
        elif mm := re.fullmatch(r"(.*?)@(.+)", expr):
            body = f'{mm.group(1)}.*with data set "{mm.group(2)}"$'
        flags = re.I
    try:
        return re.compile(body, flags)
    except re.error:
        return None


# orders that keep the planned order known (reverse reverses every level,
# which reverses the flat list); the others depend on run-time data
KNOWN_ORDERS = {"default", "depends", "no-depends", "reverse"}


def plan_suite(src: PhpSources, args: _Args) -> tuple[list[PhpTest] | None, bool]:
    """The tests PHPUnit would run and whether their order is known; None when
    the tests cannot be known."""
    index = src.index
    if index.root is None:
        return None, False
    cfg = _config(args, index)
    order = args.order or cfg.order
    tests = _plan_tests(src, args, cfg)
    if tests is not None and "reverse" in order:
        tests.reverse()
    return tests, not set(order) - KNOWN_ORDERS


def _plan_tests(src: PhpSources, args: _Args, cfg: _Config) -> list[PhpTest] | None:
    index = src.index
    suffixes = args.suffixes or ["Test.php"]
    files: list[str] = []
    if args.paths:
        for p in args.paths:
            files += _files(index, p, suffixes, [])
    elif cfg.dirs:
        for sname, path, suffix in cfg.dirs:
            if args.testsuites and sname not in args.testsuites:
                continue
            if sname in args.exclude_testsuites:
                continue
            files += _files(index, path, [suffix] if suffix else [""], cfg.excludes)
    else:
        return None
    flt = _php_filter(args.filter) if args.filter else None
    if args.filter and flt is None:
        return None
    include = args.groups or ([] if args.filter or args.paths else cfg.include_groups)
    exclude = args.exclude_groups or ([] if args.groups else cfg.exclude_groups)
    tests: list[PhpTest] = []
    seen: set[str] = set()
    for rel in files[:MAX_TEST_FILES]:
        classes = [c for c in src.classes_in(rel) if c.parent and not c.abstract]
        base = PurePosixPath(rel).name.removesuffix(".php")
        named = [c for c in classes if c.short == base]
        for cls in named or classes:
            for meth in src.test_methods(cls):
                groups = cls.groups | meth.groups
                if include and not groups & set(include):
                    continue
                if exclude and groups & set(exclude):
                    continue
                sets = src.data_sets(cls, meth)
                base_id = f"{cls.name}::{meth.name}"
                if sets is None:
                    # rows unknown: one placeholder, alignment stops at it
                    cands = [PhpTest(id=base_id + " with data set ?", cls=cls, method=meth, data_set="?")]
                elif sets:
                    cands = [PhpTest(id=f"{base_id} with data set {ds}", cls=cls, method=meth, data_set=ds) for ds in sets]
                else:
                    cands = [PhpTest(id=base_id, cls=cls, method=meth, data_set=None)]
                for t in cands:
                    if flt is not None and not flt.search(base_id if t.data_set == "?" else t.id):
                        continue
                    if t.id in seen:
                        continue
                    seen.add(t.id)
                    tests.append(t)
    return tests


# ============================================================== assembly
TIME_LIMIT = re.compile(r"aborted after \d+ seconds?|Execution aborted after", re.I)


@dataclass
class _Res:
    """One test result before it becomes a ``TestResult``."""

    id: str
    kind: str
    message: str | None = None
    details: str | None = None
    trace: list[tuple[str, int]] = field(default_factory=list)
    file: str | None = None
    line: int | None = None
    duration: float | None = None
    timed_out: bool = False


def test_id(printed: str) -> str:
    """The id of a test as PHPUnit prints it: the data shown after a data set
    name is dropped (``C::m with data set "x" (1, 2)`` -> ``C::m with data set "x"``)."""
    printed = printed.strip()
    m = TEST_NAME.match(printed)
    if not m:
        return printed
    rest = m["rest"]
    if d := DATA_SET.match(rest):
        return f"{m['cls']}::{m['method']} with data set {d['ds']}"
    return f"{m['cls']}::{m['method']}{rest}" if not rest.startswith(" (") else f"{m['cls']}::{m['method']}"


def _entry_res(e: _Entry, kind: str | None = None) -> _Res:
    return _Res(id=test_id(e.name), kind=kind or e.kind, message=e.message, details=e.details, trace=e.trace)


def _anchors(chars: list[str], sections: dict[str, list[_Entry]]) -> dict[int, _Entry]:
    """Progress positions of the tests the defect sections name: the k-th
    ``E`` is the k-th error, the k-th ``F`` the k-th failure, and so on."""
    out: dict[int, _Entry] = {}
    for kind, entries in sections.items():
        ch = KIND_CHAR.get(kind)
        if ch is None:
            continue
        positions = [i for i, c in enumerate(chars) if c == ch]
        if len(positions) != len(entries):
            continue
        for pos, e in zip(positions, entries):
            out[pos] = e
    return out


def _align(chars: list[str], anchors: dict[int, _Entry], plan: list[PhpTest], complete: bool
           ) -> tuple[dict[int, PhpTest], PhpTest | None]:
    """Map progress positions to planned tests, segment by segment between the
    named anchors; a segment whose sizes disagree stays unnamed. Returns the
    mapping and, for an unfinished run, the planned test that was running."""
    where: dict[str, tuple[int, int]] = {}
    for i, t in enumerate(plan):
        where[t.id] = (i, i)
        # a class-level error stands for all the class's tests, a broken
        # data provider for all the method's rows
        for key in (t.cls.name, f"{t.cls.name}::{t.method.name}" if t.data_set else None):
            if key is not None:
                first, _ = where.get(key, (i, i))
                where[key] = (first, i)
    # anchors as (position, first plan index, last plan index)
    pts: list[tuple[int, int, int]] = [(-1, -1, -1)]
    for pos in sorted(anchors):
        span = where.get(test_id(anchors[pos].name))
        if span is not None and span[0] > pts[-1][2]:
            pts.append((pos, *span))
    mapping: dict[int, PhpTest] = {p: plan[e] for p, e, _ in pts[1:] if plan[e].id == test_id(anchors[p].name)}
    ends = pts[1:] + [(len(chars), len(plan), len(plan))]
    for (p0, _, e0), (p1, e1, _) in zip(pts, ends):
        last = p1 == len(chars)
        gap_c, gap_e = p1 - p0 - 1, e1 - e0 - 1
        segment = plan[e0 + 1: e0 + 1 + gap_c]
        if any(t.data_set == "?" for t in segment):
            continue
        if gap_c == gap_e or (last and not complete and gap_c <= gap_e):
            for k in range(gap_c):
                mapping[p0 + 1 + k] = plan[e0 + 1 + k]
    hanging = None
    if not complete:
        last_p, last_e = max(((p, plan.index(t)) for p, t in mapping.items()), default=(-1, -1))
        if last_p == len(chars) - 1 and last_e + 1 < len(plan) and plan[last_e + 1].data_set != "?":
            hanging = plan[last_e + 1]
    return mapping, hanging


class _Labels:
    """Testdox labels -> test ids, built with PHPUnit's prettifier rules."""

    def __init__(self, src: PhpSources) -> None:
        self.src = src
        self.by_label: dict[tuple[str, str], list[str]] = {}
        self.used: set[str] = set()

    def add(self, tid: str, cls_name: str, method: str, data_set: str | None, testdox: str | None,
            cls_testdox: str | None) -> None:
        header = cls_testdox or pretty_class(cls_name)
        base = testdox or self.src.pretty_method(method)
        labels = [base]
        if data_set and not (testdox and "$" in testdox):
            labels = [f"{base} with data set {data_set}"]
            if data_set.startswith("#"):
                labels.append(f"{base} with data set {data_set[1:]}")
            else:
                labels.append(f"{base} with {data_set[1:-1]}")
        elif data_set:
            labels = []  # placeholders filled with data: positional only
        for label in labels:
            self.by_label.setdefault((header, label), []).append(tid)
            self.by_label.setdefault(("", label), []).append(tid)

    def take(self, header: str | None, label: str) -> str | None:
        label = label.replace("·", " ").replace("⇥", "\t")
        for key in ((header or "", label), ("", label)):
            for tid in self.by_label.get(key, []):
                if tid not in self.used:
                    self.used.add(tid)
                    return tid
        return None


def _unprettify(header: str | None, label: str) -> str:
    """Best-effort id from a testdox line whose test is not in the sources."""
    cls = "UnknownTest"
    if header:
        m = re.search(r"\(([\w\\]+)\)$", header)
        cls = (m.group(1) if m else header.replace(" ", "")) + "Test"
    ds = ""
    if m := re.search(r' with data set (#\d+|".*")$', label):
        ds, label = " with data set " + m.group(1), label[: m.start()]
    words = label.split()
    method = "test" + "".join(w[:1].upper() + w[1:] for w in words)
    return f"{cls}::{method}{ds}"


def _classify_problems(items: list[tuple[_Res, _Entry]], summary: dict[str, int] | None) -> list[str]:
    """Tell errors from failures among testdox ``✘`` lines that neither colour
    nor a defect section decided; returns warnings."""
    strong_e = 0
    undecided: list[tuple[int, _Res]] = []
    for res, e in items:
        if res.kind in ("error", "failure"):
            strong_e += res.kind == "error"
            continue
        first = (res.message or "").splitlines()[0] if res.message else ""
        if ERROR_SHAPE.match(first):
            res.kind = "error"
            strong_e += 1
        elif any(FAILURE_SHAPE.search(line) for line in e.body):
            res.kind = "failure"
        else:
            undecided.append((0 if PHP_ISSUE_SHAPE.match(first) else 1, res))
    need = summary.get("errors", 0) - strong_e if summary else None
    undecided.sort(key=lambda x: x[0])
    if need is not None and 0 <= need <= len(undecided):
        for i, (_, res) in enumerate(undecided):
            res.kind = "error" if i < need else "failure"
        return []
    for weak, res in undecided:
        res.kind = "error" if weak == 0 else "failure"
    return ["could not tell errors from failures for every ✘ line; guessed from the messages"] if undecided else []


def _testdox_results(con: _Console, labels: _Labels) -> tuple[list[_Res], list[str]]:
    out: list[_Res] = []
    warnings: list[str] = []
    problems: list[tuple[_Res, _Entry]] = []
    guessed = 0
    section_kind = {test_id(e.name): k for k, es in con.sections.items() for e in es}
    for e in con.testdox:
        if e.header and PSEUDO_HEADER.search(e.header):
            _resolve_pseudo(e)
            if e.pseudo:
                warnings.append(f"PHPUnit: {e.name}: {(e.message or '').splitlines()[0] if e.message else ''}")
                continue
            out.append(_Res(id=e.name, kind="error", message=e.message, details=e.details, trace=e.trace))
            continue
        tid = labels.take(e.header, e.name)
        if tid is None:
            tid = _unprettify(e.header, e.name)
            guessed += 1
        res = _Res(id=tid, kind=e.kind, message=e.message, details=e.details, trace=e.trace)
        if e.kind == "problem":
            if section_kind.get(tid) in ("error", "failure"):
                res.kind = section_kind[tid]
            elif e.colour in ("33", "43"):
                res.kind = "error"
            elif e.colour in ("31", "41"):
                res.kind = "failure"
            problems.append((res, e))
        out.append(res)
    if problems:
        warnings += _classify_problems(problems, con.summary)
    if guessed:
        warnings.append(f"{guessed} testdox line(s) not matched to a test method in the sources; ids rebuilt from the names")
    return out, warnings


def _progress_results(con: _Console, plan: list[PhpTest] | None, ordered: bool, complete: bool
                      ) -> tuple[list[_Res], PhpTest | None, list[str]]:
    anchors = _anchors(con.chars, con.sections)
    mapping: dict[int, PhpTest] = {}
    hanging = None
    if plan is not None and ordered:
        # stand-ins that are no test take no place in the plan
        real = [p for p in range(len(con.chars)) if not (p in anchors and anchors[p].pseudo)]
        sub_anchors = {k: anchors[p] for k, p in enumerate(real) if p in anchors}
        sub_map, hanging = _align([con.chars[p] for p in real], sub_anchors, plan, complete)
        mapping = {real[k]: t for k, t in sub_map.items()}
    if plan is not None and complete:
        # whatever order the run had: when every test still unnamed had the
        # same outcome and the counts agree, the leftover tests are those
        named = {test_id(e.name) for e in anchors.values()} | {t.id for t in mapping.values()}
        rest_t = [t for t in plan if t.id not in named and f"{t.cls.name}::{t.method.name}" not in named
                  and t.cls.name not in named]
        rest_p = [p for p in range(len(con.chars)) if p not in anchors and p not in mapping]
        if (rest_p and len(rest_t) == len(rest_p) and len({con.chars[p] for p in rest_p}) == 1
                and all(t.data_set != "?" for t in rest_t)):
            mapping.update(zip(rest_p, rest_t))
    out: list[_Res] = []
    unnamed: dict[str, int] = {}
    for pos, ch in enumerate(con.chars):
        kind = CHAR_KIND[ch]
        if pos in anchors and anchors[pos].pseudo:
            continue
        if pos in anchors:
            res = _entry_res(anchors[pos], anchors[pos].kind if anchors[pos].kind == "error" else kind)
        elif pos in mapping:
            res = _Res(id=mapping[pos].id, kind=kind)
        else:
            unnamed[kind] = unnamed.get(kind, 0) + 1
            continue
        if pos in mapping:
            res.id = mapping[pos].id
        out.append(res)
    warnings = []
    if unnamed:
        what = ", ".join(f"{n} {k}" for k, n in sorted(unnamed.items()))
        warnings.append(f"{sum(unnamed.values())} test(s) the output does not name could not be matched "
                        f"to the sources ({what}); they are not listed")
    return out, hanging, warnings


def _debug_results(con: _Console, src: PhpSources, plan_by_id: dict[str, PhpTest]
                   ) -> tuple[list[_Res], str | None, list[str]]:
    """``--debug``: every test is named by a ``started`` line; the defect
    sections give the problems, and skipped/incomplete tests that no section
    names are found from ``markTestSkipped``/``markTestIncomplete`` calls in
    their bodies when that agrees with the summary counts."""
    section = {test_id(e.name): (k, e) for k, es in con.sections.items() for e in es}
    out: list[_Res] = []
    for name in con.debug_started:
        tid = test_id(name)
        kind, e = section.get(tid, ("passed", None))
        out.append(_entry_res(e, kind) if e is not None else _Res(id=tid, kind=kind))
    running = con.debug_started[-1] if con.debug_started and con.debug_started[-1] not in con.debug_ended else None
    if running is not None:
        out.pop()
    warnings: list[str] = []
    summary = con.summary or {}
    for kind, call in (("skipped", "markTestSkipped"), ("incomplete", "markTestIncomplete")):
        missing = summary.get(kind, 0) - sum(r.kind == kind for r in out)
        if missing <= 0:
            continue
        cands = [r for r in out if r.kind == "passed" and (t := plan_by_id.get(r.id)) is not None
                 and call in src.body_calls(t.cls, t.method)]
        if len(cands) == missing:
            for r in cands:
                r.kind = kind
        else:
            warnings.append(f"{missing} {kind} test(s) could not be told apart from passed ones")
    return out, running and test_id(running), warnings


def _junit_results(path: Path) -> tuple[list[_Res], list[str], bool]:
    """Results of a PHPUnit JUnit log, the reader's warnings and whether it was complete."""
    reader = JUnitReader(path)
    out: list[_Res] = []
    for case in reader:
        res = _case_res(case)
        if res.id in PSEUDO_NAMES and not case.attrs.get("class"):
            e = _Entry(name=res.id, kind=res.kind, body=(case.text or "").splitlines())
            _resolve_pseudo(e)
            if e.pseudo:
                continue
            res.id, res.kind = e.name, "error"
        out.append(res)
    return out, list(reader.warnings), reader.complete


def _case_res(case: JUnitCase) -> _Res:
    cls = case.attrs.get("class") or (case.classname or "").replace(".", "\\")
    tid = test_id(f"{cls}::{case.name}") if cls else case.name
    kind = {"failure": "failure", "error": "error", "skipped": "skipped"}.get(case.outcome, "passed")
    body = (case.text or "").splitlines()
    if body and test_id(body[0]) == tid:
        body = body[1:]
    e = _Entry(name=tid, kind=kind, body=body)
    if kind == "error" and ("Risky" in (case.type or "") or (e.message or "").startswith("Risky Test")):
        kind = "risky"
    if kind == "skipped" and "Incomplete" in (case.type or ""):
        kind = "incomplete"
    return _Res(id=tid, kind=kind, message=e.message or case.message, details=e.details, trace=e.trace,
                file=case.file, line=case.line, duration=case.time)


def _merge(primary: list[_Res], console: list[_Res]) -> list[_Res]:
    """Report results first, refined by the console: risky/incomplete are
    visible only there; tests a truncated report lost are added."""
    by_id = {r.id: r for r in primary}
    out = list(primary)
    for c in console:
        r = by_id.get(c.id)
        if r is None:
            by_id[c.id] = c
            out.append(c)
            continue
        if c.kind == "risky" and r.kind in ("error", "passed"):
            r.kind = "risky"
        elif c.kind == "incomplete" and r.kind == "skipped":
            r.kind = "incomplete"
        elif r.kind == "passed" and c.kind in ("warning", "deprecation", "notice"):
            r.kind = c.kind
        if not r.message and c.message:
            r.message = c.message
        if not r.details and c.details:
            r.details = c.details
    return out


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``Class::method`` (with ``with data set "x"``): the method as the
    suite the command runs defines it (``phpunit.xml``, paths, filters), else
    the method in the named class or the nearest parent that has it; a
    class-level entry (``Class``) is the class."""
    src = PhpSources(sources)
    try:
        plan, _ = plan_suite(src, _args(run.command))
    except Exception:  # the plan is a bonus: the classes below still place most tests
        plan = None
    plan_by_id = {t.id: t for t in plan or []}
    out: dict[str, Location] = {}
    for t in tests:
        if (p := plan_by_id.get(t.id)) is not None:
            out[t.id] = Location(p.cls.file, p.method.line)
        elif (hit := _definition(t.id, src)) is not None:
            out[t.id] = Location(*hit)
    return out


def _definition(tid: str, src: PhpSources) -> tuple[str, int] | None:
    """A test class, or a test method in its class or the nearest parent that has it."""
    if CLASS_NAME.match(tid) and (cls := src.by_name(tid)) is not None:
        return cls.file, cls.line
    m = TEST_NAME.match(tid)
    cls = src.by_name(m["cls"]) if m else None
    while m and cls is not None:
        for meth in cls.methods:
            if meth.name == m["method"]:
                return cls.file, meth.line
        cls = src.by_name(cls.parent) if cls.parent and cls.parent != cls.name else None
    return None


def _output_location(res: _Res, index: SourceIndex) -> tuple[str, int | None] | None:
    """Where the output places a test it does not name the definition of: the
    frame of its class's file in the trace (at the method's line when the file
    has it), else the trace's last frame."""
    m = TEST_NAME.match(res.id)
    if m:
        short = m["cls"].rsplit("\\", 1)[-1]
        for file, line in reversed(res.trace):
            if PurePosixPath(file).name == f"{short}.php":
                rel = index.relative(file)
                found = index.find_in(rel, re.compile(rf"function\s+{re.escape(m['method'])}\s*\(")) if rel else None
                return rel or file, found or line
    if res.trace:
        file, line = res.trace[-1]
        return index.relative(file) or file, line
    return None


def _junit_path(run: RunOutput, args: _Args, src: PhpSources) -> tuple[Path | None, str | None]:
    if args.junit:
        return run.resolve(args.junit), args.junit
    if src.index.root is not None:
        cfg = _config(args, src.index)
        if cfg.junit:
            p = src.index.root / cfg.junit
            if p.is_file():
                return p, cfg.junit
    return None, None


def parse(run: RunOutput) -> TestReport:
    """Parse a PHPUnit run (console, testdox, JUnit log, fatal errors)."""
    report = TestReport(framework=FRAMEWORK)
    con = scan_console(run)
    src = PhpSources(SourceIndex(run.sources_root))
    args = _args(run.command)
    try:
        plan, ordered = plan_suite(src, args)
    except Exception as exc:  # the plan is a bonus: never let it lose the run
        plan, ordered = None, False
        report.warnings.append(f"could not read the test suite from the sources ({type(exc).__name__}: {exc})")

    console, hanging = _console_results(con, src, plan, ordered, report)
    results = console
    jpath, jname = _junit_path(run, args, src)
    if jpath is not None and jpath.is_file():
        jres, jwarn, jdone = _junit_results(jpath)
        report.warnings += jwarn
        if jres:
            report.sources.insert(0, f"junit-xml:{jname}")
            results = _merge(jres, console)
            if jdone and len(results) > len(jres):
                report.warnings.append("the console names tests the JUnit log does not have")
    elif jpath is not None:
        report.warnings.append(f"JUnit log {jname} does not exist; used the console output")

    hanging = _fatal(con, src.index, results, hanging, report)
    if run.killed_by_timeout:
        report.timed_out = True
        if hanging is not None and hanging not in {r.id for r in results}:
            results.append(_Res(id=hanging, kind="failure", message="killed by timeout while this test ran",
                                timed_out=True))
        elif hanging is None:
            report.warnings.append("the run was killed by timeout; the running test could not be named")

    seen: set[str] = set()
    for r in results:
        if r.id in seen:
            continue
        seen.add(r.id)
        status, native = KIND_STATUS.get(r.kind, (Status.PASSED, None))
        file, line = (src.index.relative(r.file) or r.file, r.line) if r.file else (None, None)
        if file is None and (where := _output_location(r, src.index)) is not None:
            report.output_locations[r.id] = where
        # --enforce-time-limit: PHPUnit reports the test as risky
        timed_out = r.timed_out or (r.kind == "risky" and bool(TIME_LIMIT.search(r.message or "")))
        report.tests.append(TestResult(
            id=r.id, status=status, native_status=native, file=file, line=line,
            message=r.message, details=r.details, duration_s=r.duration, timed_out=timed_out,
            suite=r.id.split("::", 1)[0] if "::" in r.id else None,
        ))
        report.timed_out = report.timed_out or timed_out
    _cross_check(report, con)
    report.warnings += [f"PHPUnit: {w}" for w in con.runner_warnings]
    if not report.tests:
        report.per_test = con.summary is not None
        if con.summary is None:
            report.warnings.append("no PHPUnit results found in the output")
        report.output_tail = run.tail()
    return report


def _console_results(con: _Console, src: PhpSources, plan: list[PhpTest] | None, ordered: bool,
                     report: TestReport) -> tuple[list[_Res], str | None]:
    """Results from the console in whichever format it has, plus the id of
    the test that was running when an unfinished run ended."""
    complete = con.summary is not None
    plan_by_id = {t.id: t for t in plan or []}
    console: list[_Res] = []
    hanging: str | None = None
    if con.testdox:
        labels = _Labels(src)
        for t in plan or []:
            labels.add(t.id, t.cls.name, t.method.name, t.data_set, t.method.testdox, t.cls.testdox)
        console, warns = _testdox_results(con, labels)
        report.sources.append("console:testdox")
        if not complete and plan and ordered:
            # the test after the last one printed was running
            printed = {r.id for r in console}
            done = [i for i, t in enumerate(plan) if t.id in printed]
            nxt = max(done) + 1 if done else 0
            if nxt < len(plan) and plan[nxt].data_set != "?":
                hanging = plan[nxt].id
    elif con.debug_started:
        console, running, warns = _debug_results(con, src, plan_by_id)
        report.sources.append("console:debug")
        hanging = running if not complete else None
    elif con.chars:
        console, next_test, warns = _progress_results(con, plan, ordered, complete)
        report.sources.append("console")
        hanging = next_test.id if next_test is not None else None
    else:
        warns = []
    report.warnings += warns
    # tests the defect sections name but the listing above did not have
    seen = {r.id: r for r in console}
    for kind, entries in con.sections.items():
        for e in entries:
            if e.pseudo:
                continue
            r = _entry_res(e, kind)
            if r.id not in seen:
                seen[r.id] = r
                console.append(r)
            elif not seen[r.id].message:
                seen[r.id].message, seen[r.id].details, seen[r.id].trace = r.message, r.details, r.trace
    if con.sections and not report.sources:
        report.sources.append("console")
    for name, kind in con.issues.items():
        if (r := seen.get(test_id(name))) is not None and r.kind == "passed":
            r.kind = kind
    return console, hanging


def _fatal(con: _Console, index: SourceIndex, results: list[_Res], hanging: str | None,
           report: TestReport) -> str | None:
    """A PHP fatal error in an unfinished run: while loading the test files
    (an errored entry keyed by the file, ``build_error``) or while a test ran
    (that test errored). Returns the still-unexplained running test."""
    if con.fatal is None or con.summary is not None:
        return hanging
    file, msg, line, details = con.fatal
    rel = index.relative(file) or file
    if not results and not con.chars:
        results.append(_Res(id=rel, kind="error", message=msg, details=details or msg, file=rel, line=line))
        report.build_error = True
    elif hanging is not None:
        results.append(_Res(id=hanging, kind="error", message=msg, details=details or msg))
        hanging = None
    else:
        results.append(_Res(id=rel, kind="error", message=msg, details=details or msg, file=rel, line=line))
    if "console" not in report.sources:
        report.sources.append("console")
    return hanging


def _cross_check(report: TestReport, con: _Console) -> None:
    """Compare with PHPUnit's own summary line."""
    if con.summary is None:
        return
    n = con.summary.get("tests")
    if n is not None:
        # PHPUnit counts its stand-ins for suite problems as tests
        n -= sum(e.pseudo for es in con.sections.values() for e in es) or sum(e.pseudo for e in con.testdox)
    if n is not None:
        report.summary_counts["total"] = n
    if n is None or n == len(report.tests):  # otherwise the missing tests explain the rest
        report.summary_counts.update(errored=con.summary.get("errors", 0), failed=con.summary.get("failures", 0))


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

SELECT_VALUE_OPTIONS = {
    "--filter", "--log-junit", "-c", "--configuration", "--bootstrap", "--testsuite", "--group", "--exclude-group",
    "--printer", "--cache-result-file", "--coverage-clover", "--coverage-html", "--coverage-text", "--testdox-html",
    "--testdox-text", "--include-path", "-d", "--test-suffix", "--log-teamcity", "--whitelist", "--coverage-filter",
}
SELECT_OPTIONS = {"--filter"}
DEFAULT_INVOCATION = "phpunit"
REPORT_OPTIONS = " --log-junit {reports}/phpunit.xml"


def runner_end(words: list[str]) -> int | None:
    return next((i + 1 for i, w in enumerate(words) if bin_name(w) == "phpunit"), None)


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    parts = []
    for t in tests:
        method = t.id.split("::")[-1].split(" with data set")[0]
        cls = t.id.split("::")[0].rsplit("\\", 1)[-1]
        parts.append(re.escape(cls) + "::" + re.escape(method))
    body = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
    # Its paths say where the tests are, not which: they stay.
    return [*inv.positionals, "--filter", shlex.quote("/" + body + "( with data set .*)?$/")]


def suite_command(root: Path) -> tuple[str, list[str]]:
    return ("vendor/bin/phpunit" if (root / "vendor/bin/phpunit").exists() else "phpunit"), []
