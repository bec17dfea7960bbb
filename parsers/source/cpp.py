"""C and C++ sources: where GoogleTest tests are defined (``TEST``,
``TEST_F``, ``TEST_P`` with its ``INSTANTIATE_TEST_SUITE_P`` instances,
``TYPED_TEST`` with its type lists), for the googletest and ctest parsers.
Comments are blanked before scanning; macros and generators that cannot be
counted from the text leave the count unknown rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..locate import SourceIndex

CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".cu", ".mm", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp")
SOURCE_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".cu", ".mm")
DEF = re.compile(r"\b(?P<macro>GTEST_TEST|TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\s*\(\s*(?P<suite>\w+)\s*,"
                 r"\s*(?P<name>\w+)\s*\)")
INSTANTIATE = re.compile(r"\b(?P<macro>INSTANTIATE_TEST_SUITE_P|INSTANTIATE_TEST_CASE_P|"
                         r"INSTANTIATE_TYPED_TEST_SUITE_P|INSTANTIATE_TYPED_TEST_CASE_P|TYPED_TEST_SUITE|"
                         r"TYPED_TEST_CASE)\s*\(")
TYPES = re.compile(r"(?:::)?(?:testing::)?Types\s*<")
TYPE_ALIAS = re.compile(r"\busing\s+(?P<name>\w+)\s*=\s*(?P<rhs>[^;]*Types\s*<)|"
                        r"\btypedef\s+(?P<rhs2>[^;]*Types\s*<)")
LINE_COMMENT = re.compile(r"//[^\n]*")
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
ADD_EXECUTABLE = re.compile(r"\badd_executable\s*\(\s*(?P<target>[^\s)]+)(?P<rest>[^)]*)\)", re.I)
TARGET_SOURCES = re.compile(r"\btarget_sources\s*\(\s*(?P<target>[^\s)]+)(?P<rest>[^)]*)\)", re.I)
DISABLED_PREFIX = "DISABLED_"


def _blank_comments(text: str) -> str:
    """Comments replaced by spaces (newlines kept, so offsets and lines stay)."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return LINE_COMMENT.sub(blank, BLOCK_COMMENT.sub(blank, text))


def _string_end(text: str, start: int) -> int:
    """The index after the string or char literal whose quote is at ``text[start]``."""
    j, n = start + 1, len(text)
    while j < n and text[j] != text[start]:
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _balanced(text: str, start: int, open_ch: str = "(", close_ch: str = ")") -> tuple[str, int] | None:
    """The text inside the bracket opened at ``text[start - 1]``, and the index after its close."""
    depth, i, n = 1, start, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i = _string_end(text, i)
            continue
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return text[start:i], i + 1
        i += 1
    return None


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments: brackets, braces, strings and
    template argument lists (``pair<int, int>``: a ``<`` right after a name)
    are respected; ``a < b`` comparisons are not brackets."""
    args: list[str] = []
    stack: list[str] = []
    cur: list[str] = []
    i, n = 0, len(text)
    pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
    while i < n:
        ch = text[i]
        if ch in "\"'":
            j = _string_end(text, i)
            cur.append(text[i:j])
            i = j
            continue
        if ch in "([{" or (ch == "<" and i and (text[i - 1].isalnum() or text[i - 1] == "_")
                           and text[i + 1:i + 2] not in ("<", "=")):
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
        elif ch in ")]}":
            while stack and stack[-1] == ">":  # an unclosed "<" was a comparison after all
                stack.pop()
            if stack and ch == stack[-1]:
                stack.pop()
        if ch == "," and not stack:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    last = "".join(cur).strip()
    if last or args:
        args.append(last)
    return args


@dataclass
class Definition:
    """One TEST-like macro in the sources."""

    macro: str
    suite: str
    name: str
    file: str
    line: int


class GTestSources:
    """The gtest tests a project's sources define, for locating definitions
    and for enumerating what a binary runs when its output does not say."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self._scanned: dict[str, tuple[list[Definition], list[tuple[str, str, list[str]]], dict[str, int | None]]] = {}
        self._defs: dict[tuple[str, str], Definition] | None = None

    def _scan(self, rel: str) -> tuple[list[Definition], list[tuple[str, str, list[str]]], dict[str, int | None]]:
        """Definitions, instantiation macros (macro, line, args) and type-list aliases of one file."""
        if rel in self._scanned:
            return self._scanned[rel]
        text = _blank_comments("\n".join(self.index.lines(rel)))
        defs: list[Definition] = []
        insts: list[tuple[str, str, list[str]]] = []
        aliases: dict[str, int | None] = {}
        if "TEST" in text:
            for m in DEF.finditer(text):
                defs.append(Definition(m.group("macro"), m.group("suite"), m.group("name"), rel,
                                       text.count("\n", 0, m.start()) + 1))
            for m in INSTANTIATE.finditer(text):
                body = _balanced(text, m.end())
                if body is not None:
                    insts.append((m.group("macro"), rel, _split_args(body[0])))
        if "Types" in text:
            for m in TYPE_ALIAS.finditer(text):
                inner = _balanced(text, m.end(), "<", ">")
                count = len(_split_args(inner[0])) if inner else None
                name = m.group("name")
                if name is None and inner is not None:  # typedef ::testing::Types<...> Name;
                    tail = re.match(r"\s*(\w+)\s*;", text[inner[1]:])
                    name = tail.group(1) if tail else None
                if name:
                    aliases[name] = count
        self._scanned[rel] = (defs, insts, aliases)
        return self._scanned[rel]

    def definitions(self) -> dict[tuple[str, str], Definition]:
        """(suite, name) -> first definition, over every C++ file of the project."""
        if self._defs is None:
            self._defs = {}
            for rel in self.index.files(CXX_SUFFIXES):
                for d in self._scan(rel)[0]:
                    self._defs.setdefault((d.suite, d.name), d)
        return self._defs

    def locate(self, test_id: str) -> tuple[str, int] | None:
        """The file and line of a test's definition."""
        d = self.definitions().get(split_id(test_id))
        return (d.file, d.line) if d else None

    def binary_sources(self, binary: str | None) -> list[str] | None:
        """The C++ sources CMake builds into ``binary`` (by target name), when known."""
        if not binary:
            return None
        target = PurePosixPath(binary).name.removesuffix(".exe")
        found: list[str] = []
        for cm in self.index.files(("CMakeLists.txt",)):
            base = PurePosixPath(cm).parent
            text = LINE_COMMENT.sub("", "\n".join(self.index.lines(cm)).replace("#", "//"))
            for rx in (ADD_EXECUTABLE, TARGET_SOURCES):
                for m in rx.finditer(text):
                    if m.group("target") != target:
                        continue
                    for word in m.group("rest").split():
                        word = word.strip("\"")
                        if word.endswith(CXX_SUFFIXES) and "$" not in word:
                            rel = (base / word).as_posix().removeprefix("./")
                            if self.index.lines(rel):
                                found.append(rel)
        return found or None

    def enumerate(self, files: list[str] | None) -> list[tuple[str, Definition]] | None:
        """Every test id the given files (all C++ files when None) register, in
        order; None when some ids cannot be derived (custom parameter names,
        ValuesIn of something not in the file...)."""
        rels = files if files is not None else self.index.files(CXX_SUFFIXES)
        defs: list[Definition] = []
        insts: list[tuple[str, str, list[str]]] = []
        aliases: dict[str, int | None] = {}
        for rel in rels:
            d, i, a = self._scan(rel)
            defs += d
            insts += i
            aliases.update(a)
        value_inst: dict[str, list[tuple[str, int | None, bool]]] = {}
        typed: dict[str, tuple[int | None, bool]] = {}
        typed_inst: dict[str, list[tuple[str, int | None, bool]]] = {}
        for macro, rel, args in insts:
            if macro.startswith("INSTANTIATE_TEST") and len(args) >= 3:
                n = _generator_count(args[2], self.index, rel)
                value_inst.setdefault(args[1], []).append((args[0], n, len(args) > 3))
            elif macro.startswith("INSTANTIATE_TYPED") and len(args) >= 3:
                typed_inst.setdefault(args[1], []).append((args[0], _types_count(args[2], aliases), len(args) > 3))
            elif macro.startswith("TYPED_TEST_") and len(args) >= 2:
                typed[args[0]] = (_types_count(args[1], aliases), len(args) > 2)
        out: list[tuple[str, Definition]] = []
        for d in defs:
            if d.macro in ("TEST", "TEST_F", "GTEST_TEST"):
                out.append((f"{d.suite}.{d.name}", d))
            elif d.macro == "TEST_P":
                for prefix, n, named in value_inst.get(d.suite, []):
                    if n is None or named:
                        return None
                    head = f"{prefix}/{d.suite}" if prefix else d.suite
                    out += [(f"{head}.{d.name}/{i}", d) for i in range(n)]
            elif d.macro == "TYPED_TEST":
                n, named = typed.get(d.suite, (None, False))
                if n is None or named:
                    return None
                out += [(f"{d.suite}/{i}.{d.name}", d) for i in range(n)]
            elif d.macro == "TYPED_TEST_P":
                for prefix, n, named in typed_inst.get(d.suite, []):
                    if n is None or named:
                        return None
                    out += [(f"{prefix}/{d.suite}/{i}.{d.name}", d) for i in range(n)]
        return out


def _types_count(arg: str, aliases: dict[str, int | None]) -> int | None:
    """How many types a ``::testing::Types<...>`` argument (or an alias of one) lists."""
    arg = arg.strip()
    if m := TYPES.search(arg):
        inner = _balanced(arg, m.end(), "<", ">")
        return len(_split_args(inner[0])) if inner else None
    if re.fullmatch(r"(?:\w+::)*\w+", arg):
        return aliases.get(arg.split("::")[-1])
    return None


GENERATOR = re.compile(r"^(?:::)?(?:testing::)?(?P<fn>Values|ValuesIn|Bool|Range|Combine)\s*\(", re.S)


def _generator_count(expr: str, index: SourceIndex, rel: str) -> int | None:
    """How many parameters a TEST_P generator yields, when the source says it literally."""
    m = GENERATOR.match(expr.strip())
    if not m:
        return None
    body = _balanced(expr.strip(), m.end())
    if body is None:
        return None
    args = _split_args(body[0])
    fn = m.group("fn")
    if fn == "Values":
        return len(args)
    if fn == "Bool":
        return 2
    if fn == "Range":
        try:
            nums = [int(a) for a in args]
        except ValueError:
            return None
        return len(range(*nums)) if len(nums) in (2, 3) and (len(nums) == 2 or nums[2]) else None
    if fn == "Combine":
        total = 1
        for a in args:
            n = _generator_count(a, index, rel)
            if n is None:
                return None
            total *= n
        return total
    # ValuesIn(name): a braced array or container initialised in the same file
    if len(args) == 1 and re.fullmatch(r"\w+", args[0]):
        text = _blank_comments("\n".join(index.lines(rel)))
        if dm := re.search(rf"\b{re.escape(args[0])}\s*(?:\[\s*\w*\s*\])?\s*=?\s*\{{", text):
            init = _balanced(text, dm.end(), "{", "}")
            if init is not None:
                return len([a for a in _split_args(init[0]) if a])
    return None


def split_id(test_id: str) -> tuple[str, str]:
    """(suite, test) macro arguments of a gtest id: ``Prefix/Suite.Name/3`` ->
    (``Suite``, ``Name``); ``Suite/0.Name`` -> (``Suite``, ``Name``)."""
    suite_part, _, name_part = test_id.partition(".")
    comps = [s for s in suite_part.split("/") if s and not s.isdigit()]
    suite = comps[-1] if comps else suite_part
    return suite, name_part.split("/", 1)[0]


def locate(index: SourceIndex, test_id: str) -> tuple[str, int] | None:
    """The file and line of a test's definition (TEST/TEST_F/TEST_P/TYPED_TEST...).
    Builds a :class:`GTestSources` each call: keep one for many lookups."""
    return GTestSources(index).locate(test_id)


def is_disabled(test_id: str) -> bool:
    """gtest's rule: the suite or the test name starts with ``DISABLED_``
    (after a ``Prefix/`` for instantiated suites)."""
    suite_part, _, name_part = test_id.partition(".")
    return (suite_part.startswith(DISABLED_PREFIX) or f"/{DISABLED_PREFIX}" in suite_part
            or name_part.startswith(DISABLED_PREFIX))
