"""Ruby spec sources, for the RSpec parser: where an example is defined and
which examples a file declares, with their full descriptions.

Descriptions are Ruby expressions, mostly string literals, sometimes
interpolating loop variables (`[[1, 0.5]].each do |n, r| it "is #{r}"`): a
tokenizer and a tiny evaluator handle exactly that (literals, constants, loop
variables and a few String/Array methods; anything else is unknown), and
examples without a description are named after their last expectation, as
RSpec does. Shared examples, metadata (`:skip`, `:pending`) and nesting are
followed per file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..locate import SourceIndex

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
