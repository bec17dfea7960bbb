"""Cargo / libtest: ``cargo test`` output in every libtest format.

* human ("pretty") output: one ``running N tests`` block per test binary on
  stdout (``test name ... ok|FAILED|ignored[, reason]``, then the captured
  output of failures under ``---- name stdout ----``, the ``failures:`` list
  and ``test result: ...``); cargo's ``Running <binary>`` / ``Doc-tests
  <crate>`` lines go to stderr, so the Nth block belongs to the Nth binary;
* ``-q`` (terse): progress characters instead of names; failed names come
  from the ``failures:`` list, the others from the sources (``#[test]``
  functions and doc-test code fences), checked against the summary counts;
* ``--nocapture``: test output and panic messages (on stderr) interleave
  with the result lines; messages are matched by the panicking thread name;
* ``-Z unstable-options --format json``: suite/test events, one per line;
* ``--format junit``: one XML document per binary on stdout; the formatter
  can crash on a multi-line message and truncate its document, so what it
  lost is recovered from the suite header's counts and the sources;
* compile errors (``error[E...]`` then ``error: could not compile `crate```)
  become one errored entry per crate and set ``build_error``;
* a run killed by ``timeout``: tests started but never finished fail with
  ``timed_out`` (named by a ``test x ...`` start line, a ``started`` event,
  a "has been running for over 60 seconds" warning, or, when libtest ran
  them in parallel silently, the binary's tests the output never mentions).

Ids are the names libtest prints (``tests::name``, doc tests
``src/lib.rs - item (line N)``); ``suite`` is the binary (``unittests
src/lib.rs``, ``tests/x.rs``, ``doc-tests``). file/line is the test's
definition (``fn name``; for doc tests the file and line in the id).
"""

from __future__ import annotations

import io
import json
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..domain.errors import ErrorKind, GreenloopError
from .command import command_words, unquote
from .invocation import Invocation, bin_name, split_args as split_words
from .junit_xml import JUnitReader
from .locate import SourceIndex, located_while_parsing
from .models import Status, TestReport, TestResult
from .run_output import ANSI_RE, RunOutput
from .source.rust import DOC_ID, RustSources, RustTest, TestBinary

FRAMEWORK = "cargo-test"
# A test is found in its test binary's target (the crate and root file from cargo's
# ``Running`` line), which a result does not carry: the parser places it.
locate = located_while_parsing
COMMAND_RE = [
    # cargo [+toolchain] [global flags] test|t ... (not nextest: its output differs)
    re.compile(r"(?:^|[\s/;&|(])cargo(?:\s+\+\S+)?(?:\s+-{1,2}[\w-]+(?:[= ]\S+)?)*?\s+(?:llvm-cov\s+)?(?:test|t)"
               r"(?:\s|$)"),
]
OUTPUT_RE = [
    re.compile(r"^test result: (?:ok|FAILED)\. \d+ passed; \d+ failed; \d+ ignored; \d+ measured;", re.M),
    re.compile(r"^\s+Running (?:unittests |tests/|benches/|examples/)\S*.*\(target[/\\]", re.M),
    re.compile(r"^\s+Doc-tests \S+\s*$", re.M),
    re.compile(r'^\{ "type": "(?:suite|test)", "event": "started"', re.M),
    re.compile(r'<testsuite name="test" package="test" id="0" errors="0"'),
    re.compile(r"^error: could not compile `[^`]+`", re.M),
    re.compile(r"^---- \S.* stdout ----$", re.M),
]

# -- cargo's own lines (stderr) ----------------------------------------------
RUNNING = re.compile(r"^\s*Running\s+(?P<label>.+?)(?:\s+\((?P<exe>[^)]*)\))?\s*$")
DOC_TESTS = re.compile(r"^\s*Doc-tests\s+(?P<crate>\S+)\s*$")
COULD_NOT_COMPILE = re.compile(r"^error: could not compile `(?P<crate>[^`]+)`(?P<rest>.*)$")
DIAG_HEAD = re.compile(r"^error(?:\[(?P<code>E\d+)\])?: (?P<msg>.*)$")
DIAG_LOC = re.compile(r"^\s*--> (?P<file>[^:\s][^:]*):(?P<line>\d+)(?::\d+)?\s*$")
# --message-format short: "src/lib.rs:9:18: error[E0308]: mismatched types"
DIAG_SHORT = re.compile(r"^(?P<file>[^\s:][^:]*\.rs):(?P<line>\d+):\d+: (?P<head>error(?:\[E\d+\])?: .*)$")
BUILD_SCRIPT = re.compile(r"^error: failed to run custom build command for `(?P<crate>\S+?)(?: v[^`]*)?`")
CARGO_STATUS = re.compile(r"^\s+(?:Compiling|Finished|Running|Doc-tests|Executable|Fresh|Checking|Blocking|"
                          r"Downloaded|Downloading|Updating|Locking|Adding)\s")
CARGO_ERRORS = re.compile(r"^error: (?:test failed, to rerun pass|\d+ targets? failed|could not compile|"
                          r"aborting due to|build failed|doctest failed)")
PROCESS_DIED = re.compile(r"process didn't exit successfully: .*\((?P<why>(?:signal|exit status)[^)]*)\)")

# -- libtest human output (stdout) -------------------------------------------
JSON_EVENT = re.compile(r'^\{\s*"type":\s*"(?:suite|test)"', re.M)
RUNNING_N = re.compile(r"^running (?P<n>\d+) tests?(?: \(shuffle seed: \d+\))?$")
RESULT = re.compile(r"^test (?P<name>.+?)(?: - (?P<mode>should panic|compile fail|compile))? \.\.\. (?P<rest>.*)$")
STATUS_WORD = re.compile(r"^(?P<word>ok|FAILED(?: \(time limit exceeded\))?|ignored(?:, (?P<reason>.*?))?|bench:.*)"
                         r"(?: <(?P<time>\d+(?:\.\d+)?)s>)?\s*$")
STARTED = re.compile(r"^test (?P<name>.+?)(?: - (?:should panic|compile fail|compile))? \.\.\. ?$")
LONG_RUNNING = re.compile(r"^test (?P<name>.+) has been running for over \d+ seconds$")
SECTION = re.compile(r"^---- (?P<name>.+?) (?:stdout|stderr) ----$")
LIST_HEAD = re.compile(r"^(?P<kind>failures|successes)(?: \(time limit exceeded\))?:$")
LIST_ITEM = re.compile(r"^    (?P<name>\S.*)$")
SUMMARY = re.compile(r"^test result: (?P<word>ok|FAILED)\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; "
                     r"(?P<ignored>\d+) ignored; (?P<measured>\d+) measured; (?P<filtered>\d+) filtered out")
TERSE = re.compile(r"^[.Fi]+(?: \d+/\d+)?$")

# -- panics --------------------------------------------------------------------
PANIC = re.compile(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at (?P<rest>.*)$")
OVERFLOW = re.compile(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? has overflowed its stack$")
PANIC_LOC = re.compile(r"^(?P<file>[^\s:'][^:]*\.rs):(?P<line>\d+):\d+:?$")
PANIC_OLD = re.compile(r"^'(?P<msg>.*)', (?P<file>[^\s:][^:]*\.rs):(?P<line>\d+):\d+$")
NOISE = re.compile(r"^note: run with `RUST_BACKTRACE=|^note: Some details are omitted")

# -- JUnit documents on stdout -------------------------------------------------
XML_DECL = "<?xml"
SUITE_HEAD = re.compile(r"<testsuite\b[^>]*>")
ATTR = re.compile(r'(\w+)="([^"]*)"')
CASE_OPEN = re.compile(r'<testcase\b[^>]*\bclassname="(?P<cls>[^"]*)"[^>]*\bname="(?P<name>[^"]*)"[^>]*?(?<!/)>')
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
REDIRECT_XML = re.compile(r"(?:^|\s)(?:1?>|>>|\|\s*tee(?:\s+-a)?)\s*(?P<path>[^\s|;&<>]+\.xml)\b")

CHUNK = 64 * 1024
MAX_SECTION_LINES = 400
MAX_MESSAGE_LINES = 30


# ---------------------------------------------------------------------------
# Model of one run: binaries, their blocks of results.


@dataclass
class _Test:
    name: str
    status: Status | None = None
    native: str | None = None
    reason: str | None = None
    duration: float | None = None
    lines: list[str] = field(default_factory=list)  # captured output / failure text
    message: str | None = None  # set directly by formats that carry one
    timed_out: bool = False


@dataclass
class _Block:
    """The results of one test binary."""

    count: int | None = None  # "running N tests" / suite test_count / testsuite tests=
    tests: dict[str, _Test] = field(default_factory=dict)
    summary: dict[str, int] | None = None  # passed/failed/ignored/measured/filtered
    complete: bool = False
    terse: bool = False
    failures: list[str] = field(default_factory=list)  # the 'failures:' list
    heads: dict[str, int] = field(default_factory=dict)  # 'failures:' / 'successes:' heads seen
    long_running: list[str] = field(default_factory=list)
    truncated_case: str | None = None  # JUnit: the <testcase> the formatter died in
    # Tests announce their start (JSON events, or one test thread printing
    # "test x ... " first): then the unfinished tests are exactly the started ones.
    announces_start: bool = False
    binary: TestBinary | None = None

    def test(self, name: str) -> _Test:
        t = self.tests.get(name)
        if t is None:
            t = self.tests[name] = _Test(name)
        return t


@dataclass
class _Stderr:
    """What cargo and the tests printed on stderr."""

    binaries: list[TestBinary] = field(default_factory=list)
    # (binary index, thread name) -> panic lines (--nocapture prints them here)
    panics: dict[tuple[int, str], list[str]] = field(default_factory=dict)
    compile_errors: list[tuple[str, list[str], list[str]]] = field(default_factory=list)  # crate, heads, text
    died: dict[int, str] = field(default_factory=dict)  # binary index -> "signal: 11, SIGSEGV..."


# ---------------------------------------------------------------------------
# stderr: binaries, compile errors, panics printed live.


def _binary_from(line: str) -> TestBinary | None:
    if m := DOC_TESTS.match(line):
        return TestBinary("doc-tests", crate=m.group("crate").replace("-", "_"))
    m = RUNNING.match(line)
    if m is None:
        return None
    label, exe = m.group("label").strip(), m.group("exe")
    if exe is None and "/deps/" in label.replace("\\", "/"):
        exe, label = label, label  # old cargo: "Running target/debug/deps/name-hash"
    crate = None
    if exe:
        stem = PurePosixPath(exe.replace("\\", "/")).name
        crate = re.sub(r"-[0-9a-f]{8,}(?:\.exe)?$", "", stem).replace("-", "_")
    words = label.split()
    path = words[-1] if words and words[-1].endswith(".rs") else None
    return TestBinary(label, crate=crate, path=path)


def _read_stderr(run: RunOutput) -> _Stderr:
    """One pass over stderr."""
    out = _Stderr()
    heads: list[str] = []
    text: list[str] = []
    in_diag = want_loc = False
    panic: list[str] | None = None
    for line in run.lines("stderr"):
        b = _binary_from(line) if CARGO_STATUS.match(line) else None
        if b is not None:
            out.binaries.append(b)
            panic, in_diag = None, False
            continue
        cur = len(out.binaries) - 1
        if m := OVERFLOW.match(line):
            out.panics.setdefault((cur, m.group("thread")), []).append(line)
            continue
        if m := PANIC.match(line):
            panic = out.panics.setdefault((cur, m.group("thread")), [])
            if len(panic) < MAX_SECTION_LINES:
                panic.append(line)
            in_diag = False
            continue
        if m := COULD_NOT_COMPILE.match(line):
            crate = m.group("crate")
            if not any(c == crate for c, _, _ in out.compile_errors):
                out.compile_errors.append((crate, heads, text))
            elif heads:
                for c, h, t in out.compile_errors:
                    if c == crate:
                        h.extend(x for x in heads if x not in h)
                        t.extend(text)
            heads, text, in_diag, panic = [], [], False, None
            continue
        if m := BUILD_SCRIPT.match(line):
            out.compile_errors.append((m.group("crate").replace("-", "_"), [line], [line]))
            heads, text, in_diag, panic = [], [], False, None
            continue
        if m := DIAG_SHORT.match(line):
            heads.append(f"{m.group('head')}\n --> {m.group('file')}:{m.group('line')}")
            text.append(line)
            in_diag, panic = False, None
            continue
        if m := PROCESS_DIED.search(line):
            out.died.setdefault(cur, m.group("why"))
        if DIAG_HEAD.match(line) and not CARGO_ERRORS.match(line):
            if len(heads) < MAX_MESSAGE_LINES:
                heads.append(line)
            in_diag, panic, want_loc = True, None, True
            if len(text) < MAX_SECTION_LINES:
                text.append(line)
            continue
        if line.startswith(("warning", "error")) or CARGO_STATUS.match(line):
            in_diag, panic = False, None
            continue
        if in_diag:
            if want_loc and heads and (m := DIAG_LOC.match(line)):
                heads[-1] += "\n" + line.strip()  # the head's own location, kept with it
                want_loc = False
            if len(text) < MAX_SECTION_LINES:
                text.append(line)
            continue
        if panic is not None:
            if line == "" or CARGO_ERRORS.match(line):
                panic = None
            elif len(panic) < MAX_SECTION_LINES:
                panic.append(line)
    return out


# ---------------------------------------------------------------------------
# stdout: human (pretty and terse) output.


def _set_result(t: _Test, rest: str) -> bool:
    """Apply a result word (``ok``, ``FAILED``, ``ignored, reason``...) to ``t``."""
    m = STATUS_WORD.match(rest)
    if m is None:
        return False
    word = m.group("word")
    if word == "ok" or word.startswith("bench:"):
        t.status = Status.PASSED
    elif word.startswith("FAILED"):
        t.status = Status.FAILED
        if "time limit" in word:
            t.timed_out, t.native = True, word
    else:
        t.status, t.native, t.reason = Status.SKIPPED, "ignored", m.group("reason")
    if m.group("time"):
        t.duration = float(m.group("time"))
    return True


def _read_human(lines: Iterator[str]) -> list[_Block]:
    """The ``running N tests`` blocks of libtest's human output."""
    blocks: list[_Block] = []
    block: _Block | None = None
    pending: _Test | None = None  # "test x ... " printed at start (one thread)
    section: _Test | None = None
    listing = False
    list_kind = ""
    for line in lines:
        if m := RUNNING_N.match(line):
            block = _Block(count=int(m.group("n")))
            blocks.append(block)
            pending = section = None
            listing = False
            continue
        if block is None:
            continue
        if m := SUMMARY.match(line):
            block.summary = {k: int(m.group(k)) for k in ("passed", "failed", "ignored", "measured", "filtered")}
            block.complete = True
            pending = section = None
            listing = False
            continue
        if m := LIST_HEAD.match(line):
            # Each list head comes twice: before the captured outputs, then before the names.
            head = m.group(0)
            block.heads[head] = block.heads.get(head, 0) + 1
            listing = block.heads[head] >= 2
            list_kind = m.group("kind")
            section = None
            continue
        if m := SECTION.match(line):
            section = block.test(m.group("name"))
            if section.lines:
                section.lines.append("")
            listing = False
            continue
        if listing:
            if m := LIST_ITEM.match(line):
                if list_kind == "failures":
                    block.failures.append(m.group("name"))
                continue
            if line == "":
                continue
            listing = False
        if section is not None:
            if len(section.lines) < MAX_SECTION_LINES:
                section.lines.append(line)
            continue
        if m := RESULT.match(line):
            t = block.test(m.group("name"))
            if m.group("mode") == "should panic":
                t.native = "ok (should panic)"
            if _set_result(t, m.group("rest")):
                if t.native == "ok (should panic)" and t.status != Status.PASSED:
                    t.native = None
                pending = None
            else:
                pending = t  # output printed after the name (--nocapture, one thread)
                block.announces_start = True
            continue
        if m := STARTED.match(line):
            pending = block.test(m.group("name"))
            block.announces_start = True
            continue
        if m := LONG_RUNNING.match(line):
            block.long_running.append(m.group("name"))
            continue
        if pending is not None and pending.status is None:
            for word in ("ok", "FAILED", "ignored"):
                i = line.rfind(word)
                if i >= 0 and _set_result(pending, line[i:]):
                    pending = None
                    break
            continue
        if TERSE.match(line) and not block.tests:
            block.terse = True
    return blocks


# ---------------------------------------------------------------------------
# stdout: libtest JSON events.


def _read_json(lines: Iterator[str], warnings: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    block: _Block | None = None
    bad = 0
    for line in lines:
        s = line.strip()
        if not s.startswith("{"):
            continue
        try:
            ev = json.loads(s)
        except ValueError:
            bad += 1
            continue
        if not isinstance(ev, dict):
            continue
        kind, event = ev.get("type"), ev.get("event")
        if kind == "suite":
            if event == "started":
                block = _Block(count=_int(ev.get("test_count")), announces_start=True)
                blocks.append(block)
            elif block is not None and event in ("ok", "failed"):
                block.summary = {k: _int(ev.get(k)) or 0 for k in ("passed", "failed", "ignored", "measured")}
                block.summary["filtered"] = _int(ev.get("filtered_out")) or 0
                block.complete = True
            continue
        if kind not in ("test", "bench") or not isinstance(ev.get("name"), str):
            continue
        if block is None:
            block = _Block(announces_start=True)
            blocks.append(block)
        t = block.test(ev["name"])
        if kind == "bench":
            t.status = Status.PASSED
            continue
        if event == "started":
            pass  # the test is known now: it fails as unfinished if no result follows
        elif event == "ok":
            t.status = Status.PASSED
        elif event == "failed":
            t.status = Status.FAILED
        elif event == "timeout":
            block.long_running.append(t.name)
        elif event == "ignored":
            t.status, t.native = Status.SKIPPED, "ignored"
            t.reason = ev.get("message") if isinstance(ev.get("message"), str) else None
        elif event == "allowed_fail":
            t.status, t.native = Status.PASSED, "allowed_fail"
        if isinstance(ev.get("exec_time"), (int, float)):
            t.duration = float(ev["exec_time"])
        if isinstance(ev.get("stdout"), str) and event != "started":
            t.lines.extend(ev["stdout"].splitlines()[:MAX_SECTION_LINES])
        if isinstance(ev.get("message"), str) and event == "failed":
            t.message = ev["message"]
    if bad:
        warnings.append(f"{bad} line(s) looked like libtest JSON events but could not be decoded")
    return blocks


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# ---------------------------------------------------------------------------
# stdout: libtest JUnit documents (one per binary, possibly truncated).


def _text_chunks(run: RunOutput, path: Path | None = None) -> Iterator[str]:
    """The raw text of stdout (or of a report file) in chunks, ANSI and XML-illegal
    control characters removed (a test's coloured output lands in CDATA)."""
    if path is not None:
        source: io.TextIOBase | None = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
    elif run.stdout_text is not None:
        source = io.StringIO(run.stdout_text)
    elif run.stdout_path is not None and run.stdout_path.is_file():
        source = open(run.stdout_path, encoding="utf-8", errors="replace")  # noqa: SIM115
    else:
        return
    carry = ""
    with source:
        while True:
            chunk = source.read(CHUNK)
            if not chunk:
                break
            chunk = carry + chunk
            # An escape sequence may be cut at the chunk's end: keep its start for the next chunk.
            cut = chunk.rfind("\x1b", max(0, len(chunk) - 32))
            carry, chunk = (chunk[cut:], chunk[:cut]) if cut >= 0 else ("", chunk)
            yield CONTROL.sub("", ANSI_RE.sub("", chunk))
    if carry:
        yield CONTROL.sub("", ANSI_RE.sub("", carry))


class _Documents:
    """Splits a text stream holding XML documents back to back (each starting
    with ``<?xml``, possibly on the line where a truncated one stopped)."""

    def __init__(self, chunks: Iterator[str]) -> None:
        self._chunks = chunks
        self._buf = ""
        self._eof = False

    def _fill(self) -> bool:
        nxt = next(self._chunks, None)
        if nxt is None:
            self._eof = True
            return False
        self._buf += nxt
        return True

    def next_document(self) -> bool:
        """Skip to the next ``<?xml``; False when there is none."""
        while True:
            i = self._buf.find(XML_DECL)
            if i >= 0:
                self._buf = self._buf[i:]
                return True
            self._buf = self._buf[-(len(XML_DECL) - 1):]
            if not self._fill():
                return False

    def document(self) -> Iterator[str]:
        """Pieces of the current document, up to the next ``<?xml``."""
        start = True
        while True:
            i = self._buf.find(XML_DECL, 1 if start else 0)
            if i >= 0:
                piece, self._buf = self._buf[:i], self._buf[i:]
                if piece:
                    yield piece
                return
            keep = len(XML_DECL) - 1
            if len(self._buf) > keep:
                piece, self._buf = self._buf[:-keep], self._buf[-keep:]
                start = False
                yield piece
            if not self._fill():
                if self._buf:
                    yield self._buf
                    self._buf = ""
                return


class _DocStream(io.RawIOBase):
    """A byte stream over one document's pieces that remembers its head (the
    suite header) and its tail (where a truncated document stopped)."""

    def __init__(self, pieces: Iterator[str]) -> None:
        self._pieces = pieces
        self._buf = b""
        self.head = ""
        self.tail = ""

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        while len(self._buf) < len(b):
            piece = next(self._pieces, None)
            if piece is None:
                break
            if len(self.head) < 4096:
                self.head += piece[:4096]
            self.tail = (self.tail + piece)[-16384:]
            self._buf += piece.encode("utf-8", errors="replace")
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def drain(self) -> None:
        for piece in self._pieces:
            self.tail = (self.tail + piece)[-16384:]


def _junit_id(cls: str, name: str, binary: TestBinary | None) -> str:
    """The libtest name back from JUnit's split: unit tests are split into
    module path (``crate`` at the root) and function, doc tests at `` - ``;
    integration tests (and tests outside the usual layout, ``unknown``) keep
    the whole name under a fixed classname."""
    integration = cls == "integration" and (binary is None or binary.integration or binary.path is None)
    if cls in ("crate", "unknown", "") or integration:
        return name
    if cls.endswith(".rs") and "(line " in name:
        return f"{cls} - {name}"
    return f"{cls}::{name}"


def _read_junit(chunks: Iterator[str], binaries: list[TestBinary], warnings: list[str]) -> list[_Block]:
    docs = _Documents(chunks)
    blocks: list[_Block] = []
    while docs.next_document():
        binary = binaries[len(blocks)] if len(blocks) < len(binaries) else None
        stream = _DocStream(docs.document())
        reader = JUnitReader(f"junit document {len(blocks) + 1}", stream=io.BufferedReader(stream))
        block = _Block(binary=binary)
        for case in reader:
            t = block.test(_junit_id(case.classname or "", case.name, binary))
            t.duration = case.time
            if case.outcome == "passed":
                t.status = Status.PASSED
            elif case.outcome == "skipped":
                t.status, t.native = Status.SKIPPED, "ignored"
                t.reason = case.message
            else:
                t.status = Status.FAILED
                if case.type == "timeout":
                    t.timed_out, t.native = True, "FAILED (time limit exceeded)"
                t.message = case.message
            if case.system_out:
                t.lines.extend(case.system_out.splitlines()[:MAX_SECTION_LINES])
        stream.drain()
        if m := SUITE_HEAD.search(stream.head):
            attrs = dict(ATTR.findall(m.group(0)))
            block.count = _int_str(attrs.get("tests"))
            failed, ignored = _int_str(attrs.get("failures")), _int_str(attrs.get("skipped"))
            if block.count is not None and failed is not None and ignored is not None:
                block.summary = {"passed": block.count - failed - ignored, "failed": failed, "ignored": ignored,
                                 "measured": 0, "filtered": -1}
        block.complete = reader.complete
        if not reader.complete:
            opened = list(CASE_OPEN.finditer(stream.tail))
            if opened and "</testcase>" not in stream.tail[opened[-1].end():]:
                block.truncated_case = _junit_id(opened[-1].group("cls"), opened[-1].group("name"), binary)
            warnings.append(f"libtest JUnit document {len(blocks) + 1} is truncated (the formatter crashed?); "
                            "recovered the rest from its header counts and the sources")
        blocks.append(block)
    return blocks


def _int_str(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


# ---------------------------------------------------------------------------
# Messages.


def _message(t: _Test, panics: list[str] | None) -> tuple[str | None, str | None]:
    """(message, details) of a failed test from its captured output, the
    panic printed live on stderr (--nocapture) and any message of its own."""
    lines = list(t.lines)
    while lines and not lines[0].strip():
        lines.pop(0)
    if panics and not any(PANIC.match(x) for x in lines):
        lines = panics + ([""] + lines if lines else [])
    details = "\n".join(lines).strip("\n") or None
    msg: list[str] = []
    start = next((i for i, x in enumerate(lines) if PANIC.match(x)), None)
    if start is not None:
        m = PANIC.match(lines[start])
        rest = m.group("rest") if m else ""
        if old := PANIC_OLD.match(rest):
            msg.append(old.group("msg"))
        elif rest and not PANIC_LOC.match(rest):
            msg.append(rest)
        for x in lines[start + 1:]:
            if x.startswith("stack backtrace:") or PANIC.match(x):
                break
            if NOISE.match(x):
                continue
            msg.append(x)
    else:
        notes = next((i for i, x in enumerate(lines) if x.startswith("note: ") and not NOISE.match(x)), None)
        msg = lines[notes:] if notes is not None else lines
    if t.message and t.message not in "\n".join(msg):
        msg.append(t.message)
    text = "\n".join(x for x in msg[:MAX_MESSAGE_LINES]).strip("\n")
    if t.message and details is None:
        details = t.message
    return text or None, details


def _panic_location(t: _Test, panics: list[str] | None) -> tuple[str, int] | None:
    for x in (panics or []) + t.lines:
        if m := PANIC.match(x):
            rest = m.group("rest")
            loc = PANIC_LOC.match(rest) or PANIC_OLD.match(rest)
            if loc:
                return loc.group("file"), int(loc.group("line"))
    return None


# ---------------------------------------------------------------------------
# The command: filters and flags that change what ran.


@dataclass
class _Flags:
    include_ignored: bool = False
    only_ignored: bool = False
    exact: bool = False
    filters: list[str] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)
    json: bool = False
    junit: bool = False
    junit_file: str | None = None
    targets: list[str] = field(default_factory=list)


CARGO_VALUE_OPTS = {"-p", "--package", "--test", "--bench", "--bin", "--example", "--features", "-F", "-j",
                    "--jobs", "--target", "--target-dir", "--manifest-path", "--profile", "--exclude", "--color",
                    "--message-format", "-Z", "--config", "--lockfile-path"}
LIBTEST_VALUE_OPTS = {"--test-threads", "--logfile", "--color", "--shuffle-seed"}


def _flags(command: str) -> _Flags:
    """What the (last) ``cargo test`` segment of the command asks for."""
    f = _Flags()
    segs = [s for s in re.split(r"\s*(?:&&|\|\||;)\s*", command) if COMMAND_RE[0].search(s)]
    seg = segs[-1] if segs else command
    if m := REDIRECT_XML.search(seg):
        f.junit_file = m.group("path")
    words = command_words(seg)
    try:
        i = next(i for i, w in enumerate(words) if w in ("test", "t") and i > 0 and "cargo" in " ".join(words[:i]))
    except StopIteration:
        i = 0
    after = words[i + 1:]
    split = after.index("--") if "--" in after else len(after)
    cargo_args, test_args = after[:split], after[split + 1:]
    j = 0
    while j < len(cargo_args):
        w = cargo_args[j]
        if w in CARGO_VALUE_OPTS:
            if w in ("--test", "--bench", "--bin", "--example"):
                f.targets.append(f"{w}={cargo_args[j + 1] if j + 1 < len(cargo_args) else ''}")
            j += 2
            continue
        if w.startswith("-"):
            f.targets.append(w)
        else:
            f.filters.append(w)  # cargo passes a positional TESTNAME on to libtest
        j += 1
    j = 0
    while j < len(test_args):
        w = test_args[j]
        val = test_args[j + 1] if j + 1 < len(test_args) else ""
        if w == "--include-ignored":
            f.include_ignored = True
        elif w == "--ignored":
            f.only_ignored = True
        elif w == "--exact":
            f.exact = True
        elif w in ("--format", "-Z") or w.startswith("--format="):
            fmt = w.split("=", 1)[1] if "=" in w else val
            f.json = f.json or fmt == "json"
            f.junit = f.junit or fmt == "junit"
            j += 0 if "=" in w else 1
        elif w == "--skip":
            f.skips.append(val)
            j += 1
        elif w in LIBTEST_VALUE_OPTS:
            j += 1
        elif w.startswith("-"):
            pass
        else:
            f.filters.append(w)
        j += 1
    return f


def _selected(name: str, flags: _Flags) -> bool:
    if any(s in name for s in flags.skips):
        return False
    if not flags.filters:
        return True
    return any((name == x) if flags.exact else (x in name) for x in flags.filters)


# ---------------------------------------------------------------------------
# Putting it together.


def _assign_binaries(blocks: list[_Block], binaries: list[TestBinary], src: RustSources, flags: _Flags) -> None:
    """The Nth block belongs to the Nth binary cargo announced; without those
    lines (``-q`` hides them) guess the targets from the project layout."""
    if not binaries and blocks:
        binaries = _guess_binaries(src, flags)
    for i, block in enumerate(blocks):
        if block.binary is None and i < len(binaries):
            block.binary = binaries[i]


def _guess_binaries(src: RustSources, flags: _Flags) -> list[TestBinary]:
    """The targets cargo would run, in its order: lib, bins, integration tests,
    doc tests (a fail-fast run stops early; the blocks take them in order)."""
    files = set(src.index.files([".rs"]))
    out: list[TestBinary] = []
    only_doc = "--doc" in flags.targets
    named_tests = [t.split("=", 1)[1] for t in flags.targets if t.startswith("--test=")]
    lib_only = "--lib" in flags.targets
    some_target = lib_only or named_tests or "--bins" in flags.targets or "--tests" in flags.targets
    if not only_doc:
        if "src/lib.rs" in files and (lib_only or not some_target or "--tests" in flags.targets):
            out.append(TestBinary("unittests src/lib.rs", path="src/lib.rs"))
        if not lib_only and not named_tests:
            for b in ["src/main.rs"] + sorted(f for f in files if re.fullmatch(r"src/bin/[^/]+\.rs", f)):
                if b in files:
                    out.append(TestBinary(f"unittests {b}", path=b))
        if not lib_only:
            for t in sorted(f for f in files if re.fullmatch(r"tests/[^/]+\.rs", f)):
                if not named_tests or PurePosixPath(t).stem in named_tests:
                    out.append(TestBinary(t, path=t))
    if "src/lib.rs" in files and (only_doc or not some_target):
        out.append(TestBinary("doc-tests"))
    return out


def _expected_status(d: RustTest, flags: _Flags) -> Status | None:
    """How a test defined in the sources ran when the output does not name it."""
    if d.ignored and not (flags.include_ignored or flags.only_ignored):
        return Status.SKIPPED
    if flags.only_ignored and not d.ignored:
        return None
    return Status.PASSED


def _unseen_defs(block: _Block, src: RustSources, flags: _Flags) -> list[RustTest]:
    root = src.root_file(block.binary)
    defs = src.defs(root)
    doc = block.binary is not None and block.binary.doc
    out = []
    for d in defs:
        is_doc = d.id.startswith("doc:")
        if is_doc != doc:
            continue
        name = _def_name(d)
        if name not in block.tests and _selected(name, flags):
            out.append(d)
    return out


def _def_name(d: RustTest) -> str:
    return d.id[4:] if d.id.startswith("doc:") else d.id


def _fill_from_sources(block: _Block, src: RustSources, flags: _Flags, warnings: list[str], killed: bool) -> None:
    """Tests the output does not name: terse progress, a truncated JUnit
    document, or tests running silently when the run was killed."""
    label = block.binary.label if block.binary else "a test binary"
    if block.terse or (block.summary and not block.tests and sum(v for k, v in block.summary.items()
                                                                 if k in ("passed", "ignored")) > 0):
        for name in block.failures:
            block.test(name).status = block.test(name).status or Status.FAILED
        unseen = _unseen_defs(block, src, flags)
        want = block.summary or {}
        got = {s: [d for d in unseen if _expected_status(d, flags) == s] for s in (Status.PASSED, Status.SKIPPED)}
        if block.summary is None or (len(got[Status.PASSED]) == want.get("passed", -1)
                                     and len(got[Status.SKIPPED]) == want.get("ignored", -1)):
            for s, ds in got.items():
                for d in ds:
                    t = block.test(_def_name(d))
                    t.status, t.native, t.reason = s, ("ignored" if s == Status.SKIPPED else None), d.reason
        else:
            warnings.append(f"{label}: quiet output names only failures and the sources do not match the "
                            f"summary counts; passed/ignored tests are not listed")
        return
    if block.complete and block.summary is not None and block.truncated_case is None:
        missing_ignored = block.summary["ignored"] - sum(1 for t in block.tests.values()
                                                         if t.status == Status.SKIPPED)
        if missing_ignored > 0:  # older JUnit formatters write no <testcase> for ignored tests
            ignored = [d for d in _unseen_defs(block, src, flags) if _expected_status(d, flags) == Status.SKIPPED]
            if len(ignored) == missing_ignored:
                for d in ignored:
                    t = block.test(_def_name(d))
                    t.status, t.native, t.reason = Status.SKIPPED, "ignored", d.reason
        return
    if block.complete:
        return
    # Incomplete block.
    if block.truncated_case:
        t = block.test(block.truncated_case)
        # libtest's JUnit formatter dies writing a multi-line failure message.
        t.status = t.status or Status.FAILED
        t.native = "FAILED (result lost: the JUnit formatter crashed)"
        t.message = t.message or ("libtest's JUnit formatter crashed while writing this test's failure "
                                  "(a multi-line message); its output is lost")
    for name in block.long_running:
        block.test(name)  # named by the 60-second warning: still running
    if block.summary is not None:
        # JUnit header counts say what the lost <testcase>s were.
        done = [t for t in block.tests.values() if t.status is not None]
        left = {
            Status.PASSED: block.summary["passed"] - sum(t.status == Status.PASSED for t in done),
            Status.FAILED: block.summary["failed"] - sum(t.status == Status.FAILED for t in done),
            Status.SKIPPED: block.summary["ignored"] - sum(t.status == Status.SKIPPED for t in done),
        }
        unseen = _unseen_defs(block, src, flags)
        skipped = [d for d in unseen if _expected_status(d, flags) == Status.SKIPPED]
        ran = [d for d in unseen if _expected_status(d, flags) == Status.PASSED]
        if len(skipped) == left[Status.SKIPPED]:
            for d in skipped:
                t = block.test(_def_name(d))
                t.status, t.native, t.reason = Status.SKIPPED, "ignored", d.reason
        if len(ran) == left[Status.PASSED] + left[Status.FAILED] and (
                left[Status.PASSED] == 0 or left[Status.FAILED] == 0):
            status = Status.FAILED if left[Status.FAILED] else Status.PASSED
            for d in ran:
                t = block.test(_def_name(d))
                t.status = status
                t.native = "result lost (JUnit formatter crashed)"
                if status == Status.FAILED:
                    t.message = ("failed (from the report's counts: libtest's JUnit formatter crashed before "
                                 "writing this result)")
        elif ran:
            warnings.append(f"{label}: the results the truncated report lost could not be told apart from the "
                            f"sources ({left[Status.PASSED]} passed, {left[Status.FAILED]} failed, "
                            f"{left[Status.SKIPPED]} ignored missing)")
        return
    # Killed (timeout or crash) before the summary: who was still running?
    running = [t for t in block.tests.values() if t.status is None]
    finished = sum(1 for t in block.tests.values() if t.status is not None)
    if not block.announces_start and block.count is not None and len(running) < block.count - finished:
        want = block.count - finished - len(running)
        cands = [d for d in _unseen_defs(block, src, flags) if _expected_status(d, flags) == Status.PASSED]
        if len(cands) == want:
            for d in cands:
                block.test(_def_name(d))
        elif want > 0:
            warnings.append(f"{label}: {want} test(s) never reported a result and could not be named from the "
                            "sources")
    if not killed:
        warnings.append(f"{label} ended without its 'test result:' line (the binary died or the output was cut)")
    for t in block.tests.values():
        if t.status is None:
            t.status = Status.FAILED
            if killed:
                t.timed_out, t.native = True, "killed by timeout while running"
            else:
                t.native = "no result (test binary died)"


def _locate(name: str, block: _Block, src: RustSources, panic_loc: tuple[str, int] | None
            ) -> tuple[str | None, int | None]:
    """Where a test is defined: its ``fn`` (found through the target's module
    tree), the file and line a doc-test id names, or the panic location."""
    binary = block.binary
    if m := DOC_ID.match(name):
        # rustdoc names files relative to the package (a workspace member's
        # "src/lib.rs" is "<member>/src/lib.rs" in the project).
        rel = src.index.relative(m.group("file")) or m.group("file")
        root = src.root_file(binary) if binary is not None else None
        if root and root.endswith("/src/lib.rs") and src.index.lines(root[: -len("src/lib.rs")] + rel):
            rel = root[: -len("src/lib.rs")] + rel
        return rel, int(m.group("line"))
    root = src.root_file(binary)
    for d in src.defs(root):
        if d.id == name:
            return d.file, d.line
    parts = name.split("::")
    # Macro-generated or unscanned tests: a `fn` named like the last segments,
    # in the target's files first, else in the panicking file, else anywhere if unique.
    files = src.files_of(root)
    prefer = src.index.relative(panic_loc[0]) if panic_loc else None
    for fn in (parts[-1], parts[-2] if len(parts) > 1 else None):
        hits = src.fns().get(fn or "", [])
        for pick in ([h for h in hits if h[0] in files], [h for h in hits if h[0] == prefer],
                     hits if len({f for f, _ in hits}) == 1 else []):
            if pick:
                return pick[0]
    if panic_loc:
        rel = src.index.relative(panic_loc[0])
        if rel and src.index.lines(rel):
            return rel, panic_loc[1]
    return None, None


def _compile_entries(err: _Stderr, src: RustSources) -> list[TestResult]:
    out = []
    for crate, heads, text in err.compile_errors:
        file = line = None
        for x in text:
            if m := DIAG_LOC.match(x) or DIAG_SHORT.match(x):
                file, line = src.index.relative(m.group("file")), int(m.group("line"))
                break
        out.append(TestResult(
            id=crate, status=Status.ERRORED, file=file, line=line, native_status="could not compile",
            message="\n".join(heads[:10]) or f"could not compile `{crate}`",
            details="\n".join(text) or None,
        ))
    return out


def parse(run: RunOutput) -> TestReport:
    """Parse a ``cargo test`` run (any libtest format) into a report."""
    report = TestReport(framework=FRAMEWORK)
    flags = _flags(run.command)
    err = _read_stderr(run)
    src = RustSources(SourceIndex(run.sources_root))
    head = run.head("stdout", 4096).lstrip()
    if flags.junit and flags.junit_file and not head.startswith(XML_DECL):
        path = run.resolve(flags.junit_file)
        if path is not None and path.is_file():
            blocks = _read_junit(_text_chunks(run, path), err.binaries, report.warnings)
            report.sources.append(f"junit-xml:{flags.junit_file}")
        else:
            report.warnings.append(f"JUnit report {flags.junit_file} named in the command was not found")
            blocks = []
    elif head.startswith(XML_DECL) or (XML_DECL in head and (flags.junit or "<testsuite" in head)):
        blocks = _read_junit(_text_chunks(run), err.binaries, report.warnings)
        report.sources.append("junit-xml:stdout")
    elif flags.json or JSON_EVENT.search(head):
        blocks = _read_json(run.lines("stdout"), report.warnings)
        report.sources.append("libtest-json:stdout")
    else:
        blocks = _read_human(run.lines("stdout"))
        report.sources.append("console")
    if len(blocks) > len(err.binaries) and err.binaries:
        report.warnings.append(f"{len(blocks)} result blocks but cargo announced {len(err.binaries)} test binaries")
    _assign_binaries(blocks, err.binaries, src, flags)
    killed = run.killed_by_timeout
    for i, block in enumerate(blocks):
        _fill_from_sources(block, src, flags, report.warnings, killed and i == len(blocks) - 1)

    report.tests.extend(_compile_entries(err, src))
    report.build_error = bool(err.compile_errors)
    seen: set[tuple[str, str | None]] = set()
    for bi, block in enumerate(blocks):
        b_index = err.binaries.index(block.binary) if block.binary in err.binaries else bi
        for t in block.tests.values():
            if t.status is None:
                continue
            key = (t.name, block.binary.label if block.binary else None)
            if key in seen:
                continue
            seen.add(key)
            panics = err.panics.get((b_index, t.name))
            message = details = None
            if t.status == Status.FAILED:
                message, details = _message(t, panics)
                if t.timed_out and message is None:
                    message = "the run was killed by timeout while this test was running"
                elif message is None and t.native and t.native.startswith("no result"):
                    why = err.died.get(b_index)
                    message = f"the test binary died{f' ({why})' if why else ''} while this test was running"
            elif t.status == Status.SKIPPED:
                message = t.reason
            file, line = _locate(t.name, block, src, _panic_location(t, panics))
            report.tests.append(TestResult(
                id=t.name, status=t.status, file=file, line=line, message=message, details=details,
                duration_s=t.duration, timed_out=t.timed_out, native_status=t.native,
                suite=block.binary.label if block.binary else None,
            ))
    if blocks and all(block.summary is not None for block in blocks):
        # Each binary's "test result: ok. P passed; F failed; I ignored", for the normalizer to check.
        report.summary_counts = {
            status: sum(block.summary[key] for block in blocks)  # type: ignore[index]
            for status, key in (("passed", "passed"), ("failed", "failed"), ("skipped", "ignored"))}
    report.timed_out = killed or any(t.timed_out for t in report.tests)
    if not report.tests:
        if run.exit_code not in (0, None) or killed:
            report.output_tail = run.tail()
        report.warnings.append("no cargo test results found in the output")
    return report


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

SELECT_VALUE_OPTIONS = {
    "-p", "--package", "-F", "--features", "--target", "--manifest-path", "-j", "--jobs", "--profile", "--test",
    "--bin", "--example", "--bench", "--target-dir", "--color", "--message-format", "-Z", "--exclude", "--config",
}
SELECT_OPTIONS = {"--lib", "--bins", "--tests", "--doc", "--test", "--bin", "--examples", "--example", "--benches",
                  "--bench", "--all-targets"}
# The test binaries' own (libtest) arguments, after ``--``.
LIBTEST_VALUE_OPTIONS = {"--format", "-Z", "--test-threads", "--skip", "--logfile", "--color", "--shuffle-seed"}
LIBTEST_SELECT_OPTIONS = {"--exact"}
DEFAULT_INVOCATION = "cargo test"
RESUMABLE = True
DIED = "no result (test binary died)"
RESUME_PER_SUITE = True  # one test binary died; cargo goes on with the others
FAILURES_AT_END = True  # libtest's "failures:" section


def runner_end(words: list[str]) -> int | None:
    names = [bin_name(w) for w in words]
    if "cargo" not in names:
        return None
    return next((i + 1 for i in range(names.index("cargo") + 1, len(words)) if unquote(words[i]) == "test"), None)


def split_args(args: list[str], inv: Invocation) -> None:
    """cargo's own options, then libtest's after ``--`` (kept in ``inv.after_dashes``)."""
    dashes = next((i for i, w in enumerate(args) if unquote(w) == "--"), len(args))
    split_words(args[:dashes], inv, SELECT_VALUE_OPTIONS, SELECT_OPTIONS)
    if dashes < len(args):
        rest = Invocation(before="", head=[])
        split_words(args[dashes + 1:], rest, LIBTEST_VALUE_OPTIONS, LIBTEST_SELECT_OPTIONS)
        inv.after_dashes = rest.options
        inv.dropped += rest.dropped + rest.positionals


def binary_flag(binary: str | None) -> str:
    """cargo's flag that runs only the test binary a result's suite label names (empty: unknown)."""
    if not binary:
        return ""
    if binary == "doc-tests" or binary.startswith("Doc-tests"):
        return "--doc"
    if binary.startswith("unittests src/lib.rs") or binary == "src/lib.rs":
        return "--lib"
    m = re.search(r"tests/([\w-]+)\.rs", binary)
    if m:
        return f"--test {m.group(1)}"
    m = re.search(r"src/bin/([\w-]+)\.rs", binary)
    if m:
        return f"--bin {m.group(1)}"
    return ""


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    binaries = {binary_flag(t.suite) for t in tests}
    if len(binaries) > 1:
        raise GreenloopError("cannot select cargo tests of several test binaries at once",
                             kind=ErrorKind.VALIDATION_ERROR, framework=FRAMEWORK)
    libtest = [*(inv.after_dashes or []), "--exact"]
    return [binaries.pop(), *(shlex.quote(t.id) for t in tests), "--", *libtest]


def rerun_command(command: str, invocation: Callable[[], Invocation], scope: str | None,
                  skip: list[TestResult], listed: tuple[str, list[str]] | None) -> str | None:
    """libtest with ``--test-threads=1`` prints ``test NAME ... `` before each test; ``--skip NAME --exact``."""
    inv = invocation()
    libtest = [w for w in inv.after_dashes or [] if not unquote(w).startswith("--test-threads")]
    skips = [w for t in skip for w in ("--skip", shlex.quote(t.id))]
    return inv.render(binary_flag(scope), "--", *libtest, "--exact", "--test-threads=1", *skips)


def suite_command(root: Path) -> tuple[str, list[str]]:
    return "cargo test --no-fail-fast", ["cargo test --all-features --no-fail-fast"]
