"""Python unittest (``python -m unittest``, ``unittest.main()`` scripts,
Django/nose2/``setup.py test`` runners): the TextTestRunner format on stderr.

* verbose (``-v``): ``desc ... status`` lines, where ``desc`` is
  ``name (pkg.mod.Class.name)`` (3.11+) or ``name (pkg.mod.Class)`` (3.10 and
  earlier), optionally followed by the docstring's first line on the next
  line; failing subtests are indented lines ``  desc (k='v') ... FAIL``;
* dots (default): one character per result (``. F E s x u``), mapped to test
  ids by walking the suite the loader would build from the sources;
* failure blocks (``ERROR: desc`` / ``FAIL: desc`` / ``UNEXPECTED SUCCESS:
  desc``) give failing subtests, ``setUpClass (pkg.mod.Class)`` pseudo-tests
  and ``unittest.loader._FailedTest.<module>`` import failures, and messages;
* ``Ran N tests`` / ``OK`` / ``FAILED (...)`` close a run; a run killed by
  ``timeout`` has none, and the test that was running is failed+timed_out.
  Their counts go to the normalizer's totals check (``_summary_counts``
  says which of them compare with the entries, subtests considered).
"""

from __future__ import annotations

import ast
import fnmatch
import re
import shlex
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import setuptools_suite
from .command import command_words, unquote
from .invocation import Invocation, without
from .invocation import split_args as split_words
from .locate import Location, SourceIndex
from .models import Status, TestReport, TestResult
from .run_output import RunOutput
from .source.python import dotted_name, module_tree

FRAMEWORK = "unittest"
COMMAND_RE = [
    re.compile(r"(?:^|\s)-m\s+unittest(?:\s|$)"),
    re.compile(r"(?:^|[\s/])setup\.py\s+(?:\S+\s+)*test(?:\s|$)"),
    re.compile(r"(?:^|[\s/])manage\.py\s+test(?:\s|$)"),
    re.compile(r"(?:^|[\s/])nose2(?:\s|$)"),
    # a test script that calls unittest.main(): python tests/run.py, python test_x.py
    re.compile(r"(?:^|[\s;&|(])python[\d.]*\s+(?:-[^m\s]\S*\s+)*(?:\S+/)?"
               r"(?:tests?/\w+|run_?tests?|runtests|test_\w+|\w+_tests?)\.py(?:\s|$)"),
]
OUTPUT_RE = [
    re.compile(r"^Ran \d+ tests? in \d+(?:\.\d+)?s$", re.M),
    re.compile(r"^(?:FAIL|ERROR): \S+ \([\w.]+\)", re.M),
    re.compile(r"^\S+ \([\w.]+\) \.\.\. (?:ok|FAIL|ERROR|skipped|expected failure|unexpected success)", re.M),
    re.compile(r"^FAILED \((?:failures|errors)=\d+", re.M),
]

SEP1 = re.compile(r"^={40,}$")
SEP2 = re.compile(r"^-{40,}$")
BLOCK_HEAD = re.compile(r"^(?P<kind>ERROR|FAIL|UNEXPECTED SUCCESS): (?P<desc>.+)$")
RAN = re.compile(r"^Ran (?P<n>\d+) tests? in ")
SUMMARY = re.compile(r"^(?:OK|FAILED|NO TESTS RAN)(?: \((?P<counts>.*)\))?$")
DOTS = re.compile(r"^[.FEsxu]+$")
DOTS_PREFIX = re.compile(r"^(?P<dots>[.FEsxu]+)(?P<next>.)")
# ``name (dotted)`` plus an optional subtest part ``[msg]`` / ``(k=v, ...)``.
DESC = re.compile(r"^(?P<name>[^\s()]+) \((?P<dotted>[^\s()]*)\)(?P<sub>(?: \[.*\])?(?: \(.*\))?)$")
STATUS = re.compile(r"^(?:ok|FAIL|ERROR|expected failure|unexpected success|skipped(?: (?P<why>.*))?)"
                    r"(?: \(\d+(?:\.\d+)?s\))?$")
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?')
PSEUDO = {"setUpClass", "tearDownClass", "setUpModule", "tearDownModule", "doClassCleanups", "doModuleCleanups"}
FAILED_TEST = "unittest.loader._FailedTest."
WORD_STATUS = {
    "ok": Status.PASSED, "FAIL": Status.FAILED, "ERROR": Status.ERRORED, "skipped": Status.SKIPPED,
    "expected failure": Status.XFAILED, "unexpected success": Status.XPASSED,
}
CHAR_STATUS = {".": Status.PASSED, "F": Status.FAILED, "E": Status.ERRORED, "s": Status.SKIPPED,
               "x": Status.XFAILED, "u": Status.XPASSED}
# The words of ``FAILED (failures=1, errors=2, ...)`` / ``OK (skipped=1)``.
SUMMARY_STATUS = {"failures": "failed", "errors": "errored", "skipped": "skipped",
                  "expected failures": "xfailed", "unexpected successes": "xpassed"}
STOP_STATUSES = {Status.FAILED, Status.ERRORED, Status.XPASSED}
KIND_STATUS = {"ERROR": Status.ERRORED, "FAIL": Status.FAILED, "UNEXPECTED SUCCESS": Status.XPASSED}
MAX_BLOCK_HEAD = 200
MAX_BLOCK_TAIL = 200
MAX_MESSAGE_LINES = 60
VALUE_OPTIONS = {"-k", "-p", "-s", "-t", "--pattern", "--start-directory", "--top-level-directory", "--durations"}


def case_id(desc: str) -> str | None:
    """``TestCase.id()`` from a printed description, or None when ``desc`` is
    not one: ``name (pkg.mod.Class.name)`` (3.11+) and ``name (pkg.mod.Class)``
    (<=3.10) give ``pkg.mod.Class.name``; subtest parts are kept
    (``... (k='v')``); ``setUpClass (pkg.mod.Class)`` pseudo-tests are their
    own id."""
    m = DESC.match(desc.strip())
    if m is None:
        return None
    name, dotted, sub = m.group("name", "dotted", "sub")
    if name in PSEUDO:
        return f"{name} ({dotted})"
    if not dotted:  # a doctest of a top-level module: 'json ()'
        return name + sub
    base = dotted if dotted.endswith("." + name) else f"{dotted}.{name}"
    return base + sub


def _base_id(tid: str) -> str:
    """The test's own id without a subtest part (pseudo-tests are their own)."""
    head = tid.split(" ", 1)[0]
    return tid if head in PSEUDO else head


class _Block:
    """One ``ERROR:``/``FAIL:`` block: the traceback, bounded, with the last
    exception's lines and the frames it went through."""

    def __init__(self, kind: str, tid: str) -> None:
        self.kind = kind
        self.id = tid
        self.head: list[str] = []
        self.tail: deque[str] = deque(maxlen=MAX_BLOCK_TAIL)
        self.dropped = 0
        self.exc: list[str] = []
        self.in_tb = False
        self.frames: list[tuple[str, int, str | None]] = []
        self.closed = False  # the captured output (-b) starts: no more traceback
        self.prev = ""

    def add(self, line: str) -> None:
        if len(self.head) < MAX_BLOCK_HEAD:
            self.head.append(line)
        else:
            if len(self.tail) == MAX_BLOCK_TAIL:
                self.dropped += 1
            self.tail.append(line)
        prev, self.prev = self.prev, line
        if self.closed:
            return
        if line in ("Stdout:", "Stderr:") and not prev.strip():
            self.closed = True
            return
        if line.startswith("Traceback (most recent call last):"):
            self.in_tb, self.exc = True, []
            return
        if self.in_tb and (line.startswith(" ") or not line):
            if m := FRAME.match(line):
                self.frames.append((m.group("file"), int(m.group("line")), m.group("func")))
            return
        self.in_tb = False
        if len(self.exc) < MAX_MESSAGE_LINES:
            self.exc.append(line)

    @property
    def details(self) -> str:
        lines = list(self.head)
        if self.dropped:
            lines.append(f"...[{self.dropped} lines dropped]...")
        lines.extend(self.tail)
        return "\n".join(lines).strip("\n")

    @property
    def message(self) -> str | None:
        lines = list(self.exc)
        while lines and not lines[-1].strip():
            lines.pop()
        if lines:
            return "\n".join(lines)
        text = [ln for ln in self.head if ln.strip()]
        return text[-1] if text else None


@dataclass
class _Entry:
    """A test seen on a verbose line."""

    id: str
    status: Status | None = None
    word: str | None = None
    reason: str | None = None


@dataclass
class _Segment:
    """One test run (one ``Ran N tests`` summary, or the unfinished tail)."""

    # Every verbose line's test in order: distinct tests may print one name.
    entries: list[_Entry] = field(default_factory=list)
    current: _Entry | None = None
    pending_desc: str | None = None
    dots: list[str] = field(default_factory=list)
    dots_alt: list[str] = field(default_factory=list)
    blocks: dict[str, _Block] = field(default_factory=dict)
    # The blocks after the first one of a name (distinct tests printing one name), in order.
    more_blocks: dict[str, list[_Block]] = field(default_factory=dict)
    ran: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    finished: bool = False

    @property
    def entry_ids(self) -> set[str]:
        return {e.id for e in self.entries}

    def blocks_of(self, tid: str) -> list[_Block]:
        """Every failure block of ``tid``, in order."""
        first = self.blocks.get(tid)
        return [first, *self.more_blocks.get(tid, [])] if first is not None else []


class _Reader:
    """Streams one console stream into run segments."""

    def __init__(self) -> None:
        self.segments: list[_Segment] = [_Segment()]
        self.phase = "progress"  # progress | blocks | summary
        self.block_state = ""  # header | desc | body
        self.block: _Block | None = None
        self.sep2_pending = False

    @property
    def seg(self) -> _Segment:
        return self.segments[-1]

    def feed(self, line: str) -> None:
        """Consume one line."""
        if self.phase == "blocks":
            self._block_line(line)
            return
        if self.phase == "summary":
            if not line.strip():
                return
            m = SUMMARY.match(line.strip())
            if m:
                self.seg.counts = _counts(m.group("counts"))
            self.seg.finished = True
            self.segments.append(_Segment())
            self.phase = "progress"
            if m:
                return
        if SEP1.match(line):
            self.phase, self.block_state = "blocks", "header"
            return
        if SEP2.match(line):
            self.phase, self.block_state, self.sep2_pending = "blocks", "body", True
            return
        if m := RAN.match(line):
            self._ran(int(m.group("n")))
            return
        self._progress_line(line)

    def done(self) -> list[_Segment]:
        """The segments read, the unfinished one included when it has anything."""
        self._close_block()
        return [s for s in self.segments if s.entries or s.dots or s.blocks or s.ran is not None]

    def _ran(self, n: int) -> None:
        self._close_block()
        self.seg.ran = n
        self.phase = "summary"

    def _progress_line(self, line: str) -> None:
        seg = self.seg
        if not seg.entries:
            if DOTS.match(line):
                seg.dots.append(line)
                seg.dots_alt.append(line)
                return
            if m := DOTS_PREFIX.match(line):
                # Progress characters continued by a test's own stderr output
                # (``..xsnoise``). A letter right after a letter may also be
                # one word (``..session``): the alternative cuts the prefix
                # back to its last ``.``; alignment decides.
                dots = m.group("dots")
                alt = dots[: dots.rfind(".") + 1] if m.group("next").isalnum() and dots[-1].isalpha() else dots
                seg.dots.append(dots)
                seg.dots_alt.append(alt)
                return
        if " ... " not in line and not line.endswith(" ..."):
            cur = seg.current
            if cur is not None and cur.status is None and STATUS.match(line.strip()):
                self._status(line.strip())  # the status after the test's own stderr output
                seg.pending_desc = None
            else:
                # A description alone on its line: its docstring's first line follows.
                seg.pending_desc = case_id(line)
            return
        parts = line.split(" ... ")
        buf = parts[0]
        rest = parts[1:]
        if seg.pending_desc is not None and case_id(buf) is None:
            self._open(seg.pending_desc)
            buf, rest = (rest[0], rest[1:]) if rest else ("", [])
        seg.pending_desc = None
        for part in rest:
            tid = case_id(buf)
            if tid is not None:
                self._open(tid)
                buf = part
            else:
                buf = f"{buf} ... {part}"
        text = buf.strip()
        if text.endswith(" ..."):
            text = text[:-4]
            if (tid := case_id(text)) is not None:
                self._open(tid)
                return
        if (tid := case_id(text)) is not None:
            seg.pending_desc = tid  # (<=3.10) the next test's description, its docstring follows
        elif STATUS.match(text):
            self._status(text)
        elif " ... " in text and STATUS.match(text.rsplit(" ... ", 1)[1]):
            self._status(text.rsplit(" ... ", 1)[1])

    def _open(self, tid: str) -> None:
        seg = self.seg
        cur = seg.current
        if cur is not None and cur.id == tid and cur.status is None:
            return  # (the same test's line again: its docstring came between)
        entry = _Entry(tid)
        seg.entries.append(entry)
        seg.current = entry

    def _status(self, text: str) -> None:
        cur = self.seg.current
        m = STATUS.match(text)
        if cur is None or m is None or cur.status is not None:
            return
        word = "skipped" if text.startswith("skipped") else text.split(" (", 1)[0]
        cur.word, cur.status = word, WORD_STATUS[word]
        if word == "skipped" and m.group("why"):
            cur.reason = _unrepr(m.group("why"))

    def _block_line(self, line: str) -> None:
        if self.sep2_pending:
            # A dashed line ends a block header, or ends the last block
            # ('Ran N tests' follows), or is part of a traceback.
            self.sep2_pending, in_body = False, self.block_state == "body"
            self.block_state = "body"
            if m := RAN.match(line):
                self._ran(int(m.group("n")))
                return
            if self.block is None:  # a dashed line printed by a test, not unittest's
                self.phase = "progress"
                self.feed(line)
                return
            if in_body:
                self.block.add("-" * 70)
        if SEP1.match(line):
            self._close_block()
            self.block_state = "header"
            return
        if self.block_state in ("header", "desc") and (m := BLOCK_HEAD.match(line)):
            self._close_block()
            tid = case_id(m.group("desc")) or m.group("desc").strip()
            self.block = _Block(m.group("kind"), tid)
            self.block_state = "desc"
            return
        if line.startswith("Slowest test durations"):  # 3.12+ --durations: not part of a traceback
            self._close_block()
            self.block_state = "body"
            return
        if self.block_state == "header":  # a '=====' line a test printed
            self.phase = "progress"
            self.feed(line)
            return
        if SEP2.match(line):
            self.sep2_pending = True
            return
        if self.block_state == "body" and self.block is not None:
            self.block.add(line)

    def _close_block(self) -> None:
        if self.block is not None:
            if self.block.id in self.seg.blocks:
                self.seg.more_blocks.setdefault(self.block.id, []).append(self.block)
            else:
                self.seg.blocks[self.block.id] = self.block
            self.block = None


def _counts(text: str | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in (text or "").split(","):
        key, _, val = part.strip().partition("=")
        if val.strip().isdigit():
            out[key.strip()] = int(val)
    return out


def _unrepr(text: str) -> str:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else text


# ---------------------------------------------------------------------------
# The project's test suite, as unittest's loader would build it (dots mode).


@dataclass
class _ClassInfo:
    module: str
    qualname: str
    node: ast.ClassDef
    bases: list[str]


class _Sources:
    """Python modules of the project, parsed lazily, for locating tests and
    for rebuilding the loader's suite order."""

    def __init__(self, index: SourceIndex, main_file: str | None) -> None:
        self.index = index
        self.main_file = main_file
        self._trees: dict[str, ast.Module | None] = {}
        self._module_files: dict[str, str | None] = {}
        self._classes: dict[str, dict[str, _ClassInfo]] = {}

    def module_file(self, module: str) -> str | None:
        if module == "__main__":
            return self.main_file
        if module not in self._module_files:
            rel = module.replace(".", "/")
            files = self.index.files([".py"])
            found = None
            for cand in (f"{rel}.py", f"{rel}/__init__.py"):
                if cand in files:
                    found = cand
                    break
            if found is None:
                suffixes = (f"/{rel}.py", f"/{rel}/__init__.py")
                hits = sorted((f for f in files if f.endswith(suffixes)), key=len)
                found = hits[0] if hits else None
            self._module_files[module] = found
        return self._module_files[module]

    def tree(self, rel: str | None) -> ast.Module | None:
        if rel is None:
            return None
        if rel not in self._trees:
            self._trees[rel] = module_tree(self.index, rel)
        return self._trees[rel]

    def split(self, dotted: str) -> tuple[str | None, list[str]]:
        """'pkg.mod.Class.test' -> ('pkg.mod', ['Class', 'test'])."""
        parts = dotted.split(".")
        if parts[0] == "__main__":
            return "__main__", parts[1:]
        for cut in range(len(parts), 0, -1):
            mod = ".".join(parts[:cut])
            if self.module_file(mod) is not None:
                return mod, parts[cut:]
        return None, parts

    # -- classes -------------------------------------------------------------

    def classes(self, module: str) -> dict[str, _ClassInfo]:
        """Top-level classes defined or imported (from project modules) by name."""
        if module in self._classes:
            return self._classes[module]
        tree = self.tree(self.module_file(module))
        out: dict[str, _ClassInfo] = {}
        self._classes[module] = out
        if tree is None:
            return out
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                out[node.name] = _ClassInfo(module, node.name, node, [dotted_name(b) for b in node.bases])
            elif isinstance(node, ast.ImportFrom):
                src = _resolve_from(module, node, self.module_file(module))
                if src is None or src == module or self.module_file(src) is None:
                    continue
                for alias in node.names:
                    info = self._class_in(src, alias.name)
                    if info is not None:
                        out[alias.asname or alias.name] = info
        return out

    def _class_in(self, module: str, name: str) -> _ClassInfo | None:
        tree = self.tree(self.module_file(module))
        if tree is None:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return _ClassInfo(module, node.name, node, [dotted_name(b) for b in node.bases])
        return None

    def resolve_base(self, info: _ClassInfo, base: str) -> _ClassInfo | None:
        if "." not in base:
            found = self.classes(info.module).get(base)
            return found if found is not None and found.node is not info.node else None
        mod, attr = base.rsplit(".", 1)
        return self._class_in(mod, attr) if self.module_file(mod) else None

    def is_testcase(self, info: _ClassInfo, depth: int = 0) -> bool:
        for base in info.bases:
            parent = self.resolve_base(info, base) if depth < 10 else None
            if parent is not None:
                if self.is_testcase(parent, depth + 1):
                    return True
            elif base.rsplit(".", 1)[-1].endswith("TestCase"):
                return True
        return False

    def test_names(self, info: _ClassInfo, depth: int = 0) -> set[str]:
        """Test method names of a class, inherited ones included; ``test_x =
        None`` in a subclass removes an inherited test, ``test_y = test_x``
        adds one."""
        names: set[str] = set()
        removed: set[str] = set()
        for node in info.node.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                names.add(node.name)
                removed.discard(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.startswith("test"):
                        none = isinstance(node.value, ast.Constant) and node.value.value is None
                        (removed if none else names).add(target.id)
                        (names if none else removed).discard(target.id)
        if depth < 10:
            for base in info.bases:
                parent = self.resolve_base(info, base)
                if parent is not None:
                    names |= self.test_names(parent, depth + 1) - removed
        return names

    def def_line(self, info: _ClassInfo, name: str, depth: int = 0) -> tuple[str | None, int | None]:
        for node in info.node.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return self.module_file(info.module), node.lineno
        if depth < 10:
            for base in info.bases:
                parent = self.resolve_base(info, base)
                if parent is not None:
                    found = self.def_line(parent, name, depth + 1)
                    if found[1] is not None:
                        return found
        return None, None

    def nested(self, module: str, qual: list[str]) -> _ClassInfo | None:
        info = self.classes(module).get(qual[0]) if qual else None
        for name in qual[1:]:
            if info is None:
                return None
            inner = next((n for n in info.node.body if isinstance(n, ast.ClassDef) and n.name == name), None)
            info = _ClassInfo(info.module, f"{info.qualname}.{name}", inner, [dotted_name(b) for b in inner.bases]) \
                if inner is not None else None
        return info

    # -- the suite -------------------------------------------------------------

    def module_suite(self, module: str, patterns: list[str]) -> list[tuple[str, list[str]]]:
        """[(class id, [test ids])] in loader order (dir() order, sorted names)."""
        out = []
        for name, info in sorted(self.classes(module).items()):
            if not self.is_testcase(info):
                continue
            out.append(self.class_suite(info, patterns))
        return out

    def class_suite(self, info: _ClassInfo, patterns: list[str], only: str | None = None) -> tuple[str, list[str]]:
        cls = f"{info.module}.{info.qualname}"
        names = sorted(self.test_names(info)) if only is None else [only]
        if not names and only is None and any(
                isinstance(n, ast.FunctionDef) and n.name == "runTest" for n in info.node.body):
            names = ["runTest"]
        if patterns and only is None:
            names = [n for n in names if any(fnmatch.fnmatchcase(f"{cls}.{n}", p) for p in patterns)]
        return cls, [f"{cls}.{n}" for n in names]

    def discover(self, start: str, pattern: str, top: str | None) -> list[str]:
        """Module names ``TestLoader.discover`` would load, in its order."""
        start = _norm_dir(start)
        top = _norm_dir(top) if top is not None else start
        files = self.index.files([".py"])
        tree: dict[str, set[str]] = {}
        for f in files:
            parts = f.split("/")
            for i in range(len(parts)):
                tree.setdefault("/".join(parts[:i]), set()).add(parts[i])
        mods: list[str] = []

        def walk(d: str, depth: int) -> None:
            for name in sorted(tree.get(d, ())):
                path = f"{d}/{name}" if d else name
                if path in tree:  # a directory: a package is searched, other folders are not
                    if "__init__.py" in tree[path] and depth < 20:
                        walk(path, depth + 1)
                elif name.endswith(".py") and fnmatch.fnmatchcase(name, pattern) and name[:-3].isidentifier():
                    mods.append(_module_name(path, top))

        walk(start, 0)
        return [m for m in mods if m]


def _norm_dir(d: str) -> str:
    d = d.strip().rstrip("/")
    while d.startswith("./"):
        d = d[2:]
    return "" if d in (".", "") else d


def _module_name(path: str, top: str) -> str:
    rel = path[:-3]
    if top:
        if not rel.startswith(top + "/"):
            return ""
        rel = rel[len(top) + 1:]
    return rel.replace("/", ".")




def _resolve_from(module: str, node: ast.ImportFrom, file: str | None) -> str | None:
    if not node.level:
        return node.module
    pkg = module.split(".")
    if not (file or "").endswith("__init__.py"):
        pkg = pkg[:-1]
    if node.level - 1 > len(pkg):
        return None
    base = pkg[: len(pkg) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


@dataclass
class _Plan:
    """What the command loads: discovery or names, and -k patterns."""

    names: list[str]
    discover: tuple[str, str, str | None] | None
    patterns: list[str]


def _plans(command: str, main_file: str | None) -> list[_Plan]:
    """Candidate suites for ``command``, most specific first."""
    words = command_words(command)
    plans: list[_Plan] = []
    default = _Plan([], (".", "test*.py", None), [])
    for i, w in enumerate(words):
        if w == "-m" and i + 1 < len(words) and words[i + 1] == "unittest":
            plans.append(_parse_args(words[i + 2:]))
            break
    if main_file is not None:
        plans.append(_Plan(["__main__"], None, []))
    plans.append(default)
    plans.append(_Plan([], ("tests", "test*.py", "."), []))
    plans.append(_Plan([], ("test", "test*.py", "."), []))
    return plans


def _parse_args(args: list[str]) -> _Plan:
    positional: list[str] = []
    opts: dict[str, str] = {}
    patterns: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("&&", "||", ";", "|") or a.startswith((">", "2>", "&>")):
            break
        if a in VALUE_OPTIONS and i + 1 < len(args):
            if a == "-k":
                patterns.append(args[i + 1])
            else:
                opts[a] = args[i + 1]
            i += 2
            continue
        if a.startswith("-k") and len(a) > 2:
            patterns.append(a[2:])
        elif a.startswith("--") and "=" in a:
            key, val = a.split("=", 1)
            opts[key] = val
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    patterns = [p if "*" in p else f"*{p}*" for p in patterns]
    if not positional or positional[0] == "discover":
        rest = positional[1:] if positional else []
        start = opts.get("-s") or opts.get("--start-directory") or (rest[0] if rest else ".")
        pattern = opts.get("-p") or opts.get("--pattern") or (rest[1] if len(rest) > 1 else "test*.py")
        top = opts.get("-t") or opts.get("--top-level-directory") or (rest[2] if len(rest) > 2 else None)
        return _Plan([], (start, pattern, top), patterns)
    names = []
    for p in positional:
        if p.endswith(".py"):
            p = p[:-3].lstrip("./").replace("/", ".")
        names.append(p)
    return _Plan(names, None, patterns)


@dataclass
class _Group:
    """A module's part of the suite: its classes' tests, or a failed import."""

    module: str
    classes: list[tuple[str, list[str]]]


def _suite(src: _Sources, plan: _Plan) -> list[_Group]:
    groups: list[_Group] = []
    if plan.discover is not None:
        for mod in src.discover(*plan.discover):
            groups.append(_Group(mod, src.module_suite(mod, plan.patterns)))
        return groups
    for name in plan.names:
        mod, rest = src.split(name)
        if mod is None:
            groups.append(_Group(name, []))
            continue
        if not rest:
            groups.append(_Group(mod, src.module_suite(mod, plan.patterns)))
            continue
        info = src.nested(mod, rest)
        if info is not None:
            groups.append(_Group(mod, [src.class_suite(info, plan.patterns)]))
            continue
        info = src.nested(mod, rest[:-1])
        if info is not None:
            groups.append(_Group(mod, [src.class_suite(info, plan.patterns, only=rest[-1])]))
        else:
            groups.append(_Group(name, []))
    return groups


def _align(groups: list[_Group], seg: _Segment, chars: str, killed: bool) -> list[tuple[str, Status, bool]] | None:
    """Map the progress characters onto the suite; None when they disagree.

    Returns (id, status, timed_out) in run order. A test with failing
    subtests gets one character per failing subtest (and none of its own
    unless it also failed outside them); a failed ``setUpClass`` /
    ``setUpModule`` gets one ``E`` and its tests none; a module that failed
    to import is one ``E`` for ``unittest.loader._FailedTest.<module>``.
    Without any progress characters (``-q``) every test not in a failure
    block passed, which is only certain when nothing was skipped. A run cut
    off before its failure blocks takes each character at its word.
    """
    quiet = not chars
    lenient = not seg.finished and not seg.blocks
    if quiet and (seg.counts.get("skipped") or seg.counts.get("expected failures")):
        return None
    blocks = seg.blocks
    subs: dict[str, list[str]] = {}
    for bid in blocks:
        if _base_id(bid) != bid:
            subs.setdefault(_base_id(bid), []).append(bid)
    out: list[tuple[str, Status, bool]] = []
    pos = 0
    ran = 0
    hung: str | None = None

    def one(tid: str, allowed: str) -> bool:
        """Consume the next character for ``tid``; False on a mismatch."""
        nonlocal pos, hung
        block = blocks.get(tid)
        if quiet:
            out.append((tid, KIND_STATUS[block.kind] if block else Status.PASSED, False))
            return True
        if pos >= len(chars):
            hung = hung or tid
            return True
        if chars[pos] not in allowed:
            return False
        out.append((tid, KIND_STATUS[block.kind] if block else CHAR_STATUS[chars[pos]], False))
        pos += 1
        return True

    for g in groups:
        # a module that fails to import: by its dotted name when discovered,
        # by its last part when named on the command line
        pseudo = [f"setUpModule ({g.module})", FAILED_TEST + g.module, FAILED_TEST + g.module.rsplit(".", 1)[-1]]
        if any(p in blocks for p in pseudo):
            ran += pseudo[0] not in blocks
            if not one(next(p for p in pseudo if p in blocks), "E"):
                return None
            continue
        for cls, tests in g.classes:
            if f"setUpClass ({cls})" in blocks:
                if not one(f"setUpClass ({cls})", "E"):
                    return None
                continue
            for tid in tests:
                before = (pos, len(out))
                for sub in subs.get(tid, ()):
                    if not one(sub, "EF"):
                        return None
                if tid in blocks or tid not in subs:
                    if not one(tid, _kind_char(blocks[tid]) if tid in blocks else ".sxEFu" if lenient else ".sx"):
                        return None
                ran += (pos, len(out)) != before
            if f"tearDownClass ({cls})" in blocks and not one(f"tearDownClass ({cls})", "E"):
                return None
        if f"tearDownModule ({g.module})" in blocks and not one(f"tearDownModule ({g.module})", "E"):
            return None
    if pos != len(chars) or not set(blocks) <= {tid for tid, _, _ in out}:
        return None
    if seg.ran is not None and seg.ran != ran:
        return None
    if hung is not None and seg.finished and not (out and out[-1][1] in STOP_STATUSES):
        return None  # a finished run stops early only after a failure (-f)
    if hung is not None and killed and not seg.finished:
        out.append((hung, Status.FAILED, True))
    return out


def _kind_char(block: _Block) -> str:
    return {"ERROR": "E", "FAIL": "F", "UNEXPECTED SUCCESS": "u"}[block.kind]


# ---------------------------------------------------------------------------


def _main_file(command: str, index: SourceIndex) -> str | None:
    """The script of ``python path/to/x.py`` (its tests are ``__main__.*``)."""
    words = command_words(command)
    for i, w in enumerate(words):
        if re.fullmatch(r"(?:\S*/)?python[\d.]*", w):
            rest = [x for x in words[i + 1:] if not x.startswith("-")]
            if rest and rest[0].endswith(".py") and "-m" not in words[i + 1:i + 3]:
                return index.relative(rest[0])
    return None


def _import_error_at(src: _Sources, tid: str, block: _Block | None) -> tuple[str | None, int | None]:
    """Where a failed import (``unittest.loader._FailedTest.<module>``) failed:
    the innermost frame of its traceback in the module, else the module."""
    module = tid[len(FAILED_TEST):]
    file = src.module_file(module)
    frames = [(src.index.relative(f), n) for f, n, _ in (block.frames if block else [])]
    frames = [(f, n) for f, n in frames if f is not None and src.index.lines(f)]
    for f, n in reversed(frames):
        if file is None or f == file:
            return f, n
    return file, None


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``pkg.mod.Class.test`` (``__main__.*`` for a script): the ``def`` of
    the method in its class, through project base classes and imports;
    ``setUpClass (pkg.mod.Class)``/``setUpModule (pkg.mod)`` pseudo-tests: the
    hook's ``def``. A failed import is placed by the parser, from its
    traceback."""
    src = _Sources(sources, _main_file(run.command, sources))
    out: dict[str, Location] = {}
    for t in tests:
        if t.id.startswith(FAILED_TEST):
            continue
        file, line = _definition(src, t.id)
        if file is not None:
            out[t.id] = Location(file, line)
    return out


def _definition(src: _Sources, tid: str) -> tuple[str | None, int | None]:
    """File and ``def`` line of a test or pseudo-test."""
    m = re.match(r"^(?P<name>\w+) \((?P<dotted>[\w.]+)\)$", tid)
    if m and m.group("name") in PSEUDO:
        name, dotted = m.group("name", "dotted")
        if name.endswith("Module"):
            file = src.module_file(dotted)
            line = src.index.find_in(file, re.compile(rf"^def\s+{name}\s*\(")) if file else None
            return file, line
        mod, qual = src.split(dotted)
        info = src.nested(mod, qual) if mod else None
        if info is None:
            return (src.module_file(mod) if mod else None), None
        f, line = src.def_line(info, name)
        return (f or src.module_file(info.module)), line
    mod, rest = src.split(_base_id(tid))
    if mod is None or not rest:
        return None, None
    file = src.module_file(mod)
    info = src.nested(mod, rest[:-1]) if len(rest) > 1 else None
    if info is not None:
        f, line = src.def_line(info, rest[-1])
        if line is not None:
            return f, line
    return file, None


def parse(run: RunOutput) -> TestReport:
    """Parse unittest's console output (stderr, or both streams merged)."""
    report = TestReport(framework=FRAMEWORK, sources=["console"])
    segments: list[_Segment] = []
    for stream in ("stdout", "stderr"):
        reader = _Reader()
        for line in run.lines(stream):
            reader.feed(line)
        segments.extend(reader.done())
    if any(s.ran is not None or s.entries or s.blocks for s in segments):
        # Progress characters alone (no summary, no blocks) are only a run
        # when nothing else is: otherwise they are a test's own output.
        segments = [s for s in segments if s.ran is not None or s.entries or s.blocks]
    index = SourceIndex(run.sources_root)
    src = _Sources(index, _main_file(run.command, index))
    killed = run.killed_by_timeout
    tests: list[TestResult] = []
    for seg in segments:
        for tid, status, hung, entry, block in _resolve(seg, src, run, report):
            file, line = _import_error_at(src, tid, block) if tid.startswith(FAILED_TEST) else (None, None)
            message = block.message if block is not None else None
            if entry is not None and entry.reason is not None:
                message = entry.reason
            if hung:
                message = ("killed by timeout while this test was running (no result printed)" if killed
                           else "the run ended while this test was running (no result printed)")
            word = entry.word if entry is not None else None
            tests.append(TestResult(
                id=tid, status=status, file=file, line=line, message=message,
                details=block.details if block is not None else None, timed_out=hung and killed,
                native_status=word if word in ("skipped", "expected failure", "unexpected success") else None,
            ))
    report.tests = tests
    report.summary_counts = _summary_counts(segments, report.tests)
    report.build_error = any(t.id.startswith(FAILED_TEST) for t in report.tests)
    report.timed_out = killed
    if not segments:
        report.warnings.append("no unittest output found (no results, failure blocks or 'Ran N tests' line)")
        report.output_tail = run.tail()
    return report


def _summary_counts(segments: list[_Segment], tests: list[TestResult]) -> dict[str, int]:
    """What the runs' ``Ran N tests`` and ``OK``/``FAILED (...)`` lines
    counted, in per-test terms, for the normalizer's check.

    The statuses compare one to one: unittest counts a failure, an error or a
    skip per failing or skipped subtest and per ``setUpClass``/``setUpModule``
    (pseudo-test) error, and this parser lists each of those as an entry.
    ``Ran N`` counts each test method once (a failed import's
    ``_FailedTest`` included): a test with subtests once however many of them
    failed, a pseudo-test never. So the total is compared (N plus the
    pseudo-test entries) only when no subtest has an entry of its own.
    Nothing is handed over unless every run in the output ended with its
    summary (a killed run prints none)."""
    if not segments or not all(s.finished and s.ran is not None for s in segments):
        return {}
    counts = dict.fromkeys(SUMMARY_STATUS.values(), 0)
    for seg in segments:
        for word, n in seg.counts.items():
            if word in SUMMARY_STATUS:
                counts[SUMMARY_STATUS[word]] += n
    if all(_base_id(t.id) == t.id for t in tests):
        pseudo = sum(1 for t in tests if t.id.split(" ", 1)[0] in PSEUDO)
        counts["total"] = sum(s.ran or 0 for s in segments) + pseudo
    return counts


def _resolve(seg: _Segment, src: _Sources, run: RunOutput,
             report: TestReport) -> list[tuple[str, Status, bool, _Entry | None, _Block | None]]:
    """The tests of one run segment: (id, status, hung, verbose entry, failure
    block). Distinct tests that print one name are each listed (the
    normalizer numbers them apart); the failure blocks of a name go to its
    failing entries in order."""
    out: list[tuple[str, Status, bool, _Entry | None, _Block | None]] = []
    has_subs = {_base_id(t) for t in [*seg.entry_ids, *seg.blocks] if _base_id(t) != t}
    if seg.entries:
        last = seg.entries[-1]
        hung = last.id if last.status is None and last.id not in seg.blocks and not seg.finished else None
        queues = {tid: seg.blocks_of(tid) for tid in seg.blocks}
        once = Counter(e.id for e in seg.entries)
        for e in seg.entries:
            if e.status is not None:
                queue = queues.get(e.id)
                if e.status in KIND_STATUS.values():
                    block = queue.pop(0) if queue else None
                else:  # a block after a printed pass (a clean-up's error) is the test's, if the name is its own
                    block = seg.blocks.get(e.id) if once[e.id] == 1 else None
                out.append((e.id, e.status, False, e, block))
            elif queues.get(e.id):
                block = queues[e.id].pop(0)
                out.append((e.id, KIND_STATUS[block.kind], False, e, block))
            elif e is last and e.id == hung:
                out.append((e.id, Status.FAILED, True, e, None))
            elif e.id not in has_subs:  # (a parent's failing subtests are listed instead)
                out.append((e.id, Status.PASSED, False, e, None))
                report.warnings.append(f"{e.id}: no status was printed (interleaved output?); assumed passed")
        for bid, queue in queues.items():
            if bid not in once:  # (a listed test's blocks are its entries')
                out.extend((bid, KIND_STATUS[b.kind], False, None, b) for b in queue)
        return out
    variants = list(dict.fromkeys(["".join(seg.dots), "".join(seg.dots_alt)]))
    for plan in _plans(run.command, src.main_file):
        suite = _suite(src, plan)
        for chars in variants:
            aligned = _align(suite, seg, chars, run.killed_by_timeout)
            if aligned is not None:
                return [(tid, st, hung, None, seg.blocks.get(tid)) for tid, st, hung in aligned]
    if seg.dots or seg.ran:
        report.warnings.append(
            "could not map unittest's progress output to test names from the sources; "
            "only the tests named in failure blocks are listed")
    for bid in seg.blocks:
        out.extend((bid, KIND_STATUS[b.kind], False, None, b) for b in seg.blocks_of(bid))
    return out


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

SELECT_VALUE_OPTIONS = {"-k", "-s", "-t", "-p", "--start-directory", "--top-level-directory", "--pattern"}
DISCOVERY_OPTIONS = {"-s", "-t", "-p", "--start-directory", "--top-level-directory", "--pattern"}
DEFAULT_INVOCATION = "python -m unittest -v"
DEFAULT_SUITE = "python -m unittest discover -v"
# A name selects ``Class(method)``, never the instances a ``load_tests`` or a suite-building
# callable made (``TestIdnaTest(lineno, fields)``): tests printing one name cannot be selected.
REPEATED_NAMES_SELECTABLE = False
FIXTURE_ID = re.compile(r"(?:setUpClass|tearDownClass|setUpModule|tearDownModule) \((.+)\)$")
FAILED_IMPORT = "unittest.loader._FailedTest."


def suite_command(root: Path) -> tuple[str, list[str]]:
    """The suite the project declares (setuptools' ``test_suite``), else discovery from the top."""
    suite = setuptools_suite.declared(root)
    return (setuptools_suite.command(root, suite) if suite is not None else DEFAULT_SUITE), []


def runner_end(words: list[str]) -> int | None:
    values = [unquote(w) for w in words]
    return next((i + 2 for i in range(len(values) - 1) if values[i] == "-m" and values[i + 1] == "unittest"), None)


def split_args(args: list[str], inv: Invocation) -> None:
    """Named tests are loaded directly: ``discover`` and its -s/-t/-p go."""
    if args and unquote(args[0]) == "discover":
        inv.dropped.append("discover")
        split_words(args[1:], inv, SELECT_VALUE_OPTIONS, set())
        inv.options = without(inv.options, DISCOVERY_OPTIONS, SELECT_VALUE_OPTIONS)
    else:
        split_words(args, inv, SELECT_VALUE_OPTIONS, set())


def _target(tid: str) -> str:
    fixture = FIXTURE_ID.match(tid)
    if fixture:
        return fixture.group(1)
    if tid.startswith(FAILED_IMPORT):
        return tid.removeprefix(FAILED_IMPORT)
    return re.sub(r" [(\[].*$", "", tid)  # a subtest runs with its test


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    if "-v" not in {unquote(w) for w in inv.options} and "-v" not in {unquote(w) for w in inv.head}:
        inv.options.append("-v")
    return [shlex.quote(t) for t in dict.fromkeys(_target(t.id) for t in tests)]
