"""Compact changes (``domain/changes.py``) on a workspace's files: turned into
whole-file edits on the files as they are, and rebased by a three-way merge
when an accepted fix changed a file since the change was written.

A rebase needs the version the change was written on: the fixer keeps every
version it proposes a change to in the run directory (``Bases``, by hash).
Only the run's host has them; that is enough, since the run's queue checks
every candidate on that host (a candidate whose base is missing there, after
the run moved, is one the model is asked again).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel

from ..domain.changes import ChangeRefused, FileChange, apply_change, change_between, sha256
from ..domain.edits import Edit
from ..domain.errors import ErrorKind, GreenloopError
from ..git_command import GIT_ENV
from .backups import BackupStore, atomic_write

# A conflict shown to the model is cut to this many characters.
MOST_CONFLICT_CHARS = 4000


class Bases:
    """The versions of files changes were written on, by hash, in the run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.root = run_dir / "bases"

    def keep(self, text: str | None) -> None:
        digest = sha256(text)
        if text is not None and digest is not None and not (self.root / digest).is_file():
            atomic_write(self.root / digest, text.encode("utf-8"))

    def find(self, digest: str) -> str | None:
        path = self.root / digest
        return path.read_text(encoding="utf-8") if path.is_file() else None


def read(root: Path, path: str) -> str | None:
    target = root / path
    return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None


def edits_for(root: Path, changes: list[FileChange]) -> list[Edit]:
    """The whole-file edits ``changes`` make to the files under ``root``; a typed error
    when a file is not the version its change was written on."""
    edits: list[Edit] = []
    for change in changes:
        try:
            edits.append(Edit(path=change.path, content=apply_change(change, read(root, change.path))))
        except ChangeRefused as exc:
            raise GreenloopError(f"{exc}: it must be rebased first", kind=ErrorKind.VALIDATION_ERROR,
                                 path=change.path) from exc
    return edits


def apply_changes(store: BackupStore, test_id: str, attempt: int, changes: list[FileChange]) -> list[str]:
    """Back up and apply ``changes`` to ``store``'s workspace as the attempt's edits; safe to call
    again after a crash: what a dead worker applied of them is restored first, so each change meets
    the version it was written on."""
    store.restore(test_id, attempt)
    return store.apply(test_id, attempt, edits_for(store.workspace, changes))


class Rebased(BaseModel):
    """A change rebased on a file's current version: the change, or the conflict that stops it."""

    change: FileChange | None = None
    moved: bool = False  # the file had changed since the change was written (a merge was made)
    conflict: str | None = None


def rebase(root: Path, bases: Bases, change: FileChange) -> Rebased:
    """``change`` on the current version of its file under ``root``: as it is when the file
    has not moved, else by a three-way merge (base: the version it was written on)."""
    current = read(root, change.path)
    if sha256(current) == change.base_sha256:
        return Rebased(change=change)
    base = None if change.base_sha256 is None else bases.find(change.base_sha256)
    if change.base_sha256 is not None and base is None:
        return Rebased(moved=True, conflict=f"{change.path} changed since this fix was written, and the version "
                                            "it was written on is not kept on this worker")
    ours = apply_change(change, base)
    if ours == current:  # an accepted fix made the same change
        return Rebased(change=change_between(change.path, current, current), moved=True)
    if current is None or ours is None:
        what = "removed" if current is None else "created"
        return Rebased(moved=True, conflict=f"{change.path} was {what} by a fix accepted since this one was written")
    merged, conflicts = merge_file(current, base or "", ours)
    if conflicts:
        return Rebased(moved=True, conflict=f"{change.path}: {conflicts} conflict(s) with a fix accepted since this "
                                            f"one was written:\n{conflict_text(merged)}")
    return Rebased(change=change_between(change.path, current, merged), moved=True)


def merge_file(current: str, base: str, other: str) -> tuple[str, int]:
    """``git merge-file``: ``other``'s changes since ``base`` merged into ``current``; the
    result (with conflict markers) and how many conflicts it has."""
    with tempfile.TemporaryDirectory(prefix="greenloop-merge-") as folder:
        paths = [Path(folder, name) for name in ("accepted", "proposed-on", "proposed")]
        for path, text in zip(paths, (current, base, other), strict=True):
            path.write_text(text, encoding="utf-8")
        proc = subprocess.run(["git", "merge-file", "-p", "-L", "accepted now", "-L", "written on",
                               "-L", "this fix", *map(str, paths)],
                              capture_output=True, env=GIT_ENV, timeout=120, check=False)
    if proc.returncode < 0 or proc.returncode > 127:
        raise GreenloopError(f"git merge-file failed: {proc.stderr.decode(errors='replace')[-500:]}",
                             kind=ErrorKind.VALIDATION_ERROR)
    return proc.stdout.decode("utf-8", errors="replace"), proc.returncode


def conflict_text(merged: str) -> str:
    """The conflicting regions of a merge result, with their markers."""
    shown: list[str] = []
    inside = False
    for line in merged.splitlines():
        if line.startswith("<<<<<<< "):
            inside = True
        if inside:
            shown.append(line)
        if line.startswith(">>>>>>> "):
            inside = False
    return "\n".join(shown)[:MOST_CONFLICT_CHARS]
