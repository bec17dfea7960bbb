"""What the JavaScript runners' parsers (Jest, Vitest, Mocha, node:test)
share beyond the sources: the results of one run keyed by file and test
(``ResultSet``), error messages and lines out of stack traces and code
frames, JSON reports, the runner's path filters and ``-t`` pattern, and the
tests of a file that a reporter did not print.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from .command import option_values, plain_words
from .json_report import first_json_object, read_json_file
from .locate import Location, SourceIndex
from .merge import add
from .models import Status, TestReport, TestResult
from .run_output import MAX_REPORT_BYTES, RunOutput
from .source.js import import_line
from .source.js_tests import JSTestIndex, SourceTest, iter_listable

# --------------------------------------------------------------------------- runner helpers
# Shared by the Jest and Vitest parsers: both are node CLIs with the same
# option style, the same JSON report shape and the same stack-trace text.

STACK_LINE = re.compile(r"^\s*(?:at |❯ )")
CODE_FRAME = re.compile(r"^\s*>?\s*\d+\s*\|")
LOCATION_IN = r"(?:^|[\s(/'\"])(?:\./)?{file}:(\d+)(?::\d+)?"
# What may precede a node test runner's binary in one shell segment: env
# assignments, coreutils timeout, a coverage wrapper and the package runners.
RUNNER_PREFIX = (
    r"^\s*(?:(?:[A-Za-z_]\w*=\S*|env|cross-env|export)\s+)*(?:timeout\s+(?:-\S+\s+)*\S+\s+)?"
    r"(?:(?:[A-Za-z_]\w*=\S*)\s+)*(?:(?:nyc|c8)(?:\s+-\S+)*\s+)?"
    r"(?:(?:npx|pnpx|bunx)(?:\s+-\S+)*\s+|(?:yarn|pnpm)(?:\s+(?:run|exec|dlx))?\s+|npm\s+(?:exec|x)\s+(?:--\s+)?"
    r"|node\s+(?:-\S+\s+)*)?"
)








def name_pattern(words: list[str], *, ignore_case: bool) -> tuple[re.Pattern[str] | None, str | None]:
    """The ``-t``/``--testNamePattern`` regex (JS syntax read as Python), or a
    warning when it cannot be compiled."""
    values = option_values(words, "-t", "--testNamePattern", "--test-name-pattern")
    if not values:
        return None, None
    src = values[-1]
    try:
        return re.compile(src, re.I if ignore_case else 0), None
    except re.error as exc:
        return None, f"could not read the test name pattern {src!r} ({exc}); tests it skipped are not listed"


def read_stream(run: object, stream: str, limit: int) -> str:
    """A whole (small) stream as text, for reporters that print a JSON
    document to it; capped at ``limit`` characters."""
    text = getattr(run, f"{stream}_text", None)
    if text is not None:
        return text[:limit]
    path = getattr(run, f"{stream}_path", None)
    if path is None or not path.is_file():
        return ""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read(limit)




def load_json_report(run: RunOutput, name: str | None, report: TestReport) -> tuple[dict | None, str]:
    """A JSON reporter's document: from the file ``name`` (as the command or
    the reporter's notice gives it), else from stdout. Returns the document
    (None when missing, truncated or not an object, with a warning) and the
    source to record (``json:<name>`` or ``json:stdout``)."""
    if name:
        path = report_path(run, name)
        data, why = read_json_file(path) if path is not None else (None, "not written")
        if why == "not written":
            report.warnings.append(f"JSON report {name} was not written; parsed the console output")
        elif why:
            report.warnings.append(f"JSON report {name} is {why}; parsed the console output")
        return (data if isinstance(data, dict) else None), f"json:{name}"
    try:
        data = first_json_object(read_stream(run, "stdout", MAX_REPORT_BYTES))
    except ValueError as exc:
        report.warnings.append(f"no JSON report on stdout ({exc}); parsed the console output")
        return None, "json:stdout"
    return (data if isinstance(data, dict) else None), "json:stdout"


def error_message(text: str | None, max_lines: int = 40) -> str | None:
    """The message part of a JS error report: the lines before its stack
    trace or code frame (``Error: x\\n\\nExpected: 1\\nReceived: 2``)."""
    if not text:
        return None
    out: list[str] = []
    for line in text.splitlines():
        if STACK_LINE.match(line) or CODE_FRAME.match(line):
            break
        out.append(line.rstrip())
        if len(out) >= max_lines:
            break
    msg = "\n".join(out).strip("\n")
    return msg or text.strip().splitlines()[0] if text.strip() else None


def line_in(text: str | None, file: str) -> int | None:
    """The first ``file:LINE`` position named in an error text (stack frame,
    ``File: path:1:0``) or a ``file: message (L:C)`` syntax error."""
    if not text or not file:
        return None
    name = re.escape(file)
    m = re.search(name + r"[^\n]*?\((\d+):\d+\)", text)
    if m:
        return int(m.group(1))
    m = re.search(LOCATION_IN.format(file=name), text)
    return int(m.group(1)) if m else None


def marker_line(text: str | None) -> int | None:
    """The line a code frame points at (``> 7 |``)."""
    if not text:
        return None
    m = re.search(r"(?m)^\s*>\s*(\d+)\s*\|", text)
    return int(m.group(1)) if m else None


class ResultSet:
    """Results of one run keyed by (file, id), with the project's sources at
    hand to fill in definition lines and to re-split printed names."""

    def __init__(self, run: RunOutput, report: TestReport, flavor: str, sep: str,
                 timeout: re.Pattern[str]) -> None:
        self.run = run
        self.report = report
        self.sep = sep
        self.timeout = timeout
        self.index = SourceIndex(run.sources_root)
        self.js = JSTestIndex(self.index, flavor)
        self.results: dict[tuple[str | None, str], TestResult] = {}

    def rel(self, path: str | None) -> str | None:
        """A path as the runner printed it (relative to its root, absolute,
        or under ``<ROOT>``), relative to the project root."""
        if not path:
            return None
        path = path.strip().strip("'\"")
        return self.index.relative(path) or path

    def split(self, file: str | None, printed: str) -> tuple[tuple[str, ...], str]:
        """A printed full name split into describe titles and title; the
        sources decide when a title itself contains the separator."""
        return split_name(self.js, file, printed, self.sep)

    def add(self, file: str | None, path: tuple[str, ...], title: str, status: Status, *,
            native: str | None = None, message: str | None = None, details: str | None = None,
            line: int | None = None, duration: float | None = None, timed_out: bool = False,
            supersede: bool = False) -> TestResult:
        """Record one test; its file comes from the sources when the output
        does not give it (results are keyed by file), its line from
        ``locate_tests`` (the normalizer's step) when the output does not give
        it. A test read before is merged with this reading
        (parsers/normalize.py), or replaced by it with ``supersede``."""
        test_id = self.sep.join((*path, title))
        src = self.js.find(file, path, title)
        if file is None and src is not None:
            file = src.file
        if src is not None and status == Status.SKIPPED and src.todo and native in (None, "skipped", "pending"):
            native = "todo"
        timed_out = timed_out or bool(status == Status.FAILED and message and self.timeout.search(message))
        result = TestResult(id=test_id, status=status, file=file, line=line, message=message, details=details,
                            duration_s=duration, native_status=native, suite=file, timed_out=timed_out)
        if supersede:
            self.results[(file, test_id)] = result
            return result
        return add(self.results, result, (file, test_id))

    def add_errored(self, file: str | None, test_id: str, message: str | None, details: str | None,
                    line: int | None) -> TestResult:
        """A file that failed to load, or a suite whose hook failed."""
        if line is None and test_id == file:
            line = import_line(self.js.index, file, message)
        result = TestResult(id=test_id, status=Status.ERRORED, file=file, line=line, message=message,
                            details=details, suite=file)
        return add(self.results, result, (file, test_id))

    def has_tests(self, file: str | None) -> bool:
        return any(f == file and r.status != Status.ERRORED for (f, _), r in self.results.items())

    def finish(self) -> None:
        """Move the results into the report and set its flags."""
        self.report.tests = list(self.results.values())
        # A file that errored without any test of its own failed to load.
        self.report.build_error = any(
            r.status == Status.ERRORED and r.id == r.file and not self.has_tests(r.file) for r in self.report.tests)
        self.report.timed_out = self.run.killed_by_timeout or any(r.timed_out for r in self.report.tests)


def split_name(js: JSTestIndex, file: str | None, printed: str, sep: str) -> tuple[tuple[str, ...], str]:
    """A printed full name (``describe › … › title``) split into describe
    titles and title; the sources decide when a title itself contains ``sep``."""
    parts = printed.split(sep)
    path, title = tuple(parts[:-1]), parts[-1]
    if not path or js.find(file, path, title) is not None:
        return path, title
    found = js.split_joined(file, printed, sep)
    return (found[1], found[2]) if found else (path, title)


def locate_tests(flavor: str, sep: str, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``Parser.locate`` of Jest and Vitest: a test (``describe › … › title``
    in its file) is the ``it``/``test`` call with that describe path and
    title in the file; an errored entry is a file that failed to load or a
    suite whose hook failed, placed by the parser from the error."""
    js = JSTestIndex(sources, flavor)
    out: dict[str, Location] = {}
    for t in tests:
        if t.file is None or t.status == Status.ERRORED:
            continue
        src = js.find(t.file, *split_name(js, t.file, t.id, sep))
        if src is not None:
            out[t.id] = Location(src.file, src.line)
    return out


# Options of the jest/vitest CLIs that take a separate value word.
VALUE_OPTIONS = {
    "-t", "--testNamePattern", "--test-name-pattern", "--reporter", "--reporters", "--outputFile", "--output-file",
    "-c", "--config", "--project", "--root", "-r", "--dir", "--shard", "--maxWorkers", "-w", "--testTimeout",
    "--environment", "--pool", "--rootDir", "--selectProjects", "--testPathPattern", "--testPathIgnorePatterns",
    "--coverageDirectory", "--seed", "--testMatch", "--testRegex", "--mode", "--retry", "--exclude", "--bail",
}




def positional_args(words: list[str], binary: str) -> list[str]:
    """Path filters given to the runner: the plain words after its binary
    (``vitest run a.test.ts``, ``jest src/x``), option values left out."""
    start = next((i + 1 for i, w in enumerate(words) if re.search(rf"(?:^|/){binary}(?:\.m?js)?$", w)), None)
    if start is None:
        return []
    return [w for w in plain_words(words, start, VALUE_OPTIONS) if w not in ("run", "watch", "related")]


def test_files_for(js: JSTestIndex, filters: list[str], *, regex: bool) -> list[str]:
    """Project test files the runner would pick with these path filters
    (Jest: regexes; Vitest: substrings)."""
    files = js.test_files()
    if not filters:
        return files
    out = []
    for f in files:
        for flt in filters:
            try:
                hit = re.search(flt, f) is not None if regex else flt.lstrip("./") in f
            except re.error:
                hit = flt in f
            if hit:
                out.append(f)
                break
    return out


def add_unprinted(b: ResultSet, files: Iterable[str], infer, expected: dict[Status, int]) -> bool:
    """Add the tests of ``files`` the output never named (statuses from
    ``infer(test, file_has_only)``), but only when the per-status totals then
    equal the runner's summary: a guess that does not add up is dropped."""
    additions: list[tuple[SourceTest, Status, str | None]] = []
    for file in files:
        ft = b.js.file(file)
        for t in iter_listable(ft):
            if (file, b.sep.join((*t.path, t.title))) not in b.results:
                additions.append((t, *infer(t, ft.has_only)))
    if not additions:
        return False
    base: dict[Status, int] = {}
    for r in b.results.values():
        if r.status != Status.ERRORED:
            base[r.status] = base.get(r.status, 0) + 1
    want = {k: v for k, v in expected.items() if v}
    # skipIf/runIf conditions are unknown: first as if they ran, then as if they skipped.
    flipped = [(t, Status.SKIPPED, "skipped (condition)") if t.conditional and s == Status.PASSED else (t, s, n)
               for t, s, n in additions]
    for candidate in (additions, flipped):
        counts = dict(base)
        for _, status, _ in candidate:
            counts[status] = counts.get(status, 0) + 1
        if {k: v for k, v in counts.items() if v} == want:
            for t, status, native in candidate:
                b.add(t.file, t.path, t.title, status, native=native)
            return True
    return False


def report_path(run: RunOutput, name: str) -> Path | None:
    """A report path as a command or a reporter's notice gives it: relative
    to where the command ran, absolute, or under ``<ROOT>`` (that directory)."""
    if name.startswith("<ROOT>") and run.cwd is not None:
        return Path(run.cwd) / name[len("<ROOT>"):].lstrip("/")
    return run.resolve(name)




def note_unlisted(b: ResultSet, files: list[str]) -> None:
    """Warn about files whose unprinted tests could not be listed."""
    unreadable = sorted(f for f in set(files) if not b.index.lines(f))
    dynamic = sorted(f for f in set(files) if f not in unreadable)
    if unreadable:
        b.report.warnings.append(
            "test file(s) " + ", ".join(unreadable) + " could not be read from the sources; "
            "their tests the output did not print are not listed")
    if dynamic:
        b.report.warnings.append(
            "some tests of " + ", ".join(dynamic) + " are named at run time (loops, .each over variables) "
            "and were not printed; they are not listed")
