"""RSpec (rspec-core 3): the console formatters (progress, documentation,
coloured or not), the JSON formatter (to a file with ``--out`` or to stdout
after the tests' own output) and any mix of them.

Ids are RSpec's ``full_description``: the group descriptions and the example
description joined with a space, except that a ``#``/``.``/``::`` description
directly under a group described by a class is glued on (``Cart#add``).
Load errors are keyed by the spec file as RSpec prints it
(``./spec/x_spec.rb``). Mapping:

* passed -> passed; failed -> failed (hook errors included: RSpec reports
  them as the examples' failures); an exception of class ``Timeout::Error``
  -> failed with ``timed_out``;
* pending with a ``pending`` body that still fails -> xfailed (native
  ``pending``); ``skip``/``xit``/an example without a body -> skipped;
* a ``pending`` example that passes is a failure marked ``FIXED`` -> failed;
* ``An error occurred while loading <file>.`` -> errored entry + build_error
  (RSpec then runs no example at all); other errors outside of examples
  (``before(:suite)`` hooks...) -> an errored entry named by RSpec's header.

The JSON report says ``pending`` for both kinds of pending examples: the
console's Pending section (a ``Failure/Error`` under the entry) or the spec
source (a ``pending`` call in the body) tells them apart. Formatters that do
not print passing examples (progress) leave those to the spec files
themselves (``SpecIndex`` below), checked against the summary counts.

A run killed by coreutils ``timeout``: the example after the last one that
finished (in definition order; progress dots are mapped onto the sources)
is the hanging one -> failed with ``timed_out``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from greenloop.parsers.command import command_words
from greenloop.parsers.locate import SourceIndex
from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.parsers.run_output import RunOutput

FRAMEWORK = "rspec"

# Env assignments and wrappers (timeout 60, env, time, nice) may come first.
_PREFIX = (r"^(?:\w+=(?:'[^']*'|\"[^\"]*\"|\S*)\s+|(?:env|time|nice|xvfb-run)\s+"
           r"|timeout\s+(?:-\S+\s+)*(?:(?:-s|-k)\s+\S+\s+)?\d\S*\s+)*")
COMMAND_RE: list[re.Pattern[str]] = [
    # rspec, bin/rspec, bundle exec rspec, ruby -S rspec
    re.compile(_PREFIX + r"(?:bundle\s+exec\s+|ruby\s+-S\s+)?(?:\S*/)?rspec(?:\s|$)"),
    re.compile(_PREFIX + r"(?:bundle\s+exec\s+)?(?:\S*/)?(?:rake|rails)\s+spec(?::\S+)?(?:\s|$)"),
]
OUTPUT_RE: list[re.Pattern[str]] = [
    re.compile(r"^\d+ examples?, \d+ failures?", re.M),
    re.compile(r"^rspec '?\.?/?\S+_spec\.rb(?::\d+|\[[\d:]+\])'? # ", re.M),
    re.compile(r"^An error occurred while loading \S+\.\s*$", re.M),
    re.compile(r"^Pending: \(Failures listed here are expected and do not affect your suite's status\)", re.M),
    re.compile(r"^\s+Failure/Error: ", re.M),
    re.compile(r"^Finished in [\d.]+ (?:seconds?|minutes?) \(files took ", re.M),
]

# ============================================================================ Ruby literals
# Spec descriptions are Ruby expressions, mostly string literals, sometimes
# interpolating loop variables (`[[1, 0.5]].each do |n, r| it "is #{r}"`).
# This is a tiny evaluator for exactly that: literals, constants, loop
# variables and a few String/Array methods. Anything else is Unknown.


class Unknown(Exception):
    """A value that cannot be known without running Ruby."""


@dataclass(frozen=True)
class Sym:
    name: str


@dataclass(frozen=True)
class Const:
    """A constant such as a class (``describe Cart``): a Ruby Module."""

    name: str


@dataclass(frozen=True)
class Partial:
    """A string with unknown parts (``None``), e.g. an interpolated method call."""

    parts: tuple[str | None, ...]


@dataclass(frozen=True)
class RHash:
    """A Hash literal: pairs in order (keys may be arrays, unhashable here)."""

    items: tuple[tuple[object, object], ...]

    def get(self, key: object) -> object:
        return next((v for k, v in self.items if k == key), None)


@dataclass(frozen=True)
class Tok:
    kind: str  # str sym num const ident label op
    value: object


_NUM_RE = re.compile(r"\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?")
_IDENT_RE = re.compile(r"[a-z_][A-Za-z0-9_]*[?!]?")
_CONST_RE = re.compile(r"(?:::)?[A-Z][A-Za-z0-9_]*(?:::[A-Z][A-Za-z0-9_]*)*")
_SYM_RE = re.compile(r":(?:[A-Za-z_][A-Za-z0-9_]*[?!=]?|\[\]=?|[+\-*/<>=!%]+)")
_OPS = ("...", "..", "=>", "::", "&.", "**", "==", "!=", "<=", ">=", "<<", "&&", "||")
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_ESCAPES = {"n": "\n", "t": "\t", "e": "\x1b", "s": " ", "0": "\0", "r": "\r", "a": "\a", "b": "\b"}
MAX_TOKENS = 5_000


def _closing(src: str, i: int, open_ch: str, close_ch: str) -> int:
    """Index just past the ``close_ch`` matching ``src[i] == open_ch`` (nesting
    counted, strings inside skipped roughly); ``len(src)`` when unbalanced."""
    depth = 0
    j = i
    while j < len(src):
        c = src[j]
        if c == "\\":
            j += 2
            continue
        if c in "\"'" and open_ch != c:
            k = j + 1
            while k < len(src) and src[k] != c:
                k += 2 if src[k] == "\\" else 1
            j = k + 1
            continue
        if c == open_ch and open_ch != close_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth <= 0:
                return j + 1
        j += 1
    return len(src)


def _scan_dq(src: str, i: int, close: str, open_: str | None = None) -> tuple[list[str | tuple[str, str]], int]:
    """A double-quoted (interpolating) string body starting at ``i``; returns
    parts (text or ("interp", code)) and the index past the closing quote."""
    parts: list[str | tuple[str, str]] = []
    buf: list[str] = []
    depth = 0
    while i < len(src):
        c = src[i]
        if c == "\\" and i + 1 < len(src):
            n = src[i + 1]
            buf.append(_ESCAPES.get(n, n))
            i += 2
            continue
        if c == "#" and src.startswith("#{", i):
            end = _closing(src, i + 1, "{", "}")
            if buf:
                parts.append("".join(buf))
                buf = []
            parts.append(("interp", src[i + 2:end - 1]))
            i = end
            continue
        if open_ is not None and c == open_:
            depth += 1
        elif c == close:
            if depth == 0:
                break
            depth -= 1
        buf.append(c)
        i += 1
    if buf:
        parts.append("".join(buf))
    return parts, i + 1


def _scan_sq(src: str, i: int, close: str, open_: str | None = None) -> tuple[str, int]:
    """A single-quoted (literal) string body starting at ``i``."""
    buf: list[str] = []
    depth = 0
    while i < len(src):
        c = src[i]
        if c == "\\" and i + 1 < len(src) and src[i + 1] in ("\\", close):
            buf.append(src[i + 1])
            i += 2
            continue
        if open_ is not None and c == open_:
            depth += 1
        elif c == close:
            if depth == 0:
                break
            depth -= 1
        buf.append(c)
        i += 1
    return "".join(buf), i + 1


def tokenize(src: str) -> list[Tok]:
    """Tokens of one logical line of Ruby; stops at a comment. Tolerant: any
    character it does not know becomes a one-character ``op``."""
    toks: list[Tok] = []
    i = 0
    n = len(src)
    while i < n and len(toks) < MAX_TOKENS:
        c = src[i]
        if c.isspace():
            i += 1
            continue
        if c == "#":
            break
        if c == '"' or c == "`":
            parts, i = _scan_dq(src, i + 1, c)
            toks.append(Tok("str", parts))
            continue
        if c == "'":
            text, i = _scan_sq(src, i + 1, "'")
            toks.append(Tok("str", [text]))
            continue
        if c == "%" and i + 1 < n:
            m = re.match(r"%([qQwWiI]?)([^\w\s])", src[i:])
            if m:
                kind, open_ = m.group(1), m.group(2)
                close = _PAIRS.get(open_, open_)
                nested = open_ if open_ in _PAIRS else None
                start = i + m.end()
                if kind in ("q", "w", "i"):
                    text, i = _scan_sq(src, start, close, nested)
                    body: list[str | tuple[str, str]] = [text]
                else:
                    body, i = _scan_dq(src, start, close, nested)
                if kind in ("w", "W", "i", "I"):
                    words = "".join(p for p in body if isinstance(p, str)).split()
                    if kind in ("i", "I"):
                        toks.append(Tok("list", [Sym(w) for w in words]))
                    else:
                        toks.append(Tok("list", words))
                else:
                    toks.append(Tok("str", body))
                continue
        if c == ":" and i + 1 < n and src[i + 1] in "\"'":
            if src[i + 1] == '"':
                parts, i = _scan_dq(src, i + 2, '"')
                toks.append(Tok("dsym", parts))
            else:
                text, i = _scan_sq(src, i + 2, "'")
                toks.append(Tok("sym", text))
            continue
        if c == ":" and (m := _SYM_RE.match(src, i)) and not src.startswith("::", i):
            # `a ? b :c` is rare in spec descriptions; a symbol it is.
            toks.append(Tok("sym", m.group(0)[1:]))
            i = m.end()
            continue
        if c.isdigit():
            m = _NUM_RE.match(src, i)
            assert m is not None
            text = m.group(0).replace("_", "")
            toks.append(Tok("num", float(text) if any(ch in text for ch in ".eE") else int(text)))
            i = m.end()
            continue
        if c.isupper() or (src.startswith("::", i) and i + 2 < n and src[i + 2].isupper()):
            m = _CONST_RE.match(src, i)
            assert m is not None
            name = m.group(0)
            i = m.end()
            if src.startswith(":", i) and not src.startswith("::", i) and "::" not in name:
                toks.append(Tok("label", name))  # Ruby 1.9 hash key `Key: value`
                i += 1
            else:
                toks.append(Tok("const", name))  # `::Name` keeps its colons: top level
            continue
        if c.isalpha() or c == "_" or c == "@":
            m = _IDENT_RE.match(src, i + (c == "@"))
            if m is None:
                toks.append(Tok("op", c))
                i += 1
                continue
            name = ("@" if c == "@" else "") + m.group(0)
            i = m.end()
            if src.startswith(":", i) and not src.startswith("::", i) and c != "@":
                toks.append(Tok("label", name))
                i += 1
            else:
                toks.append(Tok("ident", name))
            continue
        for op in _OPS:
            if src.startswith(op, i):
                toks.append(Tok("op", op))
                i += len(op)
                break
        else:
            toks.append(Tok("op", c))
            i += 1
    return toks


def ruby_float(v: float) -> str:
    """``Float#to_s``: ``1.0``, ``0.33``, ``1.0e+20``."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    text = repr(v)
    if "e" in text:
        mant, exp = text.split("e")
        if "." not in mant:
            mant += ".0"
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        return f"{mant}e{sign}{digits}"
    return text if "." in text else text + ".0"


def _inspect_str(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    out = out.replace("\x1b", "\\e").replace("#{", "\\#{")
    return f'"{out}"'


def ruby_inspect(v: object) -> str:
    """``#inspect`` of a literal value (Ruby 3.1 style hashes)."""
    if isinstance(v, Partial):
        raise Unknown("inspect of a partial string")
    if isinstance(v, str):
        return _inspect_str(v)
    if isinstance(v, Sym):
        return ":" + (v.name if re.fullmatch(r"[A-Za-z_]\w*[?!=]?", v.name) else _inspect_str(v.name))
    if v is None:
        return "nil"
    if isinstance(v, list):
        return "[" + ", ".join(ruby_inspect(x) for x in v) + "]"
    if isinstance(v, RHash):
        return "{" + ", ".join(f"{ruby_inspect(k)}=>{ruby_inspect(x)}" for k, x in v.items) + "}"
    if isinstance(v, range):
        raise Unknown("range inspect")
    return ruby_to_s(v)


def ruby_to_s(v: object) -> str:
    """``#to_s`` of a literal value, as string interpolation uses it."""
    if isinstance(v, Partial):
        raise Unknown("partial string")
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return ruby_float(v)
    if isinstance(v, Sym):
        return v.name
    if isinstance(v, Const):
        return v.name
    if isinstance(v, RubyRange):
        return f"{ruby_to_s(v.first)}{'...' if v.exclusive else '..'}{ruby_to_s(v.last)}"
    return ruby_inspect(v)


@dataclass(frozen=True)
class RubyRange:
    first: object
    last: object
    exclusive: bool

    def values(self) -> list[object]:
        if not isinstance(self.first, int) or not isinstance(self.last, int):
            raise Unknown("non-integer range")
        stop = self.last if self.exclusive else self.last + 1
        if stop - self.first > MAX_LOOP_VALUES:
            raise Unknown("range too long")
        return list(range(self.first, stop))


MAX_LOOP_VALUES = 1_000
_STR_METHODS = {
    "upcase": str.upper, "downcase": str.lower, "capitalize": str.capitalize,
    "strip": str.strip, "swapcase": str.swapcase,
}


def _str_parts(v: object) -> tuple[str | None, ...]:
    """``v.to_s`` as parts, unknown pieces as ``None``."""
    if isinstance(v, Partial):
        return v.parts
    try:
        return (ruby_to_s(v),)
    except Unknown:
        return (None,)


class ExprParser:
    """Recursive-descent evaluation of the literal subset of Ruby."""

    def __init__(self, toks: list[Tok], env: dict[str, object], ns: tuple[str, ...] = ()) -> None:
        self.toks = toks
        self.pos = 0
        self.env = env
        self.ns = ns  # enclosing `module` names: constants resolve inside them

    def peek(self, k: int = 0) -> Tok | None:
        i = self.pos + k
        return self.toks[i] if i < len(self.toks) else None

    def is_op(self, value: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.kind == "op" and t.value == value

    def expect(self, value: str) -> None:
        if not self.is_op(value):
            raise Unknown(f"expected {value!r}")
        self.pos += 1

    def string(self, parts: list[str | tuple[str, str]]) -> object:
        out: list[str | None] = []
        for p in parts:
            if isinstance(p, str):
                out.append(p)
                continue
            try:
                sub = ExprParser(tokenize(p[1]), self.env, self.ns)
                v = sub.value()
                if sub.peek() is not None:
                    raise Unknown("trailing tokens in interpolation")
                out.extend(_str_parts(v))
            except (Unknown, RecursionError):
                out.append(None)
        if None in out:
            merged: list[str | None] = []
            for p in out:
                if p is None and merged and merged[-1] is None:
                    continue
                if isinstance(p, str) and merged and isinstance(merged[-1], str):
                    merged[-1] += p
                else:
                    merged.append(p)
            return Partial(tuple(merged))
        return "".join(p for p in out if p is not None)

    def primary(self) -> object:
        t = self.peek()
        if t is None:
            raise Unknown("end of expression")
        self.pos += 1
        if t.kind == "str":
            v = self.string(t.value)  # type: ignore[arg-type]
            # adjacent literals concatenate: "a" "b"
            while (nt := self.peek()) is not None and nt.kind == "str":
                self.pos += 1
                w = self.string(nt.value)  # type: ignore[arg-type]
                v = Partial(_str_parts(v) + _str_parts(w)) if isinstance(v, Partial) or isinstance(w, Partial) \
                    else ruby_to_s(v) + ruby_to_s(w)
            return v
        if t.kind == "list":
            return list(t.value)  # type: ignore[call-overload]
        if t.kind == "sym":
            return Sym(str(t.value))
        if t.kind == "dsym":
            v = self.string(t.value)  # type: ignore[arg-type]
            if isinstance(v, Partial):
                raise Unknown("dynamic symbol")
            return Sym(ruby_to_s(v))
        if t.kind == "num":
            return t.value
        if t.kind == "const":
            name = str(t.value).lstrip(":")
            if name in self.env:
                return self.env[name]
            head = name.split("::")[0]
            if self.ns and t.value == name:  # not written `::Name`
                # Lexical lookup: `Calc` inside `module Shop` is Shop::Calc;
                # `Shop::Calc` inside `module Shop` is Shop::Calc too.
                ns = self.ns[: self.ns.index(head)] if head in self.ns else self.ns
                return Const("::".join((*ns, name)))
            return Const(name)
        if t.kind == "ident":
            name = str(t.value)
            if name == "nil":
                return None
            if name in ("true", "false"):
                return name == "true"
            if name in self.env:
                return self.env[name]
            raise Unknown(f"unknown name {name}")
        if t.kind == "op":
            if t.value == "-" and (nt := self.peek()) is not None and nt.kind == "num":
                self.pos += 1
                return -nt.value  # type: ignore[operator]
            if t.value == "[":
                return self.values_until("]", "array")
            if t.value == "{":
                return self.hash_body("}")
            if t.value == "(":
                v = self.value()
                self.expect(")")
                return v
        raise Unknown(f"unexpected {t.value!r}")

    def hash_body(self, close: str | None) -> RHash:
        out: list[tuple[object, object]] = []
        while True:
            t = self.peek()
            if t is None or (close is not None and self.is_op(close)):
                break
            if t.kind == "label":
                self.pos += 1
                key: object = Sym(str(t.value))
            else:
                key = self.value()
                self.expect("=>")
            out.append((key, self.value()))
            if self.is_op(","):
                self.pos += 1
            elif close is None:
                break
        if close is not None:
            self.expect(close)
        return RHash(tuple(out))

    def values_until(self, close: str, what: str) -> list[object]:
        """Comma-separated values up to the ``close`` operator (consumed)."""
        items: list[object] = []
        while not self.is_op(close):
            if self.peek() is None:
                raise Unknown(f"unterminated {what}")
            items.append(self.value())
            if self.is_op(","):
                self.pos += 1
        self.pos += 1
        return items

    def call_args(self) -> list[object]:
        if not self.is_op("("):
            return []
        self.pos += 1
        return self.values_until(")", "call")

    def value(self) -> object:
        """An expression: arithmetic over postfix terms, optionally a range."""
        v = self.additive()
        if self.is_op("..") or self.is_op("..."):
            excl = self.is_op("...")
            self.pos += 1
            v = RubyRange(v, self.additive(), excl)
        return v

    def additive(self) -> object:
        v = self.term()
        while self.is_op("+") or self.is_op("-"):
            op = str(self.peek().value)  # type: ignore[union-attr]
            self.pos += 1
            v = _arith(op, v, self.term())
        return v

    def term(self) -> object:
        v = self.postfix()
        while self.is_op("*") or self.is_op("/") or self.is_op("%"):
            op = str(self.peek().value)  # type: ignore[union-attr]
            self.pos += 1
            v = _arith(op, v, self.postfix())
        return v

    def postfix(self) -> object:
        v = self.primary()
        while True:
            if self.is_op(".") and (t := self.peek(1)) is not None and t.kind == "ident":
                self.pos += 2
                v = self.method(v, str(t.value), self.call_args())
            elif self.is_op("[") and not self.is_op("[", -1):
                self.pos += 1
                idx = self.value()
                self.expect("]")
                v = self.index(v, idx)
            else:
                return v

    @staticmethod
    def index(v: object, idx: object) -> object:
        try:
            if isinstance(v, (list, str)) and isinstance(idx, int):
                return v[idx]
            if isinstance(v, RHash):
                return v.get(idx)
        except IndexError:
            return None
        raise Unknown("index")

    @staticmethod
    def method(v: object, name: str, args: list[object]) -> object:
        if name == "to_s":
            return v if isinstance(v, Partial) else ruby_to_s(v)
        if name == "inspect":
            return ruby_inspect(v)
        if name == "to_sym" and isinstance(v, str):
            return Sym(v)
        if isinstance(v, str) and name in _STR_METHODS:
            return _STR_METHODS[name](v)
        if isinstance(v, Sym) and name in _STR_METHODS:
            return Sym(_STR_METHODS[name](v.name))
        if isinstance(v, (list, str)) and name in ("size", "length", "count") and not args:
            return len(v)
        if isinstance(v, RHash) and name in ("size", "length", "count") and not args:
            return len(v.items)
        if isinstance(v, RHash) and name in ("keys", "values", "to_a") and not args:
            return [k if name == "keys" else x if name == "values" else [k, x] for k, x in v.items]
        if isinstance(v, list) and name in ("first", "last") and not args:
            return (v[0] if name == "first" else v[-1]) if v else None
        if isinstance(v, list) and name == "join":
            sep = ruby_to_s(args[0]) if args else ""
            return sep.join(ruby_to_s(x) for x in v)
        if isinstance(v, RubyRange) and name in ("to_a", "entries"):
            return v.values()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not args:
            if name in ("to_i", "floor", "truncate"):
                return int(v) if name != "floor" else int(v // 1)
            if name == "to_f":
                return float(v)
            if name == "abs":
                return abs(v)
        if isinstance(v, str) and name == "to_i" and not args:
            m = re.match(r"\s*[-+]?\d+", v)
            return int(m.group(0)) if m else 0
        if name in ("freeze", "dup", "itself"):
            return v
        if isinstance(v, Const) and name == "name":
            return v.name
        raise Unknown(f"method {name}")


def _arith(op: str, a: object, b: object) -> object:
    """Integer/float arithmetic, string and array concatenation."""
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b == 0:
            raise Unknown("division by zero")
        if isinstance(a, int) and isinstance(b, int):
            return a // b if op == "/" else a % b  # Ruby floors both
        return a / b if op == "/" else a % b
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return a + b
    if op == "+" and isinstance(a, list) and isinstance(b, list):
        return a + b
    if op == "*" and isinstance(a, (str, list)) and isinstance(b, int) and 0 <= b <= MAX_LOOP_VALUES:
        return a * b
    raise Unknown(f"operator {op}")


def loop_values(recv: object, method: str) -> list[object]:
    """The elements an ``each``-style loop over a literal yields."""
    if isinstance(recv, RubyRange):
        items: list[object] = recv.values()
    elif isinstance(recv, list):
        items = recv
    elif isinstance(recv, RHash):
        items = [[k, v] for k, v in recv.items]
    elif isinstance(recv, int) and method == "times":
        if recv > MAX_LOOP_VALUES:
            raise Unknown("too many iterations")
        return list(range(recv))
    else:
        raise Unknown("not a literal collection")
    if len(items) > MAX_LOOP_VALUES:
        raise Unknown("too many iterations")
    if method in ("each_with_index", "each.with_index"):
        return [[x, i] for i, x in enumerate(items)]
    return list(items)


def bind_params(params: str, value: object) -> dict[str, object]:
    """Bind block parameters (``|a, b|``, ``|(a, b), i|``) to one yielded value."""
    names = [p.strip() for p in _split_top(params)]
    if not names or names == [""]:
        return {}
    if len(names) == 1:
        name = names[0]
        if name.startswith("(") and name.endswith(")"):
            return bind_params(name[1:-1], value)
        return {name.lstrip("*&"): value}
    seq = value if isinstance(value, list) else [value]
    out: dict[str, object] = {}
    for i, name in enumerate(names):
        item = seq[i] if i < len(seq) else None
        if name.startswith("(") and name.endswith(")"):
            out.update(bind_params(name[1:-1], item))
        elif name.startswith("*"):
            out[name[1:]] = seq[i:]
        else:
            out[name.lstrip("&")] = item
    return out


def _split_top(text: str) -> list[str]:
    parts, depth, buf = [], 0, []
    for c in text:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(c)
    parts.append("".join(buf))
    return parts


# ============================================================================ generated descriptions
# An example without a description is named by RSpec after its last
# expectation: "is expected to eq 3", "should be empty". Matchers describe
# themselves as their name with spaces plus their inspected arguments, with
# these exceptions.
EXPECT_RE = re.compile(
    r"(?:^|[{\s;])(?:(is_expected)|expect\s*(?:\(.*?\)|\{.*?\})(?=\s*\.\s*(?:to|not_to|to_not)\b)|(?:subject\s*\.\s*)?(should(?:_not)?))\s*"
    r"(?:\.\s*(to|not_to|to_not)\b)?\s*(.*)$")
MATCHER_NAMES = {
    "be_a": "be a kind of", "be_an": "be a kind of", "be_kind_of": "be a kind of", "be_a_kind_of": "be a kind of",
    "be_instance_of": "be an instance of", "be_an_instance_of": "be an instance of", "be": "equal",
    "match_array": "contain exactly", "raise_error": "raise", "raise_exception": "raise",
    "be_falsy": "be falsey",
}


def _english_list(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + ", and " + items[-1]


def generated_description(text: str, env: dict[str, object], ns: tuple[str, ...] = ()) -> str | None:
    """RSpec's generated description of a one-expectation body, or ``None``."""
    text = re.sub(r"\s*(?:\}|\bend)\s*$", "", text.strip())
    m = EXPECT_RE.search(text)
    if m is None:
        return None
    should = m.group(2)
    negative = m.group(3) in ("not_to", "to_not") or should == "should_not"
    if should:
        verb = "should not" if negative else "should"
    elif m.group(3):
        verb = "is expected not to" if negative else "is expected to"
    else:
        return None
    toks = tokenize(m.group(4))
    if not toks or toks[0].kind != "ident":
        return None
    name = str(toks[0].value)
    try:
        p = ExprParser(toks[1:], env, ns)
        if p.is_op("("):
            args = p.call_args()
        elif p.peek() is None:
            args = []
        elif p.is_op(">") or p.is_op("<") or p.is_op("<=") or p.is_op(">=") or p.is_op("==") and name == "be":
            op = str(p.peek().value)  # type: ignore[union-attr]
            p.pos += 1
            return f"{verb} be {op} {ruby_inspect(p.value())}"
        else:
            args = [p.value()]
            while p.is_op(","):
                p.pos += 1
                args.append(p.value())
        chained: list[tuple[str, list[object]]] = []
        while p.is_op(".") and (t := p.peek(1)) is not None and t.kind == "ident":
            p.pos += 2
            chained.append((str(t.value), p.call_args()))
        if p.peek() is not None:
            return None
        shown = [ruby_inspect(a) if not isinstance(a, Const) else a.name for a in args]
    except (Unknown, RecursionError):
        return None
    if name == "be" and not args:
        return f"{verb} be"
    if name in ("be_within",) and chained and chained[0][0] == "of" and len(args) == 1:
        return f"{verb} be within {shown[0]} of {ruby_inspect(chained[0][1][0])}" if chained[0][1] else None
    if chained:
        return None
    if name == "respond_to":
        return f"{verb} respond to " + ("#" + ruby_to_s(args[0]) if len(args) == 1 else ruby_inspect(args))
    if name == "match_array" and len(args) == 1 and isinstance(args[0], list):
        shown = [ruby_inspect(a) for a in args[0]]
    if name in ("raise_error", "raise_exception"):
        if not args:
            return f"{verb} raise Exception"
        tail = f" with {shown[1]}" if len(args) > 1 else ""
        return f"{verb} raise {shown[0]}{tail}"
    words = MATCHER_NAMES.get(name, name.replace("_", " "))
    return f"{verb} {words}" + (" " + _english_list(shown) if shown else "")


# ============================================================================ spec sources
GROUP_FUNCS = {
    "describe", "context", "feature", "example_group",
    "xdescribe", "xcontext", "xfeature", "fdescribe", "fcontext", "ffeature",
}
SKIPPED_GROUPS = {"xdescribe", "xcontext", "xfeature"}
EXAMPLE_FUNCS = {
    "it", "specify", "example", "scenario", "its",
    "xit", "xspecify", "xexample", "xscenario",
    "fit", "fspecify", "fexample", "fscenario", "focus", "skip", "pending",
}
SKIPPED_EXAMPLES = {"xit", "xspecify", "xexample", "xscenario", "skip"}
SHARED_DEFS = {"shared_examples", "shared_examples_for", "shared_context"}
# it_behaves_like nests a group named after the shared group; include_* inline it.
SHARED_USES = {
    "it_behaves_like": "behaves like", "it_should_behave_like": "it should behave like",
    "include_examples": None, "include_context": None,
}
LOOP_METHODS = {"each", "each_with_index", "each_pair", "times", "each_entry", "map"}
CONTAINER_RE = re.compile(r"^(?:module|class)\s+[A-Z][\w:]*(?:\s*<\s*[\w:]+)?\s*$")
HEREDOC_RE = re.compile(r"<<[~-]?(['\"]?)([A-Z_][A-Z0-9_]*)\1")
ASSIGN_RE = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(?!=)(.+)$")
PENDING_CALL_RE = re.compile(r"^\s*pending\b(?!\s*[?!:=])")
CLOSE_RE = re.compile(r"^(?:end\b|\})")
SPEC_SUFFIX = "_spec.rb"
MAX_SPEC_NODES = 100_000
MAX_SCAN_DEPTH = 40


@dataclass(eq=False, repr=False)
class SpecNode:
    """An example group or example found in a spec file (one per loop
    iteration for definitions inside loops over literals)."""

    kind: str  # "group" | "example"
    file: str  # where it is defined (a shared example's definition file)
    line: int
    desc: tuple[str | None, ...]  # the description; None parts are unknown
    args: tuple[object, ...]  # description args (first/last decide separators)
    parent: SpecNode | None = None
    children: list[SpecNode] = field(default_factory=list)
    scoped_id: str = ""
    skipped: bool = False  # xit/skip/xdescribe/skip metadata/no body
    pending: bool = False  # a `pending` call or metadata: runs, expected to fail
    full: tuple[str | None, ...] = ()
    spec_file: str = ""  # the spec file that runs it (its id's file)

    @property
    def known(self) -> bool:
        return None not in self.full

    @property
    def full_text(self) -> str:
        return "".join(p or "" for p in self.full)

    def pattern(self) -> re.Pattern[str]:
        return re.compile("".join(".+?" if p is None else re.escape(p) for p in self.full) + r"\Z", re.S)

    def native_id(self) -> str:
        return f"./{self.spec_file}[{self.scoped_id}]"

    def covers(self, line: int) -> bool:
        node: SpecNode | None = self
        while node is not None:
            if node.line == line:
                return True
            node = node.parent
        return False


@dataclass
class _Logical:
    first: int  # 0-based physical line
    last: int
    indent: int
    text: str


def _join(a: tuple[str | None, ...], sep: str, b: tuple[str | None, ...]) -> tuple[str | None, ...]:
    if not a:
        return b
    return a + ((sep,) if sep else ()) + b


def _separator(parent_last: object, child_first: object) -> str:
    """RSpec's description_separator: glue ``#x``/``.x``/``::X`` onto a class."""
    glue = isinstance(parent_last, Const) and isinstance(child_first, str) and child_first.startswith(("#", ".", "::"))
    return "" if glue else " "


def _group_description(args: list[object]) -> tuple[str | None, ...]:
    if not args:
        return ()
    first = _str_parts(args[0])
    if len(args) < 2:
        return first
    second = _str_parts(args[1])
    if not first or first == ("",):
        return second
    return _join(first, _separator(args[0], args[1]), second)


def _split_metadata(args: list[object]) -> tuple[list[object], dict[object, object]]:
    """Description args and metadata: the first argument always describes;
    of the others, a trailing hash and trailing symbols are metadata."""
    meta: dict[object, object] = {}
    if args and isinstance(args[0], RHash):
        return [], dict((k, v) for k, v in args[0].items if isinstance(k, (Sym, str, int, float)))
    first, args = args[:1], list(args[1:])
    if args and isinstance(args[-1], RHash):
        meta.update((k, v) for k, v in args.pop().items if isinstance(k, (Sym, str, int, float)))  # type: ignore[union-attr]
    while args and isinstance(args[-1], Sym):
        meta[args.pop()] = True
    return first + args, meta


class SpecIndex:
    """Example groups and examples of a project's spec files, as RSpec would
    define them (ids, full descriptions, lines), for outputs that do not name
    every example."""

    def __init__(self, sources: SourceIndex) -> None:
        self.sources = sources
        self._files: dict[str, list[SpecNode]] = {}
        self._shared: dict[str, tuple[str, list[_Logical], int, int]] | None = None
        self.count = 0
        self.problems: list[str] = []

    def spec_files(self) -> list[str]:
        return [f for f in self.sources.files([SPEC_SUFFIX])]

    def roots(self, rel: str) -> list[SpecNode]:
        """Top-level groups of one spec file."""
        if rel not in self._files:
            self._files[rel] = []
            top = _Scope(self, rel, [], None, {}, 0)
            try:
                top.logical = self._logical(rel)
                top.scan(0, len(top.logical))
            except (RecursionError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
                # Best effort: a construct the scanner cannot read costs this
                # file's examples, never the run.
                self.problems.append(f"{rel}: {type(exc).__name__}: {exc}")
        return self._files[rel]

    def examples(self, files: list[str] | None = None) -> Iterator[SpecNode]:
        """Every example in definition order."""
        for rel in files if files is not None else self.spec_files():
            stack = list(reversed(self.roots(rel)))
            while stack:
                node = stack.pop()
                if node.kind == "example":
                    yield node
                else:
                    stack.extend(reversed(node.children))

    def groups(self, rel: str) -> Iterator[SpecNode]:
        stack = list(reversed(self.roots(rel)))
        while stack:
            node = stack.pop()
            if node.kind == "group":
                yield node
                stack.extend(reversed(node.children))

    def shared(self, name: str) -> tuple[str, list[_Logical], int, int] | None:
        """Where ``shared_examples name`` is defined: file, its logical lines,
        body start and end."""
        if self._shared is None:
            self._shared = {}
            for rel in self.sources.files([".rb"]):
                lines = self.sources.lines(rel)
                if not any("shared_" in ln for ln in lines):
                    continue
                logical = self._logical(rel)
                for i, lg in enumerate(logical):
                    toks = tokenize(lg.text)
                    k = 2 if len(toks) > 2 and toks[0].value == "RSpec" and toks[1].value == "." else 0
                    if len(toks) > k and toks[k].kind == "ident" and toks[k].value in SHARED_DEFS:
                        try:
                            p = ExprParser(toks[k + 1:], {})
                            if p.is_op("("):
                                p.pos += 1
                            key = p.value()
                        except (Unknown, RecursionError):
                            continue
                        end = _block_end(logical, i)
                        if isinstance(key, (str, Sym)):
                            self._shared.setdefault(ruby_to_s(key), (rel, logical, i + 1, end))
        return self._shared.get(name)

    def _logical(self, rel: str) -> list[_Logical]:
        """Logical lines: heredoc bodies and =begin blocks dropped, lines with
        open brackets joined with their continuation."""
        out: list[_Logical] = []
        lines = self.sources.lines(rel)
        i = 0
        heredoc: str | None = None
        in_comment = False
        while i < len(lines):
            raw = lines[i]
            if heredoc is not None:
                if raw.strip() == heredoc:
                    heredoc = None
                i += 1
                continue
            if in_comment or raw.startswith("=begin"):
                in_comment = not raw.startswith("=end")
                i += 1
                continue
            if raw.startswith("__END__"):
                break
            stripped = raw.strip()
            if not stripped or stripped.startswith("#"):
                i += 1
                continue
            first = i
            text = stripped
            depth = _bracket_depth(text)
            while depth > 0 and i + 1 < len(lines) and i - first < 60:
                i += 1
                nxt = lines[i].strip()
                text += " " + nxt
                depth = _bracket_depth(text)
            m = HEREDOC_RE.search(text)
            if m and not text.rstrip().endswith(m.group(2)):
                heredoc = m.group(2)
            out.append(_Logical(first, i, len(raw) - len(raw.lstrip()), text))
            i += 1
        return out


def _bracket_depth(text: str) -> int:
    depth = 0
    for t in tokenize(text):
        if t.kind == "op":
            if t.value in ("(", "[", "{"):
                depth += 1
            elif t.value in (")", "]", "}"):
                depth -= 1
    return depth


def _block_end(logical: list[_Logical], i: int) -> int:
    """Index (exclusive) of the body end of the block opened at ``logical[i]``:
    the first later line at the opener's indentation or less. A closing
    ``end``/``}`` at the opener's indentation belongs to the block."""
    indent = logical[i].indent
    j = i + 1
    while j < len(logical):
        if logical[j].indent <= indent:
            return j
        j += 1
    return j


def _is_close(lg: _Logical) -> bool:
    return CLOSE_RE.match(lg.text) is not None


def _opens_block(toks: list[Tok], pos: int) -> tuple[bool, bool, str]:
    """Whether the tokens from ``pos`` open a ``do``/``{`` block; whether it
    is closed on the same line; the block parameters."""
    rest = toks[pos:]
    for k, t in enumerate(rest):
        if (t.kind == "ident" and t.value == "do") or (t.kind == "op" and t.value == "{"):
            params = ""
            after = rest[k + 1:]
            if len(after) >= 2 and after[0].kind == "op" and after[0].value == "|":
                names: list[str] = []
                for u in after[1:]:
                    if u.kind == "op" and u.value == "|":
                        break
                    names.append(", " if u.value == "," else str(u.value))
                params = "".join(names)
            closed = bool(rest) and (
                (rest[-1].kind == "ident" and rest[-1].value == "end" and t.value == "do")
                or (rest[-1].kind == "op" and rest[-1].value == "}" and t.value == "{")
            ) and len(rest) > k + 1
            return True, closed, params
    return False, False, ""


class _Scope:
    """Scans the statements of one block body (a file, a group, a loop body)."""

    def __init__(
        self, index: SpecIndex, rel: str, logical: list[_Logical], parent: SpecNode | None,
        env: dict[str, object], depth: int, def_file: str | None = None, ns: tuple[str, ...] = (),
    ) -> None:
        self.index = index
        self.rel = rel  # the spec file the examples belong to
        self.def_file = def_file or rel  # the file the lines are read from
        self.logical = logical
        self.parent = parent
        self.env = env
        self.depth = depth
        self.ns = ns

    def _next_index(self) -> int:
        if self.parent is None:
            return len(self.index._files.setdefault(self.rel, [])) + 1
        return len(self.parent.children) + 1

    def _add(self, node: SpecNode) -> None:
        self.index.count += 1
        node.spec_file = self.rel
        idx = self._next_index()
        node.parent = self.parent
        node.scoped_id = f"{self.parent.scoped_id}:{idx}" if self.parent else str(idx)
        if self.parent is not None:
            self.parent.children.append(node)
            node.skipped = node.skipped or self.parent.skipped
            node.pending = node.pending or self.parent.pending
            if node.kind == "group":
                sep = _separator(self.parent.args[-1] if self.parent.args else None,
                                 node.args[0] if node.args else None)
            else:
                sep = " "  # an example's parent part is the group's full (String) description
            node.full = _join(self.parent.full, sep, node.desc)
        else:
            node.full = node.desc
            self.index._files.setdefault(self.rel, []).append(node)

    def scan(self, start: int, end: int) -> None:
        """Statements of ``logical[start:end]`` at the body's own indentation."""
        if self.depth > MAX_SCAN_DEPTH:
            return
        base: int | None = None
        i = start
        while i < end and self.index.count < MAX_SPEC_NODES:
            lg = self.logical[i]
            if base is None:
                base = lg.indent
            if lg.indent != base or _is_close(lg):
                i += 1  # the body of some other block (if, before, let, def...)
                continue
            i = self.statement(i, end)

    def statement(self, i: int, end: int) -> int:
        lg = self.logical[i]
        toks = tokenize(lg.text)
        if not toks:
            return i + 1
        k = 0
        if len(toks) > 2 and toks[0].kind == "const" and toks[0].value == "RSpec" and toks[1].value == ".":
            k = 2
        head = toks[k]
        body_end = min(_block_end(self.logical, i), end)
        if head.kind == "ident" and head.value in GROUP_FUNCS | EXAMPLE_FUNCS | set(SHARED_USES) | SHARED_DEFS:
            p = ExprParser(toks, self.env, self.ns)
            p.pos = k + 1
            paren = p.is_op("(")
            if paren:
                p.pos += 1
            args: list[object] = []
            try:
                while p.peek() is not None and not (
                    (p.peek().kind == "ident" and p.peek().value == "do")  # type: ignore[union-attr]
                    or p.is_op(")") or (not paren and p.is_op("{"))
                ):
                    if p.peek().kind == "label":  # type: ignore[union-attr]
                        args.append(p.hash_body(None))
                    else:
                        args.append(p.value())
                    if p.is_op(","):
                        p.pos += 1
                    else:
                        break
            except (Unknown, RecursionError):
                if not args:
                    args = [Partial((None,))]
            if paren and p.is_op(")"):
                p.pos += 1
            has_block, closed, _params = _opens_block(toks, p.pos)
            return self.definition(str(head.value), args, has_block, closed, i, body_end)
        if head.kind == "ident" and head.value in ("module", "class") and CONTAINER_RE.match(lg.text) \
                and self.parent is None and len(toks) > 1:
            name = str(toks[1].value).lstrip(":")
            sub = _Scope(self.index, self.rel, self.logical, None, dict(self.env), self.depth + 1, self.def_file,
                         (*self.ns, *name.split("::")))
            sub.scan(i + 1, body_end)
            return body_end
        if (m := ASSIGN_RE.match(lg.text)) and self.depth < 3:
            try:
                p = ExprParser(tokenize(m.group(2)), self.env, self.ns)
                self.env = {**self.env, m.group(1): p.value()}
            except (Unknown, RecursionError):
                self.env = {k2: v for k2, v in self.env.items() if k2 != m.group(1)}
            return i + 1
        loop = self.loop(toks)
        if loop is not None:
            values, params = loop
            for value in values:
                sub = _Scope(self.index, self.rel, self.logical, self.parent,
                             {**self.env, **bind_params(params, value)}, self.depth + 1, self.def_file, self.ns)
                sub.scan(i + 1, body_end)
            return body_end
        return i + 1

    def loop(self, toks: list[Tok]) -> tuple[list[object], str] | None:
        """``<literal>.each do |x|`` (also each_with_index, times, each_pair)."""
        for k in range(len(toks) - 1, 0, -1):
            t = toks[k]
            if t.kind == "ident" and t.value in LOOP_METHODS and toks[k - 1].kind == "op" and toks[k - 1].value == ".":
                has_block, closed, params = _opens_block(toks, k + 1)
                if not has_block or closed:
                    return None
                method = str(t.value)
                recv_toks = toks[:k - 1]
                if len(recv_toks) >= 2 and recv_toks[-1].kind == "ident" and recv_toks[-1].value == "each" \
                        and method == "each_with_index":
                    recv_toks = recv_toks[:-2]
                try:
                    p = ExprParser(recv_toks, self.env, self.ns)
                    recv = p.value()
                    if p.peek() is not None:
                        return None
                    return loop_values(recv, method), params
                except (Unknown, RecursionError):
                    return None
        return None

    def definition(self, func: str, args: list[object], has_block: bool, closed: bool, i: int, body_end: int) -> int:
        lg = self.logical[i]
        line = lg.first + 1
        if func in SHARED_DEFS:
            return body_end
        if func in SHARED_USES:
            if not args or isinstance(args[0], Partial):
                return i + 1
            found = self.index.shared(ruby_to_s(args[0]))
            if found is None:
                return i + 1
            s_file, s_logical, s_start, s_end = found
            prefix = SHARED_USES[func]
            target = self.parent
            if prefix is not None:
                label = f"{prefix} {ruby_to_s(args[0])}"
                node = SpecNode("group", self.def_file, line, (label,), (label,))
                self._add(node)
                target = node
            if target is None:
                return i + 1
            sub = _Scope(self.index, self.rel, s_logical, target, dict(self.env), self.depth + 1, s_file, self.ns)
            sub.scan(s_start, s_end)
            return i + 1
        desc_args, meta = _split_metadata(args)
        if func in GROUP_FUNCS:
            if not has_block:
                return i + 1
            node = SpecNode("group", self.def_file, line, _group_description(desc_args), tuple(desc_args),
                            skipped=func in SKIPPED_GROUPS or _meta_skip(meta), pending=_meta_pending(meta))
            self._add(node)
            if not closed:
                sub = _Scope(self.index, self.rel, self.logical, node, dict(self.env), self.depth + 1, self.def_file,
                             self.ns)
                sub.scan(i + 1, body_end)
            return body_end if not closed else i + 1
        if self.parent is None or func == "its":
            return body_end if has_block and not closed else i + 1
        if not desc_args:
            # RSpec names it after the last expectation it runs: read a
            # body that is one expectation (`it { is_expected.to eq 3 }`).
            body = [lg.text] if closed else [self.logical[j].text for j in range(i + 1, body_end)]
            if not closed and len(body) == 2 and CLOSE_RE.match(body[-1]):
                body = body[:1]
            gen = generated_description(body[0], self.env, self.ns) if len(body) == 1 else None
            desc: tuple[str | None, ...] = (gen,) if gen else (None,)
        else:
            desc = _str_parts(desc_args[0])
        body_pending = False
        if has_block and not closed:
            body_pending = any(
                PENDING_CALL_RE.match(self.logical[j].text) for j in range(i + 1, body_end)
            )
        elif closed:
            body_pending = re.search(r"(?:\{|\bdo)\s*pending\b", lg.text) is not None
        node = SpecNode(
            "example", self.def_file, line, desc, tuple(desc_args[:1]),
            skipped=func in SKIPPED_EXAMPLES or not has_block or _meta_skip(meta),
            pending=func == "pending" or body_pending or _meta_pending(meta),
        )
        self._add(node)
        return body_end if has_block and not closed else i + 1


def _meta_skip(meta: dict) -> bool:
    return any(k == Sym("skip") and v not in (False, None) for k, v in meta.items())


def _meta_pending(meta: dict) -> bool:
    return any(k == Sym("pending") and v not in (False, None) for k, v in meta.items())


# ============================================================================ command line
FORMATTERS = {
    "p": "progress", "progress": "progress", "d": "documentation", "doc": "documentation",
    "documentation": "documentation", "j": "json", "json": "json", "h": "html", "html": "html",
    "f": "failures", "failures": "failures",
}
# Options that select examples in ways the spec sources cannot replay.
FILTER_OPTS = {"-t", "--tag", "-P", "--pattern", "--exclude-pattern", "-E", "--example-matches",
               "--only-failures", "--next-failure"}
FLAG_OPTS = {"--only-failures", "--next-failure"}
VALUE_OPTS = {"-r", "--require", "-I", "--default-path", "-O", "--options", "--failure-exit-code",
              "--error-exit-code", "--deprecation-out", "-X"}
ENV_OPTS_RE = re.compile(r"(?:^|\s)SPEC_OPTS=('[^']*'|\"[^\"]*\"|\S+)")
RSPEC_WORD_RE = re.compile(r"(?:^|/)rspec$")




@dataclass
class Options:
    """What the command line (plus ``.rspec`` files and ``SPEC_OPTS``) asks of RSpec."""

    formatters: list[tuple[str, str | None]] = field(default_factory=list)  # (name, out path or None)
    paths: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)  # -e substrings
    filtered: bool = False  # tags or other filters we cannot evaluate
    random: bool = False

    @property
    def stdout_formatters(self) -> list[str]:
        return [f for f, out in self.formatters if out is None] or (["progress"] if not self.formatters else [])

    def add(self, words: list[str], positional: bool) -> None:
        i = 0
        while i < len(words):
            w = words[i]
            val: str | None = None
            if w.startswith("--") and "=" in w:
                w, val = w.split("=", 1)
            elif re.fullmatch(r"-[foe]\S+", w):
                w, val = w[:2], w[2:]

            def take() -> str | None:
                nonlocal i
                if val is not None:
                    return val
                i += 1
                return words[i] if i < len(words) else None

            if w in ("-f", "--format", "--formatter"):
                name = take() or "progress"
                self.formatters.append((FORMATTERS.get(name, name), None))
            elif w in ("-o", "--out"):
                out = take()
                if self.formatters:
                    name, _ = self.formatters[-1]
                    self.formatters[-1] = (name, out)
                else:
                    self.formatters.append(("progress", out))
            elif w in ("-e", "--example"):
                if (v := take()) is not None:
                    self.examples.append(v)
            elif w in FILTER_OPTS:
                self.filtered = True
                if w not in FLAG_OPTS:
                    take()
            elif w in ("--order", "--seed"):
                v = take() or ""
                self.random = self.random or w == "--seed" or v.startswith("rand")
            elif w in VALUE_OPTS:
                take()
            elif positional and not w.startswith("-"):
                self.paths.append(w)
            i += 1


def parse_options(command: str, root: Path | None) -> Options:
    """RSpec's options for this command: ``.rspec`` files, then ``SPEC_OPTS``,
    then the command line of the last ``rspec`` segment."""
    opts = Options()
    for name in (".rspec", ".rspec-local"):
        if root is not None and (root / name).is_file():
            try:
                text = (root / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            opts.add(command_words(" ".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))), False)
    file_formatters = list(opts.formatters)
    segments = re.split(r"\s*(?:&&|\|\||;|\|)\s*", command.strip())
    seg = next((s for s in reversed(segments) if any(p.search(s) for p in COMMAND_RE)), "")
    m = ENV_OPTS_RE.search(seg) or ENV_OPTS_RE.search(command)
    env_opts = Options()
    if m:
        env_opts.add(command_words(m.group(1).strip("'\"")), False)
    cmd_opts = Options()
    words = command_words(seg)
    start = next((i + 1 for i, w in enumerate(words) if RSPEC_WORD_RE.search(w)), len(words))
    cmd_opts.add(words[start:], True)
    # Each later source replaces the formatters of the earlier ones:
    # options files, then the command line, then SPEC_OPTS.
    opts.formatters = env_opts.formatters or cmd_opts.formatters or file_formatters
    cmd_opts.examples += env_opts.examples
    cmd_opts.filtered = cmd_opts.filtered or env_opts.filtered
    cmd_opts.random = cmd_opts.random or env_opts.random
    opts.paths = cmd_opts.paths
    opts.examples = opts.examples + cmd_opts.examples
    opts.filtered = opts.filtered or cmd_opts.filtered
    opts.random = opts.random or cmd_opts.random
    return opts


# ============================================================================ console
SUMMARY_RE = re.compile(
    r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?")
FINISHED_RE = re.compile(r"^Finished in \S+ (?:seconds?|minutes?)")
PENDING_HDR_RE = re.compile(r"^Pending:(?: \(Failures listed here are expected|\s*$)")
FAILURES_HDR_RE = re.compile(r"^Failures:\s*$")
FAILED_LIST_HDR_RE = re.compile(r"^Failed examples:\s*$")
FAILED_LIST_RE = re.compile(r"^rspec ('(?:[^']|'\\'')*'|\S+) # (.*)$")
ENTRY_RE = re.compile(r"^  (\d+)\) (.*)$")
OUTSIDE_RE = re.compile(r"^An error occurred (?:while loading (.+)\.|(.+?)\.?)\s*$")
PROFILE_RE = re.compile(r"^Top \d+ slowest example")
DOC_MARK_RE = re.compile(r"^(.*?) \((?:FAILED - (\d+)|PENDING: (.*))\)$")
PROGRESS_RE = re.compile(r"^[.F*]+")
FRAME_RE = re.compile(r"^\s*# (\S+?\.rb):(\d+)(?::in |$)")
LOCATION_RE = re.compile(r"^\s*# (\S+?\.rb):(\d+)\s*$")
TIMEOUT_CLASS_RE = re.compile(r"(?:^|::)Timeout(?:::|Error\b)|\bTimeoutError\b|^Timeout::Error\b")
CLASS_LINE_RE = re.compile(r"^\s*([A-Z][\w]*(?:::[A-Z]\w*)*):\s*$")


@dataclass
class Entry:
    """One numbered entry of the Pending or Failures section (or an error
    outside of examples)."""

    title: str
    lines: list[str] = field(default_factory=list)

    def body(self) -> tuple[list[str], list[str]]:
        """Lines before the backtrace and the backtrace."""
        lines = list(self.lines)
        while lines and not lines[-1].strip():
            lines.pop()
        k = next((i for i, ln in enumerate(lines) if FRAME_RE.match(ln) or re.match(r"^\s*# \S+:\d+", ln)), len(lines))
        return lines[:k], lines[k:]

    def failure(self) -> tuple[str | None, str | None, str | None]:
        """Message, details and exception class of a failure block."""
        body, trace = self.body()
        if body and body[0].lstrip().startswith("# ") and not body[0].lstrip().startswith("# ./"):
            body = body[1:]  # a pending entry's reason line
        k = next((i for i, ln in enumerate(body) if ln.lstrip().startswith("Failure/Error:")), None)
        msg_lines = body[k + 1:] if k is not None else body
        while msg_lines and not msg_lines[0].strip():
            msg_lines = msg_lines[1:]
        exc = None
        for ln in msg_lines:
            if (m := CLASS_LINE_RE.match(ln)):
                exc = m.group(1)
                break
        if msg_lines:
            message: str | None = "\n".join([msg_lines[0].strip(), *(ln.rstrip() for ln in msg_lines[1:])])
        elif k is not None:
            message = body[k].strip()
        else:
            message = None
        details = _dedent(self.lines)
        return message, details, exc

    def reason(self) -> str | None:
        for ln in self.lines:
            s = ln.strip()
            if s:
                return s[2:] if s.startswith("# ") else None
        return None

    def has_failure(self) -> bool:
        return any(ln.lstrip().startswith("Failure/Error:") or CLASS_LINE_RE.match(ln) for ln in self.lines)

    def location(self) -> tuple[str, int] | None:
        """``# ./spec/x_spec.rb:12`` (an example's own location, no ``:in``)."""
        for ln in self.lines:
            if (m := LOCATION_RE.match(ln)):
                return m.group(1), int(m.group(2))
        return None


def _dedent(lines: list[str]) -> str | None:
    rows = [ln.rstrip() for ln in lines]
    while rows and not rows[-1]:
        rows.pop()
    while rows and not rows[0]:
        rows.pop(0)
    if not rows:
        return None
    pad = min(len(r) - len(r.lstrip()) for r in rows if r.strip())
    return "\n".join(r[pad:] for r in rows)


@dataclass
class DocExample:
    chain: tuple[str, ...]
    text: str
    failure_no: int | None
    pending_reason: str | None
    # The chain had a group replaced the one before it at the same level:
    # that "group" may have been the tests' own output.
    alt_chain: tuple[str, ...] | None = None


class DocTree:
    """The documentation formatter's tree: groups and examples by indentation
    (two spaces a level). A line is a group when the next line is one level
    deeper; lines that fit nowhere are the tests' own output."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, str, str | None]] = []  # (indent, text, the sibling it replaced)
        self.buf: list[tuple[int, str]] = []  # at most three lines of lookahead
        self.examples: list[DocExample] = []
        self.marks = 0

    def feed(self, line: str) -> None:
        if not line.strip():
            return
        self.buf.append((len(line) - len(line.lstrip(" ")), line.strip()))
        self._drain(final=False)

    def finish(self) -> None:
        self._drain(final=True)

    def _drain(self, final: bool) -> None:
        while len(self.buf) >= 3 or (final and self.buf):
            nxt = self.buf[1] if len(self.buf) > 1 else None
            after = self.buf[2] if len(self.buf) > 2 else None
            if nxt is not None and self._stray(nxt, after):
                del self.buf[1]
                continue
            self._settle(self.buf.pop(0), nxt[0] if nxt else None)

    @staticmethod
    def _stray(line: tuple[int, str], after: tuple[int, str] | None) -> bool:
        """The tests' own output: an odd indentation, or an unindented line
        (only a top-level group can be one) not followed by a group's body."""
        ind, text = line
        if ind % 2:
            return True
        return ind == 0 and (DOC_MARK_RE.match(text) is not None or after is None or after[0] != 2)

    def _settle(self, prev: tuple[int, str], next_indent: int | None) -> None:
        ind, text = prev
        if ind % 2:
            return
        mark = DOC_MARK_RE.match(text)
        chain = [s for s in self.stack if s[0] < ind]
        parent_ok = (not chain and ind == 0) or (bool(chain) and chain[-1][0] == ind - 2)
        if mark is None and next_indent == ind + 2:
            if parent_ok:
                replaced = next((s[1] for s in self.stack if s[0] == ind), None)
                self.stack = chain + [(ind, text, replaced)]
            return
        if not chain or chain[-1][0] != ind - 2 or len(self.examples) >= MAX_SPEC_NODES:
            return
        self.stack = chain
        texts = tuple(s[1] for s in chain)
        alt = None
        for k in range(len(chain) - 1, -1, -1):
            if chain[k][2] is not None:
                alt = texts[:k] + (str(chain[k][2]),) + texts[k + 1:]
                break
        if mark:
            self.marks += 1
            no = int(mark.group(2)) if mark.group(2) else None
            self.examples.append(DocExample(texts, mark.group(1), no, mark.group(3), alt))
        else:
            self.examples.append(DocExample(texts, text, None, None, alt))


class Console:
    """A streaming reader of RSpec's console output."""

    def __init__(self) -> None:
        self.state = "body"
        self.tree = DocTree()
        self.progress: list[str] = []
        self.pending: list[Entry] = []
        self.failures: list[Entry] = []
        self.outside: list[tuple[str | None, Entry]] = []  # (loaded file or None, entry)
        self.failed_list: list[tuple[str, str]] = []  # (location, description)
        self.summary: tuple[int, int, int, int] | None = None
        self.current: Entry | None = None
        self.blank_run = 0
        self.stderr = False

    def feed(self, line: str) -> None:
        s = line.rstrip()
        if (m := OUTSIDE_RE.match(s)) and not s.startswith(" "):
            self.current = Entry(m.group(1) or m.group(2) or s)
            self.outside.append((m.group(1), self.current))
            self.state = "outside"
            self.blank_run = 0
            return
        if PENDING_HDR_RE.match(s):
            self.state, self.current = "pending", None
            return
        if FAILURES_HDR_RE.match(s):
            self.state, self.current = "failures", None
            return
        if FINISHED_RE.match(s):
            self.state, self.current = "finished", None
            return
        if (m := SUMMARY_RE.match(s)):
            self.summary = tuple(int(g or 0) for g in m.groups())  # type: ignore[assignment]
            self.state = "finished"
            return
        if FAILED_LIST_HDR_RE.match(s):
            self.state = "failed_list"
            return
        if PROFILE_RE.match(s):
            self.state = "profile"
            return
        if self.state == "body":
            if not self.stderr:
                if (m := PROGRESS_RE.match(s)) and len(self.progress) < MAX_SPEC_NODES:
                    self.progress.extend(m.group(0))
                self.tree.feed(s)
        elif self.state in ("pending", "failures"):
            if (m := ENTRY_RE.match(s)):
                self.current = Entry(m.group(2))
                (self.pending if self.state == "pending" else self.failures).append(self.current)
            elif self.current is not None and len(self.current.lines) < 400:
                self.current.lines.append(s)
        elif self.state == "outside" and self.current is not None:
            self.blank_run = self.blank_run + 1 if not s.strip() else 0
            if self.blank_run >= 2:
                self.state, self.current = "finished", None
            elif len(self.current.lines) < 400:
                self.current.lines.append(s)
        elif self.state == "failed_list":
            if (m := FAILED_LIST_RE.match(s)):
                loc = m.group(1)
                if loc.startswith("'") and loc.endswith("'"):
                    loc = loc[1:-1].replace("'\\''", "'")
                self.failed_list.append((loc, m.group(2)))

    def finish(self) -> None:
        self.tree.finish()


# ============================================================================ JSON formatter
JSON_MARK = '{"version":'
MAX_JSON_BYTES = 512 * 1024 * 1024
CHUNK = 1 << 20
FIXED_CLASS = "RSpec::Core::Pending::PendingExampleFixedError"
EXPECTATION_CLASSES = ("RSpec::Expectations::ExpectationNotMetError",
                       "RSpec::Expectations::MultipleExpectationsNotMetError")


def _chunks(run: RunOutput, stream: str) -> Iterator[str]:
    text: str | None = getattr(run, f"{stream}_text")
    path: Path | None = getattr(run, f"{stream}_path")
    if text is not None:
        for i in range(0, len(text), CHUNK):
            yield text[i:i + CHUNK]
    elif path is not None and path.is_file():
        with open(path, encoding="utf-8", errors="replace") as fh:
            while chunk := fh.read(CHUNK):
                yield chunk


def json_in_stream(chunks: Iterator[str]) -> tuple[dict | None, str | None]:
    """The first RSpec JSON document in a stream (it may follow the tests'
    own output on the same line). Returns (document, problem)."""
    buf = ""
    found = False
    size = 0
    for chunk in chunks:
        if not found:
            buf = buf[-len(JSON_MARK):] + chunk
            k = buf.find(JSON_MARK)
            if k < 0:
                continue
            found = True
            buf = buf[k:]
            size = len(buf)
            continue
        buf += chunk
        size += len(chunk)
        if size > MAX_JSON_BYTES:
            return None, "the JSON document is too large"
    if not found:
        return None, "no JSON document"
    try:
        data, _ = json.JSONDecoder().raw_decode(buf)
    except ValueError as exc:
        return None, f"the JSON document is truncated or invalid ({exc})"
    except RecursionError:
        return None, "the JSON document is nested too deeply"
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        return None, "the JSON document is not an RSpec report"
    return data, None


# ============================================================================ parsing
@dataclass
class Found:
    """One example as the outputs describe it, before becoming a TestResult."""

    id: str
    status: Status
    file: str | None = None
    line: int | None = None
    message: str | None = None
    details: str | None = None
    duration_s: float | None = None
    timed_out: bool = False
    native_status: str | None = None


CONST_TEXT_RE = re.compile(r"^(?:::)?[A-Z]\w*(?:::[A-Z]\w*)*$")
SPEC_PATH_RE = re.compile(r"^(.+?)(?::(\d+(?::\d+)*)|\[([\d:,]+)\])?$")


class _Parser:
    def __init__(self, run: RunOutput) -> None:
        self.run = run
        self.report = TestReport(framework=FRAMEWORK)
        self.sources = SourceIndex(run.sources_root)
        self.specs = SpecIndex(self.sources)
        self.opts = parse_options(run.command, run.sources_root)
        self.console = Console()
        self._by_name: dict[str, list[SpecNode]] | None = None
        self._partial: list[tuple[re.Pattern[str], SpecNode]] = []
        self._decls: dict[str, list[int]] = {}
        self.tree_names: list[str] = []  # documentation lines, in run order

    # ------------------------------------------------------------------ sources
    def by_name(self) -> dict[str, list[SpecNode]]:
        """Examples of the spec files this command runs, by full description
        (those with unknown parts go to ``self._partial``)."""
        if self._by_name is None:
            self._by_name = {}
            for node in self.specs.examples(self.run_files()):
                if node.known:
                    self._by_name.setdefault(node.full_text, []).append(node)
                elif any(node.full):
                    self._partial.append((node.pattern(), node))
            # Most specific patterns first; a bare generated description last.
            self._partial.sort(key=lambda pn: -sum(len(p) for p in pn[1].full if p))
        return self._by_name

    def run_files(self) -> list[str]:
        """The spec files this command runs (RSpec's default: spec/**/*_spec.rb)."""
        all_files = self.specs.spec_files()
        if not self.opts.paths:
            default = [f for f in all_files if f.startswith("spec/")]
            return default or all_files
        out: list[str] = []
        for p in self.opts.paths:
            m = SPEC_PATH_RE.match(p)
            rel = self.sources.relative(m.group(1) if m else p) or ""
            rel = rel.rstrip("/")
            for f in all_files:
                if (f == rel or (f.startswith(rel + "/") or not rel)) and f not in out:
                    out.append(f)
        return out

    def node_for(self, name: str) -> SpecNode | None:
        nodes = self.by_name().get(name)
        if nodes:
            return nodes[0]
        return next((node for pattern, node in self._partial if pattern.match(name)), None)

    def node_by_id(self, rel: str, scoped: str) -> SpecNode | None:
        for node in self.specs.examples([rel]):
            if node.scoped_id == scoped:
                return node
        return None

    # ------------------------------------------------------------------ main
    def parse(self) -> TestReport:
        for line in self.run.lines("stdout"):
            self.console.feed(line)
        self.console.stderr = True
        self.console.state = "body"
        for line in self.run.lines("stderr"):
            self.console.feed(line)
        self.console.finish()

        found: list[Found] = []
        data = self.json_report()
        found.extend(self.outside_errors(data))
        if data is not None:
            found.extend(self.from_json(data))
        else:
            found.extend(self.from_console())
            if self.console.summary is not None or found:
                self.report.sources.append("console")
        if self.run.killed_by_timeout and data is None:
            found.extend(self.hanging(found))
        self.check_counts(found, data)
        seen_ids: set[tuple[str, str | None, int | None]] = set()
        for f in found:
            key = (f.id, f.file, f.line)
            if key in seen_ids:
                continue
            seen_ids.add(key)
            self.report.tests.append(TestResult(
                id=f.id, status=f.status, file=f.file, line=f.line, message=f.message, details=f.details,
                duration_s=f.duration_s, timed_out=f.timed_out, native_status=f.native_status))
        self.report.timed_out = self.run.killed_by_timeout or any(t.timed_out for t in self.report.tests)
        if not self.report.tests and self.console.summary is None:
            self.report.warnings.append("no RSpec results found in the output")
            self.report.output_tail = self.run.tail()
        return self.report

    # ------------------------------------------------------------------ JSON
    def json_report(self) -> dict | None:
        """The JSON formatter's document: the ``--out`` file, else stdout."""
        for name, out in self.opts.formatters:
            if name != "json":
                continue
            if out is None:
                data, problem = json_in_stream(_chunks(self.run, "stdout"))
                label = "json:stdout"
            else:
                path = self.run.resolve(out)
                if path is None or not path.is_file():
                    self.report.warnings.append(f"JSON report {out} does not exist; read the console")
                    continue
                data, problem = json_in_stream(_chunks(RunOutput(stdout_path=path), "stdout"))
                label = f"json:{out}"
            if data is None:
                self.report.warnings.append(f"{label}: {problem}; read the console")
                continue
            self.report.sources.append(label)
            return data
        return None

    def from_json(self, data: dict) -> list[Found]:
        out: list[Found] = []
        failures = {self._fixed_title(e.title)[0]: e for e in self.console.failures}
        pendings = {e.title: e for e in self.console.pending}
        for ex in data.get("examples") or []:
            if not isinstance(ex, dict) or not isinstance(ex.get("full_description"), str):
                continue
            name = ex["full_description"]
            status = ex.get("status")
            file = self.sources.relative(ex["file_path"]) if isinstance(ex.get("file_path"), str) else None
            line = ex.get("line_number") if isinstance(ex.get("line_number"), int) else None
            if file is None or line is None:
                node = self.node_for(name)
                if node is not None:
                    file, line = file or node.file, line or node.line
            run_time = ex.get("run_time")
            f = Found(name, Status.PASSED, file, line,
                      duration_s=float(run_time) if isinstance(run_time, (int, float)) else None)
            exc = ex.get("exception") if isinstance(ex.get("exception"), dict) else None
            pending_message = ex.get("pending_message") if isinstance(ex.get("pending_message"), str) else None
            if status == "failed":
                f.status = Status.FAILED
                cls = str(exc.get("class") or "") if exc else ""
                if name in failures:
                    f.message, f.details, console_cls = failures[name].failure()
                    cls = cls or (console_cls or "")
                elif exc is not None:
                    f.message, f.details = self._json_failure(exc, pending_message)
                if cls == FIXED_CLASS:
                    f.native_status = "failed (FIXED)"
                f.timed_out = bool(TIMEOUT_CLASS_RE.search(cls))
            elif status == "pending":
                entry = pendings.get(name)
                xfail = exc is not None or (entry.has_failure() if entry is not None else self._pending_body(name))
                f.status = Status.XFAILED if xfail else Status.SKIPPED
                f.native_status = "pending"
                f.message = pending_message or (entry.reason() if entry else None)
                if entry is not None:
                    f.details = _dedent(entry.lines)
            elif status != "passed":
                f.status = Status.SKIPPED
                f.native_status = str(status)
            out.append(f)
        return out

    @staticmethod
    def _json_failure(exc: dict, pending_message: str | None) -> tuple[str | None, str | None]:
        cls = str(exc.get("class") or "")
        msg = str(exc.get("message") or "").strip("\n")
        trace = exc.get("backtrace") if isinstance(exc.get("backtrace"), list) else []
        if cls == FIXED_CLASS:
            # What the console says for it, then the exception's own words.
            lead = f"Expected pending '{pending_message or 'No reason given'}' to fail. No error was raised."
            message = f"{lead}\n{msg}" if msg else lead
        elif cls in EXPECTATION_CLASSES or not cls:
            message = msg.strip()
        else:
            message = f"{cls}:\n  " + msg.strip().replace("\n", "\n  ")
        details = "\n".join([message, *("# " + str(t) for t in trace)])
        return message or None, details

    def _pending_body(self, name: str) -> bool:
        """Without the console's Pending section: does the example run (a
        ``pending`` call or metadata, expected to fail) rather than skip?"""
        node = self.node_for(name)
        return node is not None and node.pending and not node.skipped

    # ------------------------------------------------------------------ errors outside examples
    def outside_errors(self, data: dict | None) -> list[Found]:
        entries = list(self.console.outside)
        if data is not None and isinstance(data.get("messages"), list):
            sub = Console()
            sub.state = "finished"
            for msg in data["messages"]:
                if isinstance(msg, str):
                    for ln in msg.splitlines():
                        sub.feed(ln)
            known = {e.title for _, e in entries}
            entries += [(f, e) for f, e in sub.outside if e.title not in known]
        out: list[Found] = []
        for loaded, entry in entries:
            message, details, _cls = entry.failure()
            if loaded is not None:
                rel = self.sources.relative(loaded)
                line = None
                for ln in entry.lines:
                    for m in re.finditer(r"(\S+?\.rb):(\d+)", ln):
                        path = m.group(1).lstrip("#").strip()
                        if rel is not None and self.sources.relative(path) == rel:
                            line = int(m.group(2))
                            break
                    if line is not None:
                        break
                self.report.build_error = True
                out.append(Found(loaded, Status.ERRORED, rel, line, message, details,
                                 native_status="error occurred while loading"))
            else:
                out.append(Found(f"An error occurred {entry.title}".rstrip("."), Status.ERRORED, None, None,
                                 message, details, native_status="error outside of examples"))
        return out

    # ------------------------------------------------------------------ console
    @staticmethod
    def _fixed_title(title: str) -> tuple[str, bool]:
        if title.endswith(" FIXED"):
            return title[: -len(" FIXED")], True
        return title, False

    def from_console(self) -> list[Found]:
        out: list[Found] = []
        c = self.console
        named: set[str] = set()
        failure_names: dict[int, str] = {}
        for no, entry in enumerate(c.failures, start=1):
            name, fixed = self._fixed_title(entry.title)
            message, details, cls = entry.failure()
            if fixed and message is None:
                message = next((ln.strip() for ln in entry.lines if ln.strip()), None)
            f = Found(name, Status.FAILED, message=message, details=details,
                      timed_out=bool(cls and TIMEOUT_CLASS_RE.search(cls)),
                      native_status="failed (FIXED)" if fixed else None)
            self.place(f, entry)
            out.append(f)
            named.add(name)
            failure_names[no] = name
        for entry in c.pending:
            xfail = entry.has_failure()
            f = Found(entry.title, Status.XFAILED if xfail else Status.SKIPPED, message=entry.reason(),
                      details=_dedent(entry.lines), native_status="pending")
            self.place(f, entry)
            out.append(f)
            named.add(entry.title)
        if self.doc_mode():
            out.extend(self.from_tree(named, failure_names))
        elif not self.run.killed_by_timeout:
            # (A killed run's summary counts the example that was hanging:
            # the dots, mapped onto the sources, say more; see hanging().)
            out.extend(self.passed_from_sources(named, out))
        return out

    def doc_mode(self) -> bool:
        if "documentation" in self.opts.stdout_formatters:
            return True
        return self.console.tree.marks > 0 and not self.opts.formatters

    def place(self, f: Found, entry: Entry | None) -> None:
        """File and line of an example: its definition in the sources, else the
        ``Failed examples`` rerun line, else the location RSpec printed."""
        node = self.node_for(f.id)
        if node is not None:
            f.file, f.line = node.file, node.line
            return
        for loc, desc in self.console.failed_list:
            if desc != f.id:
                continue
            m = SPEC_PATH_RE.match(loc)
            if m:
                f.file = self.sources.relative(m.group(1))
                if m.group(2):
                    f.line = int(m.group(2).split(":")[0])
                elif m.group(3) and f.file:
                    n = self.node_by_id(f.file, m.group(3))
                    f.line = n.line if n else None
                return
        if entry is not None:
            loc = entry.location()
            if loc is not None:
                f.file, f.line = self.sources.relative(loc[0]), loc[1]
                return
            _, trace = entry.body()
            for ln in trace:
                m = FRAME_RE.match(ln)
                if m and m.group(1).endswith(SPEC_SUFFIX):
                    f.file, f.line = self.sources.relative(m.group(1)), int(m.group(2))
                    return

    def from_tree(self, named: set[str], failure_names: dict[int, str]) -> list[Found]:
        """Passing examples (and, when the run ended before its summary, the
        failed and pending ones) from the documentation formatter's tree."""
        known = set(named) | set(self.by_name()) | {d for _, d in self.console.failed_list}
        prefixes: set[str] = set()
        for name in known:
            prefixes.add(name)
            for i, ch in enumerate(name):
                if ch == " ":
                    prefixes.add(name[:i])
        out: list[Found] = []
        for ex in self.console.tree.examples:
            if ex.failure_no is not None and ex.failure_no in failure_names:
                continue
            name = self._doc_name(ex.chain, ex.text, prefixes)
            if ex.alt_chain is not None and name not in known:
                alt = self._doc_name(ex.alt_chain, ex.text, prefixes)
                name = alt if alt in known else name
            self.tree_names.append(name)
            if name in named:
                continue
            if ex.failure_no is not None:
                f = Found(name, Status.FAILED)
            elif ex.pending_reason is not None:
                # No Pending section (the run ended early): the source tells
                # a `pending` body (expected to fail) from a skip.
                status = Status.XFAILED if self._pending_body(name) else Status.SKIPPED
                f = Found(name, status, message=ex.pending_reason, native_status="pending")
            else:
                f = Found(name, Status.PASSED)
            self.place(f, None)
            out.append(f)
        summary = self.console.summary
        passed = [f for f in out if f.status == Status.PASSED]
        if summary is not None and self.by_name() and len(passed) > summary[0] - summary[1] - summary[2]:
            # More passing lines than RSpec counted: some were the tests' own
            # output. Keep the ones the spec files define.
            out = [f for f in out if f.status != Status.PASSED or self.node_for(f.id) is not None]
        return out

    @staticmethod
    def _doc_name(chain: tuple[str, ...], text: str, prefixes: set[str]) -> str:
        full = chain[0]
        parent = chain[0]
        for part in chain[1:]:
            glued, spaced = full + part, full + " " + part
            if part[:1] in ("#", ".") or part.startswith("::"):
                if glued in prefixes and spaced not in prefixes:
                    full = glued
                elif spaced in prefixes and glued not in prefixes:
                    full = spaced
                else:
                    full = glued if CONST_TEXT_RE.match(parent) else spaced
            else:
                full = spaced
            parent = part
        return f"{full} {text}"

    def passed_from_sources(self, named: set[str], found: list[Found]) -> list[Found]:
        """Progress output names no passing example: take them from the spec
        files, filtered like RSpec filters them, checked against the summary."""
        summary = self.console.summary
        if summary is None:
            return []
        total, failures, pending, _errors = summary
        want = total - failures - pending
        if want <= 0:
            return []
        files = self.run_files()
        cands = [n for n in self.specs.examples(files) if self._selected(n)]
        passed = [n for n in cands if n.known and n.full_text not in named and not n.skipped
                  and not (n.pending and not n.skipped)]
        if len(passed) != want:
            self.report.warnings.append(
                f"the summary counts {want} passing example(s) but the spec files define {len(passed)} "
                "other example(s) this command selects")
            if len(passed) > want:
                return []
        self.report.sources.append("spec-sources")
        return [Found(n.full_text, Status.PASSED, n.file, n.line) for n in passed]

    def _selected(self, node: SpecNode) -> bool:
        """Whether the command's location, id and ``-e`` filters select ``node``."""
        filters: list[tuple[str, str | None, str | None]] = []
        for p in self.opts.paths:
            m = SPEC_PATH_RE.match(p)
            if m and (m.group(2) or m.group(3)):
                filters.append((self.sources.relative(m.group(1)) or "", m.group(2), m.group(3)))
        if filters:
            mine = [f for f in filters if f[0] == node.spec_file]
            if mine and not any(self._filter_hits(node, lines, ids) for _, lines, ids in mine):
                return False
        if self.opts.examples and not any(e in node.full_text for e in self.opts.examples):
            return False
        return True

    def _filter_hits(self, node: SpecNode, lines: str | None, ids: str | None) -> bool:
        if ids:
            return any(node.scoped_id == i or node.scoped_id.startswith(i + ":") for i in ids.split(","))
        rel = node.spec_file
        if rel not in self._decls:
            self._decls[rel] = sorted({n.line for n in self.specs.groups(rel) if n.file == rel}
                                      | {n.line for n in self.specs.examples([rel]) if n.file == rel})
        decls = self._decls[rel]
        for text in (lines or "").split(":"):
            want = int(text)
            prev = max((d for d in decls if d <= want), default=None)
            if prev is not None and node.covers(prev):
                return True
        return False

    # ------------------------------------------------------------------ checks
    def check_counts(self, found: list[Found], data: dict | None) -> None:
        summary = self.console.summary
        if data is not None and isinstance(data.get("summary"), dict):
            s = data["summary"]
            try:
                summary = (int(s.get("example_count", 0)), int(s.get("failure_count", 0)),
                           int(s.get("pending_count", 0)), int(s.get("errors_outside_of_examples_count", 0)))
            except (TypeError, ValueError):
                pass
        if summary is None:
            if self.run.exit_code not in (None, 0) or found:
                self.report.warnings.append("no RSpec summary line ('N examples, N failures'): the run did not finish")
            return
        total, failures, pending, _ = summary
        examples = [f for f in found if f.status != Status.ERRORED]
        got_fail = sum(1 for f in examples if f.status == Status.FAILED)
        got_pend = sum(1 for f in examples if f.status in (Status.SKIPPED, Status.XFAILED))
        if (len(examples), got_fail, got_pend) != (total, failures, pending):
            self.report.warnings.append(
                f"RSpec counted {total} examples, {failures} failures, {pending} pending; "
                f"parsed {len(examples)}, {got_fail}, {got_pend}")

    # ------------------------------------------------------------------ killed runs
    def hanging(self, found: list[Found]) -> list[Found]:
        """A run killed by ``timeout``: the example that was running is the
        one after the last that finished, in definition order (RSpec may
        still print a summary, counting it). Progress dots are mapped onto the
        examples in that order too."""
        if self.opts.random:
            self.report.warnings.append("the run was killed; random order hides which example was running")
            return []
        order = [n for n in self.specs.examples(self.run_files()) if self._selected(n)]
        names = [n.full_text if n.known else None for n in order]
        extra: list[Found] = []
        if self.doc_mode():
            last = self.tree_names[-1] if self.tree_names else None
            done = names.index(last) + 1 if last in names else len(self.tree_names)
        else:
            done = len(self.console.progress)
            have = {f.id for f in found}
            for node, ch in zip(order, self.console.progress):
                status = {".": Status.PASSED, "F": Status.FAILED, "*": Status.SKIPPED}[ch]
                if node.known and node.full_text not in have:
                    extra.append(Found(node.full_text, status, node.file, node.line))
        if done < len(order) and order[done].known:
            node = order[done]
            extra = [f for f in extra if f.id != node.full_text]
            found[:] = [f for f in found if f.id != node.full_text]
            extra.append(Found(node.full_text, Status.FAILED, node.file, node.line, timed_out=True,
                               message="the run was killed by timeout while this example was running"))
        else:
            self.report.warnings.append("the run was killed; could not tell which example was running")
        return extra


def parse(run: RunOutput) -> TestReport:
    """Parse an RSpec run (formatters listed in the module docstring)."""
    return _Parser(run).parse()
