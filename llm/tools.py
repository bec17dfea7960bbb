"""The tools the model uses, over an overlay of the workspace.

Reads see the workspace with the model's own pending edits on top, so it can
check what it wrote; edits go to the overlay only, never to disk. The
activity returns the overlay as an edit set and the workflow applies it
(with backups). Every edit is confined by ``workspace.policy`` at once, and
a refused or malformed call is answered with an error the model can act on.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..domain.edits import Edit
from ..parsers.locate import SKIP_DIRS
from ..workspace.policy import EditRejected, check_content, confine
from .trim import RESULT_CHARS, trim

MAX_READ_CHARS = RESULT_CHARS
MAX_SEARCH_HITS = 60

# The search tool beside Anthropic's text editor (which has no search), in every conversation.
SEARCH_TOOL: dict[str, Any] = {
    "name": "search", "description": "Search the repository's text files for a regular expression; "
    "answers path:line: text for each matching line.",
    "input_schema": {"type": "object", "properties": {
        "pattern": {"type": "string", "description": "a Python regular expression"},
        "glob": {"type": "string", "description": "only files matching this, e.g. src/**/*.py"}},
        "required": ["pattern"]}}
# Greenloop's earlier tool declarations: still answered when called (scenarios use them).
READ_TOOLS: list[dict[str, Any]] = [
    {"name": "read_file", "description": "Read a text file of the repository, with line numbers.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string", "description": "Path relative to the repository root"},
         "start_line": {"type": "integer", "minimum": 1}, "end_line": {"type": "integer", "minimum": 1}},
         "required": ["path"]}},
    {"name": "list_dir", "description": "List a directory of the repository.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string", "default": "."}}}},
    {"name": "search", "description": "Search the repository's text files for a regular expression.",
     "input_schema": {"type": "object", "properties": {
         "pattern": {"type": "string"}, "glob": {"type": "string", "description": "e.g. src/**/*.py"}},
         "required": ["pattern"]}},
]
EDIT_TOOLS: list[dict[str, Any]] = [
    {"name": "replace_in_file",
     "description": "Replace one exact, unique occurrence of old_text with new_text in a file.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "old_text": {"type": "string"}, "new_text": {"type": "string"}},
         "required": ["path", "old_text", "new_text"]}},
    {"name": "insert_lines", "description": "Insert text after line number `after_line` (0 inserts at the top).",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "after_line": {"type": "integer", "minimum": 0}, "text": {"type": "string"}},
         "required": ["path", "after_line", "text"]}},
    {"name": "create_file", "description": "Create a new file (it must not exist yet).",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}},
]


class ToolError(Exception):
    """A tool call the model must correct (answered as an error result)."""


class Overlay:
    """The workspace seen through the model's pending edits."""

    def __init__(self, root: Path, *, allow_production: bool = True) -> None:
        self.root = root
        self.allow_production = allow_production
        self.changes: dict[str, str | None] = {}
        self.malformed: list[str] = []
        self.refused: list[str] = []

    # --- reading ---------------------------------------------------------------

    def _read_disk(self, rel: str) -> str | None:
        p = self.root / rel
        if not p.is_file() or p.is_symlink():
            return None
        data = p.read_bytes()
        if b"\x00" in data[:8192]:
            raise ToolError(f"{rel} is a binary file")
        return data.decode("utf-8", errors="replace")

    def text(self, rel: str) -> str | None:
        """Current content of ``rel`` (overlay first), None when absent."""
        if rel in self.changes:
            return self.changes[rel]
        return self._read_disk(rel)

    def resolve(self, path: Any, *, for_edit: bool = False) -> str:
        """``path`` as a repository-relative path, confined; a ``ToolError`` when it is not allowed."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("`path` must be a non-empty string")
        try:
            return confine(self.root, path, allow_production=self.allow_production or not for_edit)
        except EditRejected as exc:
            if for_edit:
                self.refused.append(exc.message)
            raise ToolError(f"refused: {exc.message}") from None

    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        rel = self.resolve(path)
        text = self.text(rel)
        if text is None:
            raise ToolError(f"{rel} does not exist")
        lines = text.splitlines()
        start = max(1, start_line or 1)
        end = min(len(lines), end_line or len(lines))
        out = trim("\n".join(f"{n:5d}| {lines[n - 1]}" for n in range(start, end + 1)), MAX_READ_CHARS,
                   "read a smaller line range to see them")
        return out or "(empty file)"

    def _all_files(self) -> list[str]:
        files: set[str] = set()
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".greenloop")]
            for name in filenames:
                files.add(Path(dirpath, name).relative_to(self.root).as_posix())
            if len(files) > 50_000:
                break
        for rel, content in self.changes.items():
            if content is None:
                files.discard(rel)
            else:
                files.add(rel)
        return sorted(files)

    def list_dir(self, path: str = ".") -> str:
        prefix = "" if path in (".", "", "./") else self.resolve(path).rstrip("/") + "/"
        entries: set[str] = set()
        for f in self._all_files():
            if f.startswith(prefix):
                rest = f[len(prefix):]
                entries.add(rest.split("/", 1)[0] + ("/" if "/" in rest else ""))
        if not entries:
            raise ToolError(f"{path} is empty or does not exist")
        return "\n".join(sorted(entries))

    def search(self, pattern: str, glob: str | None = None) -> str:
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"bad regular expression: {exc}") from None
        hits: list[str] = []
        for f in self._all_files():
            if glob and not fnmatch.fnmatch(f, glob):
                continue
            try:
                text = self.text(f)
            except ToolError:
                continue
            for n, line in enumerate((text or "").splitlines(), 1):
                if rx.search(line):
                    hits.append(f"{f}:{n}: {line.strip()[:200]}")
                    if len(hits) >= MAX_SEARCH_HITS:
                        return "\n".join(hits) + "\n...[more matches: narrow the search]"
        return "\n".join(hits) or "no matches"

    # --- editing -----------------------------------------------------------------

    def write(self, rel: str, content: str) -> None:
        """Put ``content`` in the overlay, after the edit policy's content checks."""
        existing = (self.root / rel).read_bytes() if (self.root / rel).is_file() else None
        try:
            check_content(rel, content, existing)
        except EditRejected as exc:
            self.refused.append(exc.message)
            raise ToolError(f"refused: {exc.message}") from None
        self.changes[rel] = content

    def replace_in_file(self, path: str, old_text: str, new_text: str) -> str:
        rel = self.resolve(path, for_edit=True)
        text = self.text(rel)
        if text is None:
            raise ToolError(f"{rel} does not exist (use create_file)")
        if not isinstance(old_text, str) or not isinstance(new_text, str) or old_text == "":
            raise ToolError("old_text must be a non-empty string and new_text a string")
        count = text.count(old_text)
        if count != 1:
            raise ToolError(f"old_text occurs {count} times in {rel}; it must occur exactly once")
        self.write(rel, text.replace(old_text, new_text, 1))
        return f"replaced 1 occurrence in {rel}"

    def insert_lines(self, path: str, after_line: int, text: str) -> str:
        rel = self.resolve(path, for_edit=True)
        current = self.text(rel)
        if current is None:
            raise ToolError(f"{rel} does not exist (use create_file)")
        lines = current.splitlines(keepends=True)
        if not isinstance(after_line, int) or not 0 <= after_line <= len(lines):
            raise ToolError(f"after_line must be between 0 and {len(lines)}")
        insert = text if text.endswith("\n") else text + "\n"
        self.write(rel, "".join(lines[:after_line]) + insert + "".join(lines[after_line:]))
        return f"inserted {insert.count(chr(10))} line(s) into {rel} after line {after_line}"

    def create_file(self, path: str, content: str) -> str:
        rel = self.resolve(path, for_edit=True)
        if self.text(rel) is not None:
            raise ToolError(f"{rel} already exists (use replace_in_file)")
        self.write(rel, content)
        return f"created {rel}"

    # --- dispatch ----------------------------------------------------------------

    def call(self, name: str, args: Any, *, allow_edits: bool,
             more: dict[str, Callable[..., str]] | None = None) -> tuple[str, bool]:
        """Run one tool call; returns (result text, is_error). ``more``: further tools by name (the
        text-editor tool, ``llm/editor.py``). Greenloop's own tool names (``read_file``,
        ``replace_in_file``...) keep working, so scenarios written with them still run."""
        tools: dict[str, Callable[..., str]] = {"read_file": self.read_file, "list_dir": self.list_dir,
                                                "search": self.search}
        if allow_edits:
            tools |= {"replace_in_file": self.replace_in_file, "insert_lines": self.insert_lines,
                      "create_file": self.create_file}
        tools |= more or {}
        fn = tools.get(name)
        if fn is None:
            self.malformed.append(f"unknown tool {name!r}")
            return f"error: unknown tool {name!r}; available: {', '.join(tools)}", True
        if not isinstance(args, dict):
            self.malformed.append(f"{name}: input is not an object")
            return "error: the tool input must be a JSON object", True
        try:
            return fn(**args), False
        except TypeError as exc:
            self.malformed.append(f"{name}: {exc}")
            return f"error: bad arguments for {name}: {exc}", True
        except ToolError as exc:
            return f"error: {exc}", True

    def edits(self) -> list[Edit]:
        """The pending changes that differ from the disk, as an edit set."""
        out = []
        for rel, content in sorted(self.changes.items()):
            if content != self._read_disk(rel):
                out.append(Edit(path=rel, content=content))
        return out
