"""Single-point mutants of a project's own source: the bugs a fix-quality benchmark injects.

Each mutant changes one thing on one line of a function body (never a test file, a string or a
comment): a comparison or a boolean flipped, an off-by-one, ``+``/``-`` or ``*``/``/`` swapped, a
constant changed, two simple arguments swapped, a statement removed. The operators are the classic
mutation-testing ones (Offutt et al.'s sufficient set: relational, logical, arithmetic operator
replacement, constant replacement, statement deletion), for Python (read token by token), and
JavaScript/TypeScript, Go and Rust (read with strings and comments blanked). Pure: sources in,
mutants out; the caller decides which ones the tests notice.
"""

from __future__ import annotations

import io
import keyword
import random
import re
import tokenize
from collections.abc import Iterable

from pydantic import BaseModel

from .localize import is_test_file
from .regions import Region, blank_strings_and_comments, functions
from ..parsers.locate import SourceIndex

LANGUAGES = {".py": "python", ".js": "js", ".mjs": "js", ".cjs": "js", ".ts": "js", ".mts": "js", ".tsx": "js",
             ".jsx": "js", ".go": "go", ".rs": "rust"}

SWAPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "===": "!==", "!==": "===",
         "+": "-", "-": "+", "*": "/", "/": "*", "&&": "||", "||": "&&", "and": "or", "or": "and",
         "True": "False", "False": "True", "true": "false", "false": "true"}
# Relational, logical and arithmetic operators between spaces (never a generic's ``<T>``, an arrow or a sign).
_BRACE_OPS = re.compile(r"(?<=\s)(?:===|!==|==|!=|<=|>=|&&|\|\||[<>]|[-+*/])(?=\s)|\btrue\b|\bfalse\b")
VALUES = ("True", "False", "None")
_INT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_CALL_TWO = re.compile(r"\b([A-Za-z_]\w*)\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*\)")


class Mutant(BaseModel, frozen=True):
    """One change: line ``line`` of ``file`` reads ``after`` instead of ``before``."""

    file: str
    line: int
    function: str
    operator: str
    before: str
    after: str

    def apply(self, text: str) -> str:
        lines = text.split("\n")
        assert lines[self.line - 1] == self.before, "the file changed since the mutant was made"
        lines[self.line - 1] = self.after
        return "\n".join(lines)

    @property
    def reverse(self) -> Mutant:
        return self.model_copy(update={"before": self.after, "after": self.before})


def language(file: str) -> str | None:
    return next((lang for suffix, lang in LANGUAGES.items() if file.endswith(suffix)), None)


def source_files(index: SourceIndex) -> list[str]:
    """The project's own source files a mutant may change (no tests, examples, docs or builds)."""
    out = []
    for f in index.files(tuple(LANGUAGES)):
        parts = f.split("/")
        if is_test_file(f) or any(p in ("docs", "doc", "examples", "example", "bench", "benches", "scripts")
                                   or p.startswith(".") for p in parts[:-1]):
            continue
        if parts[-1] in ("setup.py", "conftest.py", "noxfile.py") or f.endswith((".d.ts", ".min.js")):
            continue
        out.append(f)
    return out


def mutants_of(index: SourceIndex, file: str) -> list[Mutant]:
    """Every single-point mutant of ``file``'s function bodies."""
    lang = language(file)
    lines = index.lines(file)
    if lang is None or not lines:
        return []
    regions = functions(index, file)
    if lang == "python":
        return list(_python(file, lines, regions))
    return list(_braces(file, lines, regions))


def sample(index: SourceIndex, count: int, seed: int, files: Iterable[str] | None = None) -> list[Mutant]:
    """``count`` mutants drawn at random (``seed``), spread over functions: at most one per function
    until every function has one."""
    pool: dict[tuple[str, str], list[Mutant]] = {}
    for f in files if files is not None else source_files(index):
        for m in mutants_of(index, f):
            pool.setdefault((m.file, m.function), []).append(m)
    rng = random.Random(seed)
    groups = [pool[k] for k in sorted(pool)]
    rng.shuffle(groups)
    for g in groups:
        rng.shuffle(g)
    out: list[Mutant] = []
    depth = 0
    while len(out) < count and any(len(g) > depth for g in groups):
        out += [g[depth] for g in groups if len(g) > depth][: count - len(out)]
        depth += 1
    return out


def _body_lines(regions: list[Region]) -> dict[int, Region]:
    """Each body line and its innermost function."""
    out: dict[int, Region] = {}
    for r in sorted(regions, key=lambda r: -(r.end - r.start)):  # inner functions last: they win
        for n in range(r.body_start, r.end + 1):
            if r.doc is None or not r.doc[0] <= n <= r.doc[1]:
                out[n] = r
    return out


def _python(file: str, lines: list[str], regions: list[Region]) -> Iterable[Mutant]:
    body = _body_lines(regions)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return
    previous: tokenize.TokenInfo | None = None
    for tok in tokens:
        n, col = tok.start
        before, previous = previous, tok
        if n not in body or tok.start[0] != tok.end[0]:
            continue
        line = lines[n - 1]
        if tok.type == tokenize.OP and tok.string in SWAPS or tok.type == tokenize.NAME and tok.string in SWAPS:
            operand = before is not None and (
                before.type == tokenize.NAME and (not keyword.iskeyword(before.string) or before.string in VALUES)
                or before.type in (tokenize.NUMBER, tokenize.STRING) or before.string in (")", "]", "}"))
            if tok.string in ("-", "+", "*") and not operand:  # a sign or an unpacking, not an operator
                continue
            yield _at(file, body[n], n, line, col, tok.string, SWAPS[tok.string], "operator")
        elif tok.type == tokenize.NUMBER and tok.string.isdigit():
            yield _at(file, body[n], n, line, col, tok.string, str(int(tok.string) + 1), "constant")
    for n, r in body.items():
        yield from _common(file, r, n, lines[n - 1], python=True)


def _braces(file: str, lines: list[str], regions: list[Region]) -> Iterable[Mutant]:
    body = _body_lines(regions)
    code = blank_strings_and_comments(lines)
    for n, r in sorted(body.items()):
        if n > len(lines) or n == r.start:
            continue
        line, blank = lines[n - 1], code[n - 1]
        for m in _BRACE_OPS.finditer(blank):
            yield _at(file, r, n, line, m.start(), m.group(0), SWAPS[m.group(0)], "operator")
        for m in _INT.finditer(blank):
            yield _at(file, r, n, line, m.start(), m.group(1), str(int(m.group(1)) + 1), "constant")
        yield from _common(file, r, n, line, python=False, blank=blank)


def _common(file: str, r: Region, n: int, line: str, python: bool, blank: str | None = None) -> Iterable[Mutant]:
    """Swapped arguments and a removed statement."""
    text = blank if blank is not None else line.split("#", 1)[0]
    m = _CALL_TWO.search(text)
    if m and m.group(2) != m.group(3):
        swapped = f"{m.group(1)}({m.group(3)}, {m.group(2)})"
        yield Mutant(file=file, line=n, function=r.name, operator="arguments", before=line,
                     after=line[:m.start()] + swapped + line[m.end():])
    stripped = text.strip()
    indent = line[: len(line) - len(line.lstrip())]
    open_ended = stripped.endswith((":", "\\", ",", "("))
    if python and re.match(r"^[\w.\[\]]+\s*(?:[-+*/]?=)\s*\S", stripped) and not open_ended:
        yield Mutant(file=file, line=n, function=r.name, operator="statement", before=line, after=f"{indent}pass")
    elif not python and re.match(r"^[\w.\[\]]+\s*(?:[-+*/]?=)\s*[^=].*;$", stripped):
        yield Mutant(file=file, line=n, function=r.name, operator="statement", before=line, after=f"{indent};")


def _at(file: str, r: Region, n: int, line: str, col: int, old: str, new: str, operator: str) -> Mutant:
    return Mutant(file=file, line=n, function=r.name, operator=operator, before=line,
                  after=line[:col] + new + line[col + len(old):])
