"""Pattern analysis of one failure: what kind of failure it is,
the evidence line that says so, expected/actual values when the assertion
shows them, the error site in the project, and a suggestion.

Pure: ``TestResult`` (plus the set of project files) in, ``FailureClassification`` out.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel

from ..parsers.models import TestResult


class FailureKind(StrEnum):
    ASSERTION = "assertion"
    NULL_REFERENCE = "null_reference"
    INDEX_OUT_OF_RANGE = "index_out_of_range"
    KEY_ERROR = "key_error"
    TYPE_MISMATCH = "type_mismatch"
    IMPORT_ERROR = "import_error"
    TIMEOUT = "timeout"
    CRASH = "crash"
    BUILD_ERROR = "build_error"
    FIXTURE_ERROR = "fixture_error"
    OTHER = "other"


# What to try first, for every kind of failure.
SUGGESTIONS = {
    FailureKind.ASSERTION: "Compare expected vs actual values: fix the code under test (or a wrong expectation)",
    FailureKind.NULL_REFERENCE: "Add a nil/None check before dereferencing, or make sure the value is set",
    FailureKind.INDEX_OUT_OF_RANGE: "Verify array/slice bounds and loop limits",
    FailureKind.KEY_ERROR: "Check that the key exists before looking it up, or use a default",
    FailureKind.TYPE_MISMATCH: "Check type conversions and the types passed across the call",
    FailureKind.IMPORT_ERROR: "Verify import paths, module names and that dependencies are installed",
    FailureKind.TIMEOUT: "Optimize slow operations, fix a hang or deadlock, or increase the timeout",
    FailureKind.CRASH: "Find the panic/crash site in the stack and guard the failing operation",
    FailureKind.BUILD_ERROR: "Fix the compile/syntax error first: no test in that unit can run until it builds",
    FailureKind.FIXTURE_ERROR: "Fix the failing setup/fixture/hook: every test that uses it fails with it",
    FailureKind.OTHER: "Read the error and the stack trace from the test down to the failing call",
}

# Checked in order: the first kind whose pattern matches the evidence wins.
# Type mismatches come before crashes: the crash pattern's generic
# "Exception: " would otherwise swallow e.g. Java's ClassCastException.
PATTERNS: list[tuple[FailureKind, re.Pattern[str]]] = [
    (FailureKind.BUILD_ERROR, re.compile(
        r"error\[E\d{4}\]|could not compile|COMPILATION ERROR|cannot find symbol|SyntaxError|Parse error|"
        r"\[build failed\]|\[setup failed\]|\d:\d+: error: expected|compilation terminated|undefined reference to", re.I)),
    (FailureKind.FIXTURE_ERROR, re.compile(
        r"ERROR at (setup|teardown) of|\"(before|after) (all|each)\" hook|setUpClass|setUpModule|@BeforeAll|"
        r"@BeforeEach|beforeAll|beforeEach|fixture '\w+' not found", re.I)),
    (FailureKind.IMPORT_ERROR, re.compile(
        r"ModuleNotFoundError|ImportError|Cannot find module|could not import|cannot find package|"
        r"unresolved import|LoadError|cannot load such file|NoClassDefFoundError|ClassNotFoundException|"
        r"ERR_MODULE_NOT_FOUND|no required module provides package", re.I)),
    (FailureKind.TIMEOUT, re.compile(
        r"timed? ?out|Timeout of \d+|Exceeded timeout|deadline exceeded|TimeoutError|Timeout::Error", re.I)),
    (FailureKind.NULL_REFERENCE, re.compile(
        r"NoneType|nil pointer|NullPointerException|null pointer|of (undefined|null) \(reading|"
        r"Cannot read propert(y|ies) of (undefined|null)|undefined method .* for nil|is not an object|"
        r"on null|Option::unwrap\(\)` on a `None`|called `Option::unwrap\(\)` on a `None` value", re.I)),
    (FailureKind.INDEX_OUT_OF_RANGE, re.compile(
        r"IndexError|index out of (range|bounds)|ArrayIndexOutOfBounds|IndexOutOfBounds|out of range|"
        r"RangeError|index \d+ out of|StringIndexOutOfBounds", re.I)),
    (FailureKind.KEY_ERROR, re.compile(
        r"KeyError|key not found|NoSuchElementException|Undefined (array )?(index|key)|KeyNotFound", re.I)),
    (FailureKind.TYPE_MISMATCH, re.compile(
        r"TypeError|cannot use .* as|ClassCastException|mismatched types|is not a function|"
        r"incompatible types|type mismatch|NoMethodError|AttributeError", re.I)),
    (FailureKind.CRASH, re.compile(
        r"^panic:|SIGSEGV|SIGABRT|Segmentation fault|SegFault|core dumped|\bAborted\b|stack overflow|"
        r"fatal error:|Exception: ", re.I | re.M)),
    (FailureKind.ASSERTION, re.compile(
        r"AssertionError|assert(ion)?\b|expect(ed)?\b|Expected|to (equal|be|have)|but (was|got)|"
        r"\bwant\b|\bgot\b|Failure|does not match|not equal|toEqual|toBe|left == right|assert_eq", re.I)),
]

# The header of a raised assertion failure (Python, Node's assert, JUnit, chai, Ruby...): what
# follows it is the assertion's own message, which may quote any error's name ("IndexError not
# raised", "expected [Function] to throw RangeError"): the failure is still an assertion.
_ASSERTION_RAISED = re.compile(
    r"^\s*(?:E\s+)?(?:[\w$]+\.)*(?:AssertionError|AssertionFailedError|ComparisonFailure|AssertionFailure|"
    r"ExpectationNotMetError|MultipleFailuresError)\b(?:\s*\[ERR_ASSERTION\])?(?::|$)", re.M)

_EXCEPTION_HEADER = re.compile(r"^\s*(?:E\s+)?(?:[\w$]+\.)*[A-Z][\w$]*(?:Error|Exception|Failure)\b")
# Kinds that are not a raised error's type (a build, a fixture, a timeout): an assertion inside them stays theirs.
_NOT_RAISED = {FailureKind.BUILD_ERROR, FailureKind.FIXTURE_ERROR, FailureKind.TIMEOUT, FailureKind.ASSERTION}


def _assertion_raised(test: TestResult) -> bool:
    """Did the test fail on an assertion? The message's first line names the error raised when it
    names one; else an assertion failure's header anywhere in the message or the details."""
    first = next((line for line in (test.message or "").splitlines() if line.strip()), "")
    if _EXCEPTION_HEADER.match(first):
        return bool(_ASSERTION_RAISED.match(first))
    return any(_ASSERTION_RAISED.search(x or "") for x in (test.message, test.details))


# Expected/actual extraction, most specific first: (regex, expected group, actual group).
EXPECTED_ACTUAL: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"Expected:?\s*(?P<e>.+?)\s*\n\s*Received:?\s*(?P<a>.+)"), "e", "a"),           # Jest/Vitest
    (re.compile(r"expected:?\s*<(?P<e>.*?)> but was:?\s*<(?P<a>.*?)>", re.I), "e", "a"),         # JUnit
    (re.compile(r"got:?\s*(?P<a>.+?),?\s+want:?\s*(?P<e>.+)", re.I), "e", "a"),                  # Go
    (re.compile(r"left:\s*(?P<a>.+)\n\s*right:\s*(?P<e>.+)"), "e", "a"),                         # Rust assert_eq
    (re.compile(r"expected:?\s*(?P<e>.+?)\s*\n\s*got:?\s*(?P<a>.+)", re.I), "e", "a"),            # RSpec
    (re.compile(r"expected (?P<e>.+?),? (?:but )?(?:got|was|received) (?P<a>.+)", re.I), "e", "a"),
    (re.compile(r"assert (?P<a>.+?) == (?P<e>.+)"), "e", "a"),                                   # pytest
    (re.compile(r"Failed asserting that (?P<a>.+?) (?:matches expected|is identical to|equals) (?P<e>.+?)\.?$",
                re.M), "e", "a"),                                                                # PHPUnit
]

# Stack frames across languages: (path, line).
FRAME_PATTERNS = [
    re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)'),                     # Python traceback
    re.compile(r"^(?P<path>[\w./<>\\-][^\s:()]*\.\w+):(?P<line>\d+)(?::\d+)?:?", re.M),  # file:line: (pytest, go, rust, gtest)
    re.compile(r"\((?P<path>[^()\s]+\.\w+):(?P<line>\d+)(?::\d+)?\)"),              # JS/Java "(file:line[:col])"
    re.compile(r"at (?P<path>/[^\s:()]+\.\w+):(?P<line>\d+)"),                      # JS "at /abs/file:line"
    re.compile(r"(?P<path>[\w./-]+\.\w+):(?P<line>\d+):in"),                        # Ruby
    re.compile(r"^\t(?P<path>[^\s:()]+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$", re.M),   # Go goroutine stack
]


class Frame(BaseModel):
    file: str
    line: int


class FailureClassification(BaseModel):
    test_id: str
    test_file: str | None = None
    kind: FailureKind
    evidence: str
    expected: str | None = None
    actual: str | None = None
    # The innermost frame in the project's own code that is not the test
    # itself, else the first project frame: where a fix most likely goes.
    error_site: Frame | None = None
    project_frames: list[Frame] = []
    suggestion: str


def _evidence_line(text: str, pattern: re.Pattern[str]) -> str:
    for line in text.splitlines():
        if pattern.search(line):
            return line.strip()[:300]
    return text.strip().splitlines()[0][:300] if text.strip() else ""


def _normalize_path(path: str, project_files: set[str]) -> str | None:
    path = path.replace("\\", "/")
    if path.startswith("<ROOT>/"):
        path = path[len("<ROOT>/"):]
    while path.startswith("./"):
        path = path[2:]
    if path in project_files:
        return path
    # Absolute paths: the longest project-relative suffix that exists.
    parts = path.split("/")
    for i in range(1, len(parts)):
        candidate = "/".join(parts[i:])
        if candidate in project_files:
            return candidate
    return None


def _by_basename(path: str, project_files: set[str]) -> str | None:
    # Java stacks ("at a.B.c(B.java:12)") and go test ("b_test.go:12:") name
    # files without their directory: the project file of that name, if unique.
    suffix = "/" + path
    found = [f for f in project_files if f.endswith(suffix)]
    return found[0] if len(found) == 1 else None


def project_frames(text: str, project_files: set[str]) -> list[Frame]:
    """Stack frames of ``text`` that point into the project, in order, deduplicated."""
    seen: set[tuple[str, int]] = set()
    frames: list[tuple[int, Frame]] = []
    bare: dict[str, str | None] = {}
    for pattern in FRAME_PATTERNS:
        for m in pattern.finditer(text):
            path = m.group("path")
            rel = _normalize_path(path, project_files)
            if rel is None and "/" not in path and "\\" not in path:
                if path not in bare:
                    bare[path] = _by_basename(path, project_files)
                rel = bare[path]
            if rel is None:
                continue
            key = (rel, int(m.group("line")))
            if key not in seen:
                seen.add(key)
                frames.append((m.start(), Frame(file=rel, line=key[1])))
    return [f for _, f in sorted(frames, key=lambda p: p[0])]


def classify(test: TestResult, project_files: set[str] | frozenset[str] = frozenset()) -> FailureClassification:
    """Classify one failing test from its message and details."""
    text = "\n".join(x for x in (test.message, test.details) if x)
    kind = FailureKind.OTHER
    evidence = text.strip().splitlines()[0][:300] if text.strip() else ""
    if test.timed_out:
        kind, evidence = FailureKind.TIMEOUT, evidence or "the test timed out"
    else:
        for k, pattern in PATTERNS:
            if pattern.search(text):
                kind, evidence = k, _evidence_line(text, pattern)
                break
        if kind not in _NOT_RAISED and _assertion_raised(test):
            kind, evidence = FailureKind.ASSERTION, _evidence_line(text, _ASSERTION_RAISED)
    expected = actual = None
    # Only an assertion has compared values: elsewhere "assert f(x) == 2" is
    # just the source line the traceback quotes, and f(x) was never computed.
    for pattern, e, a in EXPECTED_ACTUAL if kind is FailureKind.ASSERTION else []:
        m = pattern.search(text)
        if m:
            expected, actual = m.group(e).strip()[:200], m.group(a).strip()[:200]
            break
    frames = project_frames(text, set(project_files))
    # The error site is the innermost project frame outside the test.
    site = next((f for f in _nearest_first(frames) if f.file != test.file), frames[0] if frames else None)
    suggestion = SUGGESTIONS[kind]
    if site is not None:
        suggestion += f" (error site {site.file}:{site.line})"
    return FailureClassification(
        test_id=test.id, test_file=test.file, kind=kind, evidence=evidence, expected=expected, actual=actual,
        error_site=site, project_frames=frames, suggestion=suggestion,
    )


def innermost_first(c: FailureClassification) -> list[Frame]:
    """The project frames of a failure, nearest the error first."""
    return _nearest_first(c.project_frames)


def _nearest_first(frames: list[Frame]) -> list[Frame]:
    # Python tracebacks list the innermost call last, other stacks first.
    return frames[::-1] if frames and all(f.file.endswith(".py") for f in frames) else list(frames)
