"""The context a fixer needs for one failure (context-aware
analysis): the failing test's source, the project frames of its stack with
surrounding lines, the project files the test imports, and recent git
changes touching them, all bounded in size."""

from __future__ import annotations

import posixpath
import re
import subprocess
from pathlib import Path

from pydantic import BaseModel

from .patterns import FailureClassification
from ..parsers.locate import SourceIndex
from ..parsers.models import TestResult

MAX_CONTEXT_CHARS = 24_000
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

    def render(self) -> str:
        """Markdown for a prompt: numbered source excerpts and recent changes."""
        parts = []
        for s in self.snippets:
            parts.append(f"### {s.file} lines {s.start_line}-{s.end_line} ({s.why})\n```\n{s.text}\n```")
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


def build_context(root: Path, test: TestResult, classification: FailureClassification) -> FailureContext:
    """Collect the bounded context for one failing test."""
    index = SourceIndex(root)
    snippets: list[Snippet] = []
    if test.file:
        s = _snippet(index, test.file, test.line, "the failing test", radius=20)
        if s:
            snippets.append(s)
    for frame in classification.project_frames[:6]:
        if any(s.file == frame.file and s.start_line <= frame.line <= s.end_line for s in snippets):
            continue
        s = _snippet(index, frame.file, frame.line, "stack frame")
        if s:
            snippets.append(s)
    if test.file:
        for f in _imported_files(index, test.file):
            if not any(s.file == f for s in snippets):
                s = _snippet(index, f, None, f"imported by {test.file}", radius=40)
                if s:
                    snippets.append(s)
    kept: list[Snippet] = []
    size = 0
    truncated = False
    for s in snippets:
        if size + len(s.text) > MAX_CONTEXT_CHARS:
            truncated = True
            break
        kept.append(s)
        size += len(s.text)
    changes = recent_changes(root, list(dict.fromkeys(s.file for s in kept)))
    return FailureContext(test_id=test.id, snippets=kept, recent_changes=changes, truncated=truncated)
