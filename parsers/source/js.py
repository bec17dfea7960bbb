"""JavaScript/TypeScript sources: where Jest, Vitest, Mocha and node:test
tests live. A small scanner finds ``describe``/``it``/``test`` calls with
their titles, modifiers (``.skip``, ``.todo``, ``.only``, ``.failing``,
``.fails``, ``.each``...), nesting and lines, and expands ``.each`` tables
written as literals; it also reads what a module imports, so that a file
that failed to load on a missing import is found with its import line.

The runners name tests by their describe titles plus the test title, and
their consoles often print only some tests (Jest's default reporter lists
failures only, Vitest collapses passing files, ``-t`` filters skip tests
silently). The parsers use this module to find a test's definition line and
to list the tests of a file that the output did not print one by one.

The scanner is a tokenizer, not a parser: it understands strings, template
literals, comments and regex literals well enough to never mistake their
content for code, and it never raises or loops on garbage input.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from greenloop.parsers.locate import SourceIndex

TEST_FUNCS = {"it", "test", "xit", "xtest", "fit", "ftest", "specify"}
DESCRIBE_FUNCS = {"describe", "xdescribe", "fdescribe", "suite", "context"}
HOOK_FUNCS = {"beforeAll", "beforeEach", "afterAll", "afterEach"}
# Member calls that take their own argument list before the title call:
# test.each(table)(title, fn), test.skipIf(cond)(title, fn), test.for(table)(...)
PRE_CALL_MODIFIERS = {"each", "for", "skipIf", "runIf"}
KNOWN_MODIFIERS = PRE_CALL_MODIFIERS | {
    "skip", "only", "todo", "failing", "fails", "concurrent", "sequential", "shuffle",
}
JS_SUFFIXES = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
TEST_FILE_RE = re.compile(r"(?:^|/)(?:__tests__/.*|[^/]*[.-](?:test|spec)s?)\.[cm]?[jt]sx?$")
MAX_TEMPLATE_DEPTH = 40
MAX_EACH_ROWS = 10_000

KEYWORDS_BEFORE_REGEX = {
    "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
    "instanceof", "yield", "await",
}
PUNCT_3 = {"===", "!==", "**=", "...", "<<=", ">>=", ">>>", "&&=", "||=", "??="}
PUNCT_2 = {"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=",
           "%=", "&=", "|=", "^=", "<<", ">>", "**"}
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
IDENT_START = re.compile(r"[A-Za-z_$\u0080-\uffff]")
IDENT = re.compile(r"[A-Za-z0-9_$\u0080-\uffff]+")
NUMBER = re.compile(
    r"(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?")


# --------------------------------------------------------------------------- tokens


@dataclass
class Tok:
    """One token: kind is ident, str, tmpl, num, punct or regex."""

    kind: str
    value: str
    pos: int
    # Template literals: the cooked text chunks and the raw ``${...}`` sources.
    parts: list[str] | None = None
    exprs: list[str] | None = None


def _cook(raw: str) -> str:
    """Decode the escapes of a JS string body."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = raw[i + 1]
        i += 2
        if e in ESCAPES:
            out.append(ESCAPES[e])
        elif e == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", raw[i:i + 2]):
            out.append(chr(int(raw[i:i + 2], 16)))
            i += 2
        elif e == "u" and raw[i:i + 1] == "{":
            end = raw.find("}", i)
            try:
                out.append(chr(int(raw[i + 1:end], 16)))
                i = end + 1
            except (ValueError, OverflowError):
                out.append("u")
        elif e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", raw[i:i + 4]):
            out.append(chr(int(raw[i:i + 4], 16)))
            i += 4
        elif e in "\r\n":  # line continuation
            if e == "\r" and raw[i:i + 1] == "\n":
                i += 1
        else:
            out.append(e)
    return "".join(out)


def _regex_allowed(prev: Tok | None) -> bool:
    if prev is None:
        return True
    if prev.kind == "punct":
        return prev.value not in (")", "]", "}")
    if prev.kind == "ident":
        return prev.value in KEYWORDS_BEFORE_REGEX
    return False


def _scan(text: str, pos: int = 0, *, in_template: bool = False, depth: int = 0) -> tuple[list[Tok], int]:
    """Tokens from ``pos``; inside a template substitution, stops at its ``}``."""
    toks: list[Tok] = []
    n = len(text)
    braces = 0
    while pos < n:
        c = text[pos]
        if c in " \t\r\n\f\v\ufeff\u00a0\u2028\u2029":
            pos += 1
            continue
        if c == "/" and text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = n if end < 0 else end + 1
            continue
        if c == "/" and text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            pos = n if end < 0 else end + 2
            continue
        if c in "'\"":
            i = pos + 1
            while i < n and text[i] != c and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            toks.append(Tok("str", _cook(text[pos + 1:min(i, n)]), pos))
            pos = i + 1
            continue
        if c == "`":
            tok, pos = _scan_template(text, pos, depth)
            toks.append(tok)
            continue
        if c == "/" and _regex_allowed(toks[-1] if toks else None):
            i, in_class = pos + 1, False
            while i < n and text[i] != "\n":
                ch = text[i]
                if ch == "\\":
                    i += 2
                    continue
                if ch == "[":
                    in_class = True
                elif ch == "]":
                    in_class = False
                elif ch == "/" and not in_class:
                    break
                i += 1
            i += 1
            m = IDENT.match(text, i)
            end = m.end() if m else i
            toks.append(Tok("regex", text[pos:end], pos))
            pos = max(end, pos + 1)
            continue
        if c.isdigit() or (c == "." and text[pos + 1:pos + 2].isdigit()):
            m = NUMBER.match(text, pos)
            end = m.end() if m and m.end() > pos else pos + 1
            toks.append(Tok("num", text[pos:end], pos))
            pos = end
            continue
        if IDENT_START.match(c) or c == "#" or c == "@":
            m = IDENT.match(text, pos + 1) if c in "#@" else IDENT.match(text, pos)
            end = m.end() if m else pos + 1
            toks.append(Tok("ident", text[pos:end], pos))
            pos = end
            continue
        if in_template:
            if c == "{":
                braces += 1
            elif c == "}":
                if braces == 0:
                    return toks, pos + 1
                braces -= 1
        three, two = text[pos:pos + 3], text[pos:pos + 2]
        if three in PUNCT_3:
            toks.append(Tok("punct", three, pos))
            pos += 3
        elif two in PUNCT_2:
            toks.append(Tok("punct", two, pos))
            pos += 2
        else:
            toks.append(Tok("punct", c, pos))
            pos += 1
    return toks, n


def _scan_template(text: str, pos: int, depth: int) -> tuple[Tok, int]:
    """A template literal starting at the backtick at ``pos``."""
    parts: list[str] = []
    exprs: list[str] = []
    chunk_start = i = pos + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "`":
            parts.append(_cook(text[chunk_start:i]))
            return Tok("tmpl", "", pos, parts, exprs), i + 1
        if ch == "$" and text.startswith("${", i):
            parts.append(_cook(text[chunk_start:i]))
            if depth >= MAX_TEMPLATE_DEPTH:
                end = text.find("}", i)
                end = n if end < 0 else end + 1
            else:
                _, end = _scan(text, i + 2, in_template=True, depth=depth + 1)
            exprs.append(text[i + 2:max(i + 2, end - 1)])
            chunk_start = i = end
            continue
        i += 1
    parts.append(_cook(text[chunk_start:n]))
    return Tok("tmpl", "", pos, parts, exprs), n


def tokenize(text: str) -> list[Tok]:
    """The tokens of a JS/TS source text (comments dropped)."""
    return _scan(text)[0]


def module_imports(text: str) -> list[tuple[str, int]]:
    """(specifier, line) of what a JS/TS module loads: ``import x from 's'``,
    ``import 's'``, ``export ... from 's'``, ``require('s')``, ``import('s')``."""
    toks = tokenize(text)
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    out: dict[str, int] = {}
    for i, t in enumerate(toks[:-1]):
        nxt = toks[i + 1]
        if t.kind == "ident" and t.value in ("from", "import") and nxt.kind == "str":
            out.setdefault(nxt.value, _line_of(starts, t.pos))
        elif t.kind == "ident" and t.value in ("require", "import") and nxt.value == "(" \
                and i + 2 < len(toks) and toks[i + 2].kind == "str":
            out.setdefault(toks[i + 2].value, _line_of(starts, t.pos))
    return list(out.items())


def import_path(importer: str, spec: str) -> str | None:
    """The project-relative path a relative specifier spells (whether or not
    the file exists); None for bare package names and paths above the root."""
    if not spec.startswith("."):
        return None
    parts: list[str] = []
    for p in str(PurePosixPath(importer).parent / spec).split("/"):
        if p == "..":
            if not parts:
                return None
            parts.pop()
        elif p not in (".", ""):
            parts.append(p)
    return "/".join(parts)


def resolve_import(index: SourceIndex, importer: str, spec: str) -> str | None:
    """The project file a relative specifier names (Node's extension and
    ``index`` lookup); bare package names and missing files give None."""
    rel = import_path(importer, spec)
    if rel is None:
        return None
    for cand in (rel, *(rel + s for s in JS_SUFFIXES), *(f"{rel}/index{s}" for s in JS_SUFFIXES)):
        if index.exists(cand):
            return cand
    return None


def importers_of(index: SourceIndex, target: str, files: list[str], max_files: int = 2_000) -> list[str]:
    """Those of ``files`` whose imports reach ``target`` (directly or through
    other project modules), in the order given."""
    seen: dict[str, bool] = {}

    def reaches(f: str, depth: int) -> bool:
        if f == target:
            return True
        if f in seen or depth > 40 or len(seen) > max_files:
            return seen.get(f, False)
        seen[f] = False
        hit = any(reaches(dep, depth + 1) for spec, _ in module_imports("\n".join(index.lines(f)))
                  if (dep := resolve_import(index, f, spec)) is not None)
        seen[f] = hit
        return hit

    return [f for f in files if reaches(f, 0)]


def match_brackets(toks: list[Tok]) -> dict[int, int]:
    """Index of each opening bracket -> index of its closing bracket."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    closers = {")": "(", "]": "[", "}": "{"}
    for i, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.value in "([{":
            stack.append(i)
        elif t.value in closers:
            # Tolerate unbalanced input: unwind to the matching opener if any.
            for k in range(len(stack) - 1, -1, -1):
                if toks[stack[k]].value == closers[t.value]:
                    pairs[stack[k]] = i
                    del stack[k:]
                    break
    return pairs


# --------------------------------------------------------------------------- literals


class _Undefined:
    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()


class NotLiteral(Exception):
    """The expression is not a plain literal (a variable, a call...)."""


def _num(s: str) -> int | float:
    s = s.replace("_", "")
    if s.endswith("n"):
        return int(s[:-1], 0)
    if s[:2].lower() in ("0x", "0o", "0b"):
        return int(s, 0)
    v = float(s)
    return int(v) if v.is_integer() and "e" not in s.lower() and "." not in s and abs(v) < 2**53 else v


def _literal(toks: list[Tok], i: int, end: int) -> tuple[object, int]:
    """Parse one literal value from ``toks[i:end]``; returns (value, next index)."""
    if i >= end:
        raise NotLiteral
    t = toks[i]
    if t.kind == "str":
        return t.value, i + 1
    if t.kind == "tmpl":
        if t.exprs:
            raise NotLiteral
        return (t.parts or [""])[0], i + 1
    if t.kind == "num":
        return _num(t.value), i + 1
    if t.kind == "punct" and t.value in ("-", "+") and i + 1 < end:
        v, j = _literal(toks, i + 1, end)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (-v if t.value == "-" else v), j
        raise NotLiteral
    if t.kind == "ident":
        consts = {"true": True, "false": False, "null": None, "undefined": UNDEFINED,
                  "NaN": math.nan, "Infinity": math.inf}
        if t.value in consts:
            return consts[t.value], i + 1
        raise NotLiteral
    if t.kind == "punct" and t.value == "[":
        items: list[object] = []
        j = i + 1
        while j < end and not (toks[j].kind == "punct" and toks[j].value == "]"):
            if toks[j].kind == "punct" and toks[j].value == ",":
                items.append(UNDEFINED)  # hole
                j += 1
                continue
            v, j = _literal(toks, j, end)
            items.append(v)
            if j < end and toks[j].kind == "punct" and toks[j].value == ",":
                j += 1
            elif not (j < end and toks[j].kind == "punct" and toks[j].value == "]"):
                raise NotLiteral
        return items, j + 1
    if t.kind == "punct" and t.value == "{":
        obj: dict[str, object] = {}
        j = i + 1
        while j < end and not (toks[j].kind == "punct" and toks[j].value == "}"):
            k = toks[j]
            if k.kind not in ("ident", "str", "num") or j + 1 >= end or toks[j + 1].value != ":":
                raise NotLiteral
            v, j = _literal(toks, j + 2, end)
            obj[k.value] = v
            if j < end and toks[j].kind == "punct" and toks[j].value == ",":
                j += 1
            elif not (j < end and toks[j].kind == "punct" and toks[j].value == "}"):
                raise NotLiteral
        return obj, j + 1
    raise NotLiteral


def _literal_source(src: str) -> object:
    toks = tokenize(src)
    v, j = _literal(toks, 0, len(toks))
    if j != len(toks):
        raise NotLiteral
    return v


# --------------------------------------------------------------------------- formatting


def js_number(v: float | int) -> str:
    """A number as JavaScript's String() prints it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    r = repr(v)
    if "e" in r:
        mant, exp = r.split("e")
        mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
        return f"{mant}e{'+' if int(exp) > 0 else '-'}{abs(int(exp))}"
    return r


def _quote_single(s: str) -> str:
    if "'" not in s:
        return "'" + s.replace("\\", "\\\\").replace("\n", "\\n") + "'"
    if '"' not in s:
        return '"' + s.replace("\\", "\\\\").replace("\n", "\\n") + '"'
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z_$][\w$]*", k) else _quote_single(k)


def js_inspect(v: object, depth: int = 0, max_depth: int = 2) -> str:
    """Node's util.inspect (no colours) for literal values."""
    if isinstance(v, str):
        return _quote_single(v)
    if isinstance(v, list):
        if not v:
            return "[]"
        if depth > max_depth:
            return "[Array]"
        return "[ " + ", ".join(js_inspect(x, depth + 1, max_depth) for x in v) + " ]"
    if isinstance(v, dict):
        if not v:
            return "{}"
        if depth > max_depth:
            return "[Object]"
        return "{ " + ", ".join(f"{_key(k)}: {js_inspect(x, depth + 1, max_depth)}" for k, x in v.items()) + " }"
    return js_string(v)


def js_string(v: object) -> str:
    """String(v) for primitives."""
    if v is None:
        return "null"
    if v is UNDEFINED:
        return "undefined"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return js_number(v)
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return ",".join("" if x is None or x is UNDEFINED else js_string(x) for x in v)
    return "[object Object]"


def js_json(v: object) -> str:
    """JSON.stringify for literal values."""
    if v is UNDEFINED:
        return "undefined"
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "null"
    if isinstance(v, list):
        return "[" + ",".join("null" if x is UNDEFINED else js_json(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{js_json(x)}"
                              for k, x in v.items() if x is not UNDEFINED) + "}"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return js_number(v)
    return json.dumps(v, ensure_ascii=False)


def pretty_format(v: object, depth: int = 0, max_depth: int = 1) -> str:
    """Jest's pretty-format with ``{min: true, maxDepth: 1}`` (``%p`` and ``$var``)."""
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        if depth >= max_depth + 1:
            return "[Array]"
        return "[" + ", ".join(pretty_format(x, depth + 1, max_depth) for x in v) + "]"
    if isinstance(v, dict):
        if depth >= max_depth + 1:
            return "[Object]"
        return "{" + ", ".join(f'"{k}": {pretty_format(x, depth + 1, max_depth)}'
                               for k, x in sorted(v.items())) + "}"
    if isinstance(v, float) and v == 0 and math.copysign(1, v) < 0:
        return "-0"
    return js_string(v)


def _to_number(v: object) -> float | int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if v is None:
        return 0
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return 0
        try:
            return _num(s)
        except ValueError:
            return math.nan
    return math.nan


def _parse_int(v: object) -> str:
    m = re.match(r"\s*([+-]?\d+)", js_string(v) if not isinstance(v, float) else js_number(v))
    return str(int(m.group(1))) if m else "NaN"


def _parse_float(v: object) -> str:
    m = re.match(r"\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|Infinity))", js_string(v))
    return js_number(float(m.group(1))) if m else "NaN"


PRINTF_JEST = re.compile(r"%[sdifjoOp%]")
PRINTF_VITEST = re.compile(r"%[sdjifoOc%]")
VARIABLE = re.compile(r"\$([A-Za-z0-9_$]+(?:\.[A-Za-z0-9_$]+)*)")


def _printf_one(spec: str, v: object) -> str:
    if spec == "%s":
        if isinstance(v, (list, dict)):
            return js_inspect(v, 0, 0)
        if isinstance(v, float) and v == 0 and math.copysign(1, v) < 0:
            return "-0"
        return js_string(v)
    if spec == "%d":
        return js_number(_to_number(v))
    if spec == "%i":
        return _parse_int(v)
    if spec == "%f":
        return _parse_float(v)
    if spec == "%j":
        return js_json(v)
    if spec in ("%o", "%O"):
        return js_inspect(v, 0, 4)
    if spec == "%p":
        return pretty_format(v)
    return ""  # %c


def _printf(template: str, args: list[object], pattern: re.Pattern[str]) -> str:
    """util.format-style substitution; placeholders without an argument stay."""
    it = iter(args)

    def sub(m: re.Match[str]) -> str:
        spec = m.group()
        if spec == "%%":
            return "%"
        try:
            return _printf_one(spec, next(it))
        except StopIteration:
            return spec

    return pattern.sub(sub, template)


def _obj_display(v: object) -> str:
    """Vitest's objDisplay: loupe's inspect, long arrays/objects abbreviated."""
    s = js_inspect(v)
    if len(s) >= 40:
        if isinstance(v, list):
            return f"[ Array({len(v)}) ]"
        if isinstance(v, dict):
            keys = list(v)
            return "{ Object (" + (", ".join(keys[:2]) + ", ..." if len(keys) > 2 else ", ".join(keys)) + ") }"
    return s


def format_title(template: str, row: list[object], index: int, flavor: str) -> str:
    """The title Jest (``flavor='jest'``) or Vitest gives one ``.each`` row
    (``row`` is the row's argument list: a table row, or ``[value]``)."""
    index_sub = lambda m: {"%#": str(index), "%$": str(index + 1)}.get(m.group(), m.group())  # noqa: E731
    title = re.sub(r"%%|%#|%\$", index_sub, template)
    obj = row[0] if row and isinstance(row[0], dict) else None
    if flavor == "jest":
        if obj is not None and len(row) == 1:
            # Object rows: $key (and $key.path) only; primitives print plainly.
            def var(m: re.Match[str]) -> str:
                key = m.group(1)
                if key.split(".")[0] not in obj:
                    return m.group()
                v = _attr(obj, key)
                v = UNDEFINED if v is _MISSING else v
                return pretty_format(v) if isinstance(v, (list, dict)) else js_string(v)

            return VARIABLE.sub(var, title)
        return _printf(title, row, PRINTF_JEST)
    count = title.count("%")
    title = _printf(title, row[:count], PRINTF_VITEST)

    def vvar(m: re.Match[str]) -> str:
        key = m.group(1)
        is_index = key.split(".")[0].isdigit()
        if obj is None and not is_index:
            return m.group()
        v = _attr(row if is_index else obj, key)
        return _obj_display(UNDEFINED if v is _MISSING else v)

    return VARIABLE.sub(vvar, title)


class _Missing:
    pass


_MISSING = _Missing()


def _attr(obj: object, path: str) -> object:
    cur = obj
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, (str, list)) and part == "length":
            cur = len(cur)
        else:
            return _MISSING
    return cur


def template_pattern(template: str) -> re.Pattern[str]:
    """A regex matching every title a ``.each`` template (or a template
    literal with ``${...}``, given with ``\\x00`` for each substitution) can produce."""
    out: list[str] = []
    pos = 0
    for m in re.finditer(r"%[sdifjoOpc#$%]|\$[A-Za-z0-9_$]+(?:\.[A-Za-z0-9_$]+)*|\x00", template):
        out.append(re.escape(template[pos:m.start()]))
        out.append("%" if m.group() == "%%" else ".*?")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out), re.S)


def _rows_from_tagged(tok: Tok) -> list[list[object]]:
    """Rows of a tagged-template table: ``a | b ${1} | ${2}`` -> [{a: 1, b: 2}]."""
    header = (tok.parts or [""])[0]
    names = [h.strip() for h in header.split("|") if h.strip()]
    values = [_literal_source(e) for e in tok.exprs or []]
    if not names or len(values) % len(names):
        raise NotLiteral
    rows = []
    for r in range(0, len(values), len(names)):
        rows.append([dict(zip(names, values[r:r + len(names)], strict=True))])
    return rows


# --------------------------------------------------------------------------- calls


@dataclass
class JSCall:
    """One describe/test/hook call (or a loop around such calls) of a source."""

    kind: str  # "describe", "test", "hook" or "loop"
    func: str
    modifiers: tuple[str, ...]
    # The title as literal pieces and ("expr",) substitutions; None when it
    # is not written as strings (a variable, a function name).
    title: list[str | tuple[str]] | None
    line: int
    start: int  # token index range of the call's arguments (a loop's body)
    end: int
    rows: list[list[object]] | None = None  # .each rows when the table is known
    each: bool = False
    params: list[object] | None = None  # binding patterns of the .each callback / the loop variable
    iterations: list[object] | None = None  # a loop's values, when known
    skip_if: bool | None = None  # skipIf/runIf with a literal condition: whether it skips
    children: list[JSCall] = field(default_factory=list)
    parent: JSCall | None = None


def _line_of(line_starts: list[int], pos: int) -> int:
    return bisect.bisect_right(line_starts, pos)


MEMBER_PATH = re.compile(
    r"^\s*([A-Za-z_$][\w$]*)((?:\s*\.\s*[A-Za-z_$][\w$]*|\s*\[\s*(?:\d+|'[^']*'|\"[^\"]*\")\s*\])*)\s*$")


def _title_of(toks: list[Tok], i: int, end: int) -> list[str | tuple[str]] | None:
    """The first call argument as title pieces: strings, template literals
    and plain variables joined with ``+``."""
    pieces: list[str | tuple[str]] = []
    j = i
    while j < end:
        t = toks[j]
        if t.kind == "str":
            pieces.append(t.value)
            j += 1
        elif t.kind == "tmpl":
            for k, part in enumerate(t.parts or []):
                pieces.append(part)
                if k < len(t.exprs or []):
                    pieces.append(((t.exprs or [])[k],))
            j += 1
        elif t.kind == "ident" and t.value not in ("function", "async", "class"):
            k = j + 1
            while k + 1 < end and toks[k].value == "." and toks[k + 1].kind == "ident":
                k += 2
            pieces.append(("".join(x.value for x in toks[j:k]),))
            j = k
        else:
            return None
        if j < end and toks[j].kind == "punct" and toks[j].value == "+":
            j += 1
            continue
        break
    if not pieces or (j < end and not (toks[j].kind == "punct" and toks[j].value in (",", ")"))):
        return None
    if all(isinstance(p, tuple) for p in pieces) and len(pieces) == 1:
        return None  # a bare variable as title (describe(MyClass, ...)): not knowable
    return pieces


def _eval_path(expr: str, env: dict[str, object]) -> object:
    """The value of ``a``, ``a.b`` or ``a[0]`` in ``env``; _MISSING otherwise."""
    m = MEMBER_PATH.match(expr)
    if not m or m.group(1) not in env:
        return _MISSING
    cur = env[m.group(1)]
    for key in re.findall(r"\.\s*([A-Za-z_$][\w$]*)|\[\s*(\d+|'[^']*'|\"[^\"]*\")\s*\]", m.group(2)):
        name = key[0] or key[1].strip("'\"")
        cur = _attr(cur, name)
        if cur is _MISSING:
            return _MISSING
    return cur


def _render(pieces: list[str | tuple[str]], env: dict[str, object]) -> str | None:
    """The title text with its substitutions evaluated, None when one of them
    is not a known value."""
    out: list[str] = []
    for p in pieces:
        if isinstance(p, str):
            out.append(p)
            continue
        v = _eval_path(p[0], env)
        if v is _MISSING:
            return None
        out.append(js_string(v))
    return "".join(out)


def _title_pattern(pieces: list[str | tuple[str]] | None, each: bool) -> re.Pattern[str]:
    """What a title with unknown parts can print: its literal pieces around wildcards."""
    if pieces is None:
        return re.compile(r".+", re.S)
    text = "\x00".join("".join(p if each else p.replace("%", "%%") for p in chunk)
                       for chunk in _split_pieces(pieces))
    return template_pattern(text)


def _split_pieces(pieces: list[str | tuple[str]]) -> list[list[str]]:
    chunks: list[list[str]] = [[]]
    for p in pieces:
        if isinstance(p, str):
            chunks[-1].append(p)
        else:
            chunks.append([])
    return chunks


def _pattern_at(toks: list[Tok], pairs: dict[int, int], k: int, end: int) -> tuple[object, int]:
    """A binding pattern (``x``, ``[a, b]``, ``{a, b: c}``) at ``k``; returns
    (pattern, next index). Patterns: a name, ("array", [...]), ("object", [(key, pattern)])."""
    t = toks[k]
    if t.kind == "ident":
        return t.value, k + 1
    if t.kind == "punct" and t.value in "[{" and k in pairs:
        close = pairs[k]
        items: list[object] = []
        j = k + 1
        expect_item = True
        while j < close:
            if toks[j].value == ",":
                if expect_item and t.value == "[":
                    items.append(None)  # a hole: [, b]
                expect_item = True
                j += 1
                continue
            expect_item = False
            if toks[j].value == "...":
                j += 1
                continue
            if t.value == "[":
                sub, j = _pattern_at(toks, pairs, j, close)
                items.append(sub)
            else:
                key = toks[j].value
                j += 1
                sub = key
                if j < close and toks[j].value == ":":
                    sub, j = _pattern_at(toks, pairs, j + 1, close)
                items.append((key, sub))
            while j < close and toks[j].value != ",":  # a default value
                j = pairs.get(j, j) + 1
        return ("array" if t.value == "[" else "object", items), close + 1
    raise NotLiteral


def _bind(pattern: object, value: object, env: dict[str, object]) -> None:
    if pattern is None:
        return
    if isinstance(pattern, str):
        env[pattern] = value
        return
    kind, items = pattern  # type: ignore[misc]
    for idx, item in enumerate(items):
        if kind == "array":
            _bind(item, value[idx] if isinstance(value, list) and idx < len(value) else UNDEFINED, env)
        else:
            key, sub = item
            _bind(sub, value.get(key, UNDEFINED) if isinstance(value, dict) else UNDEFINED, env)


def _callback_params(toks: list[Tok], pairs: dict[int, int], k: int, end: int) -> list[object] | None:
    """Parameters of the function starting at ``k``: ``(a, b) =>``, ``a =>``,
    ``async (a) =>``, ``function (a) {``."""
    if k < end and toks[k].value == "async":
        k += 1
    if k < end and toks[k].value == "function":
        k += 1
        if k < end and toks[k].kind == "ident":
            k += 1
    if k < end and toks[k].kind == "ident" and k + 1 < end and toks[k + 1].value == "=>":
        return [toks[k].value]
    if not (k < end and toks[k].value == "(" and k in pairs):
        return None
    close = pairs[k]
    params: list[object] = []
    j = k + 1
    try:
        while j < close:
            if toks[j].value in (",", "..."):
                j += 1
                continue
            pat, j = _pattern_at(toks, pairs, j, close)
            params.append(pat)
            while j < close and toks[j].value != ",":
                j = pairs.get(j, j) + 1
    except NotLiteral:
        return None
    return params


def _first_arg_end(toks: list[Tok], pairs: dict[int, int], start: int, end: int) -> int:
    """Index of the comma after a call's first argument (``end`` if none)."""
    j = start
    while j < end:
        if toks[j].value == ",":
            return j
        j = pairs.get(j, j) + 1
    return end


def _consts(toks: list[Tok], n: int) -> dict[str, object]:
    """``const NAME = <literal>`` declarations (first one wins): tables and
    loop values written next to the tests."""
    found: dict[str, object] = {}
    for i in range(n - 3):
        if toks[i].kind == "ident" and toks[i].value in ("const", "let", "var") and toks[i + 1].kind == "ident" \
                and toks[i + 2].value == "=" and toks[i + 1].value not in found:
            try:
                value, j = _literal(toks, i + 3, n)
            except (NotLiteral, ValueError, RecursionError):
                continue
            if j >= n or toks[j].value in (";", ")", "}") or toks[j].kind == "ident":
                found[toks[i + 1].value] = value
    return found


def _list_at(toks: list[Tok], i: int, end: int, consts: dict[str, object]) -> list[object] | None:
    """A literal array, or a constant holding one, spanning ``toks[i:end]``."""
    try:
        if end == i + 1 and toks[i].kind == "ident":
            value = consts.get(toks[i].value)
        else:
            value, k = _literal(toks, i, end)
            if k != end:
                return None
    except (NotLiteral, ValueError, RecursionError):
        return None
    return value[:MAX_EACH_ROWS] if isinstance(value, list) else None


def _loop_at(toks: list[Tok], pairs: dict[int, int], rpairs: dict[int, int], i: int,
             consts: dict[str, object]) -> tuple[int, int, object, list[object] | None] | None:
    """A loop whose body may define tests: ``for (const x of LIST) {...}`` or
    ``LIST.forEach((x) => ...)``; returns (body start, body end, the loop
    variable's pattern, LIST's values when known)."""
    n = len(toks)
    t = toks[i]
    if t.value == "for" and i + 1 < n and toks[i + 1].value == "(" and i + 1 in pairs:
        close = pairs[i + 1]
        k = i + 2
        if k < close and toks[k].value in ("const", "let", "var"):
            k += 1
        try:
            pattern, k = _pattern_at(toks, pairs, k, close)
        except (NotLiteral, IndexError):
            return None
        if k >= close or toks[k].value != "of" or close + 1 >= n or toks[close + 1].value != "{":
            return None
        body = close + 1
        return body, pairs.get(body, n - 1), pattern, _list_at(toks, k + 1, close, consts)
    if t.value == "forEach" and i >= 2 and toks[i - 1].value == "." and i + 1 < n and toks[i + 1].value == "(" \
            and i + 1 in pairs:
        prev = i - 2
        if toks[prev].value == "]" and prev in rpairs:
            values = _list_at(toks, rpairs[prev], prev + 1, consts)
        elif toks[prev].kind == "ident" and not (prev > 0 and toks[prev - 1].value == "."):
            values = _list_at(toks, prev, prev + 1, consts)
        else:
            return None
        params = _callback_params(toks, pairs, i + 2, pairs[i + 1])
        if not params:
            return None
        return i + 1, pairs[i + 1], params[0], values
    return None


def parse_calls(text: str) -> list[JSCall]:
    """The top-level describe/test/hook calls (and loops around them) of a
    source, children nested."""
    toks = tokenize(text)
    pairs = match_brackets(toks)
    rpairs = {v: k for k, v in pairs.items()}
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
    n = len(toks)
    consts = _consts(toks, n)
    test_funcs = set(TEST_FUNCS)
    # const myTest = test.extend({...}) makes myTest a test function too.
    for i in range(n - 4):
        if (toks[i].kind == "ident" and toks[i + 1].value == "=" and toks[i + 2].value in ("test", "it")
                and toks[i + 3].value == "." and toks[i + 4].value == "extend"):
            test_funcs.add(toks[i].value)
    roots: list[JSCall] = []
    stack: list[JSCall] = []

    def attach(node: JSCall) -> None:
        while stack and stack[-1].end < node.start:
            stack.pop()
        if stack:
            node.parent = stack[-1]
            stack[-1].children.append(node)
        else:
            roots.append(node)

    i = 0
    while i < n:
        t = toks[i]
        if t.kind == "ident" and t.value in ("for", "forEach") and (loop := _loop_at(toks, pairs, rpairs, i, consts)):
            body, body_end, pattern, values = loop
            node = JSCall(kind="loop", func=t.value, modifiers=(), title=None, line=_line_of(line_starts, t.pos),
                          start=body, end=body_end, params=[pattern], iterations=values)
            attach(node)
            stack.append(node)
            i += 1
            continue
        if t.kind != "ident" or (i > 0 and toks[i - 1].kind == "punct" and toks[i - 1].value in (".", "?.")):
            i += 1
            continue
        name = t.value
        if name in test_funcs:
            kind = "test"
        elif name in DESCRIBE_FUNCS:
            kind = "describe"
        elif name in HOOK_FUNCS:
            kind = "hook"
        else:
            i += 1
            continue
        mods: list[str] = []
        rows: list[list[object]] | None = None
        each = False
        skip_if: bool | None = None
        j = i + 1
        last_line_pos = t.pos
        while j < n:
            tj = toks[j]
            if tj.kind == "punct" and tj.value == "." and j + 1 < n and toks[j + 1].kind == "ident":
                mods.append(toks[j + 1].value)
                last_line_pos = toks[j + 1].pos
                j += 2
                continue
            if tj.kind == "tmpl" and mods and mods[-1] in ("each", "for"):
                each = True
                try:
                    rows = _rows_from_tagged(tj)
                except (NotLiteral, ValueError, RecursionError):
                    rows = None
                j += 1
                continue
            if tj.kind == "punct" and tj.value == "(" and mods and mods[-1] in PRE_CALL_MODIFIERS \
                    and j in pairs and pairs[j] + 1 < n and toks[pairs[j] + 1].value in ("(", "."):
                close = pairs[j]
                if mods[-1] in ("skipIf", "runIf"):
                    try:
                        cond, k = _literal(toks, j + 1, close)
                        if k == close and isinstance(cond, bool):
                            skip_if = cond if mods[-1] == "skipIf" else not cond
                    except (NotLiteral, ValueError, RecursionError):
                        pass
                if mods[-1] in ("each", "for"):
                    each = True
                    table = _list_at(toks, j + 1, close, consts)
                    rows = None if table is None else [r if isinstance(r, list) else [r] for r in table]
                j = close + 1
                continue
            break
        if not (j < n and toks[j].kind == "punct" and toks[j].value == "(" and j in pairs) \
                or (kind == "hook" and mods) or not set(mods) <= KNOWN_MODIFIERS:
            i += 1
            continue
        open_i, close_i = j, pairs[j]
        if (i > 0 and toks[i - 1].kind == "ident" and toks[i - 1].value in ("function", "class", "new")) or (
                close_i + 1 < n and toks[close_i + 1].kind == "punct" and toks[close_i + 1].value in ("{", ":")):
            i += 1  # a function/method named like a test function, not a call
            continue
        if each:
            last_line_pos = toks[open_i].pos
        title = None if kind == "hook" else _title_of(toks, open_i + 1, close_i)
        comma = _first_arg_end(toks, pairs, open_i + 1, close_i)
        params = _callback_params(toks, pairs, comma + 1, close_i) if each else None
        call = JSCall(kind=kind, func=name, modifiers=tuple(mods), title=title,
                      line=_line_of(line_starts, last_line_pos), start=open_i, end=close_i,
                      rows=rows, each=each, params=params, skip_if=skip_if)
        attach(call)
        if kind != "hook":
            stack.append(call)
        i = open_i + 1
    return roots


# --------------------------------------------------------------------------- tests


@dataclass
class SourceTest:
    """A test as the runner will name it: describe titles and test title."""

    file: str
    path: tuple[str, ...]
    title: str
    line: int
    skip: bool = False
    todo: bool = False
    only: bool = False
    fails: bool = False  # Jest .failing / Vitest .fails
    conditional: bool = False  # skipIf/runIf: status not knowable from the source
    # Set when some title is not literal: matches the joined segments instead.
    patterns: tuple[re.Pattern[str], ...] | None = None

    def matches(self, path: Iterable[str], title: str) -> bool:
        """Whether a reported (describe path, title) is this test."""
        path = tuple(path)
        if self.patterns is None:
            return self.path == path and self.title == title
        segs = (*path, title)
        return len(segs) == len(self.patterns) and all(p.fullmatch(s) for p, s in zip(self.patterns, segs, strict=True))


@dataclass
class SourceSuite:
    """A describe block: its title path, line and hooks."""

    file: str
    path: tuple[str, ...]
    line: int
    hooks: frozenset[str]
    skip: bool = False
    patterns: tuple[re.Pattern[str], ...] | None = None


@dataclass
class FileTests:
    """What the scanner knows of one test file."""

    tests: list[SourceTest]
    suites: list[SourceSuite]
    # False when some tests cannot be listed (a .each over a variable, titles
    # built at run time): the list is then only good for matching.
    complete: bool = True
    has_only: bool = False


def _seg_pattern(text: str) -> re.Pattern[str]:
    return re.compile(re.escape(text), re.S)


def _expand(call: JSCall, flavor: str, env: dict[str, object]
            ) -> list[tuple[str | None, re.Pattern[str] | None, dict[str, object]]]:
    """(title, pattern, bindings) for each instance of a call: one for a
    plain call, one per row of a known .each table (its callback's
    parameters bound to the row); a pattern when the title is not knowable."""
    if call.title is None:
        return [(None, _title_pattern(None, False), env)]
    text = _render(call.title, env)
    if not call.each:
        return [(text, None, env) if text is not None else (None, _title_pattern(call.title, False), env)]
    if call.rows is None or text is None:
        return [(None, _title_pattern(call.title, True), env)]
    out: list[tuple[str | None, re.Pattern[str] | None, dict[str, object]]] = []
    for idx, row in enumerate(call.rows):
        row_env = dict(env)
        args = row if "for" not in call.modifiers else [row[0] if len(row) == 1 else row]
        for pattern, value in zip(call.params or [], args, strict=False):
            _bind(pattern, value, row_env)
        try:
            out.append((format_title(text, row, idx, flavor), None, row_env))
        except (ValueError, TypeError, RecursionError, OverflowError):
            out.append((None, template_pattern(text), row_env))
    return out


def collect_tests(file: str, text: str, flavor: str) -> FileTests:
    """Every test of a source file, describe blocks (and .each) expanded."""
    result = FileTests(tests=[], suites=[])
    try:
        roots = parse_calls(text)
    except RecursionError:
        result.complete = False
        return result

    def walk(calls: list[JSCall], path: tuple[str, ...], pats: tuple[re.Pattern[str], ...] | None,
             skip: bool, todo: bool, only: bool, env: dict[str, object]) -> None:
        for call in calls:
            if call.kind == "hook":
                continue
            if call.kind == "loop":
                if call.iterations is None:
                    # Unknown values: the body's tests are listed once, for matching only.
                    result.complete = False
                    walk(call.children, path, pats or tuple(_seg_pattern(p) for p in path), skip, todo, only, env)
                for value in call.iterations or []:
                    loop_env = dict(env)
                    _bind((call.params or [None])[0], value, loop_env)
                    walk(call.children, path, pats, skip, todo, only, loop_env)
                continue
            mods = set(call.modifiers)
            c_skip = skip or "skip" in mods or call.func in ("xit", "xtest", "xdescribe") or call.skip_if is True
            c_todo = todo or "todo" in mods
            c_only = only or "only" in mods or call.func in ("fit", "fdescribe", "ftest")
            if "only" in mods or call.func in ("fit", "fdescribe", "ftest"):
                result.has_only = True
            for title, pattern, call_env in _expand(call, flavor, env):
                if pattern is not None:
                    result.complete = False
                seg_pat = pattern or _seg_pattern(title or "")
                new_pats = None
                if pats is not None or pattern is not None:
                    base = pats if pats is not None else tuple(_seg_pattern(p) for p in path)
                    new_pats = (*base, seg_pat)
                seg = title if title is not None else "".join(p if isinstance(p, str) else "${}"
                                                              for p in call.title or [])
                if call.kind == "describe":
                    hooks = frozenset(c.func for c in call.children if c.kind == "hook")
                    result.suites.append(SourceSuite(file, (*path, seg), call.line, hooks, c_skip, new_pats))
                    walk(call.children, (*path, seg), new_pats, c_skip, c_todo, c_only, call_env)
                else:
                    result.tests.append(SourceTest(
                        file=file, path=path, title=seg, line=call.line, skip=c_skip, todo=c_todo,
                        only=c_only, fails=bool(mods & {"failing", "fails"}),
                        conditional=bool(mods & {"skipIf", "runIf"}) and call.skip_if is None, patterns=new_pats))

    walk(roots, (), None, False, False, False, {})
    return result


class JSTestIndex:
    """Tests of a project's JS/TS test files, scanned on demand and cached."""

    def __init__(self, index: SourceIndex, flavor: str) -> None:
        self.index = index
        self.flavor = flavor
        self._files: dict[str, FileTests] = {}

    def file(self, rel: str | None) -> FileTests:
        """The tests of one file (empty when it cannot be read)."""
        if not rel:
            return FileTests(tests=[], suites=[], complete=False)
        if rel not in self._files:
            lines = self.index.lines(rel)
            if not lines:
                self._files[rel] = FileTests(tests=[], suites=[], complete=False)
            else:
                self._files[rel] = collect_tests(rel, "\n".join(lines), self.flavor)
        return self._files[rel]

    def test_files(self) -> list[str]:
        """Files that look like test files (``*.test.*``, ``*.spec.*``, ``__tests__/``)."""
        return [f for f in self.index.files(JS_SUFFIXES) if TEST_FILE_RE.search(f) and not f.endswith(".d.ts")]

    def find(self, rel: str | None, path: Iterable[str], title: str) -> SourceTest | None:
        """The test with this describe path and title, in ``rel`` or (when
        ``rel`` is None) in the only test file that has it."""
        path = tuple(path)
        files = [rel] if rel else self.test_files()
        found: list[SourceTest] = []
        for f in files:
            ft = self.file(f)
            exact = [t for t in ft.tests if t.patterns is None and t.matches(path, title)]
            hits = exact or [t for t in ft.tests if t.patterns is not None and t.matches(path, title)]
            if hits:
                found.append(hits[0])
        return found[0] if len(found) == 1 else None

    def find_suite(self, rel: str | None, path: Iterable[str]) -> SourceSuite | None:
        """The describe block with this title path."""
        path = tuple(path)
        files = [rel] if rel else self.test_files()
        found: list[SourceSuite] = []
        for f in files:
            for s in self.file(f).suites:
                if s.path == path or (s.patterns is not None and len(s.patterns) == len(path)
                                      and all(p.fullmatch(x) for p, x in zip(s.patterns, path, strict=True))):
                    found.append(s)
                    break
        return found[0] if len(found) == 1 else None

    def split_joined(self, rel: str | None, joined: str,
                     sep: str = " ") -> tuple[SourceTest, tuple[str, ...], str] | None:
        """The test whose describe titles and title, joined with ``sep``, give
        ``joined`` (how jest-junit and JSON fullName spell a test), with the
        printed name split accordingly; searched in ``rel``, or in every test
        file (first match) when it is None."""
        files = [rel] if rel else self.test_files()
        for f in files:
            for t in self.file(f).tests:
                if t.patterns is None:
                    if sep.join((*t.path, t.title)) == joined:
                        return t, t.path, t.title
                    continue
                m = re.fullmatch(re.escape(sep).join(f"({p.pattern})" for p in t.patterns), joined, re.S)
                if m:
                    segs = m.groups()  # segment patterns have no groups of their own
                    return t, tuple(segs[:-1]), segs[-1]
        return None

    def titled(self, rel: str, title: str) -> list[SourceTest]:
        """Tests of ``rel`` with this title (any describe path), source order."""
        out = []
        for t in self.file(rel).tests:
            if t.patterns is None:
                if t.title == title:
                    out.append(t)
            elif t.patterns[-1].fullmatch(title):
                out.append(t)
        return out


def iter_listable(ft: FileTests) -> Iterator[SourceTest]:
    """The tests of a file whose full title is known from the source."""
    return (t for t in ft.tests if t.patterns is None)



IMPORT_ERROR = re.compile(
    r"(?:Cannot find (?:module|package)|Failed to resolve import|Failed to load url|Could not resolve)"
    r"\s+['\"]?([^'\"\s]+)['\"]?")
# Node's ES-module resolution error names the importing file (no line)
IMPORTED_FROM = re.compile(r"\bimported from (?:file://)?(?P<file>\S+?\.[cm]?[jt]sx?)\b")


def import_line(index: SourceIndex, file: str | None, message: str | None) -> int | None:
    """For a file that failed to load on a missing import: the line that
    imports it, or the import that leads to the module that does (the error
    names the module as written or resolved, not always the line)."""
    if not file or not message or not (m := IMPORT_ERROR.search(message)):
        return None
    name = m.group(1)
    target = index.relative(name.removeprefix("file://")) if name.startswith(("/", "<ROOT>", "file:")) else None
    imports = module_imports("\n".join(index.lines(file)))
    for spec, line in imports:
        if spec == name or (target and import_path(file, spec) in (target, *(target.rsplit(".", 1)[:1]))):
            return line
    importer = index.relative(f.group("file")) if (f := IMPORTED_FROM.search(message)) else None
    if importer and importer != file:
        for spec, line in imports:
            dep = resolve_import(index, file, spec)
            if dep and importers_of(index, importer, [dep]):
                return line
    needle = re.compile(r"['\"`]" + re.escape(name) + r"['\"`]")
    return index.find_in(file, needle)
