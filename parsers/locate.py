"""Locate test definitions in a project's sources.

Many outputs name a test but not where it lives; the fixer needs a file and
a line. ``SourceIndex`` walks the project once (skipping dependency and build
folders, bounded in files and bytes) and answers regex searches over it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .models import TestResult
    from .run_output import RunOutput

SKIP_DIRS = {
    ".git", ".hg", ".svn", "node_modules", "target", "build", "out", "dist", ".venv", "venv",
    "__pycache__", ".pytest_cache", ".mypy_cache", ".tox", ".gradle", ".idea", "vendor",
    ".m2repo", "coverage", ".next", ".cache",
}
MAX_FILES = 20_000
MAX_FILE_BYTES = 2 * 1024 * 1024
ROOT_PLACEHOLDER = "<ROOT>"


class Location(NamedTuple):
    """Where a test is defined: a project file (relative POSIX path) and,
    when known, the 1-based line of its definition."""

    file: str
    line: int | None = None


class SourceIndex:
    """Read-only view of a project's source files, read lazily and cached."""

    def __init__(self, root: Path | None) -> None:
        self.root = root.resolve() if root is not None and root.is_dir() else None
        self._files: list[str] | None = None
        self._lines: dict[str, list[str]] = {}

    def files(self, suffixes: Iterable[str] | None = None) -> list[str]:
        """Relative POSIX paths of source files, optionally filtered by suffix."""
        if self._files is None:
            found: list[str] = []
            if self.root is not None:
                for dirpath, dirnames, filenames in os.walk(self.root):
                    dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                    for name in sorted(filenames):
                        full = Path(dirpath, name)
                        try:
                            if full.is_symlink() or full.stat().st_size > MAX_FILE_BYTES:
                                continue
                        except OSError:
                            continue
                        found.append(full.relative_to(self.root).as_posix())
                        if len(found) >= MAX_FILES:
                            break
                    if len(found) >= MAX_FILES:
                        break
            self._files = found
        if suffixes is None:
            return self._files
        sfx = tuple(suffixes)
        return [f for f in self._files if f.endswith(sfx)]

    def lines(self, rel: str) -> list[str]:
        """The lines of a file (empty when it does not exist or cannot be read)."""
        if rel not in self._lines:
            text = ""
            if self.root is not None:
                p = (self.root / rel).resolve()
                if p.is_relative_to(self.root) and p.is_file() and p.stat().st_size <= MAX_FILE_BYTES:
                    text = p.read_text(encoding="utf-8", errors="replace")
            self._lines[rel] = text.splitlines()
        return self._lines[rel]

    def exists(self, rel: str) -> bool:
        return rel in set(self.files())

    def find_in(self, rel: str, pattern: re.Pattern[str], start: int = 0) -> int | None:
        """1-based line of the first match of ``pattern`` in ``rel`` at or after
        0-based line ``start``."""
        for i, line in enumerate(self.lines(rel)[start:], start=start):
            if pattern.search(line):
                return i + 1
        return None

    def find(self, pattern: re.Pattern[str], suffixes: Iterable[str] | None = None) -> list[tuple[str, int]]:
        """Every (file, 1-based line) whose line matches ``pattern``."""
        hits: list[tuple[str, int]] = []
        for rel in self.files(suffixes):
            for i, line in enumerate(self.lines(rel)):
                if pattern.search(line):
                    hits.append((rel, i + 1))
        return hits

    def find_one(
        self, pattern: re.Pattern[str], suffixes: Iterable[str] | None = None, prefer: str | None = None
    ) -> tuple[str, int] | None:
        """The single best match: in ``prefer`` (a file) when it matches there,
        otherwise the only match in the project; ``None`` when ambiguous."""
        if prefer is not None and (line := self.find_in(prefer, pattern)) is not None:
            return prefer, line
        hits = self.find(pattern, suffixes)
        files = {f for f, _ in hits}
        if len(files) == 1:
            return hits[0]
        return None

    def relative(self, path: str | None) -> str | None:
        """A path as printed by a tool, made relative to the project root.

        Accepts ``<ROOT>/x``, an absolute path under the root, ``./x`` or a
        relative path; returns ``None`` for paths outside the project.
        """
        if not path:
            return None
        path = path.strip()
        if path.startswith(ROOT_PLACEHOLDER):
            path = path[len(ROOT_PLACEHOLDER):].lstrip("/")
        elif path.startswith("/"):
            if self.root is None:
                return None
            try:
                path = Path(path).resolve().relative_to(self.root).as_posix()
            except (ValueError, OSError):
                return None
        rel = PurePosixPath(path).as_posix()
        while rel.startswith("./"):
            rel = rel[2:]
        if rel.startswith("../"):
            return None
        return rel


def literal_call(func_names: Iterable[str], title: str) -> re.Pattern[str]:
    """Regex for a call like ``it('title'`` / ``test("title"`` / ``describe(`title```
    with any of ``func_names`` (with ``.only``/``.skip``/``.each`` variants)."""
    names = "|".join(re.escape(n) for n in func_names)
    q = re.escape(title)
    return re.compile(rf"\b(?:{names})(?:\.\w+)*\s*(?:\([^)]*\)\s*)?\(\s*(['\"`]){q}\1")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob (``**``, ``*``, ``?``, ``{a,b}``) as a regex over relative
    POSIX paths (fnmatch's ``*`` would cross ``/``)."""
    pattern = pattern.strip().strip("'\"")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif c == "*":
            out.append(r"[^/]*")
            i += 1
        elif c == "?":
            out.append(r"[^/]")
            i += 1
        elif c == "{" and (j := pattern.find("}", i)) > i:
            out.append("(?:" + "|".join(re.escape(x) for x in pattern[i + 1:j].split(",")) + ")")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out))


def located_while_parsing(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``Parser.locate`` of a framework whose parser places its tests while it
    reads the output (where the output's own locations and the sources are
    read together): the normalizer has nothing more to find for it."""
    return {}
