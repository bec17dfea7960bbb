"""A fix carried compactly: per file, the lines it replaces in the version it was
written on (``FileChange``), never the whole file.

The validation queue's payloads (a child's candidate, a batch check's input,
the accepted fixes a run carries across continue-as-new and replays on a
rebuild) hold these, so they grow with what the fixes change, not with the
size of the files they touch. A change names the version it applies to by its
hash (``base_sha256``): applied to another version it is refused, and the run
rebases it first (a three-way merge, ``workspace/changes.py``).
"""

from __future__ import annotations

import difflib
import hashlib

from pydantic import BaseModel


class Hunk(BaseModel):
    """The base's lines ``start:end`` (0-based, end excluded) are replaced by ``lines``."""

    start: int
    end: int
    lines: list[str]


class FileChange(BaseModel):
    """One file's change: ``base_sha256`` None means the file did not exist,
    ``deleted`` that the change removes it."""

    path: str
    base_sha256: str | None
    hunks: list[Hunk]
    deleted: bool = False

    def size(self) -> int:
        """About what it weighs in a payload (its new lines)."""
        return sum(len(line) for h in self.hunks for line in h.lines)

    def changed_lines(self) -> int:
        """The lines it removes and adds (a diff's ``-`` and ``+`` lines)."""
        return sum(h.end - h.start + len(h.lines) for h in self.hunks)


class ChangeRefused(Exception):
    """A change applied to a version of its file other than the one it was written on."""


def sha256(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def change_between(path: str, before: str | None, after: str | None) -> FileChange:
    """The change that turns ``before`` into ``after`` (None: absent)."""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    # The lines both share at the start and at the end are left out of the comparison: a fix
    # changes a few places of a file, and comparing whole large files line by line is slow.
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    middle_old, middle_new = old[head:len(old) - tail], new[head:len(new) - tail]
    hunks = [Hunk(start=head + i1, end=head + i2, lines=middle_new[j1:j2])
             for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=middle_old, b=middle_new).get_opcodes()
             if tag != "equal"]
    return FileChange(path=path, base_sha256=sha256(before), hunks=[] if after is None else hunks,
                      deleted=after is None)


def apply_change(change: FileChange, base: str | None) -> str | None:
    """The file after ``change``, applied to ``base`` (None: absent); ``ChangeRefused``
    when ``base`` is not the version the change was written on."""
    if sha256(base) != change.base_sha256:
        raise ChangeRefused(f"{change.path} is not the version this change was written on")
    if change.deleted:
        return None
    lines = (base or "").splitlines(keepends=True)
    for hunk in sorted(change.hunks, key=lambda h: h.start, reverse=True):
        lines[hunk.start:hunk.end] = hunk.lines
    return "".join(lines)


def changes_key(changes: list[FileChange]) -> str:
    """The changes' hash: what a check's result is known by."""
    body = "\0".join(f"{c.path}\0{c.base_sha256}\0{c.deleted}\0" + "\1".join(
        f"{h.start}:{h.end}:" + "".join(h.lines) for h in c.hunks) for c in changes)
    return hashlib.sha256(body.encode()).hexdigest()[:16]
