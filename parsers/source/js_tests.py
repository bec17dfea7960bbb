"""describe/it/test trees of JavaScript/TypeScript test files: the one
scanner and title evaluator behind Jest, Vitest, Mocha and node:test.

All four runners define tests by calling ``describe``/``it``/``test`` (and
their aliases) with a title and a callback, and name a test by its enclosing
titles plus its own. The scanner walks the tokens of parsers/source/js.py and
evaluates the little JavaScript that titles and table-driven tests use:
strings, template literals and ``+`` concatenation; literal arrays and
objects, ``const`` bindings, ``for...of``/``for...in``/counting loops,
``forEach``/``map``; ``.each``/``.for`` tables (arrays, constants holding
them, tagged-template tables) with the runner's printf/``$name`` title
formatting and the callback's parameters bound per row. A title it cannot
know becomes a pattern. Per node it records hooks, ``.skip``/``.only``/
``.todo``/``.failing``/``.fails``, ``skipIf``/``runIf`` with a knowable
condition, ``{ skip, todo, only }`` options and ``this.skip()``/``t.skip()``.

Two views read the trees: ``SpecIndex`` (Mocha, node:test: nodes with their
parents) and ``JSTestIndex`` (Jest, Vitest: each test as its describe path and
title, with what its modifiers imply).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..locate import SourceIndex
from .js import (
    JS_SUFFIXES,
    UNDEFINED,
    Tok,
    format_title,
    js_json,
    js_string,
    line_of,
    line_starts,
    match_brackets,
    template_pattern,
    tokenize,
)

SUITE_FUNCS = {"describe", "context", "suite", "xdescribe", "xcontext", "fdescribe"}
TEST_FUNCS = {"it", "specify", "test", "xit", "xspecify", "xtest", "fit", "ftest"}
SKIP_FUNCS = {"xit", "xspecify", "xtest", "xdescribe", "xcontext"}
ONLY_FUNCS = {"fit", "ftest", "fdescribe"}
HOOK_FUNCS = {
    "before": "before all", "beforeAll": "before all", "suiteSetup": "before all",
    "after": "after all", "afterAll": "after all", "suiteTeardown": "after all",
    "beforeEach": "before each", "setup": "before each",
    "afterEach": "after each", "teardown": "after each",
}
# Jest and Vitest know only these hooks; ``setup()`` there is the project's own function.
JEST_HOOKS = {"beforeAll", "afterAll", "beforeEach", "afterEach"}
# Member calls that take their own argument list before the title call:
# test.each(table)(title, fn), test.skipIf(cond)(title, fn), test.for(table)(...)
PRE_CALL_MODIFIERS = {"each", "for", "skipIf", "runIf"}
MODIFIERS = PRE_CALL_MODIFIERS | {
    "skip", "only", "todo", "failing", "fails", "concurrent", "sequential", "shuffle",
}
TEST_FILE_RE = re.compile(r"(?:^|/)(?:__tests__/.*|[^/]*[.-](?:test|spec)s?)\.[cm]?[jt]sx?$")
MAX_LOOP_VALUES = 1_000
MAX_EACH_ROWS = 10_000
MAX_NODES = 50_000
MAX_SCAN_DEPTH = 60
MAX_STEPS = 3_000_000


class Unknown(Exception):
    """A value the scanner cannot know statically."""


@dataclass(eq=False, repr=False)
class SpecNode:
    """A describe/it/test/hook call found in a spec file (one per instance
    for calls inside loops over literal tables). Compared by identity: a
    node links to its parent and children."""

    kind: str  # "suite", "test" or "hook"
    func: str
    file: str
    line: int
    title: str | None = None  # None when not knowable; see ``pattern``
    pattern: re.Pattern[str] | None = None
    skip: bool = False  # .skip / xit / { skip } / skipIf(true) on this call
    todo: bool = False
    only: bool = False
    fails: bool = False  # Jest .failing / Vitest .fails: expected to fail
    pending: bool = False  # no callback (Mocha: pending)
    reason: str | None = None  # { skip: 'why' } / { todo: 'why' }
    conditional: bool = False  # { skip: <expression> } / skipIf(<expression>): not knowable
    may_skip: bool = False  # its body calls this.skip() / t.skip(): skipped at run time, maybe
    # Inside a loop or .each whose values are not knowable: it may run any number of times.
    uncertain: bool = False
    parent: SpecNode | None = None
    children: list[SpecNode] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"SpecNode({self.kind} {self.title or self.pattern!r} at {self.file}:{self.line})"

    def matches(self, title: str) -> bool:
        """Whether ``title`` is this call's title (or fits its pattern)."""
        if self.title is not None:
            return self.title == title
        return self.pattern is not None and self.pattern.fullmatch(title) is not None

    @property
    def suites(self) -> list[SpecNode]:
        """Enclosing suites/tests, outermost first."""
        out: list[SpecNode] = []
        p = self.parent
        while p is not None:
            out.append(p)
            p = p.parent
        return out[::-1]

    def path_matches(self, path: tuple[str, ...]) -> bool:
        """Whether the enclosing titles are ``path``."""
        sup = self.suites
        return len(sup) == len(path) and all(s.matches(t) for s, t in zip(sup, path))

    @property
    def skipped(self) -> bool:
        """Skipped by its own modifiers or an enclosing suite's."""
        return self.skip or self.pending or any(s.skip for s in self.suites)

    @property
    def todo_any(self) -> bool:
        """Todo by its own modifiers or an enclosing suite's."""
        return self.todo or any(s.todo for s in self.suites)


def _segments_pattern(segments: list[str | None]) -> re.Pattern[str]:
    return re.compile("".join(".*?" if s is None else re.escape(s) for s in segments), re.S)


class _Scanner:
    """Walks the tokens of one file, evaluating the little JavaScript that
    titles and table-driven tests use (see the module docstring). ``flavor``
    is the runner: "mocha", "node", "jest" or "vitest"."""

    def __init__(self, file: str, text: str, flavor: str) -> None:
        self.file = file
        self.flavor = flavor
        self.toks = tokenize(text)
        pairs = match_brackets(self.toks)
        # Both ways: opening bracket -> closing one, and closing -> opening.
        self.pairs = {**pairs, **{close: open_ for open_, close in pairs.items()}}
        self.line_starts = line_starts(text)
        self.roots: list[SpecNode] = []
        self.count = 0
        self.steps = 0  # tokens walked, loops included: bounds the work on any input
        self.truncated = False  # a bound was reached: some calls were not walked
        self.uncertain = 0  # > 0 while walking a body whose repetitions are not knowable
        self._calls_cache: dict[tuple[int, int], bool] = {}
        self.hooks = HOOK_FUNCS if flavor in ("mocha", "node") else {k: HOOK_FUNCS[k] for k in JEST_HOOKS}
        # const myTest = test.extend({...}) makes myTest a test function too (Vitest fixtures).
        self.test_funcs = set(TEST_FUNCS)
        t = self.toks
        for i in range(len(t) - 4):
            if t[i].kind == "ident" and t[i + 1].value == "=" and t[i + 2].value in ("test", "it") \
                    and t[i + 3].value == "." and t[i + 4].value == "extend":
                self.test_funcs.add(t[i].value)

    # ------------------------------------------------------------------ tokens

    def _is(self, i: int, value: str) -> bool:
        return 0 <= i < len(self.toks) and self.toks[i].kind in ("punct", "ident") and self.toks[i].value == value

    def _line(self, i: int) -> int:
        return line_of(self.line_starts, self.toks[i].pos)

    def _close(self, i: int) -> int:
        return self.pairs.get(i, len(self.toks) - 1)

    def _split_args(self, open_i: int) -> list[tuple[int, int]]:
        """Top-level comma-separated ranges inside the bracket at ``open_i``."""
        close = self._close(open_i)
        out: list[tuple[int, int]] = []
        start = j = open_i + 1
        while j < close:
            t = self.toks[j]
            if t.kind == "punct" and t.value in "([{" and j in self.pairs:
                j = self.pairs[j] + 1
                continue
            if t.kind == "punct" and t.value == ",":
                out.append((start, j))
                start = j + 1
            j += 1
        if start < close:
            out.append((start, close))
        return out

    def _stmt_end(self, i: int, end: int) -> int:
        """End (exclusive) of the statement starting at ``i``."""
        j = i
        while j < end:
            t = self.toks[j]
            if t.kind == "punct" and t.value in "([{" and j in self.pairs:
                j = self.pairs[j] + 1
                if t.value == "{" and self.toks[i].kind == "punct" and self.toks[i].value == "{":
                    return j
                continue
            if t.kind == "punct" and t.value == ";":
                return j + 1
            j += 1
        return end

    # ------------------------------------------------------------------ evaluation

    def eval(self, i: int, end: int, env: dict[str, object]) -> object:
        """The value of the expression ``toks[i:end]``; raises Unknown."""
        if i >= end:
            raise Unknown
        v, j = self._additive(i, end, env)
        if j != end:
            raise Unknown
        return v

    def _additive(self, i: int, end: int, env: dict[str, object]) -> tuple[object, int]:
        v, j = self._postfix(i, end, env)
        while j < end and self.toks[j].kind == "punct" and self.toks[j].value in ("+", "-", "*"):
            op = self.toks[j].value
            w, j = self._postfix(j + 1, end, env)
            if op == "+" and (isinstance(v, str) or isinstance(w, str)):
                v = js_string(v) + js_string(w)
            elif all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (v, w)):
                v = v + w if op == "+" else v - w if op == "-" else v * w  # type: ignore[operator]
            else:
                raise Unknown
        return v, j

    def _postfix(self, i: int, end: int, env: dict[str, object]) -> tuple[object, int]:
        v, j = self._primary(i, end, env)
        while j < end:
            t = self.toks[j]
            if t.kind == "punct" and t.value in (".", "?.") and j + 1 < end and self.toks[j + 1].kind == "ident":
                name = self.toks[j + 1].value
                j += 2
                if self._is(j, "("):
                    args = [self.eval(a, b, env) for a, b in self._split_args(j)]
                    v = self._method(v, name, args)
                    j = self._close(j) + 1
                elif name == "length" and isinstance(v, (str, list)):
                    v = len(v)
                elif isinstance(v, dict) and name in v:
                    v = v[name]
                else:
                    raise Unknown
            elif t.kind == "punct" and t.value == "[" and j in self.pairs:
                key = self.eval(j + 1, self.pairs[j], env)
                j = self.pairs[j] + 1
                if isinstance(v, list) and isinstance(key, int) and 0 <= key < len(v):
                    v = v[key]
                elif isinstance(v, dict) and isinstance(key, (str, int)) and str(key) in v:
                    v = v[str(key)]
                else:
                    raise Unknown
            else:
                break
        return v, j

    @staticmethod
    def _method(v: object, name: str, args: list[object]) -> object:
        if name == "entries" and isinstance(v, list) and not args:
            return [[k, x] for k, x in enumerate(v)]
        if name in ("toUpperCase", "toLowerCase", "trim") and isinstance(v, str):
            return v.upper() if name == "toUpperCase" else v.lower() if name == "toLowerCase" else v.strip()
        if name == "join" and isinstance(v, list):
            sep = args[0] if args and isinstance(args[0], str) else ","
            return sep.join("" if x is None or x is UNDEFINED else js_string(x) for x in v)
        if name == "toString" and not args:
            return js_string(v)
        raise Unknown

    def _primary(self, i: int, end: int, env: dict[str, object]) -> tuple[object, int]:
        t = self.toks[i]
        if t.kind == "str":
            return t.value, i + 1
        if t.kind == "num":
            try:
                s = t.value.replace("_", "").rstrip("n")
                f = float(s) if s[:2].lower() not in ("0x", "0o", "0b") else float(int(s, 0))
            except ValueError:
                raise Unknown from None
            return (int(f) if f.is_integer() and "." not in s and "e" not in s.lower() else f), i + 1
        if t.kind == "tmpl":
            segs = self.template_segments(t, env)
            if any(s is None for s in segs):
                raise Unknown
            return "".join(segs), i + 1  # type: ignore[arg-type]
        if t.kind == "ident":
            consts = {"true": True, "false": False, "null": None, "undefined": UNDEFINED}
            if t.value in consts:
                return consts[t.value], i + 1
            if t.value == "Object" and self._is(i + 1, ".") and i + 2 < end and self._is(i + 3, "("):
                fn = self.toks[i + 2].value
                args = [self.eval(a, b, env) for a, b in self._split_args(i + 3)]
                if len(args) == 1 and isinstance(args[0], dict) and fn in ("entries", "keys", "values"):
                    d = args[0]
                    v: object = [[k, x] for k, x in d.items()] if fn == "entries" else \
                        list(d) if fn == "keys" else list(d.values())
                    return v, self._close(i + 3) + 1
                raise Unknown
            if t.value in ("String", "JSON") and (self._is(i + 1, "(") or self._is(i + 1, ".")):
                j = i + 1 if self._is(i + 1, "(") else i + 3
                if t.value == "JSON" and not (self.toks[i + 2].value == "stringify" and self._is(j, "(")):
                    raise Unknown
                args = [self.eval(a, b, env) for a, b in self._split_args(j)]
                if len(args) != 1:
                    raise Unknown
                return (js_string(args[0]) if t.value == "String" else js_json(args[0])), self._close(j) + 1
            if t.value in env and env[t.value] is not _UNKNOWN:
                return env[t.value], i + 1
            raise Unknown
        if t.kind == "punct":
            if t.value == "[" and i in self.pairs:
                items: list[object] = []
                for a, b in self._split_args(i):
                    if self._is(a, "..."):
                        spread = self.eval(a + 1, b, env)
                        if not isinstance(spread, list):
                            raise Unknown
                        items.extend(spread)
                    else:
                        items.append(self.eval(a, b, env))
                return items, self.pairs[i] + 1
            if t.value == "{" and i in self.pairs:
                obj: dict[str, object] = {}
                for a, b in self._split_args(i):
                    k = self.toks[a]
                    if b == a + 1 and k.kind == "ident":
                        obj[k.value] = self.eval(a, b, env)
                    elif k.kind in ("ident", "str", "num") and self._is(a + 1, ":"):
                        obj[k.value] = self.eval(a + 2, b, env)
                    else:
                        raise Unknown
                return obj, self.pairs[i] + 1
            if t.value == "(" and i in self.pairs:
                return self.eval(i + 1, self.pairs[i], env), self.pairs[i] + 1
            if t.value in ("-", "+") and i + 1 < end:
                v, j = self._postfix(i + 1, end, env)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    return (-v if t.value == "-" else v), j
        raise Unknown

    def template_segments(self, t: Tok, env: dict[str, object]) -> list[str | None]:
        """A template literal's text, ``None`` for substitutions not knowable."""
        parts = t.parts or [""]
        out: list[str | None] = [parts[0]]
        for k, src in enumerate(t.exprs or []):
            try:
                sub = _Scanner(self.file, src, self.flavor)
                sub_env = env
                out.append(js_string(sub.eval(0, len(sub.toks), sub_env)))
            except (Unknown, RecursionError, IndexError):
                out.append(None)
            out.append(parts[k + 1] if k + 1 < len(parts) else "")
        return out

    def title_segments(self, i: int, end: int, env: dict[str, object]) -> list[str | None] | None:
        """A call's title argument as text segments (None: unknown part);
        None when the argument is not a string-like expression at all."""
        try:
            return [js_string(self.eval(i, end, env))]
        except (Unknown, RecursionError, IndexError):
            pass
        segs: list[str | None] = []
        j = i
        stringish = False
        while j < end:
            k = j
            while k < end and not (self.toks[k].kind == "punct" and self.toks[k].value == "+"):
                k = self.pairs[k] + 1 if self.toks[k].kind == "punct" and self.toks[k].value in "([{" \
                    and k in self.pairs else k + 1
            tok = self.toks[j]
            if k == j + 1 and tok.kind == "tmpl":
                segs.extend(self.template_segments(tok, env))
                stringish = True
            elif k == j + 1 and tok.kind == "str":
                segs.append(tok.value)
                stringish = True
            else:
                try:
                    segs.append(js_string(self.eval(j, k, env)))
                except (Unknown, RecursionError, IndexError):
                    segs.append(None)
            j = k + 1
        return segs if stringish else None

    # ------------------------------------------------------------------ bindings

    def bind(self, i: int, end: int, value: object, env: dict[str, object]) -> None:
        """Bind a parameter/declaration pattern ``toks[i:end]`` to ``value``."""
        if i >= end:
            return
        t = self.toks[i]
        if t.kind == "ident" and (end == i + 1 or self._is(i + 1, "=") or self._is(i + 1, ":")):
            env[t.value] = value
            return
        if self._is(i, "[") and i in self.pairs:
            for n, (a, b) in enumerate(self._split_args(i)):
                if self._is(a, "..."):
                    self.bind(a + 1, b, value[n:] if isinstance(value, list) else _UNKNOWN, env)
                    break
                self.bind(a, b, value[n] if isinstance(value, list) and n < len(value) else _UNKNOWN, env)
            return
        if self._is(i, "{") and i in self.pairs:
            for a, b in self._split_args(i):
                key = self.toks[a].value
                src = value.get(key, _UNKNOWN) if isinstance(value, dict) else _UNKNOWN
                if self._is(a + 1, ":"):
                    self.bind(a + 2, b, src, env)
                else:
                    self.bind(a, b, src, env)

    def _function_at(self, i: int, end: int) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """(params range, body range) of a function expression at ``i``."""
        j = i
        if self._is(j, "async"):
            j += 1
        if self._is(j, "function"):
            j += 1
            if j < end and self.toks[j].kind == "ident":
                j += 1
            if not self._is(j, "("):
                return None
            params = (j + 1, self._close(j))
            j = self._close(j) + 1
            if self._is(j, "{"):
                return params, (j + 1, self._close(j))
            return None
        if self._is(j, "(") and j in self.pairs:
            params = (j + 1, self.pairs[j])
            j = self.pairs[j] + 1
            if self._is(j, ":"):  # TypeScript return type
                while j < end and not self._is(j, "=>"):
                    j += 1
        elif j < end and self.toks[j].kind == "ident":
            params = (j, j + 1)
            j += 1
        else:
            return None
        if not self._is(j, "=>"):
            return None
        j += 1
        if self._is(j, "{"):
            return params, (j + 1, self._close(j))
        return params, (j, end)

    # ------------------------------------------------------------------ walking

    def walk(self, i: int, end: int, parent: SpecNode | None, env: dict[str, object],
             ctx: str | None, depth: int = 0) -> None:
        """Find the test calls in ``toks[i:end]``."""
        if depth > MAX_SCAN_DEPTH:
            self.truncated = True
            return
        toks = self.toks
        while i < end:
            if self.count >= MAX_NODES or self.steps >= MAX_STEPS:
                self.truncated = True
                return
            self.steps += 1
            t = toks[i]
            if t.kind == "ident":
                if t.value in ("const", "let", "var") and i + 2 < end and toks[i + 1].kind == "ident" \
                        and self._is(i + 2, "="):
                    stop = self._stmt_end(i + 3, end)
                    value_end = stop - 1 if self._is(stop - 1, ";") else stop
                    try:
                        env[toks[i + 1].value] = self.eval(i + 3, value_end, env)
                    except (Unknown, RecursionError, IndexError):
                        env[toks[i + 1].value] = _UNKNOWN
                    i += 3
                    continue
                if t.value == "for" and self._is(i + 1, "("):
                    i = self._for(i, end, parent, env, ctx, depth)
                    continue
                nxt = self._call(i, end, parent, env, ctx, depth)
                if nxt is not None:
                    i = nxt
                    continue
            elif t.kind == "punct" and t.value in (".", "?.") and i + 2 < end \
                    and toks[i + 1].kind == "ident" and toks[i + 1].value in ("forEach", "map") \
                    and self._is(i + 2, "("):
                nxt = self._for_each(i, end, parent, env, ctx, depth)
                if nxt is not None:
                    i = nxt
                    continue
            i += 1

    def _loop_body(self, j: int, end: int) -> tuple[int, int, int]:
        """(body start, body end, next index) of a loop body at ``j``."""
        if self._is(j, "{"):
            close = self._close(j)
            return j + 1, close, close + 1
        stop = self._stmt_end(j, end)
        return j, stop, stop

    def _for(self, i: int, end: int, parent: SpecNode | None, env: dict[str, object],
             ctx: str | None, depth: int) -> int:
        open_i = i + 1
        close = self._close(open_i)
        body_start, body_end, nxt = self._loop_body(close + 1, end)
        header = list(range(open_i + 1, close))
        values: list[object] | None = None
        pattern: tuple[int, int] | None = None
        of_at = next((k for k in header if self.toks[k].kind == "ident" and self.toks[k].value in ("of", "in")
                      and self._bracket_depth(open_i + 1, k) == 0), None)
        try:
            if of_at is not None:
                p_start = open_i + 1 + (1 if self._is(open_i + 1, "const") or self._is(open_i + 1, "let")
                                        or self._is(open_i + 1, "var") else 0)
                pattern = (p_start, of_at)
                it = self.eval(of_at + 1, close, env)
                if self.toks[of_at].value == "in":
                    values = list(it) if isinstance(it, (dict, list)) else None
                    if isinstance(it, list):
                        values = [str(k) for k in range(len(it))]
                elif isinstance(it, list):
                    values = it
                elif isinstance(it, str):
                    values = list(it)
            else:
                values, pattern = self._counting_loop(open_i, close, env)
        except (Unknown, RecursionError, IndexError):
            values = None
        if values is None or len(values) > MAX_LOOP_VALUES or not self._has_calls(body_start, body_end):
            inner = dict(env)
            if pattern is not None:
                self.bind(pattern[0], pattern[1], _UNKNOWN, inner)
            self._walk_uncertain(body_start, body_end, parent, inner, ctx, depth + 1)
            return nxt
        for v in values:
            inner = dict(env)
            if pattern is not None:
                self.bind(pattern[0], pattern[1], v, inner)
            self.walk(body_start, body_end, parent, inner, ctx, depth + 1)
        return nxt

    def _has_calls(self, start: int, end: int) -> bool:
        """Whether a loop body mentions a describe/it/test function (only
        then is it worth walking once per value)."""
        key = (start, end)
        if key not in self._calls_cache:
            self._calls_cache[key] = any(
                t.kind == "ident" and (t.value in SUITE_FUNCS or t.value in self.test_funcs)
                for t in self.toks[start:end])
        return self._calls_cache[key]

    def _bracket_depth(self, start: int, k: int) -> int:
        d = 0
        for j in range(start, k):
            t = self.toks[j]
            if t.kind == "punct":
                d += t.value in "([{"
                d -= t.value in ")]}"
        return d

    def _counting_loop(self, open_i: int, close: int,
                       env: dict[str, object]) -> tuple[list[object] | None, tuple[int, int] | None]:
        """``for (let i = A; i < B; i++)`` -> ([A..B), binding of i)."""
        semis = [k for k in range(open_i + 1, close) if self._is(k, ";") and self._bracket_depth(open_i + 1, k) == 0]
        if len(semis) != 2:
            return None, None
        j = open_i + 1
        if self._is(j, "let") or self._is(j, "var"):
            j += 1
        if not (self.toks[j].kind == "ident" and self._is(j + 1, "=")):
            return None, None
        name = self.toks[j].value
        start = self.eval(j + 2, semis[0], env)
        c = semis[0] + 1
        if not (self._is(c, name) and self.toks[c + 1].value in ("<", "<=")):
            return None, None
        limit = self.eval(c + 2, semis[1], env)
        step_toks = [self.toks[k].value for k in range(semis[1] + 1, close)]
        if step_toks not in ([name, "++"], ["++", name], [name, "+=", "1"]):
            return None, None
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, limit)):
            return None, None
        stop = limit + 1 if self.toks[c + 1].value == "<=" else limit  # type: ignore[operator]
        if stop - start > MAX_LOOP_VALUES:  # type: ignore[operator]
            return None, (j, j + 1)
        return list(range(start, stop)), (j, j + 1)  # type: ignore[arg-type]

    def _receiver_start(self, dot: int) -> int:
        """Start of the expression whose method is called at ``dot``."""
        p = dot - 1
        while p >= 0:
            t = self.toks[p]
            if t.kind == "punct" and t.value in ")]" and p in self.pairs:
                p = self.pairs[p]
                if p - 1 >= 0 and self.toks[p - 1].kind == "ident" and t.value == ")":
                    p -= 1
            elif t.kind not in ("ident", "str", "tmpl", "num"):
                return p + 1
            if p - 1 >= 0 and self.toks[p - 1].kind == "punct" and self.toks[p - 1].value in (".", "?."):
                p -= 2
                continue
            return p
        return 0

    def _for_each(self, dot: int, end: int, parent: SpecNode | None, env: dict[str, object],
                  ctx: str | None, depth: int) -> int | None:
        open_i = dot + 2
        args = self._split_args(open_i)
        if not args:
            return None
        fn = self._function_at(args[0][0], args[0][1])
        if fn is None:
            return None
        (p_start, p_end), (b_start, b_end) = fn
        params = self._split_args(p_start - 1) if self._is(p_start - 1, "(") else [(p_start, p_end)]
        try:
            values = self.eval(self._receiver_start(dot), dot, env)
            if not isinstance(values, list) or len(values) > MAX_LOOP_VALUES or not self._has_calls(b_start, b_end):
                raise Unknown
        except (Unknown, RecursionError, IndexError):
            values = None
        if values is None:
            inner = dict(env)
            for a, b in params[:2]:
                self.bind(a, b, _UNKNOWN, inner)
            self._walk_uncertain(b_start, b_end, parent, inner, ctx, depth + 1)
        for n, v in enumerate(values or []):
            inner = dict(env)
            for k, (a, b) in enumerate(params[:2]):
                self.bind(a, b, v if k == 0 else n, inner)
            self.walk(b_start, b_end, parent, inner, ctx, depth + 1)
        return self._close(open_i) + 1

    def _walk_uncertain(self, i: int, end: int, parent: SpecNode | None, env: dict[str, object],
                        ctx: str | None, depth: int) -> None:
        """Walk a body that runs a number of times the source does not say."""
        self.uncertain += 1
        try:
            self.walk(i, end, parent, env, ctx, depth)
        finally:
            self.uncertain -= 1

    def _call(self, i: int, end: int, parent: SpecNode | None, env: dict[str, object],
              ctx: str | None, depth: int) -> int | None:
        """A describe/it/test/hook call at ``i``: records it (one node per
        row of a known ``.each`` table), walks its callback, and returns the
        index after it; None when it is not one."""
        toks = self.toks
        name = toks[i].value
        member = i > 0 and toks[i - 1].kind == "punct" and toks[i - 1].value in (".", "?.")
        if member:
            # node:test subtests: t.test(...) on the test's context parameter.
            if not (name == "test" and ctx is not None and i >= 2 and toks[i - 2].value == ctx):
                return None
        elif name not in SUITE_FUNCS and name not in self.test_funcs and name not in self.hooks:
            return None
        if i > 0 and toks[i - 1].kind == "ident" and toks[i - 1].value in ("function", "class", "new"):
            return None
        mods: list[str] = []
        rows: object = None  # .each/.for: the table's rows, or _UNKNOWN
        skip_if: object = None  # skipIf/runIf: whether it skips, or _UNKNOWN
        line_at = i
        j = i + 1
        while j < end:
            if self._is(j, ".") and j + 1 < end and toks[j + 1].kind == "ident":
                mods.append(toks[j + 1].value)
                line_at = j + 1
                j += 2
            elif toks[j].kind == "tmpl" and mods and mods[-1] in ("each", "for"):
                rows = self._tagged_rows(toks[j], env)
                j += 1
            elif self._is(j, "(") and mods and mods[-1] in PRE_CALL_MODIFIERS and j in self.pairs \
                    and (self._is(self.pairs[j] + 1, "(") or self._is(self.pairs[j] + 1, ".")):
                value = self._argument(j, env)
                if mods[-1] in ("skipIf", "runIf"):
                    skip_if = _UNKNOWN if value is _UNKNOWN else _truthy(value) == (mods[-1] == "skipIf")
                else:
                    rows = [r if isinstance(r, list) else [r] for r in value[:MAX_EACH_ROWS]] \
                        if isinstance(value, list) else _UNKNOWN
                j = self.pairs[j] + 1
            else:
                break
        if not self._is(j, "(") or not set(mods) <= MODIFIERS:
            return None
        # An unclosed call (a file cut short) runs to the end of the range.
        close = self.pairs.get(j, end - 1)
        if self._is(close + 1, "{") or self._is(close + 1, ":"):  # a method definition named like a test function
            return None
        args = self._split_args(j)
        if name in self.hooks and not member:
            if mods:
                return None
            node = SpecNode(kind="hook", func=self.hooks[name], file=self.file, line=self._line(i), parent=parent)
            self._add(node, parent)
            return close + 1
        kind = "suite" if name in SUITE_FUNCS and not member else "test"
        if not args:
            return None
        fn = None
        options: list[tuple[int, int]] = []
        for a, b in args[1:]:
            if self._is(a, "{") and self.pairs.get(a) == b - 1:
                options.append((a, b))
            elif (f := self._function_at(a, b)) is not None:
                fn = f
        # A callback given by name runs too; we cannot look inside it.
        fn_like = fn is not None or (len(args) > 1 and not self._is(args[-1][0], "{"))
        segs = self.title_segments(args[0][0], args[0][1], env)
        line = self._line(j if rows is not None else line_at)
        for title, pattern, call_env in self._instances(segs, rows, "for" in mods, fn, env):
            node = SpecNode(kind=kind, func=name, file=self.file, line=line, parent=parent, title=title,
                            pattern=pattern, uncertain=self.uncertain > 0)
            node.skip = "skip" in mods or name in SKIP_FUNCS or skip_if is True
            node.conditional = skip_if is _UNKNOWN
            node.todo = "todo" in mods
            node.only = "only" in mods or name in ONLY_FUNCS
            node.fails = bool({"failing", "fails"} & set(mods))
            for a, b in options:
                self._options(node, a, b, env)
            node.pending = not fn_like and self.flavor == "mocha" and kind == "test"
            self._add(node, parent)
            if fn is None:
                continue
            (p_start, p_end), (b_start, b_end) = fn
            new_ctx = toks[p_start].value if p_start < p_end and toks[p_start].kind == "ident" else None
            if kind == "test":
                node.may_skip = any(
                    toks[k].value in ("this", new_ctx) and self._is(k + 1, ".") and self._is(k + 2, "skip")
                    and self._is(k + 3, "(") for k in range(b_start, min(b_end, len(toks) - 3)))
            walk = self._walk_uncertain if rows is _UNKNOWN else self.walk
            walk(b_start, b_end, node, call_env, new_ctx if kind == "test" else ctx, depth + 1)
        return close + 1

    def _argument(self, open_i: int, env: dict[str, object]) -> object:
        """The value of the only argument of the call at ``open_i``; _UNKNOWN otherwise."""
        args = self._split_args(open_i)
        try:
            return self.eval(*args[0], env) if len(args) == 1 else _UNKNOWN
        except (Unknown, RecursionError, IndexError):
            return _UNKNOWN

    def _tagged_rows(self, tok: Tok, env: dict[str, object]) -> object:
        """Rows of a tagged-template table (``a | b ${1} | ${2}`` -> [[{a: 1, b: 2}]]); _UNKNOWN
        when a value is not knowable or the cells do not fill the rows."""
        names = [h.strip() for h in (tok.parts or [""])[0].split("|") if h.strip()]
        values: list[object] = []
        for src in tok.exprs or []:
            try:
                sub = _Scanner(self.file, src, self.flavor)
                values.append(sub.eval(0, len(sub.toks), env))
            except (Unknown, RecursionError, IndexError):
                return _UNKNOWN
        if not names or len(values) % len(names):
            return _UNKNOWN
        return [[dict(zip(names, values[r:r + len(names)], strict=True))]
                for r in range(0, min(len(values), MAX_EACH_ROWS * len(names)), len(names))]

    def _instances(self, segs: list[str | None] | None, rows: object, spread_off: bool,
                   fn: tuple[tuple[int, int], tuple[int, int]] | None, env: dict[str, object]
                   ) -> list[tuple[str | None, re.Pattern[str] | None, dict[str, object]]]:
        """(title, pattern, callback scope) per instance of a call: one for a plain call,
        one per row of a known ``.each``/``.for`` table with the title formatted the
        runner's way and the callback's parameters bound to the row; a pattern where
        the title is not knowable."""
        if segs is None:
            return [(None, re.compile(r".+", re.S), dict(env))]
        if rows is None:
            if any(s is None for s in segs):
                return [(None, _segments_pattern(segs), dict(env))]
            return [("".join(segs), None, dict(env))]  # type: ignore[arg-type]
        text = "".join(s if s is not None else "\x00" for s in segs)
        params: list[tuple[int, int]] = []
        if fn is not None:
            (p_start, p_end), _ = fn
            params = self._split_args(p_start - 1) if self._is(p_start - 1, "(") else [(p_start, p_end)]
        if rows is _UNKNOWN or "\x00" in text:
            scope = dict(env)
            for a, b in params:
                self.bind(a, b, _UNKNOWN, scope)
            return [(None, template_pattern(text), scope)]
        out: list[tuple[str | None, re.Pattern[str] | None, dict[str, object]]] = []
        for idx, row in enumerate(rows):  # type: ignore[arg-type]
            scope = dict(env)
            # .for hands the callback the row itself; .each spreads an array row into arguments.
            given = [row[0] if len(row) == 1 else row] if spread_off else row
            for k, (a, b) in enumerate(params):
                self.bind(a, b, given[k] if k < len(given) else _UNKNOWN, scope)
            try:
                out.append((format_title(text, row, idx, self.flavor), None, scope))
            except (ValueError, TypeError, RecursionError, OverflowError):
                out.append((None, template_pattern(text), scope))
        return out

    def _options(self, node: SpecNode, a: int, b: int, env: dict[str, object]) -> None:
        """node:test's options object: { skip, todo, only, timeout }."""
        for s, e in self._split_args(a):
            key = self.toks[s].value
            if key not in ("skip", "todo", "only") or not self._is(s + 1, ":"):
                continue
            try:
                value = self.eval(s + 2, e, env)
            except (Unknown, RecursionError, IndexError):
                node.conditional = True
                continue
            if not _truthy(value):
                continue
            setattr(node, key, True)
            if isinstance(value, str) and key != "only":
                node.reason = value

    def _add(self, node: SpecNode, parent: SpecNode | None) -> None:
        self.count += 1
        (parent.children if parent is not None else self.roots).append(node)

    def scan(self) -> list[SpecNode]:
        try:
            self.walk(0, len(self.toks), None, {}, None)
        except RecursionError:
            pass
        return self.roots


class _UnknownValue:
    def __repr__(self) -> str:
        return "<unknown>"


_UNKNOWN = _UnknownValue()


def _truthy(value: object) -> bool:
    """JavaScript's truthiness of a known value."""
    return not (value in (False, None, UNDEFINED, 0, "") or value != value)


def scan_spec(file: str, text: str, flavor: str) -> list[SpecNode]:
    """The describe/it/test/hook calls of one source text, nested, with
    loops over literal tables expanded. ``flavor`` is "mocha" (an ``it()``
    without a callback is pending) or "node"."""
    try:
        return _Scanner(file, text, flavor).scan()
    except (RecursionError, IndexError, ValueError):
        return []


def iter_nodes(nodes: list[SpecNode]) -> Iterator[SpecNode]:
    """Every node of a tree, depth-first in source order."""
    for n in nodes:
        yield n
        yield from iter_nodes(n.children)


# Mocha's and node:test's spec files; Jest's and Vitest's default testMatch is TEST_FILE_RE.
TEST_PATH_RE = re.compile(
    r"(?:^|/)(?:tests?|specs?|__tests__)/|(?:^|/)[^/]*(?:[._-](?:test|spec)s?|^test-[^/]*|test)\.[cm]?[jt]sx?$"
)


class _FileIndex:
    """Lookup tables over the nodes of one file."""

    def __init__(self, nodes: list[SpecNode]) -> None:
        self.nodes = list(iter_nodes(nodes))
        self.by_title: dict[str, list[SpecNode]] = {}
        self.patterned: list[SpecNode] = []
        for n in self.nodes:
            if n.title is not None:
                self.by_title.setdefault(n.title, []).append(n)
            elif n.kind != "hook":
                self.patterned.append(n)
        self._joined: dict[str, tuple[dict[str, list[SpecNode]], list[tuple[re.Pattern[str], SpecNode]]]] = {}

    def titled(self, title: str) -> list[SpecNode]:
        """Nodes with this title, literal titles first, source order."""
        return self.by_title.get(title, []) + [n for n in self.patterned if n.matches(title)]

    def joined(self, sep: str) -> tuple[dict[str, list[SpecNode]], list[tuple[re.Pattern[str], SpecNode]]]:
        """Full names (titles joined with ``sep``) -> nodes; patterns apart."""
        if sep not in self._joined:
            exact: dict[str, list[SpecNode]] = {}
            patterns: list[tuple[re.Pattern[str], SpecNode]] = []
            for n in self.nodes:
                if n.kind == "hook":
                    continue
                chain = [*n.suites, n]
                if all(c.title is not None for c in chain):
                    exact.setdefault(sep.join(c.title for c in chain), []).append(n)  # type: ignore[misc]
                else:
                    rx = re.escape(sep).join(
                        re.escape(c.title) if c.title is not None else (c.pattern.pattern if c.pattern else ".+")
                        for c in chain)
                    patterns.append((re.compile(rx, re.S), n))
            self._joined[sep] = (exact, patterns)
        return self._joined[sep]


class SpecIndex:
    """The spec files of a project, scanned on demand and cached."""

    def __init__(self, index: SourceIndex, flavor: str) -> None:
        self.index = index
        self.flavor = flavor
        self._trees: dict[str, list[SpecNode]] = {}
        self._indexes: dict[str, _FileIndex] = {}
        self._test_files: list[str] | None = None

    def tree(self, rel: str) -> list[SpecNode]:
        """The nodes of one file (empty when unreadable)."""
        if rel not in self._trees:
            lines = self.index.lines(rel)
            self._trees[rel] = scan_spec(rel, "\n".join(lines), self.flavor) if lines else []
        return self._trees[rel]

    def _index(self, rel: str) -> _FileIndex:
        if rel not in self._indexes:
            self._indexes[rel] = _FileIndex(self.tree(rel))
        return self._indexes[rel]

    def test_files(self) -> list[str]:
        """Project files that look like spec files."""
        if self._test_files is None:
            self._test_files = [f for f in self.index.files(JS_SUFFIXES)
                                if TEST_PATH_RE.search(f) and not f.endswith(".d.ts")]
        return self._test_files

    def _files(self, file: str | None) -> list[str]:
        return [file] if file else self.test_files()

    def find(self, path: tuple[str, ...], title: str, file: str | None = None,
             kinds: tuple[str, ...] = ("test",)) -> SpecNode | None:
        """The call with these enclosing titles and this title: in ``file``,
        or in the only spec file that has it. Literal titles win over
        patterns; the first instance in a file wins."""
        found: list[SpecNode] = []
        for f in self._files(file):
            hits = [n for n in self._index(f).titled(title) if n.kind in kinds and n.path_matches(path)]
            if hits:
                found.append(hits[0])
        if len(found) > 1:
            literal = [n for n in found if n.title is not None and all(s.title is not None for s in n.suites)]
            found = literal if len(literal) == 1 else found
        return found[0] if len(found) == 1 else None

    def find_joined(self, joined: str, sep: str, file: str | None = None,
                    kinds: tuple[str, ...] = ("test",)) -> SpecNode | None:
        """The call whose enclosing titles and title, joined with ``sep``,
        give ``joined`` (Mocha's fullTitle with sep=" "); None when several
        files have one."""
        found: list[SpecNode] = []
        for f in self._files(file):
            exact, patterns = self._index(f).joined(sep)
            hit = next((n for n in exact.get(joined, []) if n.kind in kinds), None) or \
                next((n for rx, n in patterns if n.kind in kinds and rx.fullmatch(joined)), None)
            if hit is not None:
                found.append(hit)
        return found[0] if len(found) == 1 else None

    def find_title(self, title: str, kinds: tuple[str, ...] = ("test",)) -> SpecNode | None:
        """The only call with this literal title in the spec files (tests
        defined in shared helper functions have no describe path)."""
        hits = [n for f in self.test_files() for n in self._index(f).by_title.get(title, []) if n.kind in kinds]
        return hits[0] if len(hits) == 1 else None

    def hook(self, suite: SpecNode | None, file: str | None, kind: str) -> SpecNode | None:
        """The first hook of ``kind`` ("before all", ...) in a suite (or at
        the top level of ``file`` when ``suite`` is None)."""
        nodes = suite.children if suite is not None else (self.tree(file) if file else [])
        return next((n for n in nodes if n.kind == "hook" and n.func == kind), None)

    def all_nodes(self) -> Iterator[SpecNode]:
        """Every node of every spec file."""
        for f in self.test_files():
            yield from self._index(f).nodes


# --------------------------------------------------------------------------- Jest and Vitest


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


def collect_tests(file: str, text: str, flavor: str) -> FileTests:
    """Every test of a source file as Jest (``flavor='jest'``) or Vitest names it:
    describe blocks, loops and ``.each`` tables expanded."""
    result = FileTests(tests=[], suites=[])
    try:
        scanner = _Scanner(file, text, flavor)
        roots = scanner.scan()
    except (RecursionError, IndexError, ValueError):
        result.complete = False
        return result
    result.complete = not scanner.truncated

    def walk(nodes: list[SpecNode], path: tuple[str, ...], pats: tuple[re.Pattern[str], ...] | None,
             skip: bool, todo: bool, only: bool) -> None:
        for n in nodes:
            if n.kind == "hook":
                continue
            result.has_only = result.has_only or n.only
            seg = n.title if n.title is not None else (n.pattern.pattern if n.pattern else "")
            new_pats = None
            if pats is not None or n.title is None or n.uncertain:
                # Not listable: matched segment by segment instead.
                result.complete = False
                base = pats if pats is not None else tuple(_segments_pattern([p]) for p in path)
                new_pats = (*base, n.pattern or _segments_pattern([seg]))
            c_skip, c_todo, c_only = skip or n.skip, todo or n.todo, only or n.only
            if n.kind == "suite":
                hooks = frozenset(c.func for c in n.children if c.kind == "hook")
                result.suites.append(SourceSuite(file, (*path, seg), n.line, hooks, c_skip, new_pats))
                walk(n.children, (*path, seg), new_pats, c_skip, c_todo, c_only)
            else:
                result.tests.append(SourceTest(
                    file=file, path=path, title=seg, line=n.line, skip=c_skip, todo=c_todo, only=c_only,
                    fails=n.fails, conditional=n.conditional, patterns=new_pats))

    walk(roots, (), None, False, False, False)
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
