"""Mocha: the console reporters (spec — the default —, list, dot, min and
the other reporters that end with Mocha's common epilogue), ``tap``,
``json`` (to stdout, after the tests' console output, or to a file with
``--reporter-option output=PATH``) and ``xunit`` (to stdout or to a file).

Ids are Mocha's ``fullTitle()``: suite titles and the test title joined
with a space. Mapping:

* passing -> passed; pending (``it.skip``, ``xit``, ``it()`` without a
  callback, ``describe.skip``) -> skipped, native ``pending``;
* failing -> failed; "Timeout of Nms exceeded" -> failed with ``timed_out``;
* a hook failure is a pseudo-test named as Mocha names it
  (``<suite> "before all" hook for "<test>"``) -> errored; the tests it kept
  from running are not reported (Mocha does not report them either);
* a spec file that cannot be loaded (``Exception during run``, a
  SyntaxError before any test ran) -> one errored entry keyed by the file,
  ``build_error``;
* a spec/list run that ends without its summary (a test called
  ``process.exit``, crashed or ran out of memory): the first test after the
  last one reported fails with native status ``DIED``.

Reporters that do not print every test (dot, min, progress...) print the
failures by full title and the pass/pending/fail counts; the other tests
come from the spec files themselves (``SpecIndex`` below, shared with the
node:test parser), checked against those counts.

File and line: the definition of the ``it()`` (or hook) call found in the
sources with its exact title, including titles built in ``forEach`` loops
over literal tables.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from .command import command_words, option_values, with_package_scripts
from .invocation import Invocation, test_files, title_pattern
from .js_results import RUNNER_PREFIX
from .junit_xml import JUnitReader, line_stream, printed_document
from .locate import SourceIndex, glob_regex, located_while_parsing
from .models import Status, TestReport, TestResult
from .run_output import RunOutput
from .source.js import (
    IMPORTED_FROM,
    JS_SUFFIXES,
    import_line,
    importers_of,
)
from .source.js_tests import SpecIndex, SpecNode, iter_nodes
from .tap import TapReader

FRAMEWORK = "mocha"
# The spec node an entry maps to (by its structured title path, its fullTitle or its
# title, or a failing hook's suite) gives its file and suite, which key and select it,
# as well as its line: the parser places it while it maps the entry.
locate = located_while_parsing

# ============================================================================ the Mocha parser

COMMAND_RE = [re.compile(RUNNER_PREFIX + r"(?:\S*/)?_?mocha(?:\.c?js)?(?=\s|$)")]
OUTPUT_RE = [
    re.compile(r"^\s+\d+ passing \(\d+(?:ms|s|m)\)$", re.M),
    re.compile(r"^\s+\d+ failing$", re.M),
    re.compile(r"^\s+\d+ pending$", re.M),
    re.compile(r'"(?:before|after) (?:all|each)" hook (?:for|in) "', re.M),
    re.compile(r"Timeout of \d+ms exceeded\. For async tests and hooks", re.M),
    re.compile(r"^\s*Exception during run:", re.M),
]

SEP = " "
# Reporters that print each test as it ends: on a killed run, the test after
# the last one printed was the one running.
# What a test is when Mocha's process ended while it ran (``runner.crash`` resumes the run after it).
DIED = "no result (Mocha died)"
PER_TEST_REPORTERS = {"spec", "list", "tap", "json-stream", "doc", "markdown"}
HOOK_RE = re.compile(r'"(before all|before each|after all|after each)" hook\b')
HOOK_FOR_RE = re.compile(r'hook(?:: .*?)? for "(.*)"$', re.S)
TIMEOUT_RE = re.compile(r"Timeout of \d+ms exceeded")
SUMMARY_RE = re.compile(r"^\s*(\d+) (passing|pending|failing)\b(?: \(\d+(?:\.\d+)?(?:ms|s|m)\))?\s*$")
TREE_RES = (
    # spec: indent + "  ✔ title (12ms)"; list: "  ✔ full title: 12ms"
    (re.compile(r"^(?P<indent> *)  [✔✓√] (?P<title>.*?)(?: \((?P<ms>\d+)ms\)|: (?P<ms2>\d+)ms)?\s*$"), "passed"),
    (re.compile(r"^(?P<indent> *)  (?P<n>\d+)\) (?P<title>\S.*?)\s*$"), "failed"),
    (re.compile(r"^(?P<indent> *)  - (?P<title>\S.*?)\s*$"), "pending"),
)
LIST_BEGIN_RE = re.compile(r"^    (?P<full>\S.*?): (?P<rest> {0,2}(?:- |[✔✓√] |\d+\) ).*)$")
SPEC_SUITE_RE = re.compile(r"^(?P<indent>(?:  )+)(?P<title>\S.*?)\s*$")
FAIL_HEAD_RE = re.compile(r"^  (?P<n>\d+)\) (?P<title>\S.*?)\s*$")
EXCEPTION_RE = re.compile(r"^\s*Exception during run:\s*(?P<rest>.*)$")
FILE_LINE_RE = re.compile(r"(?:file://)?(?P<file>(?:<ROOT>|/|\.{1,2}/)?[^\s:()'\"]*\.[cm]?[jt]sx?):(?P<line>\d+)")
STACK_RE = re.compile(r"^\s+at ")
ERROR_HEAD_RE = re.compile(r"^\s*(?:[A-Z]\w*)?(?:Error|Exception)\b[^:]*:")
DIFF_HEAD_RE = re.compile(r"^\s*\+ expected - actual\s*$")
LOAD_ERROR_RE = re.compile(r"^(?:\w*Error\b|Cannot find module|Error \[ERR_)")
ESM_SYNTAX_RE = re.compile(r"SyntaxError\[ @(?P<file>.+?) \]")
REQUIRE_ENTRY_RE = re.compile(r"^\s*-\s+(\S+\.[cm]?[jt]sx?)\s*$")
MAX_FAILURE_LINES = 400
MAX_JSON_BYTES = 256 * 1024 * 1024


@dataclass
class _Entry:
    """One test (or hook failure) as an output shows it, before mapping."""

    full: str
    status: str  # "passed", "failed" or "pending"
    path: tuple[str, ...] | None = None
    title: str | None = None
    file: str | None = None
    message: str | None = None
    details: str | None = None
    duration_s: float | None = None
    number: int | None = None  # the failure's number in the console


def effective_words(run: RunOutput) -> list[str]:
    """The command's shell words, plus those of the package.json scripts it runs."""
    return command_words(with_package_scripts(run.command, run.sources_root))


def _chain_full(n: SpecNode) -> str | None:
    """Mocha's fullTitle of a scanned node, None when a title is dynamic."""
    chain = [*n.suites, n]
    if any(c.title is None for c in chain):
        return None
    return SEP.join(c.title for c in chain if c.title)  # type: ignore[misc]


class _Parser:
    """One Mocha run: picks the reporter's output, then maps its entries."""

    def __init__(self, run: RunOutput) -> None:
        self.run = run
        self.report = TestReport(framework=FRAMEWORK)
        self.index = SourceIndex(run.sources_root)
        self.specs = SpecIndex(self.index, "mocha")
        self.words = effective_words(run)
        self._config: dict[str, object] | None = None
        self._suites: list[SpecNode] | None = None
        self._suite_titles: set[str] = set()
        self._hashed: dict[str, str] | None = None

    # ------------------------------------------------------------------ command and config

    def config(self) -> dict[str, object]:
        """The project's .mocharc (json/jsonc/yaml) or package.json "mocha" key."""
        if self._config is None:
            self._config = _read_config(self.run.sources_root)
        return self._config

    def reporter(self) -> str:
        values = option_values(self.words, "--reporter", "-R")
        rep = values[-1] if values else self.config().get("reporter")
        return rep.lower() if isinstance(rep, str) else "spec"

    def reporter_output(self) -> str | None:
        """``--reporter-option(s) output=PATH`` (xunit and json reporters)."""
        raw: list[object] = list(option_values(self.words, "--reporter-option", "--reporter-options", "-O"))
        if not raw:
            cfg = self.config()
            ro = cfg.get("reporter-option") or cfg.get("reporter-options") or cfg.get("reporterOptions")
            if isinstance(ro, dict):
                return ro.get("output") if isinstance(ro.get("output"), str) else None  # type: ignore[return-value]
            raw = ro if isinstance(ro, list) else [ro]
        for value in raw:
            if not isinstance(value, str):
                continue
            for part in value.split(","):
                k, _, v = part.partition("=")
                if k.strip() == "output" and v.strip():
                    return v.strip()
        return None

    def rel(self, path: str | None) -> str | None:
        """A path as Mocha printed it, relative to the project root."""
        if not path:
            return None
        return self.index.relative(path.strip()) or path.strip()

    # ------------------------------------------------------------------ parse

    def parse(self) -> TestReport:
        rep = self.reporter()
        out_path = self.reporter_output()
        entries: list[_Entry] | None = None
        warnings_before = list(self.report.warnings)
        if rep == "xunit":
            entries = self.from_xunit_file(out_path) if out_path else self.from_xunit_stdout()
        elif rep == "json":
            entries = self.from_json_file(out_path) if out_path else self.from_json_stdout()
        elif rep == "json-stream":
            entries = self.from_json_stream()
        elif rep == "tap":
            entries = self.from_tap()
        from_tree = False  # read from the spec/list reporter's tree
        if entries is None:
            entries = self.from_console()
            from_tree = bool(entries) and rep in ("spec", "list")
            if not entries and rep not in ("tap", "json", "xunit"):
                # A reporter set where we cannot see it (.mocharc.js): try
                # the machine-readable formats on stdout.
                entries = self._other_formats() or entries
        for e in entries:
            self.add(e)
        self.load_errors()
        if self.report.build_error and not entries:
            # Mocha aborted while loading the spec files: no reporter wrote
            # anything, so a missing JSON/TAP/xunit document is no news
            self.report.warnings = warnings_before
        if self.run.killed_by_timeout:
            self.report.timed_out = True
            if rep in PER_TEST_REPORTERS or self.report.tests:
                self.hanging_test()
            else:
                self.report.warnings.append(
                    f"the run was killed by timeout and the {rep} reporter does not say which test was running")
        elif from_tree and not self.report.build_error and \
                not any(SUMMARY_RE.match(line) for line in self.run.all_lines()):
            self.hanging_test(died=True)  # the process ended inside a test
        self.report.timed_out = self.report.timed_out or any(t.timed_out for t in self.report.tests)
        failing = sum(t.status in (Status.FAILED, Status.ERRORED) for t in self.report.tests)
        if self.report.tests and not self.report.build_error and not self.run.killed_by_timeout \
                and self.run.exit_code is not None and self.run.exit_code != min(failing, 255):
            # Mocha exits with the number of failures (hooks included).
            self.report.warnings.append(
                f"Mocha exited with {self.run.exit_code} but {failing} failures were read")
        if not self.report.tests:
            if not self.report.warnings:
                self.report.warnings.append("no Mocha test results found in the output")
            self.report.output_tail = self.run.tail()
        return self.report

    def _other_formats(self) -> list[_Entry] | None:
        """JSON, TAP or xunit found on stdout although the command did not
        ask for them; the attempts leave no trace when they find nothing."""
        saved = (list(self.report.sources), list(self.report.warnings), dict(self.report.summary_counts))
        for attempt in (self.from_json_stdout, self.from_tap, self.from_xunit_stdout):
            self.report.sources = [x for x in saved[0] if x != "console"]
            self.report.warnings = list(saved[1])
            self.report.summary_counts = dict(saved[2])
            got = attempt()
            if got:
                return got
        self.report.sources, self.report.warnings, self.report.summary_counts = saved
        return None

    # ------------------------------------------------------------------ mapping

    def add(self, e: _Entry) -> None:
        """Map one entry to a TestResult; file and line from the sources."""
        file = self.rel(e.file)
        line = None
        native = None
        timed_out = False
        if hook := HOOK_RE.search(e.full):
            status, native = Status.ERRORED, "hook"
            hint = file if file and self.index.lines(file) else None
            node = self._hook_node(e.full[: hook.start()].rstrip(), hook.group(1), hint)
            if node is not None:
                file, line = node.file, node.line
        else:
            node = None
            # A file the output names but the sources do not have (another
            # checkout's absolute path): search every spec file instead.
            hint = file if file and self.index.lines(file) else None
            if e.path is not None and e.title is not None:
                node = self.specs.find(e.path, e.title, hint)
            if node is None:
                node = self.specs.find_joined(e.full, SEP, hint)
            if node is None and e.title:
                node = self.specs.find_title(e.title)
            if node is not None:
                file, line = node.file, node.line
            if e.status == "passed":
                status = Status.PASSED
            elif e.status == "pending":
                status, native = Status.SKIPPED, "pending"
            else:
                status = Status.FAILED
                timed_out = bool(TIMEOUT_RE.search(f"{e.message}\n{e.details}"))
        file = file or self._file_from_stack(e.details)
        self.report.tests.append(TestResult(
            id=e.full, status=status, file=file, line=line, message=e.message, details=e.details,
            duration_s=e.duration_s, native_status=native, timed_out=timed_out, suite=file))

    def _hook_node(self, suite_full: str, kind: str, file: str | None) -> SpecNode | None:
        """The hook call (or, failing that, its suite) a hook failure names."""
        if not suite_full:
            files = [file] if file else self.specs.test_files()
            hits = [h for f in files if (h := self.specs.hook(None, f, kind)) is not None]
            return hits[0] if len(hits) == 1 else None
        suite = self.specs.find_joined(suite_full, SEP, file, kinds=("suite",))
        if suite is None:
            return None
        return self.specs.hook(suite, suite.file, kind) or suite

    def _file_from_stack(self, details: str | None) -> str | None:
        """The first project file named in a stack (not node_modules)."""
        for m in FILE_LINE_RE.finditer(details or ""):
            rel = self.rel(m.group("file"))
            if rel and "node_modules/" not in rel and self.index.lines(rel):
                return rel
        return None

    # ------------------------------------------------------------------ console reporters

    def from_console(self) -> list[_Entry]:
        """spec/list tree lines, the epilogue's numbered failures and its
        counts. Reporters without a tree (dot, min, progress...) name only
        the failures: the other tests come from the spec files."""
        self.report.sources.append("console")
        tree: list[_Entry] = []
        failures: dict[int, _Entry] = {}
        counts: dict[str, int] = {}
        stack: list[str] = []
        in_epilogue = False
        cur: _Entry | None = None
        cur_lines: list[str] = []
        titles: list[str] | None = None  # an open failure title (one line per level)

        def close() -> None:
            nonlocal cur, cur_lines, titles
            if titles is not None and cur is not None:
                _set_titles(cur, titles)
            if cur is not None:
                cur.message, cur.details = _split_failure(cur_lines)
            cur, cur_lines, titles = None, [], None

        for line in self.run.lines("stdout"):
            if "\r" in line:
                # The list reporter rewrites its line with a carriage return:
                # keep what a terminal would show.
                line = line.rsplit("\r", 1)[-1]
            if (lm := LIST_BEGIN_RE.match(line)) and lm.group("rest").lstrip("-✔✓√0123456789) ").startswith(
                    lm.group("full")):
                # "    title: " (test begin) with no carriage return before the result
                line = lm.group("rest")
            if titles is not None and cur is not None:
                # Failure title lines: level k indented by 5 + 2k spaces.
                want = 5 + 2 * len(titles)
                if line.startswith(" " * want) and not line.startswith(" " * (want + 1)) and line.strip():
                    titles.append(line.strip())
                    if line.rstrip().endswith(":"):
                        _set_titles(cur, titles)
                        titles = None
                    continue
                _set_titles(cur, titles)
                titles = None
            m = SUMMARY_RE.match(line)
            if m and cur is None:
                in_epilogue = True
                counts[m.group(2)] = int(m.group(1))
                continue
            if in_epilogue:
                if hm := FAIL_HEAD_RE.match(line):
                    close()
                    cur = _Entry(full=hm.group("title"), status="failed", number=int(hm.group("n")))
                    failures[cur.number] = cur  # type: ignore[index]
                    titles = [hm.group("title")]
                    if hm.group("title").endswith(":"):
                        _set_titles(cur, titles)
                        titles = None
                elif cur is not None and len(cur_lines) < MAX_FAILURE_LINES:
                    cur_lines.append(line)
                continue
            if (entry := _tree_entry(line, stack)) is not None:
                tree.append(entry)
                continue
            sm = SPEC_SUITE_RE.match(line)
            if sm and self._plausible_suite(sm.group("title")):
                depth = len(sm.group("indent")) // 2 - 1
                if depth <= len(stack):
                    del stack[depth:]
                    stack.append(sm.group("title"))
        close()
        entries = self._merge(tree, failures, counts)
        self._check_counts(entries, counts)
        return entries

    def _plausible_suite(self, title: str) -> bool:
        """Whether an indented line of the spec tree may be a suite title
        rather than the tests' console output: when the spec files can be
        read, one of them must have a describe() with that title."""
        if self._suites is None:
            self._suites = [n for n in self.specs.all_nodes() if n.kind == "suite"]
            self._suite_titles = {n.title for n in self._suites if n.title is not None}
        return not self._suites or title in self._suite_titles or any(
            n.title is None and n.matches(title) for n in self._suites)

    def _merge(self, tree: list[_Entry], failures: dict[int, _Entry], counts: dict[str, int]) -> list[_Entry]:
        if tree:
            out: list[_Entry] = []
            for e in tree:
                f = failures.pop(e.number, None) if e.status == "failed" and e.number is not None else None
                if f is not None:
                    f.duration_s = e.duration_s
                    out.append(f)
                else:
                    out.append(e)
            out.extend(failures.values())
            return out
        failed = list(failures.values())
        if not counts:
            # No epilogue: nothing ran (a load error) or the run was cut.
            return failed
        rest = self.from_sources(failed, counts)
        if rest is None:
            if counts.get("passing") or counts.get("pending"):
                self.report.warnings.append(
                    "this reporter names only the failing tests and the spec files could not be read: "
                    "passing and pending tests are missing")
            return failed
        self.report.sources.append("sources")
        return failed + rest

    def _check_counts(self, entries: list[_Entry], counts: dict[str, int]) -> None:
        """Mocha's passing/pending/failing counts, for the normalizer to check
        (a failing hook is counted among the failures and is an errored entry)."""
        names = {"passing": "passed", "pending": "skipped", "failing": "failed+errored"}
        self.report.summary_counts = {names[k]: v for k, v in counts.items() if k in names}

    # ------------------------------------------------------------------ tests from the sources

    def from_sources(self, failed: list[_Entry], counts: dict[str, int]) -> list[_Entry] | None:
        """Passing and pending tests of the spec files Mocha ran: all tests
        but the failures, those a failed hook kept from running, those
        ``.only``/``--grep`` left out."""
        files = self.spec_files()
        order = [n for f in files for n in mocha_order(self.specs.tree(f))]
        if not order:
            return None
        has_only = any(n.only for f in files for n in iter_nodes(self.specs.tree(f)))
        grep, invert = self._grep(), "--invert" in self.words or "-i" in self.words
        failed_full = {f.full for f in failed}
        blocked = self._blocked(failed, order)
        out: list[_Entry] = []
        maybe: dict[int, bool] = {}
        for n in order:
            full = _chain_full(n)
            if full is None:
                self.report.warnings.append(
                    f"{n.file}:{n.line}: a test title is built at run time; that test is not listed")
                continue
            chain = [*n.suites, n]
            if full in failed_full or id(n) in blocked or (has_only and not any(c.only for c in chain)):
                continue
            if grep is not None and (grep.search(full) is None) != invert:
                continue
            out.append(_Entry(full=full, status="pending" if n.skipped else "passed",
                              path=tuple(s.title or "" for s in n.suites), title=n.title, file=n.file))
            maybe[id(out[-1])] = n.may_skip
        # this.skip() at run time: when the pending count is short by exactly
        # the number of tests that can skip themselves, they did.
        short = counts.get("pending", 0) - sum(e.status == "pending" for e in out)
        can = [e for e in out if e.status == "passed" and maybe.get(id(e))]
        if short > 0 and len(can) == short:
            for e in can:
                e.status = "pending"
        return out

    def _blocked(self, failed: list[_Entry], order: list[SpecNode]) -> set[int]:
        """Tests a failed hook kept from running: every test under the suite
        of a failed "before all"; for "before each" the named test and the
        rest of the suite; for "after each" the rest after the named test."""
        blocked: set[int] = set()
        for f in failed:
            hm = HOOK_RE.search(f.full)
            if not hm or hm.group(1) == "after all":
                continue
            prefix = f.full[: hm.start()].rstrip()
            under = [n for n in order if _under(n, prefix)]
            if hm.group(1) == "before all":
                blocked.update(id(n) for n in under)
                continue
            first = HOOK_FOR_RE.search(f.full)
            started = False
            for n in under:
                if not started and first and n.title == first.group(1):
                    started = True
                    if hm.group(1) == "after each":
                        continue
                if started:
                    blocked.add(id(n))
        return blocked

    def _grep(self) -> re.Pattern[str] | None:
        values = option_values(self.words, "--grep", "-g")
        fixed = option_values(self.words, "--fgrep", "-f")
        try:
            if values:
                return re.compile(values[-1])
        except re.error:
            self.report.warnings.append(f"could not read the --grep pattern {values[-1]!r}")
            return None
        return re.compile(re.escape(fixed[-1])) if fixed else None

    def spec_files(self) -> list[str]:
        """The files Mocha loads: paths/globs on the command line, else the
        config's ``spec``, else ``./test/*.{js,cjs,mjs}`` (recursive with
        ``--recursive``)."""
        cfg = self.config()
        specs = mocha_positional(self.words)
        if not specs:
            spec = cfg.get("spec")
            specs = [spec] if isinstance(spec, str) else [s for s in spec if isinstance(s, str)] \
                if isinstance(spec, list) else []
        recursive = "--recursive" in self.words or cfg.get("recursive") is True
        exts = tuple("." + e.lstrip(".") for e in option_values(self.words, "--extension")) or (".js", ".cjs", ".mjs")
        files = self.index.files(JS_SUFFIXES)
        out: list[str] = []
        for spec in specs or ["./test"]:
            spec = (self.rel(spec) or spec).rstrip("/")
            if spec in files:
                hits = [spec]
            elif any(f.startswith(spec + "/") for f in files):
                hits = [f for f in files if f.startswith(spec + "/") and f.endswith(exts)
                        and (recursive or "/" not in f[len(spec) + 1:])]
            else:
                rx = glob_regex(spec)
                hits = [f for f in files if rx.fullmatch(f)]
            out.extend(h for h in sorted(hits) if h not in out)
        ignore = [glob_regex(self.rel(i) or i) for i in option_values(self.words, "--ignore", "--exclude")]
        return [f for f in out if not any(r.fullmatch(f) for r in ignore)]

    def hanging_test(self, died: bool = False) -> None:
        """The test running when coreutils ``timeout`` killed Mocha, or when
        Mocha's process ended without its summary (``died``: a test called
        ``process.exit``, crashed or ran out of memory): the first runnable
        test after the last one reported, in run order (``--grep`` applied)."""
        reported = {t.id for t in self.report.tests}
        grep, invert = self._grep(), "--invert" in self.words or "-i" in self.words
        order = [n for f in self.spec_files() for n in mocha_order(self.specs.tree(f))
                 if grep is None or (grep.search(_chain_full(n) or "") is None) == invert]
        last = max((k for k, n in enumerate(order) if _chain_full(n) in reported), default=-1)
        for n in order[last + 1:]:
            full = _chain_full(n)
            if n.skipped or full is None or full in reported:
                continue
            if died:
                self.report.tests.append(TestResult(
                    id=full, status=Status.FAILED, file=n.file, line=n.line, suite=n.file, native_status=DIED,
                    message=f"Mocha's process ended (exit {self.run.exit_code}) without its summary while this "
                            "test was running "
                            "(the test after the last reported one)"))
                return
            self.report.tests.append(TestResult(
                id=full, status=Status.FAILED, file=n.file, line=n.line, timed_out=True, suite=n.file,
                message="the run was killed by timeout while this test was running "
                        "(the test after the last reported one)"))
            return

    # ------------------------------------------------------------------ load errors

    def load_errors(self) -> None:
        """A spec file that failed to load (``Exception during run``, or a
        bare ``file:line`` + SyntaxError when nothing ran): one errored
        entry keyed by the file."""
        lines = list(_head(self.run.lines("stderr"), MAX_FAILURE_LINES))
        start = next((k for k, ln in enumerate(lines) if EXCEPTION_RE.match(ln) or ESM_SYNTAX_RE.search(ln)), None)
        if start is None:
            if self.report.tests:
                return
            start = next((k for k, ln in enumerate(lines) if FILE_LINE_RE.fullmatch(ln.strip())
                          and any(LOAD_ERROR_RE.match(x.strip()) for x in lines[k + 1:k + 8])), None)
            if start is None:
                return
        head = EXCEPTION_RE.match(lines[start])
        text = ([head.group("rest")] if head else [lines[start]]) + lines[start + 1:]
        file, line = self._load_error_site(text)
        text = [ESM_SYNTAX_RE.sub("SyntaxError", ln) for ln in text]
        err = next((ln.strip() for ln in text if LOAD_ERROR_RE.match(ln.strip())), None)
        message = err or next((ln.strip() for ln in text if ln.strip()), "a spec file failed to load")
        self.report.tests.append(TestResult(
            id=file or "mocha", status=Status.ERRORED, file=file, line=line, message=message,
            details="\n".join(text).strip() or None, native_status="load error", suite=file))
        self.report.build_error = True
        self.report.sources.append("stderr")

    def _load_error_site(self, text: list[str]) -> tuple[str | None, int | None]:
        """The failing file: the ``file:line`` header Node prints for a
        SyntaxError, else the first "Require stack" entry, else the first
        project frame of the stack."""
        candidates: list[tuple[str, int | None]] = []
        for ln in text:
            if m := ESM_SYNTAX_RE.search(ln):  # Mocha's "SyntaxError[ @file ]" for ES modules
                candidates.append((m.group("file"), None))
        for ln in text:
            if not STACK_RE.match(ln) and (m := FILE_LINE_RE.search(ln)):
                candidates.append((m.group("file"), int(m.group("line"))))
        for ln in text:
            if not STACK_RE.match(ln) and (m := IMPORTED_FROM.search(ln)):
                candidates.append((m.group("file"), None))
        for ln in text:
            if m := REQUIRE_ENTRY_RE.match(ln):
                candidates.append((m.group(1), None))
        for ln in text:
            if STACK_RE.match(ln) and (m := FILE_LINE_RE.search(ln)):
                candidates.append((m.group("file"), int(m.group("line"))))
        project = [(rel, line) for path, line in candidates
                   if (rel := self.rel(path)) and "node_modules/" not in rel and not rel.startswith("node:")]
        if not project:
            return None, None
        # the spec file Mocha was loading: a candidate that is one, else the
        # first spec file whose imports reach the failing module
        specs = self.spec_files()
        rel = next((r for r, _ in project if r in specs), None)
        if rel is None:
            rel = next(iter(importers_of(self.index, project[0][0], specs)), project[0][0])
        line = next((ln for r, ln in project if ln is not None and r == rel), None)
        if line is None:  # an import Node could not resolve: the spec's import line
            line = import_line(self.index, rel, "\n".join(text[:3]))
        return rel, line

    # ------------------------------------------------------------------ tap

    def from_tap(self) -> list[_Entry] | None:
        """``--reporter tap`` (TAP 12, or 13 with ``tapVersion=13``)."""
        reader = TapReader(self.run.lines("stdout"))
        out: list[_Entry] = []
        for p in reader:
            if p.directive is not None:
                out.append(_Entry(full=p.description, status="pending"))
            elif p.ok:
                out.append(_Entry(full=p.description, status="passed"))
            elif p.diagnostics is not None:
                out.append(_Entry(full=p.description, status="failed", message=_text(p.diag("message")),
                                  details=_text(p.diag("stack"))))
            else:
                msg, details = _split_tap12(p.trailing)
                out.append(_Entry(full=p.description, status="failed", message=msg, details=details))
        if not reader.saw_tap:
            self.report.warnings.append("no TAP found on stdout for --reporter tap; read the console")
            return None
        self.report.sources.append("tap")
        self.report.warnings.extend(reader.warnings)
        # Mocha's TAP reporter drops '#' from titles; the sources have them.
        for e in out:
            if (full := self._with_hashes(e.full)) is not None:
                e.full = full
        return out

    def _with_hashes(self, printed: str) -> str | None:
        if self._hashed is None:
            self._hashed = {}
            for n in self.specs.all_nodes():
                full = _chain_full(n) if n.kind == "test" else None
                if full and "#" in full:
                    self._hashed[full.replace("#", "")] = full
        return self._hashed.get(printed)

    # ------------------------------------------------------------------ json

    def from_json_stdout(self) -> list[_Entry] | None:
        data = _json_document(self.run.lines("stdout"))
        if data is None:
            self.report.warnings.append(
                "no complete Mocha JSON document on stdout (--reporter json); read the console")
            return None
        self.report.sources.append("json:stdout")
        return self._json_entries(data)

    def from_json_file(self, path: str) -> list[_Entry] | None:
        p = self.run.resolve(path)
        if p is None or not p.is_file():
            self.report.warnings.append(f"JSON report {path} does not exist; read the console")
            return None
        with open(p, encoding="utf-8", errors="replace") as fh:
            data = _json_document(line.rstrip("\r\n") for line in fh)
        if data is None:
            self.report.warnings.append(f"JSON report {path} is truncated or not a Mocha report; read the console")
            return None
        self.report.sources.append(f"json:{path}")
        return self._json_entries(data)

    def _json_entries(self, data: dict[str, object]) -> list[_Entry]:
        """Mocha's JSON: ``tests`` (every test that ended), ``failures``
        (with hook failures), ``pending``."""
        def dicts(key: str) -> list[dict[str, object]]:
            v = data.get(key)
            return [t for t in v if isinstance(t, dict) and isinstance(t.get("fullTitle"), str)] \
                if isinstance(v, list) else []

        failed = {str(t["fullTitle"]) for t in dicts("failures")}
        pending = {str(t["fullTitle"]) for t in dicts("pending")}
        out: list[_Entry] = []
        seen: set[str] = set()
        for t in dicts("tests") + dicts("failures"):
            full = str(t["fullTitle"])
            if full in seen:
                continue
            seen.add(full)
            err = t.get("err") if isinstance(t.get("err"), dict) else {}
            status = "failed" if full in failed else "pending" if full in pending else "passed"
            dur = t.get("duration")
            e = _Entry(full=full, status=status, title=_text(t.get("title")), file=_text(t.get("file")),
                       duration_s=dur / 1000 if isinstance(dur, (int, float)) else None)
            if status == "failed":
                stack = _text(err.get("stack"))  # type: ignore[union-attr]
                e.message = _text(err.get("message")) or (stack.splitlines()[0] if stack else None)  # type: ignore[union-attr]
                e.details = stack
            out.append(e)
        stats = data.get("stats") if isinstance(data.get("stats"), dict) else {}
        counts = {k: stats.get(s) for k, s in  # type: ignore[union-attr]
                  (("passing", "passes"), ("pending", "pending"), ("failing", "failures"))}
        self._check_counts(out, {k: v for k, v in counts.items() if isinstance(v, int)})
        return out

    def from_json_stream(self) -> list[_Entry] | None:
        """``--reporter json-stream``: one ``["pass"|"fail", {...}]`` per line
        (pending tests are not printed by this reporter)."""
        out: list[_Entry] = []
        for line in self.run.lines("stdout"):
            if not line.startswith('["'):
                continue
            try:
                event, body = json.loads(line)
            except (ValueError, TypeError):
                continue
            if event not in ("pass", "fail") or not isinstance(body, dict) or not isinstance(body.get("fullTitle"), str):
                continue
            e = _Entry(full=body["fullTitle"], status="passed" if event == "pass" else "failed",
                       file=_text(body.get("file")))
            if event == "fail":
                e.details = _text(body.get("stack"))
                e.message = _text(body.get("err")) or (e.details.splitlines()[0] if e.details else None)
            out.append(e)
        if not out:
            return None
        self.report.sources.append("json-stream")
        return out

    # ------------------------------------------------------------------ xunit

    def from_xunit_file(self, path: str) -> list[_Entry] | None:
        p = self.run.resolve(path)
        if p is None or not p.is_file():
            self.report.warnings.append(f"xunit report {path} does not exist; read the console")
            return None
        return self._xunit(JUnitReader(p), f"xunit:{path}")

    def from_xunit_stdout(self) -> list[_Entry] | None:
        """xunit to stdout: the document starts at its first tag (the tests'
        console output may come first)."""
        return self._xunit(JUnitReader("stdout", stream=line_stream(printed_document(self.run.lines("stdout")))), "xunit:stdout")

    def _xunit(self, reader: JUnitReader, label: str) -> list[_Entry] | None:
        """Mocha's xunit: classname = the parent suites' full title, name =
        the test title; every failure (hooks included) is a <failure>."""
        out: list[_Entry] = []
        for case in reader:
            full = f"{case.classname} {case.name}" if case.classname else case.name
            e = _Entry(full=full, status="passed", path=None, title=case.name, file=case.file, duration_s=case.time)
            if case.outcome in ("failure", "error"):
                e.status = "failed"
                e.message, e.details = _split_xunit(case.text or case.message or "")
            elif case.outcome == "skipped":
                e.status = "pending"
            out.append(e)
        self.report.warnings.extend(reader.warnings)
        if not out and not reader.complete:
            return None
        self.report.sources.append(label)
        if not reader.complete:
            # A cut report: add what the console (a spec tree, the failures) names.
            known = {e.full for e in out}
            before = len(self.report.sources)
            out.extend(e for e in self.from_console() if e.full not in known)
            del self.report.sources[before:]
        return out


# ============================================================================ helpers


def _tree_entry(line: str, stack: list[str]) -> _Entry | None:
    """A spec/list test line: ``✔ title``, ``N) title`` or ``- title``."""
    for rx, status in TREE_RES:
        m = rx.match(line)
        if not m:
            continue
        del stack[len(m.group("indent")) // 2:]
        path = tuple(stack)
        title = m.group("title")
        e = _Entry(full=SEP.join((*path, title)), status=status, path=path, title=title)
        if status == "passed" and (ms := m.group("ms") or m.group("ms2")):
            e.duration_s = int(ms) / 1000
        if status == "failed":
            e.number = int(m.group("n"))
        return e
    return None


def _set_titles(e: _Entry, titles: list[str]) -> None:
    """A failure's title lines (one per level, the last ends with ':')."""
    parts = [t for t in titles if t]
    if parts and parts[-1].endswith(":"):
        parts[-1] = parts[-1][:-1]
    e.path, e.title = tuple(parts[:-1]), parts[-1] if parts else ""
    e.full = SEP.join(parts)


def _under(n: SpecNode, prefix: str) -> bool:
    """Whether a test is inside the suite whose full title is ``prefix``."""
    if not prefix:
        return True
    titles = [s.title or "" for s in n.suites]
    return any(SEP.join(titles[:k]) == prefix for k in range(1, len(titles) + 1))


def mocha_order(nodes: list[SpecNode]) -> list[SpecNode]:
    """Tests in Mocha's run order: a suite's own tests, then its suites."""
    out = [n for n in nodes if n.kind == "test"]
    for n in nodes:
        if n.kind == "suite":
            out.extend(mocha_order(n.children))
    return out


VALUE_OPTIONS = {
    "--reporter", "-R", "--reporter-option", "--reporter-options", "-O", "--grep", "-g", "--fgrep", "-f",
    "--timeout", "-t", "--slow", "-s", "--require", "-r", "--ui", "-u", "--config", "--package", "--extension",
    "--ignore", "--exclude", "--file", "--retries", "--jobs", "-j", "--node-option", "-n", "--import",
}


def mocha_positional(words: list[str]) -> list[str]:
    """Spec paths/globs on the mocha command line (and ``--spec`` values)."""
    start = next((i + 1 for i, w in enumerate(words) if re.search(r"(?:^|/)_?mocha(?:\.c?js)?$", w)), None)
    if start is None:
        return []
    out: list[str] = []
    k = start
    while k < len(words):
        w = words[k]
        if w in ("&&", "||", ";", "|"):
            break
        if w == "--spec" and k + 1 < len(words):
            out.append(words[k + 1])
            k += 2
            continue
        if w.startswith("--spec="):
            out.append(w[7:])
        elif w.startswith("-"):
            k += 2 if "=" not in w and w in VALUE_OPTIONS else 1
            continue
        else:
            out.append(w)
        k += 1
    return out




def _read_config(root: Path | None) -> dict[str, object]:
    """.mocharc.{json,jsonc,yml,yaml} or package.json's "mocha" key."""
    if root is None:
        return {}
    for name in (".mocharc.json", ".mocharc.jsonc", ".mocharc.yml", ".mocharc.yaml"):
        p = root / name
        if not p.is_file():
            continue
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
            if name.endswith(("yml", "yaml")):
                data = yaml.safe_load(text)
            else:
                data = json.loads(re.sub(r"(?m)^\s*//.*$", "", text))
        except (OSError, ValueError, yaml.YAMLError):
            continue
        if isinstance(data, dict):
            return data
    try:
        pkg = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return pkg["mocha"] if isinstance(pkg, dict) and isinstance(pkg.get("mocha"), dict) else {}


def _head(lines: Iterator[str], limit: int) -> Iterator[str]:
    for k, line in enumerate(lines):
        if k >= limit:
            return
        yield line


def _text(v: object) -> str | None:
    return v if isinstance(v, str) and v.strip() else None


def _split_failure(lines: list[str]) -> tuple[str | None, str | None]:
    """An epilogue failure block -> (message, details): the message is the
    error text up to the "+ expected - actual" diff or the stack."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if not lines:
        return None, None
    msg: list[str] = []
    for ln in lines:
        if STACK_RE.match(ln) or DIFF_HEAD_RE.match(ln):
            break
        msg.append(ln.strip())
    return "\n".join(msg).strip() or lines[0].strip(), "\n".join(lines)


def _split_tap12(lines: list[str]) -> tuple[str | None, str | None]:
    """Mocha's TAP 12 failure: the message (indented), then the stack,
    whose first line is ``Name: message``."""
    body = [ln[2:] if ln.startswith("  ") else ln for ln in lines]
    while body and not body[-1].strip():
        body.pop()
    if not body:
        return None, None
    k = next((i for i, ln in enumerate(body) if i > 0 and ERROR_HEAD_RE.match(ln) and not ln.startswith(" ")), None)
    if k is None:
        return _split_failure(body)[0], "\n".join(body)
    message = "\n".join(body[:k]).strip()
    first = body[k].strip()
    if message and first.endswith(message.splitlines()[0].strip()):
        message = "\n".join([first, *message.splitlines()[1:]])  # keep the error's name
    return message or first, "\n".join(body[k:])


def _split_xunit(text: str) -> tuple[str | None, str | None]:
    """Mocha's xunit failure text: the message, a diff, then the stack."""
    lines = text.splitlines()
    k = next((i for i, ln in enumerate(lines) if i > 0 and ERROR_HEAD_RE.match(ln) and not ln.startswith(" ")),
             None)
    head = lines[:k] if k is not None else lines
    cut = next((i for i, ln in enumerate(head) if DIFF_HEAD_RE.match(ln) or STACK_RE.match(ln)), None)
    message = "\n".join(head[:cut]).strip()
    if k is not None and message and lines[k].strip().endswith(message.splitlines()[0].strip()):
        message = "\n".join([lines[k].strip(), *message.splitlines()[1:]])
    return message or (lines[0].strip() if lines else None), text or None


def _json_document(lines: Iterator[str]) -> dict[str, object] | None:
    """The Mocha JSON document in a stream whose first lines may be the
    tests' console output: it starts at a ``{`` line followed by ``"stats"``."""
    buf: list[str] = []
    prev: str | None = None
    size = 0
    for line in lines:
        if not buf:
            if prev is not None and prev.strip() == "{" and line.lstrip().startswith('"stats"'):
                buf = [prev]
            elif line.startswith('{"stats"'):
                buf = []
            else:
                prev = line
                continue
        buf.append(line)
        size += len(line) + 1
        if size > MAX_JSON_BYTES:
            return None
    if not buf:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode("\n".join(buf))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def parse(run: RunOutput) -> TestReport:
    """Parse a Mocha run (any reporter listed in the module docstring)."""
    return _Parser(run).parse()


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

RUNNER_BINS = ("mocha", "_mocha")
PACKAGE, PACKAGE_RANK = "mocha", 3
WATCH_FLAGS = {"-w"}
SELECT_VALUE_OPTIONS = {
    "-R", "--reporter", "-O", "--reporter-option", "--reporter-options", "-r", "--require", "-t", "--timeout", "-s",
    "--slow", "-g", "--grep", "-f", "--fgrep", "-u", "--ui", "--config", "--package", "--extension", "--spec",
    "--ignore", "--exclude", "--file", "-j", "--jobs", "--retries",
}
SELECT_OPTIONS = {"-g", "--grep", "-f", "--fgrep", "--spec", "-i", "--invert"}
DEFAULT_INVOCATION = "npx mocha"
# Crash resume (spec/list reporters): a run without its summary died in the first test
# after the last one reported, in the spec files' order (``--grep ... --invert``).
RESUMABLE = True
SERIAL = True
FAILURES_AT_END = True


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    return [*test_files(tests, inv), "--grep", shlex.quote(title_pattern([t.id for t in tests]))]


def rerun_command(command: str, invocation: Callable[[], Invocation], scope: str | None,
                  skip: list[TestResult], listed: tuple[str, list[str]] | None) -> str | None:
    """Its spec files stay; Mocha matches --grep against full titles."""
    inv = invocation()
    return inv.render(*inv.positionals, "--grep", shlex.quote(title_pattern([t.id for t in skip])), "--invert")
