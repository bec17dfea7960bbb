"""JUnit Platform console launcher (``junit-platform-console-standalone``).

Ids are ``<class>#<name>`` exactly as the launcher's legacy XML report names
tests: ``total()``, ``discountTable(int, int, int)[2]``, nested classes
``Outer$Inner``, JUnit 4 tests run by the Vintage engine without ``()``.

Inputs, best first:

* the legacy XML reports of ``--reports-dir DIR`` (``TEST-junit-jupiter.xml``,
  ``TEST-junit-vintage.xml``...), read with ``JUnitReader``;
* the console output in every ``--details`` mode: ``tree`` (default, printed
  at the end, display names only), ``flat`` and ``verbose`` (unique ids),
  ``testfeed`` (1.10+), and the ``Failures (N):`` section that ``tree``,
  ``summary`` and ``none`` print (sources of every failure), coloured or not;
* ``javac`` errors when a ``javac ... && java -jar ...`` chain fails to compile.

Status rules (shared/corpus/README.md): the console has no error category,
so exceptions and assertion failures are both ``failed`` (the XML's
``<error>`` is not used for the status); aborted (assumption) and disabled
tests are ``skipped``; tests that never start because their class container
failed (``@BeforeAll``/``@BeforeClass``) are ``errored``; timeouts are
``failed`` with ``timed_out``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from .command import SEGMENT_SPLIT, command_words
from .junit_xml import JUnitCase, JUnitReader
from .locate import Location, SourceIndex
from .models import Status, TestReport, TestResult
from .run_output import RunOutput, strip_ansi
from .source.java import (
    CompileErrors,
    JavaSources,
    exception_head,
    exception_type,
    is_abort,
    is_timeout,
    locate_methods,
    simple_params,
    xml_failure,
)
from .surefire import class_and_method

FRAMEWORK = "junit-console"
COMMAND_RE: list[re.Pattern[str]] = [
    re.compile(r"\bjunit-platform-console-standalone[\w.-]*\.jar\b"),
    re.compile(r"\borg\.junit\.platform\.console\.ConsoleLauncher\b"),
    re.compile(r"^(?:\S*/)?junit(?:-platform-console)?\s+(?:execute|discover)\b"),
]
OUTPUT_RE: list[re.Pattern[str]] = [
    re.compile(r"^\[\s*\d+ tests (?:found|successful|failed)\s*\]$", re.M),
    re.compile(r"^Test run finished after \d+ ms$", re.M),
    re.compile(r"Thanks for using JUnit!"),
    re.compile(r"^(?:Started|Finished|Skipped):\s+.* \(\[engine:", re.M),
    re.compile(r"^(?:[├└]─|\+--|'--) JUnit (?:Jupiter|Vintage|Platform Suite)\b", re.M),
    re.compile(r"(?:Method|Class)Source \[className = '"),
]

REPORTS_OPT = "--reports-dir"
MAX_LINES = 200  # kept per exception message / stack trace
KILLED_MESSAGE = "still running when the run was killed by timeout"
ENGINE_NAMES = {"JUnit Jupiter": "junit-jupiter", "JUnit Vintage": "junit-vintage"}
CONTAINER_SEGMENTS = {"engine", "class", "nested-class", "runner", "suite"}

# Summary table: "[        20 tests found           ]".
SUMMARY_RE = re.compile(r"^\[\s*(\d+) (containers|tests) (found|skipped|started|aborted|successful|failed)\s*\]$")
FAILURES_RE = re.compile(r"^Failures \((\d+)\):$")
RUN_FINISHED_RE = re.compile(r"^Test run finished after \d+ ms$")
# Failures section: "  JUnit Jupiter:OrderTest:total()", "    MethodSource [...]", "    => java.lang.X: msg".
FAIL_HEADER_RE = re.compile(r"^  (\S.*)$")
FAIL_SOURCE_RE = re.compile(r"^    (\w+Source) \[(.*)\]$")
FAIL_EXC_RE = re.compile(r"^    => (.*)$")
SOURCE_ATTR_RE = re.compile(r"(\w+) = '([^']*)'")
# Flat: "Finished:    total() ([engine:junit-jupiter]/[class:x.Y]/[method:total()])".
FLAT_RE = re.compile(r"^(?P<kind>Started|Finished|Skipped|Registered|Reported):\s+(?P<rest>.*\(\[engine:.*\]\))\s*$")
FLAT_DETAIL_RE = re.compile(r"^ {13}=> (?P<what>Exception|Reason|Reported values): (?P<text>.*)$")
FLAT_CONT = " " * 13
SGR_RE = re.compile(r"^\x1b\[(\d+)(?:;\d+)*m")
COLOR_STATUS = {"32": "SUCCESSFUL", "33": "ABORTED", "31": "FAILED", "35": "SKIPPED"}
# Tree / verbose entries: "│  ├─ OrderTest ✔" (unicode) or "| +-- OrderTest [OK]" (ascii theme).
ENTRY_RE = re.compile(r"^(?P<ind>(?:│  |   )*)(?:├─|└─) (?P<rest>.*)$")
ASCII_ENTRY_RE = re.compile(r"^(?P<ind>(?:\| |  )*)(?:\+--|'--) (?P<rest>.*)$")
ICON_RE = re.compile(r" (?P<icon>✔|✘|↷|■|\[OK\]|\[X\]|\[A\]|\[S\])(?: (?P<msg>.*))?$")
ICON_STATUS = {"✔": "SUCCESSFUL", "[OK]": "SUCCESSFUL", "✘": "FAILED", "[X]": "FAILED",
               "■": "ABORTED", "[A]": "ABORTED", "↷": "SKIPPED", "[S]": "SKIPPED"}
TREE_ROOTS = {"╷", "."}
REPORT_ENTRY_RE = re.compile(r"^[\s│|]*\d{4}-\d\d-\d\dT\d\d:\d\d")
# Verbose details: "│  │     caught: java.lang.X: msg".
VERBOSE_DETAIL_RE = re.compile(
    r"^[│|\s]*\s(?P<key>tags|uniqueId|parent|source|caught|duration|status|reason|reports): ?(?P<val>.*)$"
)
VERBOSE_START = "Test plan execution started."
VERBOSE_FINISHED_RE = re.compile(r"^(?P<name>.*) finished after \d+ ms\.$")
VERBOSE_CONT_RE = re.compile(r"^[│| \t]{13,}(?P<text>\S.*)$")
STACK_WORDS = ("at ", "Caused by:", "Suppressed:", "... ", "[...]")
STATUS_WORD_RE = re.compile(r"\b(SUCCESSFUL|FAILED|ABORTED|SKIPPED)\b")
# Test feed (1.10+): "JUnit Jupiter > OrderTest > total() :: FAILED".
FEED_RE = re.compile(r"^(?P<path>.+?) :: (?P<st>STARTED|SUCCESSFUL|FAILED|ABORTED|SKIPPED)$")
METHODISH_RE = re.compile(r"^[A-Za-z_$][\w$]*\(.*\)$")
UID_SEGMENT_RE = re.compile(r"\[([^:\[\]]+):([^\[\]]*)\]")
VINTAGE_TEST_RE = re.compile(r"^(?P<name>.*)\((?P<cls>[\w.$]+)\)$")
JUPITER_BEFORE_ALL_RE = re.compile(r"ClassBasedTestDescriptor\.(?:before|invokeBeforeAll)")


@dataclass
class _Event:
    """A test or container the console reported (flat, verbose, test feed)."""

    uid: str | None
    path: tuple[str, ...] = ()
    status: str | None = None
    head: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    duration: float | None = None
    in_stack: bool = False


@dataclass
class _TreeNode:
    depth: int
    caption: str
    status: str | None
    message: list[str]
    children: list[_TreeNode] = field(default_factory=list)
    parent: _TreeNode | None = None

    def path(self) -> tuple[str, ...]:
        out: list[str] = []
        node: _TreeNode | None = self
        while node is not None and node.depth >= 0:
            out.append(node.caption)
            node = node.parent
        return tuple(reversed(out))


@dataclass
class _Failure:
    """One entry of the ``Failures (N):`` section."""

    header: str
    source: str | None = None
    klass: str | None = None
    method: str | None = None
    params: str = ""
    head: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    in_stack: bool = False
    used: bool = False  # matched to a test or container the console printed


@dataclass
class _Test:
    """A test resolved from the console."""

    klass: str
    name: str
    status: Status
    native: str | None = None
    message: str | None = None
    details: str | None = None
    duration: float | None = None
    timed_out: bool = False

    @property
    def id(self) -> str:
        return f"{self.klass}#{self.name}"


@dataclass
class _Container:
    """A class container that failed or was skipped, with what it said."""

    klass: str | None
    status: str
    message: str | None
    details: str | None
    childless: bool
    vintage: bool = False


class _Console:
    """Streaming reader of the launcher's console output (any --details mode)."""

    def __init__(self, compile_errors: CompileErrors) -> None:
        self.compile = compile_errors
        self.summary: dict[str, int] = {}
        self.failures: list[_Failure] = []
        self.events: dict[str, _Event] = {}  # flat / verbose, by unique id
        self.feed: dict[tuple[str, ...], _Event] = {}  # test feed, by display path
        self.tree_root = _TreeNode(-1, "", None, [])
        # verbose: failed containers (no unique id printed) and whether children ran before
        self.verbose_containers: list[tuple[tuple[str, ...], _Event, bool]] = []
        self.path_uids: dict[tuple[str, ...], str] = {}
        self.seen_junit = False
        self.mode: str | None = None
        self._section: str | None = None
        self._last: object | None = None
        self._tree_stack: list[_TreeNode] = []
        self._tree_active = False
        self._vstack: list[str] = []  # verbose: open container display names
        self._vfilled: list[bool] = []  # verbose: whether each open container had children
        self._vpending: str | None = None  # verbose: entry not yet known as test or container
        self._vtest: _Event | None = None
        self._vdetail: str | None = None

    # -- dispatch -------------------------------------------------------------

    def feed_line(self, raw: str) -> None:
        line = strip_ansi(raw)
        if self.compile.feed(line):
            return
        if FAILURES_RE.match(line):
            self.seen_junit = True
            self._section = "failures"
            self._tree_active = False
            return
        m = SUMMARY_RE.match(line)
        if m:
            self.seen_junit = True
            self.summary[f"{m.group(2)} {m.group(3)}"] = int(m.group(1))
            self._section = None
            return
        if RUN_FINISHED_RE.match(line):
            self.seen_junit = True
            self._section = None
            self._tree_active = False
            return
        if self._section == "failures":
            self._failure_line(line)
            return
        if self.mode in (None, "flat") and self._flat_line(raw, line):
            return
        if line.startswith(VERBOSE_START):
            self.mode = "verbose"
            self.seen_junit = True
            return
        if self.mode == "verbose":
            self._verbose_line(line)
            return
        if self.mode in (None, "feed") and self._feed_line(line):
            return
        self._tree_line(line)

    # -- Failures (N): ----------------------------------------------------------

    def _failure_line(self, line: str) -> None:
        cur = self.failures[-1] if self.failures else None
        if cur is not None and cur.source is None and not cur.head:
            m = FAIL_SOURCE_RE.match(line)
            if m:
                cur.source = m.group(1)
                attrs = dict(SOURCE_ATTR_RE.findall(m.group(2)))
                cur.klass = attrs.get("className")
                cur.method = attrs.get("methodName")
                cur.params = attrs.get("methodParameterTypes", "")
                return
        m = FAIL_EXC_RE.match(line)
        if cur is not None and not cur.head and m:
            _keep(cur.head, m.group(1))
            return
        if cur is not None and cur.head and not cur.in_stack:
            if line.startswith("     ") and line.strip():
                cur.in_stack = True
                _keep(cur.details, line.strip())
            elif not FAIL_HEADER_RE.match(line) or line.startswith("   "):
                _keep(cur.head, line)  # a multi-line exception message goes on unindented
                return
        elif cur is not None and cur.in_stack and line.startswith("     "):
            _keep(cur.details, line.strip())
            return
        m = FAIL_HEADER_RE.match(line)
        if m and not line.startswith("   "):
            self.failures.append(_Failure(header=m.group(1)))

    # -- flat -------------------------------------------------------------------

    def _flat_line(self, raw: str, line: str) -> bool:
        m = FLAT_RE.match(line)
        if m:
            self.mode = "flat"
            self.seen_junit = True
            rest = m.group("rest")
            cut = rest.rfind(" ([engine:")
            uid = rest[cut + 2:-1]
            ev = self.events.get(uid)
            if ev is None:
                ev = self.events[uid] = _Event(uid)
            kind = m.group("kind")
            if kind == "Finished":
                c = SGR_RE.match(raw)
                ev.status = COLOR_STATUS.get(c.group(1), "") if c else ""
            elif kind == "Skipped":
                ev.status = "SKIPPED"
            if kind in ("Finished", "Skipped"):
                self._last = ev
            else:
                self._last = None
            return True
        if self.mode != "flat":
            return False
        ev = self._last if isinstance(self._last, _Event) else None
        d = FLAT_DETAIL_RE.match(line)
        if d and ev is not None:
            if d.group("what") != "Reported values":
                ev.head = [d.group("text")]
                ev.in_stack = False
            return True
        if ev is not None and line.startswith(FLAT_CONT):
            text = line[len(FLAT_CONT):]
            if ev.in_stack or text.startswith(("\t", " ")) or text.lstrip().startswith("at "):
                ev.in_stack = True
                _keep(ev.details, text.strip())
            else:
                _keep(ev.head, text)
            return True
        if line.startswith(("Test execution started.", "Test execution finished.")):
            self._last = None
            return True
        return False

    # -- verbose ----------------------------------------------------------------

    def _verbose_line(self, line: str) -> None:
        m = ENTRY_RE.match(line) or ASCII_ENTRY_RE.match(line)
        if m:
            self._vdetail = None
            rest = m.group("rest")
            if rest.endswith(" dynamically registered"):
                return
            fin = VERBOSE_FINISHED_RE.match(rest)
            if fin and ("└─" in line or "'--" in line):
                self._resolve_pending_container()
                if self._vstack:
                    self._vstack.pop()
                    self._vfilled.pop()
                self._vtest = None
                return
            self._resolve_pending_container()
            self._vpending = rest
            self._vtest = None
            return
        d = VERBOSE_DETAIL_RE.match(line)
        if d:
            key, val = d.group("key"), d.group("val")
            self._vdetail = key
            if key in ("tags", "uniqueId") and self._vpending is not None:
                name, self._vpending = self._vpending, None
                if self._vfilled:
                    self._vfilled[-1] = True
                self._vtest = _Event(None, path=(*self._vstack, name))
            if key == "uniqueId" and self._vtest is not None:
                self._vtest.uid = val
                self.events[val] = self._vtest
            elif key == "parent" and val.startswith("[engine:") and self._vstack:
                self.path_uids.setdefault(tuple(self._vstack), val)
            elif key == "caught":
                target = self._vtest
                if target is None or target.status is not None:
                    self._resolve_pending_container()
                    target = _Event(None, path=tuple(self._vstack), status="FAILED")
                    filled = bool(self._vfilled) and self._vfilled[-1]
                    self.verbose_containers.append((tuple(self._vstack), target, filled))
                target.head = [val]
                target.in_stack = False
                self._vdetail = "caught"
                self._last = target
            elif key == "reason" and self._vtest is not None:
                self._vtest.head = [val]
            elif key == "duration" and self._vtest is not None:
                dm = re.match(r"(\d+) ms", val)
                if dm:
                    self._vtest.duration = int(dm.group(1)) / 1000
            elif key == "status" and self._vtest is not None:
                sm = STATUS_WORD_RE.search(val)
                self._vtest.status = sm.group(1) if sm else None
            return
        c = VERBOSE_CONT_RE.match(line)
        if c and self._vdetail == "caught" and isinstance(self._last, _Event):
            ev = self._last
            text = c.group("text")
            if ev.in_stack or text.startswith(STACK_WORDS):
                ev.in_stack = True
                _keep(ev.details, text)
            else:
                _keep(ev.head, text)

    def _resolve_pending_container(self) -> None:
        if self._vpending is not None:
            if self._vfilled:
                self._vfilled[-1] = True
            self._vstack.append(self._vpending)
            self._vfilled.append(False)
            self._vpending = None

    # -- test feed --------------------------------------------------------------

    def _feed_line(self, line: str) -> bool:
        m = FEED_RE.match(line)
        if m:
            self.mode = "feed"
            self.seen_junit = True
            path = tuple(m.group("path").split(" > "))
            ev = self.feed.setdefault(path, _Event(None, path=path))
            if m.group("st") != "STARTED":
                ev.status = m.group("st")
                self._last = ev
            return True
        if self.mode == "feed" and line.startswith("\t") and isinstance(self._last, _Event):
            ev = self._last
            text = line[1:]
            if not ev.head:
                _keep(ev.head, text[len("Reason: "):] if text.startswith("Reason: ") else text)
            elif ev.in_stack or text.startswith("\t") or text.lstrip().startswith(STACK_WORDS):
                ev.in_stack = True
                _keep(ev.details, text.strip())
            else:
                _keep(ev.head, text)  # a multi-line exception message
            return True
        return False

    # -- tree -------------------------------------------------------------------

    def _tree_line(self, line: str) -> None:
        if line.strip() in TREE_ROOTS and not self._tree_active:
            self._tree_active = True
            self._tree_stack = []
            self.mode = self.mode or "tree"
            return
        if not self._tree_active:
            return
        m = ENTRY_RE.match(line)
        unit = 3
        if m is None:
            m = ASCII_ENTRY_RE.match(line)
            unit = 2
        if m is None:
            if not line.strip():
                self._tree_active = False
                return
            last = self._tree_stack[-1] if self._tree_stack else None
            if last is not None and last.message and not REPORT_ENTRY_RE.match(line):
                _keep(last.message, re.sub(r"^[│|]?(?:\s*[│|](?=\s))*\s*", "", line))
            return
        self.seen_junit = True
        depth = len(m.group("ind")) // unit
        rest = m.group("rest")
        status, msg = None, []
        im = ICON_RE.search(rest)
        if im is not None:
            # The first icon after the caption; a message may follow it.
            first = min(
                (i for i in (rest.find(" " + k) for k in ICON_STATUS) if i >= 0),
                default=im.start(),
            )
            tail = rest[first + 1:]
            icon = next(k for k in ICON_STATUS if tail.startswith(k))
            status = ICON_STATUS[icon]
            after = tail[len(icon):].strip()
            msg = [after] if after else []
            rest = re.sub(r" \d+ ms$", "", rest[:first])
        while self._tree_stack and self._tree_stack[-1].depth >= depth:
            self._tree_stack.pop()
        parent = self._tree_stack[-1] if self._tree_stack else self.tree_root
        node = _TreeNode(depth, rest, status, msg, parent=parent)
        parent.children.append(node)
        self._tree_stack.append(node)


def _keep(lines: list[str], text: str) -> None:
    """Append a line of an exception or message, up to a bound: a huge stack
    trace must not make memory grow with the size of the output."""
    if len(lines) < MAX_LINES:
        lines.append(text)


# -- unique ids -----------------------------------------------------------------


def _legacy_method(value: str) -> str:
    """``withInfo(org.junit.jupiter.api.TestInfo)`` -> ``withInfo(TestInfo)``."""
    m = re.match(r"^([^(]*)\((.*)\)$", value)
    if not m:
        return value
    return f"{m.group(1)}({simple_params(m.group(2))})"


def _segments(uid: str) -> list[tuple[str, str]]:
    return [(t, unquote(v)) for t, v in UID_SEGMENT_RE.findall(uid)]


def legacy_from_uid(uid: str) -> tuple[str | None, str | None, str]:
    """(class, legacy test name, engine) for a unique id, as the legacy XML
    report names the test."""
    klass: str | None = None
    name: str | None = None
    engine = ""
    for typ, val in _segments(uid):
        if typ == "engine":
            engine, klass, name = val, None, None
        elif typ in ("class", "runner"):
            klass, name = val, None
        elif typ == "nested-class":
            klass, name = (f"{klass}${val}" if klass else val), None
        elif typ in ("method", "test-template", "test-factory"):
            name = _legacy_method(val)
        elif typ in ("test-template-invocation", "dynamic-test", "dynamic-container"):
            name = f"{name or ''}[{val.lstrip('#')}]"
        elif typ == "test":
            m = VINTAGE_TEST_RE.match(val)
            if m:
                name, klass = m.group("name"), m.group("cls")
            else:
                name = val
        else:
            name = val
    return klass, name, engine


# -- resolution -------------------------------------------------------------------


def _native(status: str) -> str | None:
    return {"ABORTED": "aborted (assumption failed)", "SKIPPED": "skipped"}.get(status)


def _status(word: str) -> Status:
    return {"SUCCESSFUL": Status.PASSED, "FAILED": Status.FAILED}.get(word, Status.SKIPPED)


class _Resolver:
    """Turns what the console printed into tests with legacy-XML ids."""

    def __init__(self, console: _Console, sources: JavaSources) -> None:
        self.c = console
        self.src = sources
        self.tests: dict[str, _Test] = {}
        self.containers: list[_Container] = []
        self.hanging: list[_Test] = []
        self.warnings: list[str] = []
        self.failures_by_header = {f.header: f for f in console.failures}

    def late_failure(self, container: str, message: str | None) -> None:
        """A container that failed after its tests ran (@AfterAll): the tests keep
        their own results, the failure is reported as a warning."""
        self.warnings.append(f"container {container} failed after its tests ran: {message}")

    def add(self, t: _Test) -> None:
        if t.name and t.id not in self.tests:
            self.tests[t.id] = t

    def run(self) -> None:
        self._from_events()
        for path, ev, filled in self.c.verbose_containers:
            message = "\n".join(ev.head) or None
            if filled:
                self.late_failure(path[-1], message)
            elif METHODISH_RE.match(path[-1]) and len(path) > 2:
                # A parameterized or factory method that failed before any invocation.
                klass = self._class_for_path(path[:-1])
                if klass:
                    self.add(self._test(klass, path[-1], "FAILED", ev.head, ev.details))
            else:
                self.containers.append(_Container(self._class_for_path(path), "FAILED", message,
                                                  "\n".join(ev.details) or None, True,
                                                  vintage=bool(path) and path[0] == "JUnit Vintage"))
        self._from_tree(self.c.tree_root, None, None, False)
        self._from_feed()
        # Failures not matched to anything printed (summary/none modes).
        for f in self.c.failures:
            if f.used or not f.klass:
                continue
            vintage = f.header.startswith("JUnit Vintage:")
            if f.source == "MethodSource" and f.method:
                legacy = f"{f.method}({simple_params(f.params)})"
                parent = f.header.rsplit(":", 1)[0]
                if not vintage and parent.endswith(":" + legacy):
                    continue  # an invocation of a parameterized test: its index is not printed here
                name = f.header.rsplit(":", 1)[-1] if vintage else legacy
                self.add(self._test(f.klass, name, "FAILED", f.head, f.details))
            elif f.source == "ClassSource":
                self.containers.append(_Container(f.klass, "FAILED", "\n".join(f.head) or None,
                                                  "\n".join(f.details) or None, True, vintage=vintage))

    def _test(self, klass: str, name: str, status: str, head: list[str], details: list[str],
              duration: float | None = None) -> _Test:
        message = "\n".join(head).strip() or None
        if status == "" or status is None:
            status = "ABORTED" if is_abort(message) else ("FAILED" if message else "SUCCESSFUL")
        t = _Test(klass, name, _status(status), native=_native(status), message=message,
                  details="\n".join(details) or None, duration=duration)
        if t.status == Status.FAILED:
            t.timed_out = is_timeout(exception_type(message), message)
        return t

    # flat / verbose: exact ids from unique ids
    def _from_events(self) -> None:
        uids = list(self.c.events)
        prefixes = set()
        for uid in uids:
            parts = uid.split("/")
            for i in range(1, len(parts)):
                prefixes.add("/".join(parts[:i]))
        for uid, ev in self.c.events.items():
            segs = _segments(uid)
            if not segs:
                continue
            klass, name, engine = legacy_from_uid(uid)
            last_type = segs[-1][0]
            childless = uid not in prefixes
            if last_type in CONTAINER_SEGMENTS or not childless:
                if last_type in CONTAINER_SEGMENTS - {"engine"}:
                    status = ev.status
                    if not status and ev.head:  # flat without colours: the exception says it
                        status = "ABORTED" if is_abort(ev.head[0]) else "FAILED"
                    if status == "FAILED" and not childless:
                        self.late_failure(klass or uid, "\n".join(ev.head) or None)
                    elif status in ("FAILED", "SKIPPED", "ABORTED"):
                        self.containers.append(_Container(klass, status, "\n".join(ev.head) or None,
                                                          "\n".join(ev.details) or None, childless,
                                                          vintage=engine == "junit-vintage"))
                continue
            if klass is None or name is None:
                continue
            if ev.status is None:
                t = _Test(klass, name, Status.FAILED, native="running when killed", timed_out=True,
                          message=KILLED_MESSAGE)
                self.hanging.append(t)
                continue
            self.add(self._test(klass, name, ev.status, ev.head, ev.details, ev.duration))

    # tree: display names only, resolved with the Failures section and the sources
    def _from_tree(self, node: _TreeNode, klass: str | None, method: str | None, vintage: bool) -> None:
        for idx, child in enumerate(node.children, start=1):
            cap = child.caption
            path = child.path()
            failure = self.failures_by_header.get(":".join(path))
            if failure is not None:
                failure.used = True
            if cap in ENGINE_NAMES and child.children:
                # An engine, at the root or inside a @Suite: its classes start afresh.
                self._from_tree(child, None, None, cap == "JUnit Vintage")
                continue
            if child.children:
                if child.status == "FAILED" and method is None:
                    self.late_failure(cap, "\n".join(failure.head if failure else child.message) or None)
                if method is not None:
                    self._from_tree(child, klass, f"{method}[{idx}]", vintage)
                elif vintage:
                    self._from_tree(child, klass or self._class_of(child, None, failure), None, True)
                elif node.depth < 0:
                    self._from_tree(child, None, None, vintage)  # an engine we do not know
                elif klass is not None and self._is_method_container(child, klass):
                    self._from_tree(child, klass, self._method_name(child, klass), False)
                else:
                    self._from_tree(child, self._class_of(child, klass, failure), None, False)
                continue
            if child.status is None:
                continue  # listed, not executed
            head = failure.head if failure and failure.head else child.message
            details = failure.details if failure else []
            if method is not None:
                self.add(self._test(klass or "", f"{method}[{idx}]", child.status, head, details))
                continue
            if failure is not None and failure.source == "ClassSource" or klass is None and node.depth >= 0:
                self.containers.append(_Container(
                    self._class_of(child, klass, failure), child.status, "\n".join(head) or None,
                    "\n".join(details) or None, True, vintage))
                continue
            if klass is None:
                continue
            if vintage:
                self.add(self._test(klass, cap, child.status, head, details))
                continue
            if failure is not None and failure.source == "MethodSource" and failure.method:
                name = f"{failure.method}({simple_params(failure.params)})"
                self.add(self._test(failure.klass or klass, name, child.status, head, details))
            elif METHODISH_RE.match(cap):
                self.add(self._test(klass, cap, child.status, head, details))
            elif child.status in ("FAILED", "SKIPPED", "ABORTED") and self.src.resolve_class(cap, klass):
                self.containers.append(_Container(self.src.resolve_class(cap, klass), child.status,
                                                  "\n".join(head) or None, None, True))
            else:
                found = self.src.method_for_display(klass, cap)
                self.add(self._test(klass, found[1] if found else cap, child.status, head, details))

    def _is_method_container(self, node: _TreeNode, klass: str) -> bool:
        if METHODISH_RE.match(node.caption):
            return True
        if self.src.resolve_class(node.caption, klass):
            return False
        for leaf in node.children:
            f = self.failures_by_header.get(":".join(leaf.path()))
            if f is not None and f.source == "MethodSource":
                # Invocations of a method of this class, or tests of a nested class.
                return f.klass == klass
        return self.src.method_for_display(klass, node.caption) is not None

    def _method_name(self, node: _TreeNode, klass: str) -> str:
        if METHODISH_RE.match(node.caption):
            return node.caption
        for leaf in node.children:
            f = self.failures_by_header.get(":".join(leaf.path()))
            if f is not None and f.method:
                return f"{f.method}({simple_params(f.params)})"
        found = self.src.method_for_display(klass, node.caption)
        return found[1] if found else node.caption

    def _class_of(self, node: _TreeNode, outer: str | None, failure: _Failure | None) -> str | None:
        if failure is not None and failure.source == "ClassSource" and failure.klass:
            return failure.klass
        # A failing test below names its class in its MethodSource.
        stack = list(node.children)
        while stack:
            n = stack.pop()
            stack.extend(n.children)
            f = self.failures_by_header.get(":".join(n.path()))
            if f is not None and f.klass and n.parent is node and f.source == "MethodSource":
                return f.klass
            if f is not None and f.klass and f.source == "MethodSource" and n.parent is not node \
                    and n.parent is not None and not self._looks_like_class(n.parent):
                return f.klass
        return self._class_for_path(node.path(), outer)

    def _looks_like_class(self, node: _TreeNode) -> bool:
        return not METHODISH_RE.match(node.caption) and not node.caption.startswith("[")

    def _class_for_path(self, path: tuple[str, ...], outer: str | None = None) -> str | None:
        uid = self.c.path_uids.get(path)
        if uid:
            klass, _, _ = legacy_from_uid(uid)
            if klass:
                return klass
        if not path:
            return None
        if outer is None and len(path) > 2:
            outer = self._class_for_path(path[:-1])
        return self.src.resolve_class(path[-1], outer if len(path) > 2 else None) or (
            path[-1] if re.fullmatch(r"[\w$.]+", path[-1]) else None)

    # test feed: display paths, resolved like the tree
    def _from_feed(self) -> None:
        if not self.c.feed:
            return
        root = _TreeNode(-1, "", None, [])
        index: dict[tuple[str, ...], _TreeNode] = {}
        for path, ev in self.c.feed.items():
            parent = root
            for i in range(1, len(path) + 1):
                sub = path[:i]
                node = index.get(sub)
                if node is None:
                    node = _TreeNode(i - 1, path[i - 1], None, [], parent=parent)
                    parent.children.append(node)
                    index[sub] = node
                parent = node
            parent.status = ev.status
            parent.message = ev.head
            if ev.status is None:
                parent.status = None
                self._feed_hanging(path)
        self._from_tree(root, None, None, False)

    def _feed_hanging(self, path: tuple[str, ...]) -> None:
        if len(path) >= 3 and METHODISH_RE.match(path[-1]):
            klass = self._class_for_path(path[:-1])
            if klass:
                self.hanging.append(_Test(klass, path[-1], Status.FAILED, native="running when killed",
                                          timed_out=True, message=KILLED_MESSAGE))


# -- XML --------------------------------------------------------------------------


def _reports_dir(run: RunOutput) -> Path | None:
    """The ``--reports-dir`` the launcher command names, resolved against its cwd."""
    for seg in reversed(SEGMENT_SPLIT.split(run.command.strip())):
        if not any(p.search(seg) for p in COMMAND_RE):
            continue
        words = command_words(seg)
        for i, w in enumerate(words):
            if w == REPORTS_OPT and i + 1 < len(words):
                return run.resolve(words[i + 1])
            if w.startswith(REPORTS_OPT + "="):
                return run.resolve(w.split("=", 1)[1])
    return None


def _case_test(case: JUnitCase) -> _Test:
    """A legacy-XML test case; ``<error>`` is a failed test too (the console has no error category)."""
    klass = case.classname or (case.suites[-1] if case.suites else "")
    if case.outcome == "skipped":
        head = exception_head(case.text) or case.message
        aborted = is_abort(head)
        return _Test(klass, case.name, Status.SKIPPED,
                     native="aborted (assumption failed)" if aborted else "skipped",
                     message=head, details=case.text if aborted else None, duration=case.time)
    if case.outcome in ("failure", "error"):
        message, timed_out = xml_failure(case)
        return _Test(klass, case.name, Status.FAILED, native=case.outcome, message=message,
                     details=case.text, duration=case.time, timed_out=timed_out)
    return _Test(klass, case.name, Status.PASSED, duration=case.time)


def _class_level_trace(text: str | None) -> bool:
    """Whether a stack trace comes from a class-level setup (@BeforeAll / @BeforeClass)."""
    if not text:
        return False
    if JUPITER_BEFORE_ALL_RE.search(text):
        return True
    return "org.junit.runners.ParentRunner" in text and "runLeaf" not in text and "RunBefores" in text


# -- parse ------------------------------------------------------------------------


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``pkg.Class#method`` (or its display name, ``method(Types)``): the
    method in the class's source file (``source.java.locate_methods``)."""
    return locate_methods(tests, sources)


def parse(run: RunOutput) -> TestReport:
    """Parse a console launcher run (and its legacy XML reports when written)."""
    report = TestReport(framework=FRAMEWORK)
    index = SourceIndex(run.sources_root)
    sources = JavaSources(index)
    compile_errors = CompileErrors(index)
    console = _Console(compile_errors)
    for raw in run.all_lines(ansi=True):
        console.feed_line(raw)
    resolver = _Resolver(console, sources)
    resolver.run()

    tests, xml_complete = _read_reports(run, console, resolver, compile_errors, report)
    if not xml_complete:
        if console.failures and console.mode is None:
            report.warnings.append("this --details mode prints failures only: passing tests are not listed")
        for t in resolver.tests.values():
            tests.setdefault(t.id, t)
        _expand_containers(tests, resolver, sources, report)
    for t in resolver.hanging:
        if run.killed_by_timeout:
            tests.setdefault(t.id, t)
    if console.seen_junit:
        report.sources.append("console")
    report.warnings.extend(resolver.warnings)

    for t in tests.values():
        report.tests.append(TestResult(
            id=t.id, status=t.status, message=t.message, details=t.details,
            duration_s=t.duration, timed_out=t.timed_out, native_status=t.native, suite=t.klass,
        ))
    if compile_errors.errors:
        report.tests.extend(compile_errors.results())
        report.build_error = True
        report.sources.append("javac")
    report.timed_out = run.killed_by_timeout or any(t.timed_out for t in report.tests)
    _cross_check(report, console)
    if not report.tests and not console.seen_junit and not compile_errors.errors:
        report.warnings.append("no JUnit console output or report found")
        report.output_tail = run.tail()
    return report


def _read_reports(run: RunOutput, console: _Console, resolver: _Resolver, compile_errors: CompileErrors,
                  report: TestReport) -> tuple[dict[str, _Test], bool]:
    """Tests of the ``--reports-dir`` XML reports, cross-checked with the console;
    and whether the reports were complete."""
    tests: dict[str, _Test] = {}
    reports_dir = _reports_dir(run)
    if reports_dir is None:
        return tests, False
    files = sorted(reports_dir.glob("TEST-*.xml")) if reports_dir.is_dir() else []
    # The launcher writes its reports when the test plan finishes: a run that was
    # killed, or never started (javac failed), leaves only an older run's reports.
    stale = run.killed_by_timeout or (bool(compile_errors.errors) and not console.seen_junit)
    if files and stale:
        report.warnings.append(f"ignored the XML reports in {reports_dir}: this run did not write them")
        return tests, False
    if not files:
        report.warnings.append(f"no XML report in {reports_dir}; used the console output")
        return tests, False
    complete = True
    for path in files:
        reader = JUnitReader(path)
        for case in reader:
            t = _case_test(case)
            tests.setdefault(t.id, t)
        report.warnings.extend(reader.warnings)
        complete = complete and reader.complete
        rel = path.relative_to(run.cwd).as_posix() if run.cwd and path.is_relative_to(run.cwd) else str(path)
        report.sources.append(f"junit-xml:{rel}")
    _mark_container_failures(tests, resolver, console)
    for tid, t in tests.items():
        own = resolver.tests.get(tid)
        if own is not None and own.status == Status.PASSED and t.status == Status.FAILED:
            # The legacy XML repeats a class's @AfterAll failure on each of its
            # tests; the console says the test itself passed.
            t.status, t.message, t.details, t.native, t.timed_out = Status.PASSED, None, None, None, False
    return tests, complete


def _mark_container_failures(tests: dict[str, _Test], resolver: _Resolver, console: _Console) -> None:
    """XML tests that never ran because their class container failed -> errored."""
    failed = {c.klass for c in resolver.containers if c.status == "FAILED" and c.klass}
    knows_containers = console.seen_junit and (bool(resolver.containers) or "containers failed" in console.summary)
    for t in tests.values():
        if t.status != Status.FAILED:
            continue
        classes = {t.klass.rsplit("$", i)[0] for i in range(t.klass.count("$") + 1)}
        if knows_containers:
            never_ran = bool(classes & failed) and t.id not in resolver.tests
        else:
            never_ran = _class_level_trace(t.details)
        if never_ran:
            t.status = Status.ERRORED
            t.native = "not started (container failed)"
            t.timed_out = False


def _expand_containers(tests: dict[str, _Test], resolver: _Resolver, sources: JavaSources,
                       report: TestReport) -> None:
    """Console-only: list the tests of failed or skipped class containers that never ran."""
    for c in resolver.containers:
        if not c.childless:
            continue
        if c.klass is None:
            report.warnings.append("a class container failed but its class could not be found")
            continue
        declared = sources.declared_tests(c.klass)
        if not declared:
            report.warnings.append(f"container {c.klass} {c.status.lower()}; its tests are not in the sources")
        for d in declared:
            name = d.method if c.vintage else d.name
            if c.status == "FAILED":
                t = _Test(d.klass, name, Status.ERRORED, native="not started (container failed)",
                          message=c.message, details=c.details)
            else:
                t = _Test(d.klass, name, Status.SKIPPED, native=_native(c.status), message=c.message)
            tests.setdefault(t.id, t)


def _cross_check(report: TestReport, console: _Console) -> None:
    s = console.summary
    if "tests successful" in s:
        report.summary_counts["passed"] = s["tests successful"]


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

SELECTORS = re.compile(r"\s--(scan-classpath|select-\w+)(?:[ =](?!-)\S+)?")


def select_in_command(command: str, tests: list[TestResult]) -> str:
    """The launcher's own selectors (``--scan-classpath``, ``--select-*``) give way to one
    ``--select-method`` per test."""
    methods = [f"--select-method {shlex.quote('#'.join(class_and_method(t.id)))}" for t in tests]
    return f"{SELECTORS.sub('', command)} {' '.join(methods)}"
