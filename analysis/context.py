"""The context a fixer needs for one failure, all bounded in size: the failing
test's own function, then the functions most likely to hold the bug, ranked
by fault localization (``analysis/localize.py``: the traceback, per-test
coverage, what the test calls, agreement between failing tests) and shown
whole with numbered lines and the reason each is shown, then further suspects
by name, and recent git changes touching the files shown. When nothing can be
ranked: the lines around the stack's project frames and the files the test
imports."""

from __future__ import annotations

import posixpath
import re
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel

from ..parsers.locate import SourceIndex
from ..parsers.models import TestResult
from .localize import FailingTest, Localizer, Suspect, failing_test
from .patterns import FailureClassification
from .regions import Region

MAX_CONTEXT_CHARS = 24_000
# The suspects' code in the first message (the test's own function comes on top of it).
SUSPECT_CODE_CHARS = 7_000
FIRST_SUSPECT_CHARS = 9_000  # the top suspect is shown whole up to this, whatever the test's size
SMALL_SUSPECT_CHARS = 700    # a suspect this small is shown even past the budget (at most MAX_SHOWN in all)
MAX_SHOWN = 6       # suspects shown whole
# Past MAX_SHOWN, small suspects still are, up to this many in all: a cluster of small functions every
# failing test runs (setters, one-line helpers) ties on every signal, and one of them may be the bug.
MAX_SHOWN_SMALL = 9
MAX_FURTHER = 8     # further suspects named
MAX_LISTED = 15     # suspects kept for the report
SNIPPET_RADIUS = 12
MAX_IMPORTS = 6
MAX_LINE_CHARS = 400
IMPORT_PATTERNS = [
    re.compile(r"^\s*from\s+([\w.]+)\s+import\b"),                 # Python
    re.compile(r"^\s*import\s+([\w.]+)"),                           # Python / Java / Go single
    re.compile(r"""require\(\s*['"]([^'"]+)['"]\s*\)"""),           # CommonJS
    re.compile(r"""^\s*import\s.*?from\s+['"]([^'"]+)['"]"""),      # ES modules
    re.compile(r"""^\s*require(?:_relative)?\s+['"]([^'"]+)['"]"""),  # Ruby
    re.compile(r"^\s*use\s+(?:crate::)?([\w:]+)"),                   # Rust / PHP
]


class Snippet(BaseModel):
    file: str
    start_line: int
    end_line: int
    why: str
    text: str


class FailureContext(BaseModel):
    test_id: str
    snippets: list[Snippet]
    recent_changes: str = ""
    truncated: bool = False
    suspects: list[Suspect] = []   # ranked, best first (shown ones and further ones)
    further: list[Suspect] = []    # ranked but not shown: named for the model to open

    def render(self) -> str:
        """Markdown for a prompt: numbered source excerpts (the test, then the suspects in rank
        order, each saying why it is shown), further suspects by name, and recent changes."""
        parts = []
        for s in self.snippets:
            parts.append(f"### {s.file} lines {s.start_line}-{s.end_line} ({s.why})\n```\n{s.text}\n```")
        if self.further:
            listed = "\n".join(f"- `{s.file}:{s.start}-{s.end}` {s.function} — {'; '.join(s.reasons)}"
                               for s in self.further)
            parts.append(f"### Further suspects (not shown; open them if the code above is not the cause)\n{listed}")
        if self.recent_changes:
            parts.append(f"### Recent git changes touching these files\n```\n{self.recent_changes}\n```")
        return "\n\n".join(parts)


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " ...[line cut]"


def _snippet(index: SourceIndex, file: str, line: int | None, why: str, radius: int = SNIPPET_RADIUS) -> Snippet | None:
    lines = index.lines(file)
    if not lines:
        return None
    if line is None:
        start, end = 1, min(len(lines), 2 * radius)
    else:
        start, end = max(1, line - radius), min(len(lines), line + radius)
    # Long lines (minified code, data) are cut: one line must not eat the bound.
    text = "\n".join(f"{n:5d}| {_cut(lines[n - 1])}" for n in range(start, end + 1))
    return Snippet(file=file, start_line=start, end_line=end, why=why, text=text)


def _imported_files(index: SourceIndex, test_file: str) -> list[str]:
    """Project files the test file imports (best effort across languages)."""
    names: list[str] = []
    for line in index.lines(test_file)[:200]:
        for pattern in IMPORT_PATTERNS:
            m = pattern.search(line)
            if m:
                names.append(m.group(1))
                break
    files = index.files()
    base = test_file.rsplit("/", 1)[0] if "/" in test_file else ""
    found: list[str] = []
    for name in names:
        if name.startswith((".", "/")) and "/" in name:
            # "./cart", "../src/cart": relative to the test's directory.
            stem = posixpath.normpath(posixpath.join(base, name)).lstrip("/")
        elif name.startswith("."):
            # Python's "from .cart import" / "from ..shop import": one dot is the
            # test's package, each further dot one level up.
            dots = len(name) - len(name.lstrip("."))
            up = base.split("/") if base else []
            up = up[: max(0, len(up) - (dots - 1))]
            stem = "/".join(up + [name.lstrip(".").replace(".", "/")]).strip("/")
        else:
            stem = name.replace(".", "/").replace("::", "/")
        for f in files:
            no_ext = f.rsplit(".", 1)[0]
            if f != test_file and (no_ext == stem or no_ext.endswith("/" + stem) or no_ext == stem + "/__init__"
                                   or no_ext.endswith("/" + stem + "/index")):
                found.append(f)
                break
    return list(dict.fromkeys(found))[:MAX_IMPORTS]


def recent_changes(root: Path, files: list[str], limit_chars: int = 4_000) -> str:
    """``git log`` of the last commits touching ``files`` (empty outside a repository)."""
    if not files or not (root / ".git").exists():
        return ""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "log", "-n", "5", "--date=short", "--format=%h %ad %s", "--stat", "--", *files],
            capture_output=True, text=True, timeout=20, check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out[:limit_chars]


def _region_snippet(index: SourceIndex, file: str, start: int, end: int, why: str,
                    hide: Iterable[tuple[int, int]] = ()) -> Snippet | None:
    """Lines ``start``-``end`` of ``file``, numbered; each ``hide`` span is folded to one line."""
    lines = index.lines(file)
    if not lines:
        return None
    end = min(end, len(lines))
    folded = sorted((a, b) for a, b in hide if start <= a <= b <= end and b - a >= 2)
    out: list[str] = []
    n = start
    for a, b in folded:
        out += [f"{k:5d}| {_cut(lines[k - 1])}" for k in range(n, a)]
        out.append(f"     | ... lines {a}-{b} not shown ...")
        n = b + 1
    out += [f"{k:5d}| {_cut(lines[k - 1])}" for k in range(n, end + 1)]
    return Snippet(file=file, start_line=start, end_line=end, why=why, text="\n".join(out))


def _gaps(start: int, end: int, keep: set[int]) -> list[tuple[int, int]]:
    """The spans of ``start``-``end`` not in ``keep``."""
    spans: list[tuple[int, int]] = []
    run: int | None = None
    for k in range(start, end + 2):
        if k <= end and k not in keep:
            run = k if run is None else run
        elif run is not None:
            spans.append((run, k - 1))
            run = None
    return spans


def _suspect_snippet(index: SourceIndex, s: Suspect, region: Region | None, near: int | None,
                     ran: list[int], room: int) -> Snippet | None:
    """A suspect whole (its docstring folded) when it fits in ``room``; else the lines the failing
    test ran in it (coverage) or the lines around ``near`` (a frame in it), the rest folded."""
    why = f"suspect: {s.function} — " + "; ".join(s.reasons)
    doc = [region.doc] if region is not None and region.doc else []
    whole = _region_snippet(index, s.file, s.start, s.end, why, hide=doc)
    if whole is None or len(whole.text) <= room:
        return whole
    body = region.body_start if region is not None else s.start
    keep = set(range(s.start, body)) - set(range(doc[0][0], doc[0][1] + 1) if doc else ())
    if ran := [k for k in ran if s.start <= k <= s.end]:
        keep |= {k + d for k in ran for d in (-1, 0, 1)}
        how = "the lines the failing test ran shown"
    else:
        center = near if near is not None and s.start <= near <= s.end else body + SNIPPET_RADIUS
        keep |= set(range(center - SNIPPET_RADIUS, center + SNIPPET_RADIUS + 1))
        how = "the lines around the traceback shown" if near is not None else "its start shown"
    part = _region_snippet(index, s.file, s.start, s.end, f"{why} ({how})", hide=_gaps(s.start, s.end, keep))
    return part if part is not None and len(part.text) <= room else None


def build_context(root: Path, test: TestResult, classification: FailureClassification,
                  localizer: Localizer | None = None, others: Sequence[FailingTest] = ()) -> FailureContext:
    """The bounded context for one failing test: the test itself, then the code most likely to hold
    the bug (``analysis/localize.py``), whole functions in rank order within the budget, each with
    why it is shown, then further suspects by name; lines around the stack's frames and the files
    the test imports when nothing could be ranked."""
    index = localizer.index if localizer is not None else SourceIndex(root)
    localizer = localizer or Localizer(index)
    me = failing_test(test, classification)
    suspects = localizer.rank(me, others)
    snippets: list[Snippet] = []
    own = localizer.test_region(me)
    if own is not None and own.end - own.start <= 80:
        s = _region_snippet(index, own.file, own.start, own.end, "the failing test")
    elif test.file:
        s = _snippet(index, test.file, test.line, "the failing test", radius=20)
    else:
        s = None
    if s:
        snippets.append(s)
    used = sum(len(x.text) for x in snippets)
    frame_lines = {(f.file, f.line) for f in classification.project_frames}
    shown: list[Suspect] = []
    rest: list[Suspect] = []
    for sus in suspects:
        if own is not None and (sus.file, sus.start) == (own.file, own.start):
            continue
        near = next((line for file, line in frame_lines if file == sus.file and sus.start <= line <= sus.end), None)
        room = SUSPECT_CODE_CHARS - used if shown else max(SUSPECT_CODE_CHARS - used, FIRST_SUSPECT_CHARS)
        room = max(room, SMALL_SUSPECT_CHARS)
        region = next((r for r in localizer.regions(sus.file) if r.start == sus.start), None)
        ran = localizer.spectrum.files.get(sus.file, {}).get(test.id, []) if localizer.spectrum else []
        snip = _suspect_snippet(index, sus, region, near, ran, room) if room > 200 and len(shown) < MAX_SHOWN \
            else _suspect_snippet(index, sus, region, near, ran, SMALL_SUSPECT_CHARS) if len(shown) < MAX_SHOWN_SMALL \
            else None
        if snip is None:
            rest.append(sus)
            continue
        snippets.append(snip)
        shown.append(sus)
        used += len(snip.text)
    truncated = bool(rest)
    if not shown:  # nothing ranked: the frames and the imported files, as before localization
        for frame in classification.project_frames[:6]:
            if any(x.file == frame.file and x.start_line <= frame.line <= x.end_line for x in snippets):
                continue
            snip = _snippet(index, frame.file, frame.line, "stack frame")
            if snip:
                snippets.append(snip)
        if test.file:
            for f in _imported_files(index, test.file):
                if not any(x.file == f for x in snippets):
                    snip = _snippet(index, f, None, f"imported by {test.file}", radius=40)
                    if snip:
                        snippets.append(snip)
        kept: list[Snippet] = []
        size = 0
        for snip in snippets:
            if size + len(snip.text) > MAX_CONTEXT_CHARS:
                truncated = True
                break
            kept.append(snip)
            size += len(snip.text)
        snippets = kept
    changes = recent_changes(root, list(dict.fromkeys(x.file for x in snippets)))
    return FailureContext(test_id=test.id, snippets=snippets, recent_changes=changes, truncated=truncated,
                          suspects=[*shown, *rest][:MAX_LISTED], further=rest[:MAX_FURTHER])
