"""Streaming reader for JUnit/xUnit XML reports.

Nearly every framework can write this format (pytest, jest-junit, Vitest,
Mocha xunit, node:test, libtest, the JUnit console launcher, Surefire,
PHPUnit, ctest, googletest), each with its own dialect. This module only
reads the XML into neutral ``JUnitCase`` records; mapping them to ids and
statuses is each framework parser's business.

The reader is safe on hostile input (no DTDs or entities, via defusedxml),
keeps memory bounded (elements are dropped once read), and survives a
truncated file: the cases read before the cut are kept and a warning says
where it stopped.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO
from xml.etree.ElementTree import Element, ParseError

from defusedxml.ElementTree import iterparse

MAX_TEXT_CHARS = 16_000
PROBLEM_TAGS = ("failure", "error")
RERUN_TAGS = ("flakyFailure", "flakyError", "rerunFailure", "rerunError")


@dataclass
class JUnitCase:
    """One ``<testcase>`` element, dialect-neutral."""

    name: str
    classname: str | None
    suites: tuple[str, ...]  # names of the enclosing <testsuite> elements, outermost first
    suite_file: str | None = None
    file: str | None = None
    line: int | None = None
    time: float | None = None
    # "passed", "failure", "error" or "skipped": the first such child element.
    outcome: str = "passed"
    # Every child kind seen, in order (a case can fail and then error in teardown).
    kinds: list[str] = field(default_factory=list)
    message: str | None = None
    type: str | None = None
    text: str | None = None
    system_out: str | None = None
    system_err: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    properties: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class JUnitSuiteError:
    """A problem reported on a ``<testsuite>`` itself rather than on a case
    (some dialects put a load error or a crash there)."""

    suites: tuple[str, ...]
    kind: str
    message: str | None
    text: str | None


def _bounded(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip("\n")
    if len(text) > MAX_TEXT_CHARS:
        half = MAX_TEXT_CHARS // 2
        text = text[:half] + "\n...[truncated]...\n" + text[-half:]
    return text


def _float(v: str | None) -> float | None:
    try:
        return float(v) if v not in (None, "") else None
    except ValueError:
        return None


def _int(v: str | None) -> int | None:
    try:
        return int(v) if v not in (None, "") else None
    except ValueError:
        return None


def _case_from(elem: Element, suites: tuple[str, ...], suite_file: str | None) -> JUnitCase:
    a = dict(elem.attrib)
    case = JUnitCase(
        name=a.get("name", ""),
        classname=a.get("classname") or a.get("class"),
        suites=suites,
        suite_file=suite_file,
        file=a.get("file") or a.get("filepath"),
        line=_int(a.get("line") or a.get("lineno")),
        time=_float(a.get("time")),
        attrs=a,
    )
    for child in elem:
        tag = child.tag
        if tag in PROBLEM_TAGS or tag == "skipped":
            case.kinds.append(tag)
            if case.outcome == "passed":
                case.outcome = tag
                case.message = child.get("message")
                case.type = child.get("type")
                case.text = _bounded(child.text)
        elif tag in RERUN_TAGS:
            case.kinds.append(tag)
        elif tag == "system-out":
            case.system_out = _bounded(child.text)
        elif tag == "system-err":
            case.system_err = _bounded(child.text)
        elif tag == "properties":
            case.properties = [(p.get("name", ""), p.get("value", p.text or "")) for p in child]
    return case


class JUnitReader:
    """Iterate the test cases of a JUnit XML file.

    After iteration, ``complete`` says whether the document ended properly,
    ``warnings`` says what went wrong, ``suite_errors`` lists problems attached
    to suites, and ``declared`` holds the root's own counters (tests,
    failures, errors, skipped) for cross-checks.
    """

    def __init__(self, path: Path | str, stream: BinaryIO | None = None) -> None:
        self.path = Path(path)
        # An already-open byte stream to read instead of ``path`` (an XML
        # document printed on stdout); ``path`` then only names it.
        self.stream = stream
        self.complete = False
        self.warnings: list[str] = []
        self.suite_errors: list[JUnitSuiteError] = []
        self.declared: dict[str, int] = {}
        self.root_tag: str | None = None

    def __iter__(self) -> Iterator[JUnitCase]:
        if self.stream is None and not self.path.is_file():
            self.warnings.append(f"report {self.path} does not exist")
            return
        suites: list[str] = []
        suite_files: list[str | None] = []
        parents: list[Element] = []
        source = self.stream if self.stream is not None else str(self.path)
        try:
            for event, elem in iterparse(source, events=("start", "end"), forbid_dtd=True):
                tag = elem.tag
                if event == "start":
                    if self.root_tag is None:
                        self.root_tag = tag
                        for k in ("tests", "failures", "errors", "skipped", "disabled"):
                            if (v := _int(elem.get(k))) is not None:
                                self.declared[k] = v
                    if tag == "testsuite":
                        suites.append(elem.get("name", ""))
                        suite_files.append(elem.get("file") or elem.get("filepath"))
                    parents.append(elem)
                    continue
                parents.pop()
                if tag == "testcase":
                    sf = next((f for f in reversed(suite_files) if f), None)
                    yield _case_from(elem, tuple(suites), sf)
                    if parents:
                        parents[-1].remove(elem)
                elif tag in PROBLEM_TAGS and parents and parents[-1].tag == "testsuite":
                    self.suite_errors.append(
                        JUnitSuiteError(tuple(suites), tag, elem.get("message"), _bounded(elem.text))
                    )
                elif tag == "testsuite":
                    suites.pop()
                    suite_files.pop()
                    if parents:
                        parents[-1].remove(elem)
            self.complete = True
        except ParseError as exc:
            self.warnings.append(f"report {self.path.name} is truncated or malformed ({exc}); kept what was read")
        except Exception as exc:  # defusedxml's DTD/entity refusals and I/O errors
            self.warnings.append(f"report {self.path.name} could not be read: {type(exc).__name__}: {exc}")


class _LineStream(io.RawIOBase):
    """A read-only byte stream over text lines, read lazily."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = iter(lines)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        while len(self._buf) < len(b):
            line = next(self._lines, None)
            if line is None:
                break
            self._buf += (line + "\n").encode("utf-8", errors="replace")
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def printed_document(lines: Iterable[str]) -> Iterator[str]:
    """The lines of a JUnit XML document printed among other output: from its
    ``<?xml`` or first ``<testsuite(s)`` on (a reporter writing to stdout)."""
    started = False
    for line in lines:
        if not started:
            k = min((i for i in (line.find("<?xml"), line.find("<testsuite")) if i >= 0), default=-1)
            if k < 0:
                continue
            started, line = True, line[k:]
        yield line


def line_stream(lines: Iterable[str]) -> BinaryIO:
    """A byte stream over text lines, for ``JUnitReader(name, stream=...)``
    when the XML document is printed on stdout rather than written to a file."""
    return io.BufferedReader(_LineStream(lines))


def looks_like_junit(head: str) -> bool:
    """Whether a text head looks like a JUnit/xUnit XML document."""
    h = head.lstrip()[:2000]
    return h.startswith("<") and ("<testsuite" in h or "<testsuites" in h)
