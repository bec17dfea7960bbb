"""RSpec (rspec-core 3): the console formatters (progress, documentation,
coloured or not), the JSON formatter (to a file with ``--out`` or to stdout
after the tests' own output) and any mix of them.

Ids are RSpec's ``full_description``: the group descriptions and the example
description joined with a space, except that a ``#``/``.``/``::`` description
directly under a group described by a class is glued on (``Cart#add``).
Load errors are keyed by the spec file as RSpec prints it
(``./spec/x_spec.rb``). Mapping:

* passed -> passed; failed -> failed (hook errors included: RSpec reports
  them as the examples' failures); an exception of class ``Timeout::Error``
  -> failed with ``timed_out``;
* pending with a ``pending`` body that still fails -> xfailed (native
  ``pending``); ``skip``/``xit``/an example without a body -> skipped;
* a ``pending`` example that passes is a failure marked ``FIXED`` -> failed;
* ``An error occurred while loading <file>.`` -> errored entry + build_error
  (RSpec then runs no example at all); other errors outside of examples
  (``before(:suite)`` hooks...) -> an errored entry named by RSpec's header.

The JSON report says ``pending`` for both kinds of pending examples: the
console's Pending section (a ``Failure/Error`` under the entry) or the spec
source (a ``pending`` call in the body) tells them apart. Formatters that do
not print passing examples (progress) leave those to the spec files
themselves (``SpecIndex`` below), checked against the summary counts.

A run killed by coreutils ``timeout``: the example after the last one that
finished (in definition order; progress dots are mapped onto the sources)
is the hanging one -> failed with ``timed_out``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .command import command_words
from .invocation import Invocation, bin_name
from .locate import Location, SourceIndex
from .models import Status, TestReport, TestResult
from .run_output import RunOutput
from .source.ruby import MAX_SPEC_NODES, SPEC_SUFFIX, SpecIndex, SpecNode

FRAMEWORK = "rspec"

# Env assignments and wrappers (timeout 60, env, time, nice) may come first.
_PREFIX = (r"^(?:\w+=(?:'[^']*'|\"[^\"]*\"|\S*)\s+|(?:env|time|nice|xvfb-run)\s+"
           r"|timeout\s+(?:-\S+\s+)*(?:(?:-s|-k)\s+\S+\s+)?\d\S*\s+)*")
COMMAND_RE: list[re.Pattern[str]] = [
    # rspec, bin/rspec, bundle exec rspec, ruby -S rspec
    re.compile(_PREFIX + r"(?:bundle\s+exec\s+|ruby\s+-S\s+)?(?:\S*/)?rspec(?:\s|$)"),
    re.compile(_PREFIX + r"(?:bundle\s+exec\s+)?(?:\S*/)?(?:rake|rails)\s+spec(?::\S+)?(?:\s|$)"),
]
OUTPUT_RE: list[re.Pattern[str]] = [
    re.compile(r"^\d+ examples?, \d+ failures?", re.M),
    re.compile(r"^rspec '?\.?/?\S+_spec\.rb(?::\d+|\[[\d:]+\])'? # ", re.M),
    re.compile(r"^An error occurred while loading \S+\.\s*$", re.M),
    re.compile(r"^Pending: \(Failures listed here are expected and do not affect your suite's status\)", re.M),
    re.compile(r"^\s+Failure/Error: ", re.M),
    re.compile(r"^Finished in [\d.]+ (?:seconds?|minutes?) \(files took ", re.M),
]

# ============================================================================ command line
FORMATTERS = {
    "p": "progress", "progress": "progress", "d": "documentation", "doc": "documentation",
    "documentation": "documentation", "j": "json", "json": "json", "h": "html", "html": "html",
    "f": "failures", "failures": "failures",
}
# Options that select examples in ways the spec sources cannot replay.
FILTER_OPTS = {"-t", "--tag", "-P", "--pattern", "--exclude-pattern", "-E", "--example-matches",
               "--only-failures", "--next-failure"}
FLAG_OPTS = {"--only-failures", "--next-failure"}
VALUE_OPTS = {"-r", "--require", "-I", "--default-path", "-O", "--options", "--failure-exit-code",
              "--error-exit-code", "--deprecation-out", "-X"}
ENV_OPTS_RE = re.compile(r"(?:^|\s)SPEC_OPTS=('[^']*'|\"[^\"]*\"|\S+)")
RSPEC_WORD_RE = re.compile(r"(?:^|/)rspec$")




@dataclass
class Options:
    """What the command line (plus ``.rspec`` files and ``SPEC_OPTS``) asks of RSpec."""

    formatters: list[tuple[str, str | None]] = field(default_factory=list)  # (name, out path or None)
    paths: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)  # -e substrings
    filtered: bool = False  # tags or other filters we cannot evaluate
    random: bool = False

    @property
    def stdout_formatters(self) -> list[str]:
        return [f for f, out in self.formatters if out is None] or (["progress"] if not self.formatters else [])

    def add(self, words: list[str], positional: bool) -> None:
        i = 0
        while i < len(words):
            w = words[i]
            val: str | None = None
            if w.startswith("--") and "=" in w:
                w, val = w.split("=", 1)
            elif re.fullmatch(r"-[foe]\S+", w):
                w, val = w[:2], w[2:]

            def take() -> str | None:
                nonlocal i
                if val is not None:
                    return val
                i += 1
                return words[i] if i < len(words) else None

            if w in ("-f", "--format", "--formatter"):
                name = take() or "progress"
                self.formatters.append((FORMATTERS.get(name, name), None))
            elif w in ("-o", "--out"):
                out = take()
                if self.formatters:
                    name, _ = self.formatters[-1]
                    self.formatters[-1] = (name, out)
                else:
                    self.formatters.append(("progress", out))
            elif w in ("-e", "--example"):
                if (v := take()) is not None:
                    self.examples.append(v)
            elif w in FILTER_OPTS:
                self.filtered = True
                if w not in FLAG_OPTS:
                    take()
            elif w in ("--order", "--seed"):
                v = take() or ""
                self.random = self.random or w == "--seed" or v.startswith("rand")
            elif w in VALUE_OPTS:
                take()
            elif positional and not w.startswith("-"):
                self.paths.append(w)
            i += 1


def parse_options(command: str, root: Path | None) -> Options:
    """RSpec's options for this command: ``.rspec`` files, then ``SPEC_OPTS``,
    then the command line of the last ``rspec`` segment."""
    opts = Options()
    for name in (".rspec", ".rspec-local"):
        if root is not None and (root / name).is_file():
            try:
                text = (root / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            opts.add(command_words(" ".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))), False)
    file_formatters = list(opts.formatters)
    segments = re.split(r"\s*(?:&&|\|\||;|\|)\s*", command.strip())
    seg = next((s for s in reversed(segments) if any(p.search(s) for p in COMMAND_RE)), "")
    m = ENV_OPTS_RE.search(seg) or ENV_OPTS_RE.search(command)
    env_opts = Options()
    if m:
        env_opts.add(command_words(m.group(1).strip("'\"")), False)
    cmd_opts = Options()
    words = command_words(seg)
    start = next((i + 1 for i, w in enumerate(words) if RSPEC_WORD_RE.search(w)), len(words))
    cmd_opts.add(words[start:], True)
    # Each later source replaces the formatters of the earlier ones:
    # options files, then the command line, then SPEC_OPTS.
    opts.formatters = env_opts.formatters or cmd_opts.formatters or file_formatters
    cmd_opts.examples += env_opts.examples
    cmd_opts.filtered = cmd_opts.filtered or env_opts.filtered
    cmd_opts.random = cmd_opts.random or env_opts.random
    opts.paths = cmd_opts.paths
    opts.examples = opts.examples + cmd_opts.examples
    opts.filtered = opts.filtered or cmd_opts.filtered
    opts.random = opts.random or cmd_opts.random
    return opts


# ============================================================================ console
SUMMARY_RE = re.compile(
    r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?")
FINISHED_RE = re.compile(r"^Finished in \S+ (?:seconds?|minutes?)")
PENDING_HDR_RE = re.compile(r"^Pending:(?: \(Failures listed here are expected|\s*$)")
FAILURES_HDR_RE = re.compile(r"^Failures:\s*$")
FAILED_LIST_HDR_RE = re.compile(r"^Failed examples:\s*$")
FAILED_LIST_RE = re.compile(r"^rspec ('(?:[^']|'\\'')*'|\S+) # (.*)$")
ENTRY_RE = re.compile(r"^  (\d+)\) (.*)$")
OUTSIDE_RE = re.compile(r"^An error occurred (?:while loading (.+)\.|(.+?)\.?)\s*$")
PROFILE_RE = re.compile(r"^Top \d+ slowest example")
DOC_MARK_RE = re.compile(r"^(.*?) \((?:FAILED - (\d+)|PENDING: (.*))\)$")
PROGRESS_RE = re.compile(r"^[.F*]+")
FRAME_RE = re.compile(r"^\s*# (\S+?\.rb):(\d+)(?::in |$)")
LOCATION_RE = re.compile(r"^\s*# (\S+?\.rb):(\d+)\s*$")
TIMEOUT_CLASS_RE = re.compile(r"(?:^|::)Timeout(?:::|Error\b)|\bTimeoutError\b|^Timeout::Error\b")
CLASS_LINE_RE = re.compile(r"^\s*([A-Z][\w]*(?:::[A-Z]\w*)*):\s*$")


@dataclass
class Entry:
    """One numbered entry of the Pending or Failures section (or an error
    outside of examples)."""

    title: str
    lines: list[str] = field(default_factory=list)

    def body(self) -> tuple[list[str], list[str]]:
        """Lines before the backtrace and the backtrace."""
        lines = list(self.lines)
        while lines and not lines[-1].strip():
            lines.pop()
        k = next((i for i, ln in enumerate(lines) if FRAME_RE.match(ln) or re.match(r"^\s*# \S+:\d+", ln)), len(lines))
        return lines[:k], lines[k:]

    def failure(self) -> tuple[str | None, str | None, str | None]:
        """Message, details and exception class of a failure block."""
        body, trace = self.body()
        if body and body[0].lstrip().startswith("# ") and not body[0].lstrip().startswith("# ./"):
            body = body[1:]  # a pending entry's reason line
        k = next((i for i, ln in enumerate(body) if ln.lstrip().startswith("Failure/Error:")), None)
        msg_lines = body[k + 1:] if k is not None else body
        while msg_lines and not msg_lines[0].strip():
            msg_lines = msg_lines[1:]
        exc = None
        for ln in msg_lines:
            if (m := CLASS_LINE_RE.match(ln)):
                exc = m.group(1)
                break
        if msg_lines:
            message: str | None = "\n".join([msg_lines[0].strip(), *(ln.rstrip() for ln in msg_lines[1:])])
        elif k is not None:
            message = body[k].strip()
        else:
            message = None
        details = _dedent(self.lines)
        return message, details, exc

    def reason(self) -> str | None:
        for ln in self.lines:
            s = ln.strip()
            if s:
                return s[2:] if s.startswith("# ") else None
        return None

    def has_failure(self) -> bool:
        return any(ln.lstrip().startswith("Failure/Error:") or CLASS_LINE_RE.match(ln) for ln in self.lines)

    def location(self) -> tuple[str, int] | None:
        """``# ./spec/x_spec.rb:12`` (an example's own location, no ``:in``)."""
        for ln in self.lines:
            if (m := LOCATION_RE.match(ln)):
                return m.group(1), int(m.group(2))
        return None


def _dedent(lines: list[str]) -> str | None:
    rows = [ln.rstrip() for ln in lines]
    while rows and not rows[-1]:
        rows.pop()
    while rows and not rows[0]:
        rows.pop(0)
    if not rows:
        return None
    pad = min(len(r) - len(r.lstrip()) for r in rows if r.strip())
    return "\n".join(r[pad:] for r in rows)


@dataclass
class DocExample:
    chain: tuple[str, ...]
    text: str
    failure_no: int | None
    pending_reason: str | None
    # The chain had a group replaced the one before it at the same level:
    # that "group" may have been the tests' own output.
    alt_chain: tuple[str, ...] | None = None


class DocTree:
    """The documentation formatter's tree: groups and examples by indentation
    (two spaces a level). A line is a group when the next line is one level
    deeper; lines that fit nowhere are the tests' own output."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, str, str | None]] = []  # (indent, text, the sibling it replaced)
        self.buf: list[tuple[int, str]] = []  # at most three lines of lookahead
        self.examples: list[DocExample] = []
        self.marks = 0

    def feed(self, line: str) -> None:
        if not line.strip():
            return
        self.buf.append((len(line) - len(line.lstrip(" ")), line.strip()))
        self._drain(final=False)

    def finish(self) -> None:
        self._drain(final=True)

    def _drain(self, final: bool) -> None:
        while len(self.buf) >= 3 or (final and self.buf):
            nxt = self.buf[1] if len(self.buf) > 1 else None
            after = self.buf[2] if len(self.buf) > 2 else None
            if nxt is not None and self._stray(nxt, after):
                del self.buf[1]
                continue
            self._settle(self.buf.pop(0), nxt[0] if nxt else None)

    @staticmethod
    def _stray(line: tuple[int, str], after: tuple[int, str] | None) -> bool:
        """The tests' own output: an odd indentation, or an unindented line
        (only a top-level group can be one) not followed by a group's body."""
        ind, text = line
        if ind % 2:
            return True
        return ind == 0 and (DOC_MARK_RE.match(text) is not None or after is None or after[0] != 2)

    def _settle(self, prev: tuple[int, str], next_indent: int | None) -> None:
        ind, text = prev
        if ind % 2:
            return
        mark = DOC_MARK_RE.match(text)
        chain = [s for s in self.stack if s[0] < ind]
        parent_ok = (not chain and ind == 0) or (bool(chain) and chain[-1][0] == ind - 2)
        if mark is None and next_indent == ind + 2:
            if parent_ok:
                replaced = next((s[1] for s in self.stack if s[0] == ind), None)
                self.stack = chain + [(ind, text, replaced)]
            return
        if not chain or chain[-1][0] != ind - 2 or len(self.examples) >= MAX_SPEC_NODES:
            return
        self.stack = chain
        texts = tuple(s[1] for s in chain)
        alt = None
        for k in range(len(chain) - 1, -1, -1):
            if chain[k][2] is not None:
                alt = texts[:k] + (str(chain[k][2]),) + texts[k + 1:]
                break
        if mark:
            self.marks += 1
            no = int(mark.group(2)) if mark.group(2) else None
            self.examples.append(DocExample(texts, mark.group(1), no, mark.group(3), alt))
        else:
            self.examples.append(DocExample(texts, text, None, None, alt))


class Console:
    """A streaming reader of RSpec's console output."""

    def __init__(self) -> None:
        self.state = "body"
        self.tree = DocTree()
        self.progress: list[str] = []
        self.pending: list[Entry] = []
        self.failures: list[Entry] = []
        self.outside: list[tuple[str | None, Entry]] = []  # (loaded file or None, entry)
        self.failed_list: list[tuple[str, str]] = []  # (location, description)
        self.summary: tuple[int, int, int, int] | None = None
        self.current: Entry | None = None
        self.blank_run = 0
        self.stderr = False

    def feed(self, line: str) -> None:
        s = line.rstrip()
        if (m := OUTSIDE_RE.match(s)) and not s.startswith(" "):
            self.current = Entry(m.group(1) or m.group(2) or s)
            self.outside.append((m.group(1), self.current))
            self.state = "outside"
            self.blank_run = 0
            return
        if PENDING_HDR_RE.match(s):
            self.state, self.current = "pending", None
            return
        if FAILURES_HDR_RE.match(s):
            self.state, self.current = "failures", None
            return
        if FINISHED_RE.match(s):
            self.state, self.current = "finished", None
            return
        if (m := SUMMARY_RE.match(s)):
            self.summary = tuple(int(g or 0) for g in m.groups())  # type: ignore[assignment]
            self.state = "finished"
            return
        if FAILED_LIST_HDR_RE.match(s):
            self.state = "failed_list"
            return
        if PROFILE_RE.match(s):
            self.state = "profile"
            return
        if self.state == "body":
            if not self.stderr:
                if (m := PROGRESS_RE.match(s)) and len(self.progress) < MAX_SPEC_NODES:
                    self.progress.extend(m.group(0))
                self.tree.feed(s)
        elif self.state in ("pending", "failures"):
            if (m := ENTRY_RE.match(s)):
                self.current = Entry(m.group(2))
                (self.pending if self.state == "pending" else self.failures).append(self.current)
            elif self.current is not None and len(self.current.lines) < 400:
                self.current.lines.append(s)
        elif self.state == "outside" and self.current is not None:
            self.blank_run = self.blank_run + 1 if not s.strip() else 0
            if self.blank_run >= 2:
                self.state, self.current = "finished", None
            elif len(self.current.lines) < 400:
                self.current.lines.append(s)
        elif self.state == "failed_list":
            if (m := FAILED_LIST_RE.match(s)):
                loc = m.group(1)
                if loc.startswith("'") and loc.endswith("'"):
                    loc = loc[1:-1].replace("'\\''", "'")
                self.failed_list.append((loc, m.group(2)))

    def finish(self) -> None:
        self.tree.finish()


# ============================================================================ JSON formatter
JSON_MARK = '{"version":'
MAX_JSON_BYTES = 512 * 1024 * 1024
CHUNK = 1 << 20
FIXED_CLASS = "RSpec::Core::Pending::PendingExampleFixedError"
EXPECTATION_CLASSES = ("RSpec::Expectations::ExpectationNotMetError",
                       "RSpec::Expectations::MultipleExpectationsNotMetError")


def _chunks(run: RunOutput, stream: str) -> Iterator[str]:
    text: str | None = getattr(run, f"{stream}_text")
    path: Path | None = getattr(run, f"{stream}_path")
    if text is not None:
        for i in range(0, len(text), CHUNK):
            yield text[i:i + CHUNK]
    elif path is not None and path.is_file():
        with open(path, encoding="utf-8", errors="replace") as fh:
            while chunk := fh.read(CHUNK):
                yield chunk


def json_in_stream(chunks: Iterator[str]) -> tuple[dict | None, str | None]:
    """The first RSpec JSON document in a stream (it may follow the tests'
    own output on the same line). Returns (document, problem)."""
    buf = ""
    found = False
    size = 0
    for chunk in chunks:
        if not found:
            buf = buf[-len(JSON_MARK):] + chunk
            k = buf.find(JSON_MARK)
            if k < 0:
                continue
            found = True
            buf = buf[k:]
            size = len(buf)
            continue
        buf += chunk
        size += len(chunk)
        if size > MAX_JSON_BYTES:
            return None, "the JSON document is too large"
    if not found:
        return None, "no JSON document"
    try:
        data, _ = json.JSONDecoder().raw_decode(buf)
    except ValueError as exc:
        return None, f"the JSON document is truncated or invalid ({exc})"
    except RecursionError:
        return None, "the JSON document is nested too deeply"
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        return None, "the JSON document is not an RSpec report"
    return data, None


# ============================================================================ parsing
CONST_TEXT_RE = re.compile(r"^(?:::)?[A-Z]\w*(?:::[A-Z]\w*)*$")
SPEC_PATH_RE = re.compile(r"^(.+?)(?::(\d+(?::\d+)*)|\[([\d:,]+)\])?$")


class _Parser:
    def __init__(self, run: RunOutput, sources: SourceIndex | None = None) -> None:
        self.run = run
        self.report = TestReport(framework=FRAMEWORK)
        self.sources = sources or SourceIndex(run.sources_root)
        self.specs = SpecIndex(self.sources)
        self.opts = parse_options(run.command, run.sources_root)
        self.console = Console()
        self._by_name: dict[str, list[SpecNode]] | None = None
        self._partial: list[tuple[re.Pattern[str], SpecNode]] = []
        self._decls: dict[str, list[int]] = {}
        self.tree_names: list[str] = []  # documentation lines, in run order

    # ------------------------------------------------------------------ sources
    def by_name(self) -> dict[str, list[SpecNode]]:
        """Examples of the spec files this command runs, by full description
        (those with unknown parts go to ``self._partial``)."""
        if self._by_name is None:
            self._by_name = {}
            for node in self.specs.examples(self.run_files()):
                if node.known:
                    self._by_name.setdefault(node.full_text, []).append(node)
                elif any(node.full):
                    self._partial.append((node.pattern(), node))
            # Most specific patterns first; a bare generated description last.
            self._partial.sort(key=lambda pn: -sum(len(p) for p in pn[1].full if p))
        return self._by_name

    def run_files(self) -> list[str]:
        """The spec files this command runs (RSpec's default: spec/**/*_spec.rb)."""
        all_files = self.specs.spec_files()
        if not self.opts.paths:
            default = [f for f in all_files if f.startswith("spec/")]
            return default or all_files
        out: list[str] = []
        for p in self.opts.paths:
            m = SPEC_PATH_RE.match(p)
            rel = self.sources.relative(m.group(1) if m else p) or ""
            rel = rel.rstrip("/")
            for f in all_files:
                if (f == rel or (f.startswith(rel + "/") or not rel)) and f not in out:
                    out.append(f)
        return out

    def node_for(self, name: str) -> SpecNode | None:
        nodes = self.by_name().get(name)
        if nodes:
            return nodes[0]
        return next((node for pattern, node in self._partial if pattern.match(name)), None)

    def node_by_id(self, rel: str, scoped: str) -> SpecNode | None:
        for node in self.specs.examples([rel]):
            if node.scoped_id == scoped:
                return node
        return None

    # ------------------------------------------------------------------ main
    def parse(self) -> TestReport:
        for line in self.run.lines("stdout"):
            self.console.feed(line)
        self.console.stderr = True
        self.console.state = "body"
        for line in self.run.lines("stderr"):
            self.console.feed(line)
        self.console.finish()

        found: list[TestResult] = []
        data = self.json_report()
        found.extend(self.outside_errors(data))
        if data is not None:
            found.extend(self.from_json(data))
        else:
            found.extend(self.from_console())
            if self.console.summary is not None or found:
                self.report.sources.append("console")
        if self.run.killed_by_timeout and data is None:
            found.extend(self.hanging(found))
        self.check_counts(found, data)
        seen_ids: set[tuple[str, str | None, int | None]] = set()
        for f in found:
            key = (f.id, f.file, f.line)
            if key in seen_ids:
                continue
            seen_ids.add(key)
            # Validated again: texts assigned after an entry was made are bounded here.
            self.report.tests.append(TestResult.model_validate(f.model_dump()))
        self.report.timed_out = self.run.killed_by_timeout or any(t.timed_out for t in self.report.tests)
        if not self.report.tests and self.console.summary is None:
            self.report.warnings.append("no RSpec results found in the output")
            self.report.output_tail = self.run.tail()
        return self.report

    # ------------------------------------------------------------------ JSON
    def json_report(self) -> dict | None:
        """The JSON formatter's document: the ``--out`` file, else stdout."""
        for name, out in self.opts.formatters:
            if name != "json":
                continue
            if out is None:
                data, problem = json_in_stream(_chunks(self.run, "stdout"))
                label = "json:stdout"
            else:
                path = self.run.resolve(out)
                if path is None or not path.is_file():
                    self.report.warnings.append(f"JSON report {out} does not exist; read the console")
                    continue
                data, problem = json_in_stream(_chunks(RunOutput(stdout_path=path), "stdout"))
                label = f"json:{out}"
            if data is None:
                self.report.warnings.append(f"{label}: {problem}; read the console")
                continue
            self.report.sources.append(label)
            return data
        return None

    def from_json(self, data: dict) -> list[TestResult]:
        out: list[TestResult] = []
        failures = {self._fixed_title(e.title)[0]: e for e in self.console.failures}
        pendings = {e.title: e for e in self.console.pending}
        for ex in data.get("examples") or []:
            if not isinstance(ex, dict) or not isinstance(ex.get("full_description"), str):
                continue
            name = ex["full_description"]
            status = ex.get("status")
            file = self.sources.relative(ex["file_path"]) if isinstance(ex.get("file_path"), str) else None
            line = ex.get("line_number") if isinstance(ex.get("line_number"), int) else None
            run_time = ex.get("run_time")
            f = TestResult(id=name, status=Status.PASSED, file=file, line=line,
                           duration_s=float(run_time) if isinstance(run_time, (int, float)) else None)
            exc = ex.get("exception") if isinstance(ex.get("exception"), dict) else None
            pending_message = ex.get("pending_message") if isinstance(ex.get("pending_message"), str) else None
            if status == "failed":
                f.status = Status.FAILED
                cls = str(exc.get("class") or "") if exc else ""
                if name in failures:
                    f.message, f.details, console_cls = failures[name].failure()
                    cls = cls or (console_cls or "")
                elif exc is not None:
                    f.message, f.details = self._json_failure(exc, pending_message)
                if cls == FIXED_CLASS:
                    f.native_status = "failed (FIXED)"
                f.timed_out = bool(TIMEOUT_CLASS_RE.search(cls))
            elif status == "pending":
                entry = pendings.get(name)
                xfail = exc is not None or (entry.has_failure() if entry is not None else self._pending_body(name))
                f.status = Status.XFAILED if xfail else Status.SKIPPED
                f.native_status = "pending"
                f.message = pending_message or (entry.reason() if entry else None)
                if entry is not None:
                    f.details = _dedent(entry.lines)
            elif status != "passed":
                f.status = Status.SKIPPED
                f.native_status = str(status)
            out.append(f)
        return out

    @staticmethod
    def _json_failure(exc: dict, pending_message: str | None) -> tuple[str | None, str | None]:
        cls = str(exc.get("class") or "")
        msg = str(exc.get("message") or "").strip("\n")
        trace = exc.get("backtrace") if isinstance(exc.get("backtrace"), list) else []
        if cls == FIXED_CLASS:
            # What the console says for it, then the exception's own words.
            lead = f"Expected pending '{pending_message or 'No reason given'}' to fail. No error was raised."
            message = f"{lead}\n{msg}" if msg else lead
        elif cls in EXPECTATION_CLASSES or not cls:
            message = msg.strip()
        else:
            message = f"{cls}:\n  " + msg.strip().replace("\n", "\n  ")
        details = "\n".join([message, *("# " + str(t) for t in trace)])
        return message or None, details

    def _pending_body(self, name: str) -> bool:
        """Without the console's Pending section: does the example run (a
        ``pending`` call or metadata, expected to fail) rather than skip?"""
        node = self.node_for(name)
        return node is not None and node.pending and not node.skipped

    # ------------------------------------------------------------------ errors outside examples
    def outside_errors(self, data: dict | None) -> list[TestResult]:
        entries = list(self.console.outside)
        if data is not None and isinstance(data.get("messages"), list):
            sub = Console()
            sub.state = "finished"
            for msg in data["messages"]:
                if isinstance(msg, str):
                    for ln in msg.splitlines():
                        sub.feed(ln)
            known = {e.title for _, e in entries}
            entries += [(f, e) for f, e in sub.outside if e.title not in known]
        out: list[TestResult] = []
        for loaded, entry in entries:
            message, details, _cls = entry.failure()
            if loaded is not None:
                rel = self.sources.relative(loaded)
                line = None
                for ln in entry.lines:
                    for m in re.finditer(r"(\S+?\.rb):(\d+)", ln):
                        path = m.group(1).lstrip("#").strip()
                        if rel is not None and self.sources.relative(path) == rel:
                            line = int(m.group(2))
                            break
                    if line is not None:
                        break
                self.report.build_error = True
                out.append(TestResult(id=loaded, status=Status.ERRORED, file=rel, line=line, message=message,
                                      details=details, native_status="error occurred while loading"))
            else:
                out.append(TestResult(id=f"An error occurred {entry.title}".rstrip("."), status=Status.ERRORED,
                                      message=message, details=details, native_status="error outside of examples"))
        return out

    # ------------------------------------------------------------------ console
    @staticmethod
    def _fixed_title(title: str) -> tuple[str, bool]:
        if title.endswith(" FIXED"):
            return title[: -len(" FIXED")], True
        return title, False

    def from_console(self) -> list[TestResult]:
        out: list[TestResult] = []
        c = self.console
        named: set[str] = set()
        failure_names: dict[int, str] = {}
        for no, entry in enumerate(c.failures, start=1):
            name, fixed = self._fixed_title(entry.title)
            message, details, cls = entry.failure()
            if fixed and message is None:
                message = next((ln.strip() for ln in entry.lines if ln.strip()), None)
            f = TestResult(id=name, status=Status.FAILED, message=message, details=details,
                           timed_out=bool(cls and TIMEOUT_CLASS_RE.search(cls)),
                      native_status="failed (FIXED)" if fixed else None)
            self.place(f, entry)
            out.append(f)
            named.add(name)
            failure_names[no] = name
        for entry in c.pending:
            xfail = entry.has_failure()
            f = TestResult(id=entry.title, status=Status.XFAILED if xfail else Status.SKIPPED,
                           message=entry.reason(), details=_dedent(entry.lines), native_status="pending")
            self.place(f, entry)
            out.append(f)
            named.add(entry.title)
        if self.doc_mode():
            out.extend(self.from_tree(named, failure_names))
        elif not self.run.killed_by_timeout:
            # (A killed run's summary counts the example that was hanging:
            # the dots, mapped onto the sources, say more; see hanging().)
            out.extend(self.passed_from_sources(named, out))
        return out

    def doc_mode(self) -> bool:
        if "documentation" in self.opts.stdout_formatters:
            return True
        return self.console.tree.marks > 0 and not self.opts.formatters

    def place(self, f: TestResult, entry: Entry | None) -> None:
        """Where the output places an example: the ``Failed examples`` rerun
        line, else the failure's location. For the normalizer, which uses it
        only when ``locate`` does not find the example in the sources (the
        failure's location is not the definition)."""
        for loc, desc in self.console.failed_list:
            if desc != f.id:
                continue
            m = SPEC_PATH_RE.match(loc)
            if m:
                file = self.sources.relative(m.group(1))
                line = None
                if m.group(2):
                    line = int(m.group(2).split(":")[0])
                elif m.group(3) and file:
                    n = self.node_by_id(file, m.group(3))
                    line = n.line if n else None
                if file:
                    self.report.output_locations[f.id] = (file, line)
                return
        if entry is not None:
            loc = entry.location()
            if loc is not None:
                if file := self.sources.relative(loc[0]):
                    self.report.output_locations[f.id] = (file, loc[1])
                return
            _, trace = entry.body()
            for ln in trace:
                m = FRAME_RE.match(ln)
                if m and m.group(1).endswith(SPEC_SUFFIX):
                    if file := self.sources.relative(m.group(1)):
                        self.report.output_locations[f.id] = (file, int(m.group(2)))
                    return

    def from_tree(self, named: set[str], failure_names: dict[int, str]) -> list[TestResult]:
        """Passing examples (and, when the run ended before its summary, the
        failed and pending ones) from the documentation formatter's tree."""
        known = set(named) | set(self.by_name()) | {d for _, d in self.console.failed_list}
        prefixes: set[str] = set()
        for name in known:
            prefixes.add(name)
            for i, ch in enumerate(name):
                if ch == " ":
                    prefixes.add(name[:i])
        out: list[TestResult] = []
        for ex in self.console.tree.examples:
            if ex.failure_no is not None and ex.failure_no in failure_names:
                continue
            name = self._doc_name(ex.chain, ex.text, prefixes)
            if ex.alt_chain is not None and name not in known:
                alt = self._doc_name(ex.alt_chain, ex.text, prefixes)
                name = alt if alt in known else name
            self.tree_names.append(name)
            if name in named:
                continue
            if ex.failure_no is not None:
                f = TestResult(id=name, status=Status.FAILED)
            elif ex.pending_reason is not None:
                # No Pending section (the run ended early): the source tells
                # a `pending` body (expected to fail) from a skip.
                status = Status.XFAILED if self._pending_body(name) else Status.SKIPPED
                f = TestResult(id=name, status=status, message=ex.pending_reason, native_status="pending")
            else:
                f = TestResult(id=name, status=Status.PASSED)
            self.place(f, None)
            out.append(f)
        summary = self.console.summary
        passed = [f for f in out if f.status == Status.PASSED]
        if summary is not None and self.by_name() and len(passed) > summary[0] - summary[1] - summary[2]:
            # More passing lines than RSpec counted: some were the tests' own
            # output. Keep the ones the spec files define.
            out = [f for f in out if f.status != Status.PASSED or self.node_for(f.id) is not None]
        return out

    @staticmethod
    def _doc_name(chain: tuple[str, ...], text: str, prefixes: set[str]) -> str:
        full = chain[0]
        parent = chain[0]
        for part in chain[1:]:
            glued, spaced = full + part, full + " " + part
            if part[:1] in ("#", ".") or part.startswith("::"):
                if glued in prefixes and spaced not in prefixes:
                    full = glued
                elif spaced in prefixes and glued not in prefixes:
                    full = spaced
                else:
                    full = glued if CONST_TEXT_RE.match(parent) else spaced
            else:
                full = spaced
            parent = part
        return f"{full} {text}"

    def passed_from_sources(self, named: set[str], found: list[TestResult]) -> list[TestResult]:
        """Progress output names no passing example: take them from the spec
        files, filtered like RSpec filters them, checked against the summary."""
        summary = self.console.summary
        if summary is None:
            return []
        total, failures, pending, _errors = summary
        want = total - failures - pending
        if want <= 0:
            return []
        files = self.run_files()
        cands = [n for n in self.specs.examples(files) if self._selected(n)]
        passed = [n for n in cands if n.known and n.full_text not in named and not n.skipped
                  and not (n.pending and not n.skipped)]
        if len(passed) != want:
            self.report.warnings.append(
                f"the summary counts {want} passing example(s) but the spec files define {len(passed)} "
                "other example(s) this command selects")
            if len(passed) > want:
                return []
        self.report.sources.append("spec-sources")
        return [TestResult(id=n.full_text, status=Status.PASSED, file=n.file, line=n.line) for n in passed]

    def _selected(self, node: SpecNode) -> bool:
        """Whether the command's location, id and ``-e`` filters select ``node``."""
        filters: list[tuple[str, str | None, str | None]] = []
        for p in self.opts.paths:
            m = SPEC_PATH_RE.match(p)
            if m and (m.group(2) or m.group(3)):
                filters.append((self.sources.relative(m.group(1)) or "", m.group(2), m.group(3)))
        if filters:
            mine = [f for f in filters if f[0] == node.spec_file]
            if mine and not any(self._filter_hits(node, lines, ids) for _, lines, ids in mine):
                return False
        if self.opts.examples and not any(e in node.full_text for e in self.opts.examples):
            return False
        return True

    def _filter_hits(self, node: SpecNode, lines: str | None, ids: str | None) -> bool:
        if ids:
            return any(node.scoped_id == i or node.scoped_id.startswith(i + ":") for i in ids.split(","))
        rel = node.spec_file
        if rel not in self._decls:
            self._decls[rel] = sorted({n.line for n in self.specs.groups(rel) if n.file == rel}
                                      | {n.line for n in self.specs.examples([rel]) if n.file == rel})
        decls = self._decls[rel]
        for text in (lines or "").split(":"):
            want = int(text)
            prev = max((d for d in decls if d <= want), default=None)
            if prev is not None and node.covers(prev):
                return True
        return False

    # ------------------------------------------------------------------ checks
    def check_counts(self, found: list[TestResult], data: dict | None) -> None:
        summary = self.console.summary
        if data is not None and isinstance(data.get("summary"), dict):
            s = data["summary"]
            try:
                summary = (int(s.get("example_count", 0)), int(s.get("failure_count", 0)),
                           int(s.get("pending_count", 0)), int(s.get("errors_outside_of_examples_count", 0)))
            except (TypeError, ValueError):
                pass
        if summary is None:
            if self.run.exit_code not in (None, 0) or found:
                self.report.warnings.append("no RSpec summary line ('N examples, N failures'): the run did not finish")
            return
        total, failures, pending, _ = summary
        # Examples only: errors outside of examples are errored entries of their own.
        self.report.summary_counts = {"passed+failed+skipped+xfailed+xpassed": total, "failed": failures,
                                      "skipped+xfailed": pending}

    # ------------------------------------------------------------------ killed runs
    def hanging(self, found: list[TestResult]) -> list[TestResult]:
        """A run killed by ``timeout``: the example that was running is the
        one after the last that finished, in definition order (RSpec may
        still print a summary, counting it). Progress dots are mapped onto the
        examples in that order too."""
        if self.opts.random:
            self.report.warnings.append("the run was killed; random order hides which example was running")
            return []
        order = [n for n in self.specs.examples(self.run_files()) if self._selected(n)]
        names = [n.full_text if n.known else None for n in order]
        extra: list[TestResult] = []
        if self.doc_mode():
            last = self.tree_names[-1] if self.tree_names else None
            done = names.index(last) + 1 if last in names else len(self.tree_names)
        else:
            done = len(self.console.progress)
            have = {f.id for f in found}
            for node, ch in zip(order, self.console.progress):
                status = {".": Status.PASSED, "F": Status.FAILED, "*": Status.SKIPPED}[ch]
                if node.known and node.full_text not in have:
                    extra.append(TestResult(id=node.full_text, status=status, file=node.file, line=node.line))
        if done < len(order) and order[done].known:
            node = order[done]
            extra = [f for f in extra if f.id != node.full_text]
            found[:] = [f for f in found if f.id != node.full_text]
            extra.append(TestResult(id=node.full_text, status=Status.FAILED, file=node.file, line=node.line,
                                    timed_out=True,
                                    message="the run was killed by timeout while this example was running"))
        else:
            self.report.warnings.append("the run was killed; could not tell which example was running")
        return extra


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """An example's full description: its ``it``/``specify``/``example`` in
    the spec files the command runs (``.rspec`` options and paths), with
    descriptions the sources leave open (interpolation, generated ones)
    matched as patterns."""
    examples = _Parser(run, sources)
    return {t.id: Location(node.file, node.line) for t in tests
            if (node := examples.node_for(t.id)) is not None and node.file is not None}


def parse(run: RunOutput) -> TestReport:
    """Parse an RSpec run (formatters listed in the module docstring)."""
    return _Parser(run).parse()


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

SELECT_VALUE_OPTIONS = {
    "-f", "--format", "-o", "--out", "-r", "--require", "-e", "--example", "-t", "--tag", "-I", "--order", "--seed",
    "-P", "--pattern", "--default-path", "-E", "--example-matches", "--exclude-pattern", "--options",
}
SELECT_OPTIONS = {"-e", "--example", "--only-failures", "--next-failure", "-E", "--example-matches"}
DEFAULT_INVOCATION = "rspec"
REPORT_OPTIONS = " --format progress --format json --out {reports}/rspec.json"


def runner_end(words: list[str]) -> int | None:
    return next((i + 1 for i, w in enumerate(words) if bin_name(w) == "rspec"), None)


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    if all(t.file and t.line for t in tests):
        return [shlex.quote(f"{t.file}:{t.line}") for t in tests]
    return [w for t in tests for w in ("-e", shlex.quote(t.id))]


def suite_command(root: Path) -> tuple[str, list[str]]:
    return ("bundle exec rspec" if (root / "Gemfile").exists() else "rspec"), ["rspec", "rake test"]
