"""A streaming reader for TAP (Test Anything Protocol) 12, 13 and 14.

Used by the Mocha (``--reporter tap``), node:test (TAP reporter), Vitest
(``--reporter tap``) and generic parsers. It turns a stream of lines into
``TapPoint`` records, one per ``ok`` / ``not ok`` line, each with its
ancestry (the names of the subtests enclosing it) and its YAML diagnostics.

API (kept small on purpose)::

    reader = TapReader(run.lines("stdout"))
    for point in reader:          # TapPoint, in stream order, children first
        ...
    reader.version, reader.plan, reader.bail_out, reader.counters, reader.saw_tap

What it understands:

* ``TAP version 13`` / ``14`` and version-less TAP 12;
* plans ``1..N`` (with ``# SKIP reason``), anywhere in the stream;
* test points ``ok``/``not ok`` with optional number, optional ``-`` before
  the description, ``# SKIP``/``# TODO`` directives with reasons, TAP 14
  escapes (``\\#``, ``\\\\``) and node's ``\\n``-style escapes;
* YAML diagnostic blocks (``---`` ... ``...`` indented under the point);
* nested subtests: TAP 14 indented ``# Subtest: name`` blocks as node:test
  prints them, and indented child streams without them (the parent point
  that follows the children names them);
* ``Bail out!``, comments (``# tests 18`` style counters are collected),
  ``pragma`` lines and garbage lines in between (console output of the
  tests), which are kept, bounded, on the next point as ``comments``.

Memory: a point is held back only until its YAML block ends, and child
points until their parent point arrives (so a subtree, not the stream).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import yaml

VERSION_RE = re.compile(r"^TAP version (\d+)\s*$", re.I)
PLAN_RE = re.compile(r"^(\s*)(\d+)\.\.(\d+)\s*(?:#\s*(.*))?$")
POINT_RE = re.compile(r"^(\s*)(not ok|ok)\b(?:\s+(\d+))?(?:\s*-)?(?:\s+(.*))?$")
SUBTEST_RE = re.compile(r"^(\s*)# Subtest(?::\s*(.*))?$")
BAIL_RE = re.compile(r"^\s*Bail out!\s*(.*)$")
COMMENT_RE = re.compile(r"^\s*#\s?(.*)$")
PRAGMA_RE = re.compile(r"^\s*pragma\s+[+-]\w+")
COUNTER_RE = re.compile(r"^([a-z_ ]+?):?\s+(\d+(?:\.\d+)?)\s*$", re.I)
YAML_START_RE = re.compile(r"^(\s*)---\s*$")
YAML_END_RE = re.compile(r"^\s*\.\.\.\s*$")
# A directive is an unescaped '#' followed by the word SKIP (also "skipped",
# "skipping") or TODO, any case; other '#' characters belong to the description.
DIRECTIVE_RE = re.compile(r"(?<!\\)#\s*(skip(?:ped|ping)?|todo)\b:?\s*(.*)$", re.I)
# node-tap's elapsed time after a subtest's point ("ok 1 - name # time=31.4ms"):
# not part of the name (tap-parser reads it as the point's ``time``).
TIME_RE = re.compile(r"\s+(?<!\\)#\s*time=[\d.]+m?s\s*$")
ESCAPE_RE = re.compile(r"\\([\\#nrtbfv])")
ESCAPES = {"\\": "\\", "#": "#", "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v"}

# libyaml's safe loader when available: diagnostics blocks come by thousands.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_YAML_LINES = 2_000
MAX_COMMENT_LINES = 200
MAX_COMMENT_CHARS = 32_000


def unescape(text: str) -> str:
    """Undo TAP 14 / node:test escapes in a description or directive reason."""
    return ESCAPE_RE.sub(lambda m: ESCAPES[m.group(1)], text) if "\\" in text else text


@dataclass
class TapPlan:
    """A ``1..N`` line; ``skip_reason`` is set for ``1..0 # SKIP why``."""

    start: int
    end: int
    comment: str | None = None

    @property
    def count(self) -> int:
        return max(0, self.end - self.start + 1)


@dataclass
class TapPoint:
    """One ``ok`` / ``not ok`` line with what belongs to it."""

    ok: bool
    number: int | None
    description: str
    # "skip" or "todo" when the point carries that directive, with its reason.
    directive: str | None = None
    reason: str | None = None
    # Names of the enclosing subtests, outermost first (empty at top level).
    ancestry: tuple[str, ...] = ()
    depth: int = 0
    # The parsed YAML block (a dict) or None; ``yaml_text`` is the raw block.
    diagnostics: dict[str, object] | None = None
    yaml_text: str | None = None
    # Non-TAP lines (comment text without its '#', console output) seen
    # between the previous TAP line and this point, bounded.
    comments: list[str] = field(default_factory=list)
    # Non-TAP lines after this point up to the next TAP line, bounded: where
    # TAP 12 producers (Mocha, tape) print a failure's message and stack.
    trailing: list[str] = field(default_factory=list)
    # Whether child points (subtests) were reported under this one.
    has_children: bool = False
    line_no: int = 0

    @property
    def name(self) -> str:
        """The point's name: its description (node:test: the test name)."""
        return self.description

    @property
    def passed(self) -> bool:
        """TAP's own verdict: ``ok``, or anything with a SKIP/TODO directive."""
        return self.ok or self.directive is not None

    def diag(self, key: str) -> object | None:
        """A diagnostics value, or None."""
        return self.diagnostics.get(key) if isinstance(self.diagnostics, dict) else None


def parse_description(text: str) -> tuple[str, str | None, str | None]:
    """(description, directive, reason) from the text after ``ok N -``."""
    text = TIME_RE.sub("", text.rstrip())
    directive = reason = None
    m = DIRECTIVE_RE.search(text)
    if m:
        directive = "skip" if m.group(1).lower().startswith("skip") else "todo"
        reason = unescape(m.group(2).strip()) if m.group(2) and m.group(2).strip() else None
        text = text[: m.start()].rstrip()
    return unescape(text), directive, reason


def parse_yaml(text: str) -> dict[str, object] | None:
    """The YAML block as a dict; a lenient ``key: value`` scan when it is not
    valid YAML (producers do not always quote what they should)."""
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader
    except (yaml.YAMLError, RecursionError, ValueError):
        data = None
    if isinstance(data, dict):
        return {str(k): v for k, v in data.items()}
    out: dict[str, object] = {}
    key: str | None = None
    block: list[str] = []
    for line in text.splitlines():
        m = re.match(r"^(\w[\w-]*):\s*(.*)$", line)
        if m:
            if key is not None and block:
                out[key] = "\n".join(block)
            key, value = m.group(1), m.group(2)
            block = []
            if value in ("|", "|-", ">", ">-", ""):
                continue
            out[key] = value.strip("'\"")
            key = None
        elif key is not None:
            block.append(line.strip())
    if key is not None and block:
        out[key] = "\n".join(block)
    return out or None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


class TapReader:
    """Iterate the test points of a TAP stream (see the module docstring).

    After (or during) iteration: ``version`` (None when none was given;
    ``effective_version`` says 12 then), ``plan`` (the top-level plan),
    ``bail_out`` (the reason, "" when none was given), ``counters``
    (top-level ``# name N`` comments, e.g. ``{"tests": 18, "pass": 6}``),
    ``saw_tap`` (any TAP syntax seen), ``unfinished`` (subtests announced
    but never finished), ``warnings``.
    """

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = lines
        self.version: int | None = None
        self.plan: TapPlan | None = None
        self.bail_out: str | None = None
        self.counters: dict[str, float] = {}
        self.saw_tap = False
        self.warnings: list[str] = []
        # Indentation width of each open nesting level (level 0 = top).
        self._levels: list[int] = [0]
        # ``# Subtest: name`` announcements by level.
        self._announced: list[str | None] = []
        # Points held back: the current one (its YAML may follow) and
        # children waiting for their parent.
        self._pending: TapPoint | None = None
        self._pending_indent = 0
        self._trailing_chars = 0
        self._held: list[TapPoint] = []
        self._comments: list[str] = []
        self._comment_chars = 0

    # ------------------------------------------------------------------ helpers

    def _depth_for(self, indent: int) -> int:
        """Nesting level of a line indented by ``indent``; opens a level when
        it is deeper than the current one."""
        while len(self._levels) > 1 and indent < self._levels[-1]:
            self._levels.pop()
        if indent > self._levels[-1]:
            self._levels.append(indent)
        return len(self._levels) - 1

    def _note(self, line: str) -> None:
        if len(self._comments) < MAX_COMMENT_LINES and self._comment_chars < MAX_COMMENT_CHARS:
            self._comments.append(line)
            self._comment_chars += len(line) + 1
        if self._pending is not None and len(self._pending.trailing) < MAX_COMMENT_LINES \
                and self._trailing_chars < MAX_COMMENT_CHARS:
            self._pending.trailing.append(line)
            self._trailing_chars += len(line) + 1

    def _release(self, point: TapPoint) -> list[TapPoint]:
        """Attach the held children to ``point``; return what can be yielded.

        Children are the held points after the last held one at the same or
        a shallower depth (held points are in stream order)."""
        k = len(self._held)
        while k > 0 and self._held[k - 1].depth > point.depth:
            k -= 1
        children = self._held[k:]
        del self._held[k:]
        if children:
            point.has_children = True
            for child in children:
                # A child stream without ``# Subtest:`` lines learns its
                # parents' names only when each parent point arrives.
                if len(child.ancestry) < child.depth:
                    child.ancestry = (*point.ancestry, point.name, *child.ancestry)[-child.depth:]
        if point.depth == 0:
            out = [*self._held, *children, point]
            self._held = []
            return out
        self._held.extend(children)
        self._held.append(point)
        return []

    def _flush_pending(self) -> list[TapPoint]:
        point, self._pending = self._pending, None
        return self._release(point) if point is not None else []

    # ------------------------------------------------------------------ reading

    def __iter__(self) -> Iterator[TapPoint]:
        yaml_lines: list[str] | None = None
        yaml_indent = 0
        for line_no, raw in enumerate(self._lines, start=1):
            line = raw.rstrip("\r\n")
            if yaml_lines is not None:
                if YAML_END_RE.match(line) and _indent(line) <= yaml_indent + 1:
                    self._finish_yaml(yaml_lines, yaml_indent)
                    yaml_lines = None
                    continue
                if not line.strip() or _indent(line) >= yaml_indent:
                    if len(yaml_lines) < MAX_YAML_LINES:
                        yaml_lines.append(line)
                    continue
                # A line left of the block: the producer never closed it.
                self.warnings.append(f"unterminated YAML diagnostics block before line {line_no}")
                self._finish_yaml(yaml_lines, yaml_indent)
                yaml_lines = None
            if self._pending is not None and self._pending.diagnostics is None \
                    and (m := YAML_START_RE.match(line)) and len(m.group(1)) > self._pending_indent:
                yaml_lines, yaml_indent = [], len(m.group(1))
                continue
            yield from self._line(line, line_no)
        if yaml_lines is not None:
            self.warnings.append("the TAP stream ended inside a YAML diagnostics block")
            self._finish_yaml(yaml_lines, yaml_indent)
        yield from self._flush_pending()
        if self._held:
            # Truncated stream: children whose parent never reported.
            held, self._held = self._held, []
            yield from held

    def _finish_yaml(self, lines: list[str], indent: int) -> None:
        text = "\n".join(ln[indent:] if ln[:indent].strip() == "" else ln.lstrip() for ln in lines)
        if self._pending is not None:
            self._pending.yaml_text = text
            self._pending.diagnostics = parse_yaml(text) or {}

    def _line(self, line: str, line_no: int) -> Iterator[TapPoint]:
        if m := POINT_RE.match(line):
            self.saw_tap = True
            yield from self._flush_pending()
            indent = len(m.group(1).expandtabs(4))
            depth = self._depth_for(indent)
            desc, directive, reason = parse_description(m.group(4) or "")
            announced = self._announced[:depth]
            ancestry = tuple(a for a in announced if a is not None) if len(announced) == depth \
                and all(a is not None for a in announced) else ()
            self._pending = TapPoint(
                ok=m.group(2) == "ok",
                number=int(m.group(3)) if m.group(3) else None,
                description=desc,
                directive=directive,
                reason=reason,
                ancestry=ancestry,
                depth=depth,
                comments=self._comments,
                line_no=line_no,
            )
            self._pending_indent = indent
            self._trailing_chars = 0
            del self._announced[depth:]
            self._comments, self._comment_chars = [], 0
            return
        if m := SUBTEST_RE.match(line):
            self.saw_tap = True
            yield from self._flush_pending()
            depth = self._depth_for(len(m.group(1).expandtabs(4)))
            del self._announced[depth:]
            self._announced.extend([None] * (depth - len(self._announced)))
            self._announced.append(unescape((m.group(2) or "").strip()))
            return
        if m := VERSION_RE.match(line.strip()):
            self.saw_tap = True
            self.version = int(m.group(1))
            return
        if m := PLAN_RE.match(line):
            self.saw_tap = True
            yield from self._flush_pending()
            if not m.group(1):
                self.plan = TapPlan(int(m.group(2)), int(m.group(3)), m.group(4))
            return
        if m := BAIL_RE.match(line):
            self.saw_tap = True
            self.bail_out = m.group(1).strip()
            return
        if PRAGMA_RE.match(line):
            return
        if m := COMMENT_RE.match(line):
            text = unescape(m.group(1))
            if not line[:1].isspace() and (c := COUNTER_RE.match(text.strip())):
                # Top-level "# tests 18" style counters; the last one wins.
                self.counters[c.group(1).strip().lower()] = float(c.group(2))
            self._note(text)
            return
        self._note(line)

    @property
    def unfinished(self) -> tuple[str, ...]:
        """Names of the subtests announced (``# Subtest:``) but never
        finished, outermost first: on a killed run, the test that hung."""
        return tuple(a for a in self._announced if a is not None)

    @property
    def effective_version(self) -> int | None:
        """The declared version, or 12 when TAP was seen without one."""
        return self.version if self.version is not None else (12 if self.saw_tap else None)


# ---------------------------------------------------------------------- what a point says

MESSAGE_KEYS = ("message", "error", "msg", "reason")
# ``at:`` as tape prints it: ``Test.<anonymous> (/abs/test/a.js:2:56)``, or a bare ``file:line:col``.
AT_CALL_RE = re.compile(r"\((?P<file>[^()]+?):(?P<line>\d+)(?::\d+)?\)\s*$")
AT_BARE_RE = re.compile(r"^(?:file://)?(?P<file>[^\s()]+?):(?P<line>\d+)(?::\d+)?$")


def point_location(point: TapPoint) -> tuple[str | None, int | None]:
    """(file, line) from a point's diagnostics: ``at`` as a mapping (node-tap:
    ``fileName``/``lineNumber``; node:test: ``file``/``line``) or a string
    (tape: a stack frame), else ``location``."""
    at = point.diag("at") or point.diag("location")
    if isinstance(at, dict):
        file = at.get("fileName") or at.get("file")
        line = at.get("lineNumber") or at.get("line")
        return (str(file) if file else None), (line if isinstance(line, int) else None)
    if isinstance(at, str):
        text = at.strip()
        m = AT_CALL_RE.search(text) or AT_BARE_RE.match(text)
        if m:
            return m.group("file").removeprefix("file://"), int(m.group("line"))
    return None, None


def point_message(point: TapPoint) -> tuple[str | None, str | None]:
    """(message, details) of a failing point: a message key of its YAML block,
    else its description with the expected/actual values the block gives (tape,
    node-tap), else the lines printed after it (TAP 12 producers)."""
    if point.diagnostics:
        message = next((str(point.diag(k)) for k in MESSAGE_KEYS if point.diag(k) not in (None, "")), None)
        if message is None:
            message = point.description or None
            want, got = _raw_value(point, "expected"), _raw_value(point, "actual")
            if want is not None or got is not None:
                message = f"{message or 'assertion failed'}: expected {want}, actual {got}"
            elif isinstance(point.diag("diff"), str):
                message = f"{message or 'assertion failed'}\n{point.diag('diff')}"
        return message, point.yaml_text
    lines = [ln.strip() for ln in point.trailing if ln.strip()]
    return (point.description or (lines[0] if lines else None)), ("\n".join(point.trailing).strip() or None)


def _raw_value(point: TapPoint, key: str) -> str | None:
    """A diagnostics value as the producer wrote it (``true``, not Python's
    ``True``; the block's first line for a multi-line value)."""
    if point.diag(key) is None:
        return None
    m = re.search(rf"^\s*{key}:[ \t]*(.*)$", point.yaml_text or "", re.M)
    raw = m.group(1).strip() if m else ""
    if raw in ("", "|", "|-", ">", ">-"):
        value = str(point.diag(key)).strip()
        return value.splitlines()[0] if value else value
    return raw


def point_failed(p: TapPoint) -> bool:
    """A ``not ok`` that no SKIP or TODO directive excuses."""
    return not p.ok and p.directive is None


class UniqueIds:
    """Test ids made unique in the order they come: a repeated one gets `` [2]``, `` [3]``..."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def __call__(self, test_id: str) -> str:
        n = self._seen[test_id] = self._seen.get(test_id, 0) + 1
        return test_id if n == 1 else f"{test_id} [{n}]"
