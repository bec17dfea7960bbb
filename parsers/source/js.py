"""JavaScript/TypeScript sources, what every JS runner's parser reads from
them: the tokens (parsers/source/js_tests.py finds describe/it/test calls
and evaluates their titles on them), JavaScript values printed the way the
runners print them (``String()``, ``JSON.stringify``, ``util.inspect``,
Jest's and Vitest's ``.each`` title formats), and what a module imports, so
that a file that failed to load on a missing import is found with its
import line.

The tokenizer is not a parser: it understands strings, template literals,
comments and regex literals well enough to never mistake their content for
code, and it never raises or loops on garbage input.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..locate import SourceIndex

JS_SUFFIXES = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
MAX_TEMPLATE_DEPTH = 40

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


def line_starts(text: str) -> list[int]:
    """Offsets at which the lines of ``text`` start (for ``line_of``)."""
    return [0] + [m.end() for m in re.finditer("\n", text)]


def line_of(starts: list[int], pos: int) -> int:
    """The 1-based line of offset ``pos``."""
    return bisect.bisect_right(starts, pos)


def module_imports(text: str) -> list[tuple[str, int]]:
    """(specifier, line) of what a JS/TS module loads: ``import x from 's'``,
    ``import 's'``, ``export ... from 's'``, ``require('s')``, ``import('s')``."""
    toks = tokenize(text)
    starts = line_starts(text)
    out: dict[str, int] = {}
    for i, t in enumerate(toks[:-1]):
        nxt = toks[i + 1]
        if t.kind == "ident" and t.value in ("from", "import") and nxt.kind == "str":
            out.setdefault(nxt.value, line_of(starts, t.pos))
        elif t.kind == "ident" and t.value in ("require", "import") and nxt.value == "(" \
                and i + 2 < len(toks) and toks[i + 2].kind == "str":
            out.setdefault(toks[i + 2].value, line_of(starts, t.pos))
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


def _num(s: str) -> int | float:
    s = s.replace("_", "")
    if s.endswith("n"):
        return int(s[:-1], 0)
    if s[:2].lower() in ("0x", "0o", "0b"):
        return int(s, 0)
    v = float(s)
    return int(v) if v.is_integer() and "e" not in s.lower() and "." not in s and abs(v) < 2**53 else v


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
