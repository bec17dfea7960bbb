"""Code regions: the functions of a project file, with their line spans.

Localization ranks functions, and the fixer's first message shows them
whole, so both need to know where each function begins and ends. Python is
read with ``ast`` (exact spans, methods named ``Class.method``); brace
languages (JavaScript/TypeScript, Go, Rust, Java, C/C++, PHP, C#) by their
definition lines, each block closed by matching braces outside strings and
comments; Ruby by ``def`` ... ``end``. A file that does not read that way
gives no regions (never an error): the caller falls back to lines around a
frame.
"""

from __future__ import annotations

import ast
import posixpath
import re
from functools import lru_cache

from pydantic import BaseModel

from ..parsers.locate import SourceIndex

# A function longer than this is shown by the lines around what points into it, not whole.
MAX_REGION_LINES = 400


class Region(BaseModel, frozen=True):
    """One function (or method) of a file: 1-based, inclusive lines."""

    file: str
    name: str
    start: int
    end: int
    body_start: int = 0  # the first line of the body (0: the line after ``start``)
    doc: tuple[int, int] | None = None  # a docstring's lines, which an excerpt may fold

    def model_post_init(self, _context: object) -> None:
        if not self.body_start:
            object.__setattr__(self, "body_start", min(self.start + 1, self.end))

    @property
    def key(self) -> str:
        return f"{self.file}::{self.name}@{self.start}"

    def contains(self, line: int) -> bool:
        return self.start <= line <= self.end


BRACE_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs", ".java", ".kt",
                  ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hh", ".php", ".cs", ".scala", ".swift")
SOURCE_SUFFIXES = (".py", ".rb", *BRACE_SUFFIXES)

_KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "function", "else", "do", "try", "new",
             "typeof", "await", "yield", "with", "match", "loop", "unsafe", "sizeof", "elif", "until", "unless"}
# Definition lines of brace languages; group "name" is the function's name.
_DEFINITIONS = [
    # Go: func Name(, func (r *T) Name(
    re.compile(r"^\s*func\s+(?:\([^)]*\)\s*)?(?P<name>\w+)\s*(?:\[[^\]]*\])?\("),
    # Rust: [pub[(crate)]] [const] [async] [unsafe] [extern "C"] fn name
    re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|default)\s+)*(?:extern\s+\"\w+\"\s+)?"
               r"fn\s+(?P<name>\w+)"),
    # JS/TS/PHP: [export] [default] [async] function [*] name(
    re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:(?:public|private|protected|static|final|abstract)"
               r"\s+)*function\s*\*?\s*(?P<name>[\w$]+)\s*[<(]"),
    # JS/TS: [export] const name = [async] (...) => / function
    re.compile(r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?"
               r"(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)"),
    # JS/TS object or class members: name(args) {, async name(, static name(, get name(, name: function(
    re.compile(r"^\s*(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*\*?"
               r"(?P<name>[\w$]+)\s*(?:<[^>]*>)?\([^;]*\)\s*(?::\s*[^{;]+)?\{\s*$"),
    re.compile(r"^\s*(?P<name>[\w$]+)\s*:\s*(?:async\s+)?function\b"),
    # JS: module.exports = function (...), exports.name = function, Type.prototype.name = function
    # (also var x = module.exports = function)
    re.compile(r"^\s*(?:(?:var|let|const)\s+[\w$]+\s*=\s*)?(?P<name>module\.exports|exports\.[\w$]+|[\w$.]+\.[\w$]+)"
               r"\s*=\s*(?:async\s+)?function\b"),
    # JS: export default function (...) / export default (...) =>
    re.compile(r"^\s*export\s+(?P<name>default)\s+(?:async\s+)?(?:function\b|\([^)]*\)\s*=>)"),
    # Java/C#/C/C++: [modifiers] Type name(args) [const] [throws X] {  (never a statement: return f(x) {)
    re.compile(r"^\s*(?!(?:return|else|new|throw|await|yield|case|go|defer|delete|typeof|sizeof)\b)"
               r"(?:[\w<>\[\],.*&:?]+\s+)+(?P<name>[\w~]+)\s*\([^;{]*\)\s*(?:const\s*)?(?:noexcept\s*)?"
               r"(?:throws\s+[\w.,\s]+)?\{?\s*$"),
]
_RUBY_DEF = re.compile(r"^(?P<indent>\s*)def\s+(?:self\.)?(?P<name>[\w?!=\[\]<>+\-*/%]+)")
_RUBY_OPEN = re.compile(r"^\s*(?:if|unless|while|until|case|begin|for|class|module|def)\b|\bdo\s*(?:\|[^|]*\|)?\s*$")


def functions(index: SourceIndex, file: str) -> list[Region]:
    """The functions of ``file`` (a project-relative path), in line order."""
    lines = index.lines(file)
    if not lines:
        return []
    return list(_functions(file, "\n".join(lines)))


@lru_cache(maxsize=512)
def _functions(file: str, text: str) -> tuple[Region, ...]:
    if file.endswith(".py"):
        return tuple(_python(file, text))
    if file.endswith(".rb"):
        return tuple(_ruby(file, text.splitlines()))
    if file.endswith(BRACE_SUFFIXES):
        return tuple(_braces(file, text.splitlines()))
    return ()


def block_at(index: SourceIndex, file: str, line: int, name: str) -> Region | None:
    """The brace block that opens on ``line`` of ``file`` (a JS ``it("...", () => {``, a Go
    ``t.Run(...)``), named ``name``; None when no block opens there."""
    if not file.endswith(BRACE_SUFFIXES):
        return None
    lines = index.lines(file)
    if not 1 <= line <= len(lines):
        return None
    code = blank_strings_and_comments(lines[line - 1:line - 1 + MAX_REGION_LINES * 4])
    if "{" not in code[0] and not (len(code) > 1 and "{" in code[1]):
        return None
    end = _block_end(code, 0)
    return Region(file=file, name=name, start=line, end=line + end) if end is not None else None


def enclosing(regions: list[Region], line: int) -> Region | None:
    """The innermost region holding ``line``."""
    best: Region | None = None
    for r in regions:
        if r.contains(line) and (best is None or r.end - r.start < best.end - best.start):
            best = r
    return best


def _python(file: str, text: str) -> list[Region]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out: list[Region] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                out.append(Region(file=file, name=prefix + child.name, start=start,
                                  end=child.end_lineno or child.lineno, body_start=_body_start(child),
                                  doc=_docstring(child)))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sorted(out, key=lambda r: r.start)


def _body_start(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The first statement after a docstring (a docstring never counts as run)."""
    body = node.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1].lineno
    return body[0].lineno


def _docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int] | None:
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.lineno, first.end_lineno or first.lineno
    return None


def _ruby(file: str, lines: list[str]) -> list[Region]:
    out: list[Region] = []
    for i, line in enumerate(lines):
        m = _RUBY_DEF.match(line)
        if not m:
            continue
        if re.search(r"\)\s*=\s*\S|^\s*def\s+\S+\s*=\s*\S", line):  # endless def: one line
            out.append(Region(file=file, name=m.group("name"), start=i + 1, end=i + 1))
            continue
        depth = 0
        for j in range(i, min(len(lines), i + MAX_REGION_LINES * 2)):
            code = lines[j].split("#", 1)[0]
            if _RUBY_OPEN.search(code) and not re.search(r"\bend\s*$", code.strip()[3:] if j == i else code):
                depth += 1
            if re.match(r"^\s*end\b", code):
                depth -= 1
                if depth == 0:
                    out.append(Region(file=file, name=m.group("name"), start=i + 1, end=j + 1))
                    break
    return out


def _braces(file: str, lines: list[str]) -> list[Region]:
    """Definition lines whose block is closed by matching braces."""
    out: list[Region] = []
    stripped = blank_strings_and_comments(lines)
    suffix = posixpath.splitext(file)[1]
    for i, code in enumerate(stripped):
        name = _definition_name(code, suffix)
        if name is None:
            continue
        end = _block_end(stripped, i)
        if end is not None:
            out.append(Region(file=file, name=name, start=i + 1, end=end + 1))
    return out


# A language whose functions have one definition form is read with that form alone.
_OWN_DEFINITIONS = {".go": _DEFINITIONS[:1], ".rs": _DEFINITIONS[1:2]}


def _definition_name(code: str, suffix: str = "") -> str | None:
    if not code.strip() or code.rstrip().endswith(";"):
        return None
    for pattern in _OWN_DEFINITIONS.get(suffix, _DEFINITIONS):
        m = pattern.match(code)
        if m and m.group("name") not in _KEYWORDS:
            return m.group("name")
    return None


def _block_end(code: list[str], start: int) -> int | None:
    """The line closing the first ``{`` opened on or just after ``start``."""
    depth = 0
    opened = False
    for j in range(start, min(len(code), start + MAX_REGION_LINES * 4)):
        for ch in code[j]:
            if ch == "{":
                depth += 1
                opened = True
            elif ch == "}" and opened:
                depth -= 1
                if depth == 0:
                    return j
        if not opened and j >= start + 3:  # a signature spread over lines, but no body: a declaration
            return None
        if not opened and code[j].rstrip().endswith(";"):
            return None
    return None


def blank_strings_and_comments(lines: list[str]) -> list[str]:
    """Each line with string and comment contents blanked, so braces inside them do not count."""
    out: list[str] = []
    in_block = False
    quote: str | None = None  # a template literal or raw string spanning lines
    for line in lines:
        buf: list[str] = []
        i = 0
        while i < len(line):
            ch = line[i]
            if in_block:
                if line.startswith("*/", i):
                    in_block = False
                    i += 2
                    continue
                i += 1
                continue
            if quote is not None:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
                    buf.append(ch)
                i += 1
                continue
            if line.startswith("//", i) or (ch == "#" and file_hash_comment(line, i)):
                break
            if line.startswith("/*", i):
                in_block = True
                i += 2
                continue
            if ch in "\"'`":
                end = _string_end(line, i + 1, ch)
                if end is None:
                    buf.append(ch)
                    if ch == "`":  # a template literal going on over lines
                        quote = ch
                        break
                    i += 1  # a lone quote (a Rust lifetime, an apostrophe): an ordinary character
                    continue
                buf.append(ch + ch)
                i = end + 1
                continue
            buf.append(ch)
            i += 1
        out.append("".join(buf))
    return out


def file_hash_comment(line: str, i: int) -> bool:
    """``#`` starts a comment in PHP (not ``#[attr]``); in C it is a directive, harmless either way."""
    return not line.startswith("#[", i) and not line.startswith("#!", i)


def _string_end(line: str, i: int, quote: str) -> int | None:
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == quote:
            return i
        i += 1
    return None
