"""Fault localization: which functions most likely hold the bug a failing test shows.

Repair systems that localize before they repair do better and cheaper
(Agentless: file, then function, then line; spectrum-based fault localization,
surveyed by Wong et al., "A Survey on Software Fault Localization", TSE 2016).
Greenloop has more than an issue text to go on, and combines, per function of
the project's own (non-test) code:

- **the traceback**: a function holding a frame of the failure's stack, the
  innermost (nearest the error) first;
- **the spectrum**, where per-test coverage was recorded (pytest per test:
  ``runner/impact.py``; JavaScript per test file: ``runner/v8_coverage.py``): the Ochiai coefficient ``ef / sqrt(F * (ef + ep))`` of
  a function run by ``ef`` of the ``F`` failing tests and ``ep`` passing ones
  (Abreu et al., 2007: among the best-founded single formulas at function
  granularity, with no tuning constant);
- **what the test calls**: functions the test's body names, resolved through
  the project's function index, then what those call, one and two levels down
  (by name: a call graph read as text, for every language);
- **the program the test runs**: a test that starts a process (``exec``, ``spawn``, ...) of a
  project whose package.json names programs (``bin``) runs their functions, which no call names;
- **the failure's output**: a suspect whose string literals (a format's fixed parts) appear in
  the failing test's message (``*** 2,3 ****`` in a context diff that came out wrong): the code that
  wrote what the assertion compared; it only reorders suspects found by another signal;
- **the test's name**, without the test's coverage only: a function every word of whose name the
  failing test's name or its file's says (``TestCommaf`` tests ``Commaf``; test-to-code traceability
  by naming convention, Van Rompaey and Demeyer, 2009) gains a little over the others its calls reach
  alike; with coverage the spectrum tells them apart, and the name would only favour the entry point
  over the helper that holds the bug;
- **agreement**: a suspect of several failing tests ranks above one of a single test;
- **history**: a function in a file with uncommitted changes.

Suspects no signal tells apart rank by the size of their own code (a function's lines without those
of the functions defined inside it): more code, more places for a bug.

Each signal adds to a score; every suspect keeps the reasons it was chosen for,
which the first message and the report show. Pure: the caller hands in the
sources, the failing tests and the spectrum.
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from ..domain.suspects import Suspect
from ..parsers.locate import SourceIndex
from ..parsers.models import Status, TestReport, TestResult
from .patterns import FailureClassification, Frame, innermost_first
from .regions import SOURCE_SUFFIXES, Region, block_at, enclosing, functions

# Weights of the signals (a suspect's score is their sum).
W_TRACE, W_SPECTRUM, W_CALL, W_AGREE, W_CHANGED, W_BOTH = 3.0, 2.5, 1.5, 1.0, 0.5, 0.25
W_CALL_BESIDE_SPECTRUM = 0.5
W_OUTPUT = 0.4   # a suspect's own text in the failure's output
W_NAMED = 0.4    # a suspect whose name the failing test's name (or its file's) says, all its words
SETUP = 0.6  # a call of the test's that is not on the line that failed (its set-up)
CALL_DEPTH = 3            # the test's own calls are depth 1
MAX_INDEXED_FILES = 4_000  # a larger project is indexed in the directories its tests and traceback name first
MAX_SUSPECTS = 30
AGREEING_TOP = 10          # another failing test's suspects that count as its own for agreement
MODULE_LEVEL = "(module level)"  # the name of a frame's lines outside any function
MODULE_RADIUS = 8          # lines either side of a frame outside any function

JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
_JS_BINDING = re.compile(r"""(?:(?:const|let|var)\s+(?P<name>[\w$]+)\s*=\s*require\(\s*"""
                         r"""|import\s+(?P<iname>[\w$]+)\s+from\s+)['"](?P<path>[^'"]+)['"]""")
_CALL = re.compile(r"(?<![\w$.])(?:[\w$]+(?:\.|::|->))*(?P<name>[A-Za-z_$][\w$]*)\s*(?:!\s*)?(?:::<[^>]*>)?\(")
_NOT_CALLS = {"if", "for", "while", "switch", "catch", "return", "function", "typeof", "await", "yield", "with",
              "elif", "and", "or", "not", "in", "is", "lambda", "print", "assert", "len", "isinstance", "super",
              "expect", "it", "test", "describe", "assertEqual", "assertTrue", "assertFalse", "assertRaises",
              "assert_eq", "assert_ne", "Ok", "Err", "Some", "fn", "func", "new", "def", "require", "import",
              "t", "Errorf", "Fatalf", "Error", "Fatal", "Run", "toBe", "toEqual", "equal", "deepEqual",
              "strictEqual", "ok", "self", "this", "str", "int", "float", "list", "dict", "set", "tuple", "range",
              "panic", "format", "vec", "println", "sizeof", "make", "append", "string"}


# A string literal of any of the usual languages, and the holes of a format string in it.
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.){0,200})"|\'((?:[^\'\\\n]|\\.){0,200})\'|`([^`\n]{0,200})`')
_FORMAT_HOLE = re.compile(r"%[-+# 0-9.*]*[a-zA-Z]|\$?\{[^{}]*\}|\\[nrt0]|\\x[0-9a-fA-F]{2}")
_STARTS_PROCESS = re.compile(r"(?<![\w$])(?:exec|execFile|execSync|execFileSync|spawn|spawnSync|fork|execa)\s*\(")
MIN_FRAGMENT = 4  # characters of a literal's fixed part that count as the code's own output


def output_fragments(lines: Iterable[str]) -> set[str]:
    """The fixed parts of the string literals on ``lines`` that could show in a program's output:
    at least MIN_FRAGMENT characters, not a lone word (``"error"``, ``"None"`` say nothing)."""
    out: set[str] = set()
    for line in lines:
        if line.lstrip().startswith(("//", "#", "*", "/*")):  # a comment's quotes are no output
            continue
        for m in _LITERAL.finditer(line):
            for part in _FORMAT_HOLE.split(m.group(1) or m.group(2) or m.group(3) or ""):
                part = part.strip()
                if len(part) >= MIN_FRAGMENT and not re.fullmatch(r"\w+", part):
                    out.add(part)
    return out


# Words of test and function names that name no behaviour (a test "should return" anything; a function
# "get"s or "is" anything) or no function (a module's default export).
_PLAIN_WORDS = frozenset("""a an the and or not no of to in on at by for from with without when as is are be
was it its should must can does do did will works work returns return gets get sets set has have new make makes
test tests testing spec case cases check checks example examples true false all any only each
module exports default index main init self cls fn func""".split())
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def name_words(name: str) -> set[str]:
    """The words of an identifier or a test title (``camelCase``, ``snake_case``, ``Test_X``, prose),
    lowercased, without the plain ones."""
    return {w.lower() for w in _WORD.findall(name) if len(w) > 1 and not w.isdigit()} - _PLAIN_WORDS


def _same_word(a: str, b: str) -> bool:
    """One word, or one the abbreviation of the other (``num``/``number``, ``bool``/``boolean``)."""
    a, b = sorted((a.rstrip("s") if len(a) > 3 else a, b.rstrip("s") if len(b) > 3 else b), key=len)
    return a == b or (len(a) >= 3 and b.startswith(a))


def named_by(function: str, said: set[str]) -> bool:
    """Do the words ``said`` name every word of ``function``'s own name (its last part: a method
    without its class)? ``test_naturaldelta``: ``naturaldelta``; "nums": ``isNumber``."""
    own = name_words(function.rsplit(".", 1)[-1])
    return bool(own) and all(any(_same_word(w, x) for x in said) for w in own)


class Spectrum(BaseModel):
    """Per-test coverage: for each project file, the lines each test ran (sorted). Kept on the
    run's host, in its run folder, never in workflow history."""

    FILE: ClassVar[str] = "spectrum.json"

    files: dict[str, dict[str, list[int]]] = Field(default_factory=dict)

    def save(self, run_dir: Path) -> Path:
        target = run_dir / self.FILE
        target.write_text(self.model_dump_json())
        return target

    @classmethod
    def load(cls, run_dir: Path) -> Spectrum | None:
        """The run's spectrum; None when none was recorded (or the run moved to a host without it)."""
        path = run_dir / cls.FILE
        try:
            stat = path.stat()
        except OSError:
            return None
        return _load_spectrum(str(path), stat.st_mtime_ns, stat.st_size)

    @classmethod
    def from_functions(cls, index: SourceIndex, runs: Iterable[tuple[Iterable[str], dict[str, set[str]]]]) -> Spectrum:
        """The spectrum of coverage kept as function names (V8's: runner/v8_coverage.py): for each
        run, its tests ran the body lines of the functions of those names in each file. A name the
        region indexer does not know (an anonymous function, a file it does not index) adds nothing."""
        files: dict[str, dict[str, set[int]]] = {}
        for tests, ran in runs:
            tests = list(tests)
            for file, names in ran.items():
                lines = {n for r in functions(index, file) if r.name in names
                         for n in range(r.body_start, r.end + 1)}
                if not lines:
                    continue
                into = files.setdefault(file, {})
                for test in tests:
                    into.setdefault(test, set()).update(lines)
        return cls(files={f: {t: sorted(n) for t, n in sorted(by.items())} for f, by in sorted(files.items())})

    def tests_running(self, region: Region) -> set[str]:
        """The tests that ran a line of ``region``'s body (its ``def`` line runs at import)."""
        out: set[str] = set()
        for test, lines in self.files.get(region.file, {}).items():
            if _ran_body(lines, region):
                out.add(test)
        return out

    def covered(self, test: str, failing: Iterable[str] = ()) -> dict[str, list[int]]:
        """The lines ``test`` ran, per file; for a test not measured itself that fails because its
        subtests fail (Go's ``TestX`` of ``TestX/case``), what those of ``failing`` that were ran."""
        own = {f: by_test[test] for f, by_test in self.files.items() if test in by_test}
        if own:
            return own
        subtests = {t for t in failing if t.startswith(test + "/")}
        if not subtests:
            return {}
        union = ((f, set().union(*(by_test[t] for t in subtests if t in by_test))) for f, by_test in self.files.items())
        return {f: sorted(lines) for f, lines in union if lines}


@lru_cache(maxsize=4)
def _load_spectrum(path: str, mtime_ns: int, size: int) -> Spectrum | None:
    try:
        return Spectrum.model_validate_json(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _ran_body(lines: list[int], region: Region) -> bool:
    i = bisect_left(lines, region.body_start)
    return i < len(lines) and lines[i] <= region.end


class FailingTest(BaseModel):
    """What localization reads of one failing test."""

    id: str
    file: str | None = None
    line: int | None = None
    frames: list[Frame] = Field(default_factory=list)  # project frames, innermost first
    output: str = ""  # the failure's message and details (bounded by the parsers)


def failing_test(test: TestResult, classification: FailureClassification) -> FailingTest:
    """What localization reads of a classified failing test."""
    return FailingTest(id=test.id, file=test.file, line=test.line, frames=innermost_first(classification),
                       output="\n".join(x for x in (test.message, test.details) if x))


def is_test_file(path: str) -> bool:
    """A test or fixture file by the usual conventions of every language."""
    p = "/" + path.lower()
    name = p.rsplit("/", 1)[-1]
    return (any(d in p for d in ("/test/", "/tests/", "/spec/", "/__tests__/", "/testing/", "/testdata/"))
            or name.startswith("test_") or name.startswith("test.") or name == "conftest.py"
            or bool(re.search(r"(_test|_spec|\.test|\.spec|tests?)\.\w+$", name)))


class Localizer:
    """The project's function index, built once per run and host, asked per failing test."""

    def __init__(self, index: SourceIndex, test_files: Iterable[str] = (), changed_files: Iterable[str] = (),
                 spectrum: Spectrum | None = None, passing: Iterable[str] = (), failing: Iterable[str] = ()) -> None:
        self.index = index
        self.test_files = set(test_files)
        self.changed = set(changed_files)
        self.spectrum = spectrum
        self.passing = set(passing)
        self.failing = set(failing)
        self._by_name: dict[str, list[Region]] | None = None
        self._regions: dict[str, list[Region]] = {}
        self._counts: dict[str, dict[int, tuple[int, int]]] = {}
        self._everyone: set[str] | None = None
        self._programs: list[str] | None = None

    @classmethod
    def for_report(cls, index: SourceIndex, report: TestReport, spectrum: Spectrum | None = None) -> Localizer:
        """Localization over a suite run: its tests' files are test files, its failing and passing
        tests are the spectrum's two sides."""
        # A test that errored before it ran (a package that does not build) is reported at the error's
        # place, which may be the project's own source: that file is no test file for it.
        files = {t.file for t in report.tests if t.file and (t.status is not Status.ERRORED or is_test_file(t.file))}
        return cls(index, test_files=files, spectrum=spectrum,
                   failing=[t.id for t in report.failing],
                   passing=[t.id for t in report.tests if t.status in (Status.PASSED, Status.XPASSED)])

    # --- the index ------------------------------------------------------------------------
    def regions(self, file: str) -> list[Region]:
        if file not in self._regions:
            self._regions[file] = functions(self.index, file)
        return self._regions[file]

    def _is_test(self, file: str) -> bool:
        return file in self.test_files or is_test_file(file)

    def by_name(self) -> dict[str, list[Region]]:
        """Every function of the project's own code by its last name (``Class.method`` -> ``method``)."""
        if self._by_name is None:
            self._by_name = {}
            files = [f for f in self.index.files(SOURCE_SUFFIXES) if not self._is_test(f)][:MAX_INDEXED_FILES]
            for f in files:
                for r in self.regions(f):
                    self._by_name.setdefault(r.name.rsplit(".", 1)[-1], []).append(r)
        return self._by_name

    def test_region(self, test: FailingTest) -> Region | None:
        """The failing test's own function: the one defined at its line, the block that opens there
        (``it("...", () => {``), or the function named by a part of its id (nearest the end first)."""
        if not test.file or not self._is_test(test.file):  # a build error reported at a source line runs nothing
            return None
        regions = self.regions(test.file)
        parts = [p for p in re.split(r"[.:/# >]+", re.sub(r"\[.*\]$", "", test.id)) if p]
        if test.line is not None:
            at = next((r for r in regions if r.start == test.line), None) \
                or block_at(self.index, test.file, test.line, parts[-1] if parts else test.id) \
                or enclosing(regions, test.line)
            if at is not None:
                return at
        for name in reversed(parts):
            found = next((r for r in regions if r.name.rsplit(".", 1)[-1] == name), None)
            if found is not None:
                return found
        return None

    def imported(self, file: str) -> dict[str, list[Region]]:
        """Names a JS/TS file binds to another project module (``const parse = require('../')``,
        ``import parse from './parse'``): the functions that module exports by default."""
        if not file.endswith(JS_SUFFIXES):
            return {}
        out: dict[str, list[Region]] = {}
        base = posixpath.dirname(file)
        for line in self.index.lines(file)[:300]:
            m = _JS_BINDING.search(line)
            if not m or not m.group("path").startswith("."):
                continue
            target = self._module_file(posixpath.normpath(posixpath.join(base, m.group("path"))))
            if target is None:
                continue
            default = [r for r in self.regions(target) if r.name in ("module.exports", "default")]
            if default:
                out[m.group("name") or m.group("iname")] = default
        return out

    def _module_file(self, stem: str) -> str | None:
        """The file ``require``/``import`` of ``stem`` loads (a file, with or without its suffix, or
        a folder's index)."""
        names = [stem, *(stem + s for s in JS_SUFFIXES), *(posixpath.join(stem, "index" + s) for s in JS_SUFFIXES)]
        for candidate in (posixpath.normpath(n) for n in names):
            if candidate.endswith(JS_SUFFIXES) and self.index.exists(candidate):
                return candidate
        return None

    def programs(self) -> list[str]:
        """The project's own programs a test may run as a process: package.json's ``bin``."""
        if self._programs is None:
            try:
                manifest = json.loads("\n".join(self.index.lines("package.json")) or "{}")
            except ValueError:
                manifest = {}
            found = manifest.get("bin") if isinstance(manifest, dict) else None
            named = [found] if isinstance(found, str) else list(found.values()) if isinstance(found, dict) else []
            self._programs = [f for f in (posixpath.normpath(str(n)) for n in named) if self.index.exists(f)]
        return self._programs

    def calls(self, region: Region, only: set[int] | None = None) -> list[str]:
        """The names ``region`` calls, in order of first appearance (``only``: on these lines)."""
        lines = self.index.lines(region.file)[region.start - 1:region.end]
        numbered = list(enumerate(lines, region.start))[1 if len(lines) > 1 else 0:]
        body = "\n".join(text for n, text in numbered if only is None or n in only)
        names = [m.group("name") for m in _CALL.finditer(body)]
        return [n for n in dict.fromkeys(names) if n not in _NOT_CALLS and n != region.name.rsplit(".", 1)[-1]]

    # --- ranking ---------------------------------------------------------------------------
    def rank(self, test: FailingTest, others: Sequence[FailingTest] = ()) -> list[Suspect]:
        """The suspects of ``test``, best first; ``others`` are the run's other failing tests (agreement)."""
        shared: dict[str, int] = {}
        for other in others:
            if other.id != test.id:
                for key in self._top_keys(other):
                    shared[key] = shared.get(key, 0) + 1
        return self._ranked(self._signals(test), shared)

    def rank_all(self, tests: Sequence[FailingTest]) -> dict[str, list[Suspect]]:
        """Every failing test's suspects, each with the others' agreement, as ``rank(test, tests)``
        gives them, with each test's own signals worked out once."""
        tops = {t.id: self._top_keys(t) for t in tests}
        everyone: dict[str, int] = {}
        for keys in tops.values():
            for key in keys:
                everyone[key] = everyone.get(key, 0) + 1
        out: dict[str, list[Suspect]] = {}
        for t in tests:
            own = set(tops[t.id])
            shared = {k: n - (k in own) for k, n in everyone.items() if n - (k in own) > 0}
            out[t.id] = self._ranked(self._signals(t), shared)
        return out

    def _own_lines(self, s: Suspect) -> int:
        """The lines of ``s``'s function that are its own: not those of the functions defined inside it."""
        inner = [r for r in self.regions(s.file) if s.start < r.start and r.end <= s.end]
        covered: set[int] = set()
        for r in inner:
            covered.update(range(r.start, r.end + 1))
        return s.end - s.start + 1 - len(covered)

    def _top_keys(self, test: FailingTest) -> list[str]:
        """The suspects of ``test`` that count as its own when other failing tests agree with them."""
        theirs = sorted(self._signals(test, light=True).items(), key=lambda kv: -kv[1].score)
        return [key for key, _ in theirs[:AGREEING_TOP]]

    def _ranked(self, mine: dict[str, Suspect], shared: dict[str, int]) -> list[Suspect]:
        for key, s in mine.items():
            n = shared.get(key, 0)
            if n:
                s.score += W_AGREE * min(1.0, n / 3)
                s.reasons.append(f"also suspected for {n} other failing test{'s' if n > 1 else ''}")
        # Suspects the evidence cannot tell apart: the one with more code of its own first (more places for
        # the bug: defects grow with size), not the one that comes first in its file.
        ranked = sorted(mine.values(), key=lambda s: (-round(s.score, 6), s.passing, -self._own_lines(s), s.file,
                                                      s.start))
        for s in ranked:
            s.score = round(s.score, 3)
        return ranked[:MAX_SUSPECTS]

    def _signals(self, test: FailingTest, light: bool = False) -> dict[str, Suspect]:
        found: dict[str, Suspect] = {}
        parts: dict[str, dict[str, float]] = {}

        def add(r: Region, signal: str, weight: float, reason: str) -> None:
            s = found.get(r.key)
            if s is None:
                s = found[r.key] = Suspect(file=r.file, function=r.name, start=r.start, end=r.end, score=0.0)
            mine = parts.setdefault(r.key, {})
            mine[signal] = max(mine.get(signal, 0.0), weight)
            if reason not in s.reasons:
                s.reasons.append(reason)

        # The traceback, innermost first.
        depth = 0
        for frame in test.frames:
            if self._is_test(frame.file):
                continue
            r = enclosing(self.regions(frame.file), frame.line)
            if r is None:  # module-level code, or a file that does not read as functions: the lines around it
                r = Region(file=frame.file, name=MODULE_LEVEL, start=max(1, frame.line - MODULE_RADIUS),
                           end=frame.line + MODULE_RADIUS, body_start=frame.line)
            add(r, "trace", W_TRACE * max(0.35, 1.0 - 0.25 * depth),
                "in the traceback (innermost project frame)" if depth == 0 else "in the traceback")
            depth += 1
        # What the test calls, and what that calls.
        own = self.test_region(test)
        # With the test's coverage the spectrum says far more than call distance: calls become a tie-break.
        covered = self.spectrum is not None and bool(self.spectrum.covered(test.id, self.failing))
        call_weight = W_CALL_BESIDE_SPECTRUM if covered else W_CALL
        if own is not None:
            frontier, seen = [own], {own.key}
            bound = self.imported(own.file)
            failed_on = set(self.calls(own, {f.line for f in test.frames if f.file == own.file
                                             and own.start < f.line <= own.end}))
            for level in range(1, CALL_DEPTH + 1):
                nxt: list[Region] = []
                for caller in frontier:
                    local = bound if caller.file == own.file else self.imported(caller.file)
                    for name in self.calls(caller):
                        targets = local.get(name) or self.by_name().get(name, [])
                        if not targets or len(targets) > 6:  # unknown, or too common a name to mean one thing
                            continue
                        # The test's own calls: those on the line that failed weigh more than its set-up's.
                        setup = level == 1 and failed_on and name not in failed_on
                        for r in targets:
                            if r.key in seen:
                                continue
                            seen.add(r.key)
                            nxt.append(r)
                            add(r, "call", call_weight / (2 ** (level - 1)) / len(targets) * (SETUP if setup else 1),
                                "called by the test" if level == 1 else f"called {level} calls below the test")
                frontier = nxt[:40]
        if own is not None and self.programs() and any(
                _STARTS_PROCESS.search(line) for line in self.index.lines(own.file)[own.start - 1:own.end]):
            for program in self.programs():
                regions = self.regions(program)
                for r in regions:
                    add(r, "call", call_weight / len(regions), f"in {program}, the program the test runs")
        # Without the test's coverage, the test's name tells apart functions its calls reach alike; with it,
        # the spectrum says which of them ran, and a name would only pull the entry point above its helpers.
        said_by = set() if covered or light else self._test_words(test)
        passing: dict[str, int] = {}
        if self.spectrum is not None:
            self._spectrum(test, add, passing, top=10 if light else 40)
        for key, s in found.items():
            p = parts[key]
            trace, call = p.get("trace", 0.0), p.get("call", 0.0)
            # The traceback and the calls are two views of one structure: the stronger counts, both add a little.
            s.score = max(trace, call) + (W_BOTH if trace and call else 0.0) + p.get("spectrum", 0.0)
            s.passing = passing.get(key, 0)
            if test.output and not light:
                said = sorted(f for f in output_fragments(self.index.lines(s.file)[s.start - 1:s.end])
                              if f in test.output)
                if said:
                    s.score += W_OUTPUT
                    s.reasons.append(f"its text {said[0]!r} is in the failure's output")
            if said_by and named_by(s.function, said_by):
                s.score += W_NAMED
                s.reasons.append("named by the test's name")
            if s.file in self.changed:
                s.score += W_CHANGED
                s.reasons.append("its file has uncommitted changes")
        return found

    @staticmethod
    def _test_words(test: FailingTest) -> set[str]:
        """What the failing test's name says it tests (test-to-code traceability by naming convention:
        ``TestCommaf`` tests ``Commaf``, ``test/num.js``'s "nums" tests ``isNumber``): the words of its
        title or function (an id's parts after its file, parameters left out) and of its file's name."""
        title = re.sub(r"\[.*\]$", "", test.id)
        if test.file and title.startswith(test.file):
            title = title[len(test.file):]
        title = title.rsplit("::", 1)[-1] if "::" in title and "/" in title.split("::", 1)[0] else title
        stem = posixpath.basename(test.file or "").split(".", 1)[0]
        return name_words(title) | name_words(stem)

    def _spectrum(self, test: FailingTest, add, found_ep: dict[str, int],  # noqa: ANN001 (the closure above)
                  top: int = 40) -> None:
        """Ochiai per line the failing test ran, a function scored by its most suspicious line
        (statement-level spectra aggregated by their maximum: a wrong branch stands out from the
        lines every test runs)."""
        assert self.spectrum is not None
        covered = self.spectrum.covered(test.id, self.failing)
        if not covered:
            return
        failing_total = max(1, len(self.failing & self._all_tests()))
        scored: list[tuple[float, Region, int, int]] = []
        for file, lines in covered.items():
            if self._is_test(file):
                continue
            counts = self._line_counts(file)
            for r in self.regions(file):
                best: tuple[float, int, int] | None = None
                for k in lines[bisect_left(lines, r.body_start):]:
                    if k > r.end:
                        break
                    ef, ep = counts.get(k, (0, 0))
                    # Over the run's failing tests, and over this one alone: with several bugs in one run,
                    # code every failing test runs (set-up, shared helpers) must not outrank the line only
                    # this test and no passing one ran.
                    ochiai = max(ef / math.sqrt(failing_total * (ef + ep)) if ef else 0.0, 1 / math.sqrt(1 + ep))
                    if best is None or ochiai > best[0]:
                        best = (ochiai, ef, ep)
                if best is not None and best[0] > 0:
                    scored.append((best[0], r, best[1], best[2]))
        scored.sort(key=lambda x: (-x[0], x[3], x[1].end - x[1].start))
        for ochiai, r, ef, ep in scored[:top]:
            passing = "no passing test" if ep == 0 else f"{ep} passing test{'s' if ep > 1 else ''}"
            add(r, "spectrum", W_SPECTRUM * ochiai, f"run by {ef} failing test{'s' if ef > 1 else ''} and {passing}")
            found_ep[r.key] = ep

    def _line_counts(self, file: str) -> dict[int, tuple[int, int]]:
        """For each line of ``file``: how many failing and passing tests ran it."""
        if file not in self._counts:
            assert self.spectrum is not None
            counts: dict[int, list[int]] = {}
            for t, lines in self.spectrum.files.get(file, {}).items():
                slot = 0 if t in self.failing else 1 if t in self.passing else None
                if slot is None:
                    continue
                for k in lines:
                    counts.setdefault(k, [0, 0])[slot] += 1
            self._counts[file] = {k: (v[0], v[1]) for k, v in counts.items()}
        return self._counts[file]

    def _all_tests(self) -> set[str]:
        if self._everyone is None:
            assert self.spectrum is not None
            self._everyone = {t for by_test in self.spectrum.files.values() for t in by_test}
        return self._everyone
