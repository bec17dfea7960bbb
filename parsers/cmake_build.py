"""Build errors of a C/C++ project: the CMake configure step, the compiler
and the linker, driven by make or ninja (``cmake --build build``, ``make``).

Compiler ``file:line:col: error:`` diagnostics (GCC/Clang, and MSVC's
``file(line): error C1234:``), linker errors (``undefined reference``),
``CMake Error at file:line`` and make/ninja failures become one errored
entry per project source file (the CMake file for configure errors; the
translation unit for errors in system headers). Used by the ctest parser
and by the googletest parser when the build before the binary failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .locate import SourceIndex
from .models import Status, TestResult

DIAG = re.compile(r"^(?P<file>(?:[A-Za-z]:)?[^\s:][^:]*?):(?P<line>\d+):(?:\d+:)? (?P<kind>(?:fatal )?error): "
                  r"(?P<msg>.*)$")
MSVC_DIAG = re.compile(r"^\s*(?P<file>\S.*?)\((?P<line>\d+)(?:,\d+)?\): (?P<kind>(?:fatal )?error) "
                       r"(?P<code>[A-Z]+\d+): (?P<msg>.*)$")
DIAG_CONTEXT = re.compile(r"^(?P<file>(?:[A-Za-z]:)?[^\s:][^:]*?): (?:In |At global scope)")
INCLUDED_FROM = re.compile(r"^(?:In file included from|\s+from) (?P<file>(?:[A-Za-z]:)?[^\s:][^:]*?):\d+[:,]")
# "/usr/bin/ld: CMakeFiles/t.dir/tests/a.cpp.o: in function `f':" names the object the next errors are in
LINK_OBJECT_LINE = re.compile(r"^(?:\S*/)?(?:ld|ld\.\w+|lld)(?:\.exe)?: (?P<obj>\S+?\.(?:o|obj)): in function")
LINK_ERROR = re.compile(r"(?P<what>undefined reference to .*|multiple definition of .*)$")
LINK_LOC = re.compile(r"(?P<file>(?:[A-Za-z]:)?[^\s:()]+):(?P<line>\d+):? (?:undefined reference|multiple definition)")
LINK_OBJ = re.compile(r"(?P<obj>\S*CMakeFiles/[^/\s]+\.dir/\S+?\.(?:o|obj))\b")
CMAKE_ERROR = re.compile(r"^CMake Error(?: at (?P<file>.+?):(?P<line>\d+)(?: \((?P<cmd>\w+)\))?)?:?\s*(?P<msg>.*)$")
MAKE_ERROR = re.compile(r"^(?:g?make|mingw32-make)(?:\[\d+\])?: \*\*\* (?:\[(?P<inner>[^\]]*)\] Error (?P<code>\d+)|"
                        r"(?P<stop>.*Stop\.))")
NO_RULE = re.compile(r"No rule to make target ['`](?P<target>[^']+)'")
NINJA_FAILED = re.compile(r"^FAILED: (?:\[code=\d+\] )?(?P<target>\S+)")
NINJA_STOP = re.compile(r"^ninja: (?:build stopped: .*|error: .*)$")
CACHE_ERROR = re.compile(r"^Error: (?:could not load cache|.* is not a directory)")
BUILD_OBJECT = re.compile(r"^\[\s*\d+(?:%|/\d+)\] Building \w+ object (?P<obj>\S+)")
OBJECT_SOURCE = re.compile(r"^(?P<pre>(?:.*/)?)CMakeFiles/[^/]+\.dir/(?P<src>.+?)\.(?:o|obj)$")
TEST_TARGETS = re.compile(r"(?:^|/)(?:test|check|RUN_TESTS|CMakeFiles/test\.util)$")
MAX_DETAIL_LINES = 200
MAX_CMAKE_MESSAGE = 1_500


@dataclass
class BuildEntry:
    file: str
    line: int | None
    messages: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)


class BuildErrors:
    """Build diagnostics gathered from both streams, per project file."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self.entries: dict[str, BuildEntry] = {}
        self.outside: dict[str, BuildEntry] = {}  # errors in files outside the project, by translation unit
        self.failed_targets: list[str] = []
        self.stopped = False
        self._cmake: BuildEntry | None = None
        self._last: BuildEntry | None = None

    def _rel(self, path: str) -> str | None:
        rel = self.index.relative(path)
        if rel is None or rel.startswith(("<", "/")) or re.match(r"^[A-Za-z]:", rel):
            return None
        return rel

    def _source_of(self, obj: str) -> str | None:
        """The source file a CMake object file is compiled from."""
        m = OBJECT_SOURCE.match(obj.strip())
        if not m:
            return None
        src = self._rel(m.group("pre") + m.group("src")) or self._rel(m.group("src"))
        if src and not self.index.exists(src):
            alt = self._rel(m.group("src"))
            if alt and self.index.exists(alt):
                return alt
        return src

    def _entry(self, bucket: dict[str, BuildEntry], rel: str, line: int | None) -> BuildEntry:
        e = bucket.get(rel)
        if e is None:
            e = bucket[rel] = BuildEntry(rel, line)
        return e

    def _add(self, e: BuildEntry, message: str | None, raw: str) -> None:
        if message and message not in e.messages and len(e.messages) < 5:
            e.messages.append(message)
        if len(e.details) < MAX_DETAIL_LINES:
            e.details.append(raw)
        self._last = e

    def read(self, lines: Iterable[str]) -> None:
        unit: str | None = None  # translation unit being compiled, as far as the output says
        chain: list[str] = []
        link_obj: str | None = None
        for raw in lines:
            line = raw.rstrip()
            if self._cmake is not None:
                if line.startswith(" ") or not line.strip():
                    # the indented explanation under "CMake Error at ...:" belongs to its message
                    if line.strip() and len(self._cmake.messages[-1]) < MAX_CMAKE_MESSAGE:
                        self._cmake.messages[-1] += " " + line.strip()
                    self._add(self._cmake, None, line)
                    continue
                self._cmake = None
            if m := BUILD_OBJECT.match(line):
                unit = self._source_of(m.group("obj")) or unit
                continue
            if m := NINJA_FAILED.match(line):
                target = m.group("target")
                unit = self._source_of(target) or unit
                self.failed_targets.append(target)
                continue
            if m := INCLUDED_FROM.match(line):
                if line.startswith("In file"):
                    chain = []
                chain.append(m.group("file"))
                self._last = None
                continue
            if m := DIAG_CONTEXT.match(line):
                rel = self._rel(m.group("file"))
                if rel:
                    unit = rel
                continue
            m = DIAG.match(line) or MSVC_DIAG.match(line)
            if m:
                rel = self._rel(m.group("file"))
                msg = f"{m.group('kind')}: {m.group('msg')}"
                if rel:
                    e = self._entry(self.entries, rel, int(m.group("line")))
                    self._add(e, f"{rel}:{m.group('line')}: {msg}", line)
                else:
                    tu = next((r for f in reversed(chain) if (r := self._rel(f))), None) or unit
                    if tu:
                        e = self._entry(self.outside, tu, None)
                        self._add(e, f"{m.group('file')}:{m.group('line')}: {msg}", line)
                chain = []
                continue
            if m := LINK_OBJECT_LINE.match(line):
                link_obj = m.group("obj")
                continue
            if m := LINK_ERROR.search(line):
                what = m.group("what")
                loc = LINK_LOC.search(line)
                rel = self._rel(loc.group("file")) if loc else None
                obj = LINK_OBJ.search(line)
                if rel is None and (obj or link_obj):
                    rel = self._source_of(obj.group("obj") if obj else link_obj or "")
                if rel:
                    e = self._entry(self.entries, rel, int(loc.group("line")) if loc else None)
                    self._add(e, what, line)
                continue
            if m := CMAKE_ERROR.match(line):
                f = m.group("file")
                rel = self._rel(f) if f else None
                rel = rel or "CMakeLists.txt"
                e = self._entry(self.entries, rel, int(m.group("line")) if m.group("line") else None)
                self._add(e, None, line)
                if len(e.messages) < 5:
                    e.messages.append(line.strip().rstrip(":"))
                    self._cmake = e
                continue
            if CACHE_ERROR.match(line):
                e = self._entry(self.entries, "CMakeLists.txt", None)
                self._add(e, line.strip(), line)
                continue
            if m := MAKE_ERROR.match(line):
                inner = m.group("inner")
                if inner is not None:
                    parts = re.match(r"^(?:.*?:\d+: )?(?P<target>.*)$", inner)
                    self.failed_targets.append(parts.group("target") if parts else inner)
                else:
                    stop = m.group("stop")
                    nr = NO_RULE.search(stop)
                    if nr:
                        rel = self._rel(nr.group("target"))
                        if rel:
                            self._add(self._entry(self.entries, rel, None), stop.strip(), line)
                            continue
                    self.failed_targets.append(stop)
                continue
            if NINJA_STOP.match(line):
                self.stopped = True
                continue
            # continuation lines of a diagnostic (source excerpt, carets, notes)
            if self._last is not None and line.startswith((" ", "\t")) and len(self._last.details) < MAX_DETAIL_LINES:
                self._last.details.append(line)

    @property
    def failed(self) -> bool:
        """Whether the output shows a failed build step."""
        return bool(self.entries or self.outside or self.stopped
                    or any(not TEST_TARGETS.search(t.strip()) for t in self.failed_targets))

    def results(self, ran_tests: bool) -> list[TestResult]:
        """One errored entry per failing file; targets when nothing names a file."""
        entries = list(self.entries.values()) or list(self.outside.values())
        if not entries:
            targets = [t for t in self.failed_targets if not TEST_TARGETS.search(t.strip())]
            if ran_tests or not targets:
                return []
            # make/ninja failed but printed no diagnostic we know: name the deepest target
            target = targets[0].strip()
            rel = self._source_of(target) or target
            entries = [BuildEntry(rel, None, [f"build of {target} failed"], [])]
        out = []
        for e in entries:
            file = e.file if self.index.exists(e.file) else None
            message = "\n".join(m for m in e.messages if m) or "build failed"
            out.append(TestResult(id=e.file, status=Status.ERRORED, file=file, line=e.line if file else None,
                                  message=message, details="\n".join(e.details) or None,
                                  native_status="build error"))
        return out
