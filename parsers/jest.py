"""Jest: the ``--json`` report (to stdout or ``--outputFile``), jest-junit XML
(``--reporters=jest-junit``, paths from the ``JEST_JUNIT_*`` variables or the
package.json ``jest-junit`` key) and the console report Jest prints to
stderr — default (failures only), ``--verbose`` (one line per test) and
coloured or not.

Ids are the describe titles and the test title joined with `` › `` as Jest
prints them; a suite that fails to load or compile is one errored entry
keyed by its file. Jest's own outcomes are kept: ``test.failing`` whose body
fails is passed, one that passes is failed; todo and skipped tests are
skipped (native ``todo``/``pending``); tests a ``-t`` pattern did not select
are skipped. Tests the output does not list one by one (the default
reporter prints failures only) come from the test files themselves, and the
``Tests:`` summary line is used to check the result.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .command import command_words, env_assignments, option_values, unquote, with_package_scripts
from .invocation import Invocation, alternation, js_regex, test_files, title_pattern
from .js_results import (
    RUNNER_PREFIX,
    ResultSet,
    add_unprinted,
    error_message,
    line_in,
    load_json_report,
    locate_tests,
    marker_line,
    name_pattern,
    note_unlisted,
    positional_args,
    report_path,
    test_files_for,
)
from .junit_xml import JUnitCase, JUnitReader
from .locate import Location, SourceIndex
from .models import Status, TestReport, TestResult
from .run_output import RunOutput, strip_ansi
from .source.js_tests import SourceTest, iter_listable

FRAMEWORK = "jest"
COMMAND_RE = [re.compile(RUNNER_PREFIX + r"(?:\S*/)?jest(?:\.js|-cli)?(?=\s|$)")]
OUTPUT_RE = [
    re.compile(r"^Tests:\s+.*\d+ total", re.M),
    re.compile(r"^Test Suites:\s+.*\d+ total", re.M),
    re.compile(r"^\s*(?:PASS|FAIL)\s+\S+\.[cm]?[jt]sx?(?:\s+\([\d.]+ m?s\))?$", re.M),
    re.compile(r"^  ● .+ › .+", re.M),
    re.compile(r"^Ran all test suites", re.M),
]

SEP = " › "
FILE_HEADER = re.compile(r"^\s?(?P<st>PASS|FAIL)\s+(?P<rest>\S.*?\.\w+)(?:\s+\([\d.]+\s*m?s\b[^)]*\))?\s*$")
TREE_TEST = re.compile(r"^(?P<indent> +)(?P<icon>[✓✕○✎√×])\s+(?P<text>.*?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?\s*$")
TREE_SUITE = re.compile(r"^(?P<indent>(?:  )+)(?P<text>[^\s●].*?)\s*$")
FAILURE_HEADER = re.compile(r"^  ● (?P<title>.+?)\s*$")
SUMMARY_TESTS = re.compile(r"^Tests:\s+(?P<body>.*?\d+ total)")
SUMMARY_SUITES = re.compile(r"^Test Suites:\s+(?P<body>.*?total)")
SUMMARY_OTHER = re.compile(r"^(?:Snapshots:|Time:|Ran all test suites|Summary of all failing tests)")
RESULTS_WRITTEN = re.compile(r"^Test results written to:\s*(?P<path>\S.*?)\s*$")
COUNT = re.compile(r"(\d+) (failed|passed|skipped|todo|pending|total)")
TIMEOUT = re.compile(r"Exceeded timeout of \d+ ?ms")
SUITE_FAILED = "Test suite failed to run"
HOOK_FAILURE = "Test execution failure"  # jest-junit's name for an error outside of tests
ICON_STATUS = {"✓": "passed", "√": "passed", "✕": "failed", "×": "failed", "○": "pending", "✎": "todo"}
STATUS = {
    "passed": (Status.PASSED, None), "focused": (Status.PASSED, None), "failed": (Status.FAILED, None),
    "pending": (Status.SKIPPED, "pending"), "skipped": (Status.SKIPPED, "pending"),
    "disabled": (Status.SKIPPED, "disabled"), "todo": (Status.SKIPPED, "todo"),
}
MAX_BLOCK_LINES = 400


@dataclass
class _Block:
    """A ``● title`` section of the console report."""

    file: str | None
    title: str
    lines: list[str] = field(default_factory=list)

    def text(self) -> str:
        body = [ln[4:] if ln.startswith("    ") else ln.strip() for ln in self.lines]
        return "\n".join(body).strip("\n")


@dataclass
class _Console:
    """What the console report says, in order of appearance."""

    files: dict[str, str] = field(default_factory=dict)  # file -> PASS/FAIL
    verbose_files: set[str] = field(default_factory=set)
    listed: list[tuple[str, tuple[str, ...], str, str]] = field(default_factory=list)
    blocks: list[_Block] = field(default_factory=list)
    tests_summary: dict[str, int] = field(default_factory=dict)
    results_file: str | None = None


def _read_console(run: RunOutput, rel: Callable[[str], str | None]) -> _Console:
    """One pass over stderr and stdout (Jest reports on stderr)."""
    con = _Console()
    for stream in ("stderr", "stdout"):
        file: str | None = None
        tree = False
        stack: list[str] = []
        block: _Block | None = None
        for line in run.lines(stream):
            if m := FILE_HEADER.match(line):
                block = None
                file = rel(m.group("rest").split()[-1])
                con.files.setdefault(file, m.group("st"))
                tree, stack = True, []
                continue
            if m := SUMMARY_TESTS.match(line):
                con.tests_summary = _counts(m.group("body"))
                block, tree = None, False
                continue
            if SUMMARY_SUITES.match(line):
                block, tree = None, False
                continue
            if m := RESULTS_WRITTEN.match(line):
                con.results_file = m.group("path")
                continue
            if SUMMARY_OTHER.match(line):
                block, tree = None, False
                continue
            if m := FAILURE_HEADER.match(line):
                block = _Block(file, m.group("title"))
                con.blocks.append(block)
                tree = False
                continue
            if block is not None:
                if len(block.lines) < MAX_BLOCK_LINES:
                    block.lines.append(line)
                continue
            if not tree:
                continue
            if not line.strip():
                tree = False
                continue
            if file is None:
                continue
            if m := TREE_TEST.match(line):
                depth = max(0, (len(m.group("indent")) - 2) // 2)
                status = ICON_STATUS[m.group("icon")]
                text = m.group("text")
                for word in ("skipped ", "todo "):
                    if status in ("pending", "todo") and text.startswith(word):
                        text = text[len(word):]
                        break
                con.listed.append((file, tuple(stack[:depth]), text, status))
                con.verbose_files.add(file)
            elif m := TREE_SUITE.match(line):
                depth = max(0, (len(m.group("indent")) - 2) // 2)
                stack = [*stack[:depth], m.group("text")]
    return con


def _counts(body: str) -> dict[str, int]:
    return {word: int(n) for n, word in COUNT.findall(body)}


# --------------------------------------------------------------------------- reports


def _json_report(run: RunOutput, words: list[str], con: _Console, report: TestReport) -> tuple[dict | None, str]:
    """The --json document: from --outputFile, or from stdout."""
    files = option_values(words, "--outputFile", "--output-file")
    return load_json_report(run, files[-1] if files else con.results_file, report)


def _from_json(b: ResultSet, data: dict) -> None:
    for tr in data.get("testResults") or []:
        if not isinstance(tr, dict):
            continue
        file = b.rel(str(tr.get("name") or "")) or None
        assertions = [a for a in tr.get("assertionResults") or [] if isinstance(a, dict)]
        exec_error = tr.get("testExecError")
        suite_text = strip_ansi(str(tr.get("message") or tr.get("failureMessage") or ""))
        if isinstance(exec_error, dict) and not suite_text:
            suite_text = strip_ansi(f"{exec_error.get('message', '')}\n{exec_error.get('stack', '')}")
        if file and ((not assertions and (tr.get("status") == "failed" or suite_text.strip()))
                     or SUITE_FAILED in suite_text):
            # The file could not run, or failed around its tests (an afterAll hook).
            _suite_error(b, file, _suite_body(suite_text))
        if not assertions:
            continue
        for a in assertions:
            path = tuple(str(x) for x in a.get("ancestorTitles") or [])
            title = str(a.get("title") or "")
            status, native = STATUS.get(str(a.get("status")), (Status.SKIPPED, str(a.get("status"))))
            messages = [strip_ansi(str(m)) for m in a.get("failureMessages") or []]
            loc = a.get("location") if isinstance(a.get("location"), dict) else None
            duration = a.get("duration")
            b.add(file, path, title, status, native=native,
                  message=error_message(messages[0]) if messages else None,
                  details="\n\n".join(messages) or None,
                  line=loc.get("line") if loc and isinstance(loc.get("line"), int) else None,
                  duration=duration / 1000 if isinstance(duration, (int, float)) else None)


def _suite_error(b: ResultSet, file: str, text: str) -> None:
    """A test file that failed to run: one errored entry keyed by its path
    (``text``: the error, with or without Jest's heading)."""
    body = text.split(SUITE_FAILED, 1)[-1].strip("\n")
    message = f"{SUITE_FAILED}\n{error_message(body) or ''}".strip()
    b.add_errored(file, file, message, body, line_in(body, file) or marker_line(body))


def _suite_body(text: str) -> str:
    """The error under a ``● Test suite failed to run`` heading, dedented."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if SUITE_FAILED in line:
            rest = lines[i + 1:]
            return SUITE_FAILED + "\n" + "\n".join(ln[4:] if ln.startswith("    ") else ln.strip() for ln in rest)
    return text


def _junit_path(command: str, words: list[str], index: SourceIndex) -> str | None:
    """Where jest-junit wrote its report, when the run used it."""
    reporters = option_values(words, "--reporters")
    config: dict = {}
    pkg = _package_json(index)
    if isinstance(pkg.get("jest-junit"), dict):
        config = pkg["jest-junit"]
    if reporters:
        if not any("jest-junit" in r for r in reporters):
            return None
    else:
        jest_cfg = pkg.get("jest") if isinstance(pkg.get("jest"), dict) else {}
        in_pkg = "jest-junit" in json.dumps(jest_cfg.get("reporters", []))
        in_file = any("jest-junit" in "\n".join(index.lines(f)) for f in index.files()
                      if re.fullmatch(r"jest\.config\.[cm]?[jt]s(?:on)?", f))
        if not (in_pkg or in_file):
            return None
        for r in jest_cfg.get("reporters", []):
            if isinstance(r, list) and len(r) > 1 and r[0] == "jest-junit" and isinstance(r[1], dict):
                config = {**config, **r[1]}
    env = env_assignments(command)
    if env.get("JEST_JUNIT_OUTPUT_FILE"):
        return env["JEST_JUNIT_OUTPUT_FILE"]
    if config.get("outputFile") and isinstance(config["outputFile"], str):
        return config["outputFile"].replace("<rootDir>", ".")
    directory = env.get("JEST_JUNIT_OUTPUT_DIR") or str(config.get("outputDirectory") or ".")
    name = env.get("JEST_JUNIT_OUTPUT_NAME") or str(config.get("outputName") or "junit.xml")
    return str(Path(directory.replace("<rootDir>", ".")) / name)


def _package_json(index: SourceIndex) -> dict:
    try:
        data = json.loads("\n".join(index.lines("package.json")) or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _from_junit(b: ResultSet, path: Path, con: _Console) -> bool:
    """jest-junit cases: names are the describe titles and title joined with
    spaces, so they are matched to the console's ids and to the sources."""
    known: dict[str, tuple[str | None, tuple[str, ...], str]] = {}
    for file, p, title, _ in con.listed:
        known.setdefault(" ".join((*p, title)), (file, p, title))
    for blk in con.blocks:
        if blk.title not in (SUITE_FAILED, "Console"):
            p, t = b.split(blk.file, blk.title)
            known.setdefault(" ".join((*p, t)), (blk.file, p, t))
    reader = JUnitReader(path)
    unresolved = 0
    seen = False
    hook_failures: list[JUnitCase] = []
    suite_files: dict[tuple[str, ...], str] = {}  # <testsuite> -> the file its cases come from
    for case in reader:
        seen = True
        file = b.rel(case.file) if case.file else None
        if SUITE_FAILED in (case.classname or "") or SUITE_FAILED in case.name:
            other = case.name if SUITE_FAILED in (case.classname or "") else case.classname
            target = b.rel(case.file or other) or other or case.name
            _suite_error(b, target, SUITE_FAILED + "\n" + _junit_text(case.text or case.message or ""))
            continue
        if case.name.strip().startswith(HOOK_FAILURE):
            hook_failures.append(case)
            continue
        resolved = None
        # Top-level tests get a leading space: "{classname} {title}" with no describe.
        names = (case.name, case.classname or "", f"{case.classname} {case.name}")
        for name in (*names, *(n.strip() for n in names)):
            if name in known:
                resolved = known[name]
                break
            found = b.js.split_joined(file, name, " ") if name else None
            if found is not None:
                resolved = (found[0].file, found[1], found[2])
                break
        if resolved is None:
            unresolved += 1
            resolved = (file, (), case.name.strip())
        rfile, p, title = resolved
        if rfile:
            suite_files.setdefault(case.suites, rfile)
        src = b.js.find(rfile, p, title)
        if case.outcome in ("failure", "error"):
            status, native = Status.FAILED, None
        elif case.outcome == "skipped":
            status, native = Status.SKIPPED, "todo" if src and src.todo else "pending"
        elif src is not None and src.todo:
            # jest-junit writes a todo test as a bare <testcase>, like a pass.
            status, native = Status.SKIPPED, "todo"
        else:
            status, native = Status.PASSED, None
        text = case.text or case.message
        b.add(rfile, p, title, status, native=native, message=error_message(strip_ansi(text)) if text else None,
              details=strip_ansi(case.text) if case.text else None, duration=case.time)
    for case in hook_failures:
        _junit_hook_failure(b, case, suite_files)
    b.report.warnings.extend(reader.warnings)
    if unresolved:
        b.report.warnings.append(
            f"{unresolved} jest-junit test name(s) could not be split into describe titles and title; kept as printed")
    # A truncated report: what it has is kept, the console fills in the rest.
    return seen and reader.complete


def _junit_text(text: str) -> str:
    """jest-junit writes some errors as JSON ``{"message": ..., "stack": ...}``."""
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return strip_ansi(text)
        if isinstance(data, dict):
            return strip_ansi(str(data.get("stack") or data.get("message") or text))
    return strip_ansi(text)


def _junit_hook_failure(b: ResultSet, case: JUnitCase, suite_files: dict[tuple[str, ...], str]) -> None:
    """jest-junit's pseudo-case for an error around the tests (an afterAll
    hook): the suite failed to run, keyed by its file."""
    text = _junit_text(case.text or case.message or "")
    file = suite_files.get(case.suites)
    if file is None:
        for m in re.finditer(r"\(?((?:/|<ROOT>)[^\s():]+):\d+:\d+", text):
            rel = b.rel(m.group(1))
            if rel and rel in b.js.test_files():
                file = rel
                break
    if file:
        _suite_error(b, file, f"{SUITE_FAILED}\n{text}")
    else:
        b.report.warnings.append(f"jest-junit reported an error outside of tests that names no file: {text[:200]}")


# --------------------------------------------------------------------------- console


def _from_console(b: ResultSet, con: _Console) -> None:
    for file, path, title, word in con.listed:
        status, native = STATUS[word]
        b.add(file, path, title, status, native=native)
    for blk in con.blocks:
        if blk.title == "Console":
            continue
        text = blk.text()
        if blk.title == SUITE_FAILED:
            if blk.file:
                _suite_error(b, blk.file, SUITE_FAILED + "\n" + text)
            continue
        path, title = b.split(blk.file, blk.title)
        previous = b.results.get((blk.file, SEP.join((*path, title))))
        b.add(blk.file, path, title, Status.FAILED, message=error_message(text), details=text,
              duration=previous.duration_s if previous else None)


def _complete_from_source(b: ResultSet, con: _Console, pattern: re.Pattern[str] | None) -> None:
    """Tests of files the console named but did not list one by one (the
    default reporter prints failures only): listed from the test file, with
    the status its modifiers and the -t pattern give."""
    incomplete: list[str] = []
    for file in con.files:
        # A file that failed to run has tests only if some were reported (an
        # afterAll error); one that failed to load has none.
        if file in con.verbose_files or ((file, file) in b.results and not b.has_tests(file)):
            continue
        ft = b.js.file(file)
        if not ft.tests and not ft.complete:
            incomplete.append(file)
            continue
        for t in iter_listable(ft):
            test_id = SEP.join((*t.path, t.title))
            if (file, test_id) in b.results:
                continue
            status, native = _inferred(t, ft.has_only, pattern)
            b.add(file, t.path, t.title, status, native=native, line=t.line)
        if not ft.complete:
            incomplete.append(file)
    note_unlisted(b, incomplete)


def _fill_unprinted(b: ResultSet, con: _Console, words: list[str], pattern: re.Pattern[str] | None) -> None:
    """Files Jest ran but did not print (all their tests skipped by -t): the
    project's other test files, kept when the summary's totals then match."""
    s = con.tests_summary
    if not s:
        return
    expected = {Status.PASSED: s.get("passed", 0), Status.FAILED: s.get("failed", 0),
                Status.SKIPPED: s.get("skipped", 0) + s.get("todo", 0) + s.get("pending", 0)}
    tests = [r for r in b.results.values() if r.status != Status.ERRORED]
    if len(tests) >= s.get("total", 0):
        return
    files = [f for f in test_files_for(b.js, positional_args(words, "jest"), regex=True)
             if f not in con.files and not b.has_tests(f)]
    add_unprinted(b, files, lambda t, has_only: _inferred(t, has_only, pattern), expected)


def _inferred(t: SourceTest, has_only: bool, pattern: re.Pattern[str] | None) -> tuple[Status, str | None]:
    if t.todo:
        return Status.SKIPPED, "todo"
    if t.skip or (has_only and not t.only):
        return Status.SKIPPED, "pending"
    if pattern is not None and not pattern.search(" ".join((*t.path, t.title))):
        return Status.SKIPPED, "skipped (filtered by -t)"
    return Status.PASSED, None


def _check_summary(b: ResultSet, con: _Console) -> None:
    s = con.tests_summary
    if not s:
        return
    # "Tests:" counts tests only: a suite that failed to load is not among them.
    b.report.summary_counts = {"failed": s.get("failed", 0), "passed": s.get("passed", 0),
                               "skipped": s.get("skipped", 0) + s.get("todo", 0) + s.get("pending", 0)}


# --------------------------------------------------------------------------- entry point


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """A test's ``it``/``test`` call in its file (``js_results.locate_tests``)."""
    return locate_tests("jest", SEP, tests, sources)


def parse(run: RunOutput) -> TestReport:
    """Parse one Jest run (JSON report, jest-junit XML or console)."""
    report = TestReport(framework=FRAMEWORK)
    b = ResultSet(run, report, "jest", SEP, TIMEOUT)
    command = with_package_scripts(run.command, run.sources_root)
    words = command_words(command)
    con = _read_console(run, b.rel)
    done = False
    if "--json" in words or con.results_file:
        data, source = _json_report(run, words, con, report)
        if data is not None:
            _from_json(b, data)
            report.sources.append(source)
            done = True
    if not done and (junit := _junit_path(command, words, b.index)):
        path = report_path(run, junit)
        if path is not None and path.is_file():
            done = _from_junit(b, path, con)
            report.sources.append(f"junit-xml:{junit}")
            if done:
                for blk in con.blocks:  # jest-junit leaves out suites that did not run
                    if blk.title == SUITE_FAILED and blk.file and (blk.file, blk.file) not in b.results:
                        _suite_error(b, blk.file, SUITE_FAILED + "\n" + blk.text())
        else:
            report.warnings.append(f"jest-junit report {junit} was not written; parsed the console output")
    if not done:
        pattern, warning = name_pattern(words, ignore_case=True)
        if warning:
            report.warnings.append(warning)
        _from_console(b, con)
        _complete_from_source(b, con, pattern)
        _fill_unprinted(b, con, words, pattern)
        if con.files or con.tests_summary:
            report.sources.append("console")
    _check_summary(b, con)
    b.finish()
    if not report.tests and not con.files:
        report.per_test = bool(con.tests_summary)
        report.output_tail = run.tail()
        report.warnings.append("no Jest test results found in the output")
    return report


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

RUNNER_BINS = ("jest",)
BIN_SUBCOMMANDS = {"react-scripts": "test"}  # Create React App's jest
PACKAGE, PACKAGE_RANK = "jest", 2
SELECT_VALUE_OPTIONS = {
    "-c", "--config", "--outputFile", "-t", "--testNamePattern", "--testPathPattern", "--testPathPatterns",
    "--testPathIgnorePatterns", "-w", "--maxWorkers", "--rootDir", "--roots", "--selectProjects", "--shard",
    "--testTimeout", "--seed", "--coverageDirectory", "--reporters", "--testEnvironment", "--env", "--setupFiles",
    "--setupFilesAfterEnv", "--projects",
}
SELECT_OPTIONS = {"-t", "--testNamePattern", "--testPathPattern", "--testPathPatterns", "--onlyFailures", "-o",
                  "--onlyChanged", "--changedSince", "--findRelatedTests", "--lastCommit"}
DEFAULT_INVOCATION = "npx jest --ci"
REPORT_OPTIONS = " --json --outputFile={reports}/jest.json --testLocationInResults"
SELECTION_REPORTS = "end"
# Crash resume: Jest names tests only when their file ends, so the tests not done run
# again in one process (``--runInBand``, ``-t '^(?!...)'``) with Greenloop's reporter,
# which names each test as it starts.
RESUMABLE = True
DEATH_ENTRY = "process.exit called with"  # Jest reports the death itself as a test: not one
STARTED = "greenloop-started "
STARTED_REPORTER = ".greenloop/jest-started.js"
STARTED_REPORTER_SOURCE = """// Greenloop (parsers/jest.py): names each test as it starts, so a dead run says in which.
const fs = require("fs");
module.exports = class {
  onTestCaseStart(test, info) {
    fs.writeSync(1, "greenloop-started " + JSON.stringify([test.path, ...info.ancestorTitles, info.title]) + "\\n");
  }
};
"""


def direct(words: list[str]) -> list[str]:
    """``react-scripts test`` watches unless CI is set."""
    if words and words[0].split()[-1] == "react-scripts" and not any(
            unquote(w).startswith("--watchAll") for w in words):
        return [*words[:2], "--watchAll=false", *words[2:]]
    return words


def suite_options(command: str, root: Path) -> str:
    return "" if "--ci" in command.split() else " --ci"


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    # -t matches the titles joined with single spaces.
    pattern = alternation([js_regex(" ".join(t.id.split(SEP))) for t in tests])
    return [*test_files(tests, inv), "-t", shlex.quote(pattern)]


def run_died(died: bool, runner_ended: bool, output: str) -> bool:
    """The process, or a worker, died (Jest may report a worker's exit as a test)."""
    return died or DEATH_ENTRY in output or runner_ended


def prepare_resume(workspace: Path) -> None:
    (workspace / STARTED_REPORTER).parent.mkdir(parents=True, exist_ok=True)
    (workspace / STARTED_REPORTER).write_text(STARTED_REPORTER_SOURCE)


def started(output: str, root: Path | None = None) -> TestResult | None:
    """The last test Greenloop's reporter saw start (its file relative to ``root``)."""
    lines = [line for line in output.splitlines() if line.startswith(STARTED)]
    if not lines:
        return None
    try:
        path, *titles = json.loads(lines[-1][len(STARTED):])
    except (ValueError, TypeError):
        return None
    file = str(path)
    if root is not None and Path(file).is_relative_to(root):
        file = Path(file).relative_to(root).as_posix()
    return TestResult(id=SEP.join(titles), status=Status.ERRORED, file=file, suite=file)


def running(output_end: str, report: TestReport, root: Path | None, ended: bool) -> list[TestResult]:
    test = started(output_end, root)
    finished = {t.id for t in report.tests if t.status != Status.SKIPPED}
    return [test] if test is not None and test.id not in finished else []


def rerun_command(command: str, invocation: Callable[[], Invocation], scope: str | None,
                  skip: list[TestResult], listed: tuple[str, list[str]] | None) -> str | None:
    """In one process, each test named as it starts; -t sees the titles joined by spaces."""
    inv = invocation()
    names = [" ".join(t.id.split(SEP)) for t in skip]
    inv.options = [w for w in inv.options if not unquote(w).startswith(("--reporters", "-i", "--runInBand"))]
    left_out = ["-t", shlex.quote("^(?!" + title_pattern(names)[1:] + ")")] if names else []
    return inv.render("--runInBand", "--reporters=default", f"--reporters=./{STARTED_REPORTER}", *left_out,
                      *inv.positionals)
