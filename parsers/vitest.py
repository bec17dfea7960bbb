"""Vitest (1.x-4.x): the JSON reporter (``--reporter=json``, to stdout or
``--outputFile``), the JUnit reporter, TAP (``tap``/``tap-flat``) and the
console reporters — default (collapsed passing files, bare test titles under
failed files), ``verbose`` (``file > suite > test`` per line), ``tree`` and
``dot`` — coloured (when TERM is set) or not, alone or several at once.

Ids are the suite titles and the test title joined with `` > ``. A suite
whose ``beforeAll`` failed is one errored entry with the suite's id (its
tests are skipped); a file that fails to load is one errored entry keyed by
its path. ``it.fails`` whose body fails is xfailed (Vitest's "expected
fail"; its JSON and JUnit reporters call it passed, so the test file tells),
one that passes is failed. Todo and skipped tests, and tests a ``-t``
pattern did not select, are skipped. Timeouts ("Test timed out in N ms", or
the JSON reporter's bare ``STACK_TRACE_ERROR``) are failed and timed out.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .command import command_words, option_values, unquote, with_package_scripts
from .invocation import Invocation, alternation, js_regex, test_files
from .js_results import (
    RUNNER_PREFIX,
    ResultSet,
    add_unprinted,
    error_message,
    line_in,
    load_json_report,
    locate_tests,
    name_pattern,
    note_unlisted,
    positional_args,
    report_path,
    test_files_for,
)
from .junit_xml import JUnitReader, line_stream, printed_document
from .locate import Location, SourceIndex
from .models import Status, TestReport, TestResult
from .run_output import RunOutput, strip_ansi
from .source.js_tests import SourceSuite, SourceTest, iter_listable
from .tap import TapReader

FRAMEWORK = "vitest"
COMMAND_RE = [re.compile(RUNNER_PREFIX + r"(?:\S*/)?vitest(?:\.m?js)?(?=\s|$)")]
OUTPUT_RE = [
    re.compile(r"^\s*RUN\s+v\d+\.\d+\.\d+", re.M),
    re.compile(r"^\s*Test Files\s+\d+ (?:passed|failed|skipped)", re.M),
    re.compile(r"^\s*Tests\s+\d+ (?:passed|failed|skipped|todo)(?: \| .*)?\(\d+\)", re.M),
    re.compile(r"⎯{2,} Failed (?:Tests|Suites) \d+ ⎯{2,}"),
    re.compile(r"^\s*Duration\s+[\d.]+m?s \(transform ", re.M),
]

SEP = " > "
JS_FILE = r"\S+?\.[cm]?[jt]sx?"
FILE_LINE = re.compile(
    rf"^\s{{0,2}}(?P<icon>[✓✔❯×✗✘↓·])\s+(?:\|[^|]*\|\s+)?(?P<file>{JS_FILE})\s+"
    r"\((?P<counts>\d+(?: tests?)?(?: \|[^)]*)?)\)")
TEST_LINE = re.compile(r"^(?P<indent>\s*)(?P<icon>[✓✔×✗✘↓□❯])\s+(?P<text>\S.*?)\s*$")
SHORT_ERROR = re.compile(r"^\s+→ (?P<msg>.*)$")
LOG_HEADER = re.compile(r"^(?:stdout|stderr) \| ")
BANNER = re.compile(r"^⎯+\s+(?P<name>[A-Za-z][A-Za-z ]*?)(?:\s+\d+)?\s+⎯+\s*$")
DIVIDER = re.compile(r"^⎯+(?:\[\d+/\d+\]⎯*)?\s*$")
FAIL_HEADER = re.compile(r"^\s*FAIL\s+(?:\|[^|]*\|\s+)?(?P<name>\S.*?)\s*$")
SUMMARY = re.compile(r"^\s*(?P<kind>Test Files|Tests)\s+(?P<body>\d+ .*?)\s*\((?P<total>\d+)\)\s*$")
WRITTEN = re.compile(r"^(?P<kind>JSON|JUNIT) report written to (?P<path>\S.*?)\s*$")
COUNT = re.compile(r"(\d+) (failed|passed|skipped|todo|expected fail)")
SUFFIXES = re.compile(r"(?:\s+\d+(?:\.\d+)?\s*ms|\s+\((?:retry|repeat) x\d+\)|\s+\d+ MB heap used|\s+\[skipped\])+$")
TIMEOUT = re.compile(r"(?:Test|Hook) timed out in \d+ ?ms|STACK_TRACE_ERROR")
ICON = {"✓": Status.PASSED, "✔": Status.PASSED, "×": Status.FAILED, "✗": Status.FAILED, "✘": Status.FAILED,
        "❯": Status.FAILED, "↓": Status.SKIPPED, "□": Status.SKIPPED}
JSON_STATUS = {"passed": Status.PASSED, "failed": Status.FAILED, "skipped": Status.SKIPPED,
               "pending": Status.SKIPPED, "disabled": Status.SKIPPED, "todo": Status.SKIPPED}
MAX_BODY_LINES = 400


@dataclass
class _Listed:
    """A test line of a console reporter, not yet matched to the sources."""

    file: str | None
    text: str  # a bare title, or titles joined with " > "
    icon: str
    indent: int
    message: str | None = None


@dataclass
class _Failure:
    """One error of the summary: the FAIL headers above it and its text."""

    section: str
    names: list[str]
    lines: list[str] = field(default_factory=list)


@dataclass
class _Console:
    files: dict[str, dict[str, int]] = field(default_factory=dict)  # file -> counts of its header
    listed: list[_Listed] = field(default_factory=list)
    failures: list[_Failure] = field(default_factory=list)
    summary: dict[str, dict[str, int]] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # JSON/JUNIT -> path
    unhandled: int = 0


def _read_console(run: RunOutput, rel: Callable[[str], str | None]) -> _Console:
    con = _Console()
    for stream in ("stdout", "stderr"):
        file: str | None = None
        section: str | None = None
        failure: _Failure | None = None
        in_log = False
        for line in run.lines(stream):
            if in_log:
                in_log = bool(line.strip())
                continue
            if LOG_HEADER.match(line):
                in_log = True
                continue
            if m := SUMMARY.match(line):
                con.summary[m.group("kind")] = {**_counts(m.group("body")), "total": int(m.group("total"))}
                section, failure = None, None
                continue
            if m := WRITTEN.match(line):
                con.written[m.group("kind")] = m.group("path")
                continue
            if m := BANNER.match(line):
                section, failure = m.group("name").strip(), None
                if section.startswith("Unhandled"):
                    con.unhandled += 1
                continue
            if section is not None:
                failure = _section_line(con, section, failure, line)
                continue
            if m := FILE_LINE.match(line):
                file = rel(m.group("file"))
                con.files[file] = {**_counts(m.group("counts")),
                                   "tests": int(re.match(r"\d+", m.group("counts")).group())}
                continue
            if (m := SHORT_ERROR.match(line)) and con.listed and con.listed[-1].message is None:
                con.listed[-1].message = m.group("msg")
                continue
            if m := TEST_LINE.match(line):
                text = m.group("text")
                full = re.match(rf"(?:\|[^|]*\|\s+)?(?P<file>{JS_FILE}) > (?P<rest>.+)$", text)
                if full:
                    con.listed.append(_Listed(rel(full.group("file")), full.group("rest"), m.group("icon"),
                                              len(m.group("indent"))))
                elif file is not None:
                    con.listed.append(_Listed(file, text, m.group("icon"), len(m.group("indent"))))
    return con


def _section_line(con: _Console, section: str, failure: _Failure | None, line: str) -> _Failure | None:
    """A line of the error summary (Failed Suites / Failed Tests / Unhandled)."""
    if DIVIDER.match(line):
        return None
    if m := FAIL_HEADER.match(line):
        if failure is None or failure.lines:
            failure = _Failure(section, [])
            con.failures.append(failure)
        failure.names.append(m.group("name"))
        return failure
    if failure is not None and len(failure.lines) < MAX_BODY_LINES:
        failure.lines.append(line)
    return failure


def _counts(body: str) -> dict[str, int]:
    return {word: int(n) for n, word in COUNT.findall(body)}


def _strip_suffixes(text: str) -> str:
    return SUFFIXES.sub("", text)


# --------------------------------------------------------------------------- console


def _from_console(b: ResultSet, con: _Console) -> None:
    used: set[tuple[str | None, str]] = set()
    for item in _tree(b, con.listed):
        file, path, title, icon, message = item
        status = ICON[icon]
        native = "todo" if icon == "□" else None
        key = (file, SEP.join((*path, title)))
        if key in used:  # named twice (a reporter that prints files twice)
            continue
        used.add(key)
        src = b.js.find(file, path, title)
        if status == Status.PASSED and src is not None and src.fails:
            status, native = Status.XFAILED, "expected fail"
        b.add(file, path, title, status, native=native, message=message)
    for failure in con.failures:
        text = "\n".join(failure.lines).strip("\n")
        message = error_message(text)
        for name in failure.names:
            _failure_entry(b, failure.section, name, message, text)


_Matched = tuple[str | None, tuple[str, ...], str, str, str | None]  # file, path, title, icon, short message


def _tree(b: ResultSet, listed: list[_Listed]) -> Iterator[_Matched]:
    """Match console test lines to the sources: lines that name the whole
    path split on " > "; bare titles (the default reporter) matched in
    source order; suite lines of tree output kept as the current path."""
    taken: dict[str | None, set[int]] = {}
    stack: list[tuple[int, str]] = []
    last_file: str | None = None
    for item in listed:
        if item.file != last_file:
            stack, last_file = [], item.file
        text = _strip_suffixes(item.text)
        candidates = b.js.titled(item.file, text) if item.file else []
        if SEP in text and not candidates:
            path, title = b.split(item.file, text)
            yield item.file, path, title, item.icon, item.message
            continue
        while stack and stack[-1][0] >= item.indent:
            stack.pop()
        current = tuple(s for _, s in stack)
        # Vitest 4 indents a test line by its depth: 3 spaces, 2 more per suite.
        depth = (item.indent - 3) // 2 if item.indent >= 3 else None
        if not candidates:
            # A suite line of the tree ("❯ suite (3)"), or a title the sources lack.
            suite_title = re.sub(r"\s+\(\d+\)$", "", text)
            if item.file and b.js.find_suite(item.file, (*current, suite_title)) is not None:
                stack.append((item.indent, suite_title))
                continue
            yield item.file, current, text, item.icon, item.message
            continue
        used = taken.setdefault(item.file, set())
        order = sorted(candidates, key=lambda c: (c.path != current or not stack, len(c.path) != depth))
        pick = next((c for c in order if id(c) not in used), order[0])
        used.add(id(pick))
        yield item.file, pick.path, text, item.icon, item.message


def _failure_entry(b: ResultSet, section: str, name: str, message: str | None, text: str) -> None:
    """A FAIL header of the error summary: a failed test, a failed suite
    (its beforeAll hook) or a file that could not be loaded."""
    m = re.match(rf"(?P<file>{JS_FILE})(?:\s+\[ (?P<bracket>[^\]]+) \])?(?: > (?P<rest>.+))?$", name)
    if not m:
        b.report.warnings.append(f"unrecognised failure header {name!r}")
        return
    file = b.rel(m.group("file"))
    rest = m.group("rest")
    if rest is None:  # the file itself: it failed to load, or a top-level hook failed
        line = line_in(text, file or "")
        b.add_errored(file, file or name, message, text, line)
        return
    if section.startswith("Failed Suites") or section == "Failed Suite":
        path = tuple(rest.split(SEP))
        suite = b.js.find_suite(file, path)
        b.add_errored(file, rest, message, text, suite.line if suite else line_in(text, file or ""))
        return
    path, title = b.split(file, rest)
    previous = b.results.get((file, SEP.join((*path, title))))
    if previous is not None and previous.status != Status.FAILED:
        return  # e.g. a skipped test named again
    # The failure block supersedes the listing line and its one-line message.
    b.add(file, path, title, Status.FAILED, message=message or (previous.message if previous else None),
          details=text, duration=previous.duration_s if previous else None, supersede=True)


def _failure_entry_if_new(b: ResultSet, section: str, name: str, message: str | None, text: str) -> None:
    """Suite and file errors the console shows but a report left out."""
    if section.startswith("Failed Tests"):
        return
    m = re.match(rf"(?P<file>{JS_FILE})(?:\s+\[[^\]]*\])?(?: > (?P<rest>.+))?$", name)
    if not m:
        return
    file = b.rel(m.group("file"))
    key = (file, m.group("rest") or file)
    if key not in b.results:
        _failure_entry(b, section, name, message, text)


def _failed_suites(b: ResultSet) -> set[tuple[str | None, tuple[str, ...]]]:
    """(file, suite path) of the errored suites; () for a file whose
    top-level hook failed (its tests were reported)."""
    out: set[tuple[str | None, tuple[str, ...]]] = set()
    for (file, test_id), r in b.results.items():
        if r.status == Status.ERRORED:
            out.add((file, () if test_id == file else tuple(test_id.split(SEP))))
    return out


def _complete_from_source(b: ResultSet, con: _Console, pattern: re.Pattern[str] | None) -> None:
    """Tests of files whose console line did not list them (the default
    reporter collapses passing files): listed from the test file, with the
    status its modifiers, the -t pattern and failed suites give."""
    failed = _failed_suites(b)
    incomplete = []
    for file, counts in con.files.items():
        listed = sum(1 for (f, _), r in b.results.items() if f == file and r.status != Status.ERRORED)
        if counts["tests"] == 0 or (file, file) in b.results or listed >= counts["tests"]:
            continue
        ft = b.js.file(file)
        for t in iter_listable(ft):
            test_id = SEP.join((*t.path, t.title))
            if (file, test_id) not in b.results:
                status, native = _inferred(t, ft.has_only, pattern, failed)
                b.add(file, t.path, t.title, status, native=native)
        if not ft.complete and counts.get("tests"):
            incomplete.append(file)
    note_unlisted(b, incomplete)


def _fill_unprinted(b: ResultSet, con: _Console, words: list[str], pattern: re.Pattern[str] | None) -> None:
    """Files the console never gave a line of their own (the dot reporter
    names only failures): their other tests from the sources, then the
    project's other test files, each kept only when the summary's totals
    then match."""
    s = con.summary.get("Tests")
    if not s or sum(1 for r in b.results.values() if r.status != Status.ERRORED) >= s.get("total", 0):
        return
    expected = {Status.PASSED: s.get("passed", 0), Status.FAILED: s.get("failed", 0),
                Status.XFAILED: s.get("expected fail", 0), Status.SKIPPED: s.get("skipped", 0) + s.get("todo", 0)}
    errored = {f for (f, i), r in b.results.items() if r.status == Status.ERRORED and i == f}
    named = [f for f in dict.fromkeys(f for f, _ in b.results) if f and f not in con.files and f not in errored]
    failed = _failed_suites(b)
    infer = lambda t, has_only: _inferred(t, has_only, pattern, failed)  # noqa: E731
    if add_unprinted(b, named, infer, expected):
        return
    others = [f for f in test_files_for(b.js, positional_args(words, "vitest"), regex=False)
              if f not in con.files and f not in errored and f not in named]
    add_unprinted(b, [*named, *others], infer, expected)


def _inferred(t: SourceTest, has_only: bool, pattern: re.Pattern[str] | None,
              failed_suites: set[tuple[str | None, tuple[str, ...]]]) -> tuple[Status, str | None]:
    if pattern is not None and not pattern.search(" ".join((*t.path, t.title))):
        return Status.SKIPPED, "skipped (filtered by -t)"
    if any(f == t.file and t.path[:len(p)] == p for f, p in failed_suites):
        return Status.SKIPPED, "skipped (its suite failed)"
    if t.todo:
        return Status.SKIPPED, "todo"
    if t.skip or (has_only and not t.only):
        return Status.SKIPPED, "skipped"
    if t.fails:
        return Status.XFAILED, "expected fail"
    return Status.PASSED, None


# --------------------------------------------------------------------------- reports


def _report_path(run: RunOutput, words: list[str], con: _Console, kind: str) -> tuple[Path | None, str | None]:
    """Where the json/junit reporter wrote its file: the command's
    ``--outputFile[.kind]``, else the path the reporter announced."""
    reporters = [r for v in option_values(words, "--reporter", "--reporters") for r in v.split(",")]
    named = option_values(words, f"--outputFile.{kind}", f"--output-file.{kind}")
    if not named and reporters and all(r == kind for r in reporters if r not in ("default", "verbose", "dot",
                                                                                   "basic", "tree", "tap",
                                                                                   "tap-flat", "hanging-process")):
        named = option_values(words, "--outputFile", "--output-file")
    if named:
        return report_path(run, named[-1]), named[-1]
    announced = con.written.get(kind.upper())
    if announced:
        return report_path(run, announced), announced
    return None, None


def _load_json(run: RunOutput, words: list[str], con: _Console, report: TestReport) -> tuple[dict | None, str]:
    return load_json_report(run, _report_path(run, words, con, "json")[1], report)


def _from_json(b: ResultSet, data: dict) -> None:
    for tr in data.get("testResults") or []:
        if not isinstance(tr, dict):
            continue
        file = b.rel(str(tr.get("name") or "")) or None
        assertions = [a for a in tr.get("assertionResults") or [] if isinstance(a, dict)]
        file_error = strip_ansi(str(tr.get("message") or ""))
        if file_error.strip() and file:
            b.add_errored(file, file, error_message(file_error), file_error, line_in(file_error, file))
        for a in assertions:
            path = tuple(str(x) for x in a.get("ancestorTitles") or [])
            title = str(a.get("title") or "")
            word = str(a.get("status"))
            status = JSON_STATUS.get(word, Status.SKIPPED)
            native = word if status == Status.SKIPPED else None
            messages = [strip_ansi(str(m)) for m in a.get("failureMessages") or []]
            message = error_message(messages[0]) if messages else None
            timed_out = bool(message and TIMEOUT.search(message))
            if message and "STACK_TRACE_ERROR" in message:
                message = "Test timed out (the JSON report only says 'Error: STACK_TRACE_ERROR')"
            src = b.js.find(file, path, title)
            if status == Status.PASSED and src is not None and src.fails:
                status, native = Status.XFAILED, "expected fail"
            loc = a.get("location") if isinstance(a.get("location"), dict) else None
            duration = a.get("duration")
            b.add(file, path, title, status, native=native, message=message,
                  details="\n\n".join(messages) or None, timed_out=timed_out,
                  # Older Vitest put the failure's position here, newer the
                  # test's: the sources are asked first.
                  line=None if src else (loc.get("line") if loc and isinstance(loc.get("line"), int) else None),
                  duration=duration / 1000 if isinstance(duration, (int, float)) else None)


def _infer_hook_failures(b: ResultSet, words: list[str]) -> None:
    """The JSON reporter drops a suite's beforeAll error and only marks its
    tests skipped: a suite with a beforeAll hook whose every test was skipped
    although nothing in the source skips them is reported as errored."""
    if name_pattern(words, ignore_case=False)[0] is not None or "--bail" in " ".join(words):
        return
    files = {f for (f, _), r in b.results.items() if f}
    for file in sorted(files):
        ft = b.js.file(file)
        if ft.has_only:
            continue
        for suite in ft.suites:  # outer suites first: source order
            if "before all" not in suite.hooks or suite.skip or suite.patterns is not None:
                continue
            inside = [t for t in iter_listable(ft) if t.path[:len(suite.path)] == suite.path]
            runnable = [t for t in inside if not (t.skip or t.todo)]
            results = [b.results.get((file, SEP.join((*t.path, t.title)))) for t in runnable]
            if not runnable or any(t.conditional for t in inside) \
                    or any(r is None or r.status != Status.SKIPPED for r in results):
                continue
            test_id = SEP.join(suite.path)
            if any(r.status == Status.ERRORED and r.file == file and (r.id == test_id or test_id.startswith(r.id + SEP))
                   for r in b.results.values()):
                continue
            b.add_errored(file, test_id, "beforeAll hook failed (inferred: the JSON report leaves out suite errors, "
                          "and every test of the suite was skipped)", None, suite.line)


def _suite_named(b: ResultSet, file: str | None, name: str) -> SourceSuite | None:
    """The describe block a report names by its full path or its own title."""
    if not file:
        return None
    suites = b.js.file(file).suites
    exact = [s for s in suites if SEP.join(s.path) == name]
    own = [s for s in suites if s.path and s.path[-1] == name]
    return exact[0] if exact else (own[0] if len(own) == 1 else None)


def _from_junit(b: ResultSet, reader: JUnitReader) -> bool:
    """Vitest's JUnit: name = titles joined with " > ", classname = file; a
    failed suite hook is a testcase named after the suite."""
    seen = False
    for case in reader:
        seen = True
        file = next((b.rel(c) for c in (case.file, case.classname, case.suites[-1] if case.suites else None,
                                         case.suite_file) if c and re.fullmatch(JS_FILE, c)), None)
        name = case.name
        text = strip_ansi(case.text or case.message or "")
        message = error_message(text) if text else None
        if file and (name == file or name == case.classname):
            b.add_errored(file, file, message, text or None, line_in(text, file))
            continue
        path_, title = b.split(file, name)
        src = b.js.find(file, path_, title)
        if src is None and case.outcome in ("failure", "error") and (suite := _suite_named(b, file, name)):
            # A failed suite hook: a case named after the suite (only its own title when nested).
            b.add_errored(file, SEP.join(suite.path), message, text or None, suite.line)
            continue
        if case.outcome in ("failure", "error"):
            status, native = Status.FAILED, None
        elif case.outcome == "skipped":
            status, native = Status.SKIPPED, "todo" if src and src.todo else "skipped"
        elif src is not None and src.fails:
            status, native = Status.XFAILED, "expected fail"
        else:
            status, native = Status.PASSED, None
        b.add(file, path_, title, status, native=native, message=message, details=text or None,
              duration=case.time)
    b.report.warnings.extend(reader.warnings)
    return seen and reader.complete


# --------------------------------------------------------------------------- tap


TAP_START = re.compile(r"^TAP version \d+$", re.M)
TAP_SUFFIX = re.compile(r"(?:\s+#\s*time=[\d.]+ms)?(?:\s*\{)?\s*$")


def _from_tap(b: ResultSet, run: RunOutput) -> bool:
    """Vitest's TAP: a file or suite is a point ending in ``{`` followed by
    its children, indented, up to ``}``; flat TAP has one point per test
    named ``file > suite > test``. Read with the shared TAP reader, whose
    points are put back in stream order to rebuild that nesting."""
    reader = TapReader(run.lines("stdout"))
    points = sorted(reader, key=lambda p: p.line_no)
    b.report.warnings.extend(reader.warnings)
    opened: list[tuple[int, str]] = []  # (depth, name) of the open { blocks
    failed_suites: list[tuple[str | None, tuple[str, ...]]] = []
    for p in points:
        name = TAP_SUFFIX.sub("", p.description)
        while opened and opened[-1][0] >= p.depth:
            opened.pop()
        if p.description.rstrip().endswith("{") or (p.reason or "").strip() == "{":
            opened.append((p.depth, name))
            if not p.ok and p.directive is None and len(opened) > 1:
                failed_suites.append((b.rel(opened[0][1]), tuple(n for _, n in opened[1:])))
            continue
        message = _tap_message(p.diag("error"))
        at = str(p.diag("at") or "")
        flat = None if opened else re.match(rf"(?P<file>{JS_FILE}) > (?P<rest>.+)$", name)
        if flat:
            file = b.rel(flat.group("file"))
            path, title = b.split(file, flat.group("rest"))
        elif opened:
            file, path, title = b.rel(opened[0][1]), tuple(n for _, n in opened[1:]), name
        else:
            # A file without tests is a plain top-level point: it failed to load.
            file = b.rel(name)
            if not p.ok and file:
                b.add_errored(file, file, message, p.yaml_text, line_in(at, file))
            continue
        src = b.js.find(file, path, title)
        if src is None and _suite_named(b, file, SEP.join((*path, title))):
            continue  # an empty suite (describe.todo) is printed like a test
        if p.directive == "todo":
            status, native = Status.SKIPPED, "todo"
        elif p.directive == "skip":
            status, native = Status.SKIPPED, "skipped"
        elif not p.ok:
            status, native = Status.FAILED, None
        elif src is not None and src.fails:
            status, native = Status.XFAILED, "expected fail"
        else:
            status, native = Status.PASSED, None
        b.add(file, path, title, status, native=native, message=message if status == Status.FAILED else None,
              details=p.yaml_text)
    _flag_failed_suites(b, failed_suites)
    return bool(points)


def _tap_message(error: object) -> str | None:
    """``name: message`` of a TAP error block; the block may be raw text when
    the message broke the YAML (Vitest writes its newlines unescaped)."""
    if isinstance(error, dict):
        name, message = error.get("name"), error.get("message")
    elif isinstance(error, str):
        m = re.search(r'name:\s*"?([^"\n]*)', error)
        name = m.group(1) if m else None
        m = re.search(r'message:\s*"?(.*)', error, re.S)
        message = m.group(1).rstrip('"') if m else None
    else:
        return None
    if message is None:
        return None
    message = str(message)
    return f"{name}: {message}" if name and not message.startswith(str(name)) else message


def _flag_failed_suites(b: ResultSet, failed_suites: list[tuple[str | None, tuple[str, ...]]]) -> None:
    """A suite that is "not ok" although none of its tests failed with an
    error: its hook failed (TAP prints no error for suites). Innermost first."""
    flagged: list[tuple[str | None, tuple[str, ...]]] = []
    for file, path in sorted(set(failed_suites), key=lambda fp: -len(fp[1])):
        prefix = SEP.join(path) + SEP
        members = [r for (f, i), r in b.results.items()
                   if f == file and i.startswith(prefix) and r.status != Status.ERRORED]
        if any(r.status == Status.FAILED and r.message for r in members) or any(
                f == file and p[:len(path)] == path for f, p in flagged):
            continue
        for r in members:
            if r.status == Status.FAILED:
                r.status, r.native_status = Status.SKIPPED, "skipped"
        flagged.append((file, path))
        suite = b.js.find_suite(file, path)
        b.add_errored(file, SEP.join(path), "suite failed, most likely in a beforeAll hook (TAP shows no error)",
                      None, suite.line if suite else None)


# --------------------------------------------------------------------------- entry point


def _check_summary(b: ResultSet, con: _Console) -> None:
    s = con.summary.get("Tests")
    if not s:
        return
    # "Tests" counts tests only: a suite that failed to load is not among them.
    b.report.summary_counts = {"failed": s.get("failed", 0), "passed": s.get("passed", 0),
                               "xfailed": s.get("expected fail", 0), "skipped": s.get("skipped", 0) + s.get("todo", 0)}


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """A test's ``it``/``test`` call in its file (``js_results.locate_tests``)."""
    return locate_tests("vitest", SEP, tests, sources)


def parse(run: RunOutput) -> TestReport:
    """Parse one Vitest run (JSON, JUnit, TAP or console reporters)."""
    report = TestReport(framework=FRAMEWORK)
    b = ResultSet(run, report, "vitest", SEP, TIMEOUT)
    words = command_words(with_package_scripts(run.command, run.sources_root))
    reporters = [r for v in option_values(words, "--reporter", "--reporters") for r in v.split(",")]
    con = _read_console(run, b.rel)
    done = False
    if "json" in reporters or "JSON" in con.written:
        data, source = _load_json(run, words, con, report)
        if data is not None:
            _from_json(b, data)
            report.sources.append(source)
            done = True
    if not done and ("junit" in reporters or "JUNIT" in con.written):
        path, name = _report_path(run, words, con, "junit")
        if path is not None and path.is_file():
            # A truncated report keeps what it has; the console fills in the rest.
            done = _from_junit(b, JUnitReader(path))
            report.sources.append(f"junit-xml:{name}")
        elif name is None and "<testsuites" in run.head("stdout", 4096):
            # no outputFile: the reporter prints the document on stdout
            done = _from_junit(b, JUnitReader("stdout", stream=line_stream(printed_document(run.lines("stdout")))))
            report.sources.append("junit-xml:stdout")
        else:
            report.warnings.append(f"JUnit report {name or '(no path)'} was not written; parsed the console output")
    tap = any(r in ("tap", "tap-flat") for r in reporters) or TAP_START.search(run.head("stdout", 4096))
    if not done and tap and _from_tap(b, run):
        report.sources.append("tap")
        done = True
    console_used = False
    if con.listed or con.failures or con.files:
        if not done:
            pattern, warning = name_pattern(words, ignore_case=False)
            if warning:
                report.warnings.append(warning)
            _from_console(b, con)
            _complete_from_source(b, con, pattern)
            _fill_unprinted(b, con, words, pattern)
            console_used = True
        else:
            # The console still tells what the reports leave out (suite errors).
            for failure in con.failures:
                text = "\n".join(failure.lines).strip("\n")
                for name in failure.names:
                    _failure_entry_if_new(b, failure.section, name, error_message(text), text)
    if done and not con.failures and (report.sources[0].startswith("json:") or "tap-flat" in reporters):
        _infer_hook_failures(b, words)
    if console_used:
        report.sources.append("console")
    if con.unhandled:
        report.warnings.append("Vitest reported unhandled errors outside of tests; see the output")
    _check_summary(b, con)
    b.finish()
    if not report.tests and not con.files:
        report.per_test = bool(con.summary)
        report.output_tail = run.tail()
        report.warnings.append("no Vitest test results found in the output")
    return report


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

RUNNER_BINS = ("vitest",)
PACKAGE, PACKAGE_RANK = "vitest", 1
WATCH_FLAGS = {"-w"}
SUBCOMMANDS = {"run", "watch", "dev", "related", "bench", "list", "typecheck", "init"}
SELECT_VALUE_OPTIONS = {
    "-c", "--config", "-r", "--root", "--dir", "--reporter", "--outputFile", "--project", "--pool", "-t",
    "--testNamePattern", "--environment", "--shard", "--maxWorkers", "--mode", "--testTimeout", "--exclude",
    "--sequence.seed",
}
SELECT_OPTIONS = {"-t", "--testNamePattern", "--changed"}
DEFAULT_INVOCATION = "npx vitest run"
REPORT_OPTIONS = " --reporter=default --reporter=junit --outputFile.junit={reports}/vitest.xml"
SELECTION_REPORTS = "end"


# ``vitest`` alone may watch: the invocation is always ``vitest run`` (``vitest watch`` becomes ``run``).
RUN_SUBCOMMAND = "run"
WATCH_SUBCOMMANDS = ("watch",)


def direct(words: list[str]) -> list[str]:
    if len(words) > 1 and unquote(words[1]) in SUBCOMMANDS:
        return words
    return [words[0], "run", *words[1:]]


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    # -t matches the titles joined with single spaces.
    pattern = alternation([js_regex(" ".join(t.id.split(" > "))) for t in tests])
    return [*test_files(tests, inv), "-t", shlex.quote(pattern)]
