"""Apply an attempt's edits with backups, and roll them back exactly, crash-safe.

Each attempt has its own backup folder in the run directory with a manifest
of what every touched file was before (its bytes, or that it did not exist),
written atomically *before* the first edit. Applying is idempotent: if a
worker dies half-way and the activity is retried, the partial edits are
first undone from the manifest, then applied again. Rolling back is
idempotent too. So the workspace always ends in exactly the state the
workflow history says.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
from pathlib import Path

from pydantic import BaseModel

from ..domain.edits import Edit
from ..domain.errors import ErrorKind, GreenloopError
from .policy import MAX_EDIT_SET_BYTES, EditRejected, check_content, confine

DELETED = "deleted"


class BackupEntry(BaseModel):
    path: str
    existed: bool
    mode: int | None = None
    # What the attempt left there: the sha256 of the bytes it wrote, or DELETED
    # (None in manifests written before it was recorded: nothing to check against).
    after_sha256: str | None = None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else DELETED


def _after(edit: Edit) -> str:
    return DELETED if edit.content is None else hashlib.sha256(edit.content.encode("utf-8")).hexdigest()


class Manifest(BaseModel):
    test_id: str
    attempt: int
    entries: list[BackupEntry]


def slug(test_id: str) -> str:
    """A file-name-safe, unique name for a test id."""
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", test_id)[:60]
    return f"{readable}-{hashlib.sha1(test_id.encode()).hexdigest()[:10]}"


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write via a temp file and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.greenloop-tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


class BackupStore:
    """Backups of one run's workspace, per test and attempt."""

    def __init__(self, run_dir: Path, workspace: Path) -> None:
        self.root = run_dir / "backups"
        self.workspace = workspace

    def attempt_dir(self, test_id: str, attempt: int) -> Path:
        return self.root / slug(test_id) / f"attempt-{attempt}"

    def _manifest(self, test_id: str, attempt: int) -> Manifest | None:
        path = self.attempt_dir(test_id, attempt) / "manifest.json"
        if not path.is_file():
            return None
        return Manifest.model_validate_json(path.read_text())

    def has(self, test_id: str, attempt: int) -> bool:
        """Whether ``test_id``'s ``attempt`` was applied here (its backup taken)."""
        return self._manifest(test_id, attempt) is not None

    def validate(self, edits: list[Edit], *, allow_production: bool = True) -> list[Edit]:
        """Confine and check every edit; the normalized edits, or ``EditRejected``."""
        total = 0
        out: list[Edit] = []
        seen: set[str] = set()
        for e in edits:
            rel = confine(self.workspace, e.path, allow_production=allow_production)
            if rel in seen:
                raise EditRejected(f"{rel}: edited twice in one edit set", path=rel)
            seen.add(rel)
            target = self.workspace / rel
            existing = target.read_bytes() if target.is_file() else None
            if target.exists() and not target.is_file():
                raise EditRejected(f"{rel}: is not a regular file", path=rel)
            check_content(rel, e.content, existing)
            total += len((e.content or "").encode())
            out.append(Edit(path=rel, content=e.content))
        if total > MAX_EDIT_SET_BYTES:
            raise EditRejected(f"the edit set is larger than {MAX_EDIT_SET_BYTES // 1024} KiB")
        return out

    def apply(self, test_id: str, attempt: int, edits: list[Edit], *, allow_production: bool = True) -> list[str]:
        """Back up, then apply ``edits``; safe to call again after a crash."""
        edits = self.validate(edits, allow_production=allow_production)
        folder = self.attempt_dir(test_id, attempt)
        if self._manifest(test_id, attempt) is not None:
            self.restore(test_id, attempt)  # a retried apply: undo what a dead worker did
        else:
            entries = []
            for e in edits:
                target = self.workspace / e.path
                if target.is_file():
                    atomic_write(folder / "files" / e.path, target.read_bytes())
                    entries.append(BackupEntry(path=e.path, existed=True, mode=target.stat().st_mode & 0o7777,
                                               after_sha256=_after(e)))
                else:
                    entries.append(BackupEntry(path=e.path, existed=False, after_sha256=_after(e)))
            manifest = Manifest(test_id=test_id, attempt=attempt, entries=entries)
            atomic_write(folder / "manifest.json", manifest.model_dump_json(indent=1).encode())
        for e in edits:
            target = self.workspace / e.path
            if e.content is None:
                target.unlink(missing_ok=True)
            else:
                mode = target.stat().st_mode & 0o7777 if target.is_file() else None
                atomic_write(target, e.content.encode("utf-8"), mode)
        return [e.path for e in edits]

    def restore(self, test_id: str, attempt: int, *, only_if_unchanged: bool = False) -> list[str]:
        """Put every file the attempt touched back as it was; idempotent.

        ``only_if_unchanged`` (a rollback by hand, later): refuse, changing nothing,
        when a file is no longer what the attempt left there: a later fix edited it,
        and restoring the whole file would silently take that fix back out too."""
        manifest = self._manifest(test_id, attempt)
        if manifest is None:
            return []
        if only_if_unchanged:
            changed = [e.path for e in manifest.entries
                       if e.after_sha256 is not None and _sha256(self.workspace / e.path) != e.after_sha256]
            if changed:
                raise GreenloopError(
                    f"later fixes changed {', '.join(changed)} after this one; roll those back first",
                    kind=ErrorKind.VALIDATION_ERROR, files=changed)
        folder = self.attempt_dir(test_id, attempt)
        for entry in manifest.entries:
            target = self.workspace / entry.path
            if entry.existed:
                atomic_write(target, (folder / "files" / entry.path).read_bytes(), entry.mode)
            elif target.is_file() or target.is_symlink():
                target.unlink()
        return [e.path for e in manifest.entries]

    def diff(self, test_id: str, attempt: int) -> str:
        """Unified diff from the backups to the workspace's current files."""
        manifest = self._manifest(test_id, attempt)
        if manifest is None:
            return ""
        folder = self.attempt_dir(test_id, attempt)
        chunks: list[str] = []
        for entry in manifest.entries:
            before = (folder / "files" / entry.path).read_text(errors="replace") if entry.existed else ""
            target = self.workspace / entry.path
            after = target.read_text(errors="replace") if target.is_file() else ""
            chunks.extend(difflib.unified_diff(
                before.splitlines(keepends=True), after.splitlines(keepends=True),
                fromfile=f"a/{entry.path}" if entry.existed else "/dev/null",
                tofile=f"b/{entry.path}" if target.is_file() else "/dev/null",
            ))
        return "".join(chunks)

    def discard(self, test_id: str) -> None:
        """Forget a test's backups (after the run is finalized)."""
        shutil.rmtree(self.root / slug(test_id), ignore_errors=True)

