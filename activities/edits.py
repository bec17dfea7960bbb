"""Activities that apply an attempt's fix (its compact changes, with backups) and roll it back."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel
from temporalio import activity

from ..domain.changes import FileChange
from ..domain.workspace import Workspace
from ..workspace import worktree
from ..workspace.backups import BackupStore
from ..workspace.changes import apply_changes
from ..workspace.events import log_event
from .errors import typed_errors
from .host import on_host, require_file


class ApplyInput(BaseModel):
    workspace: Workspace
    test_id: str
    attempt: int
    changes: list[FileChange]  # the fix, compact: never whole files (see activities/fixing.py)


class AppliedEdits(BaseModel):
    files: list[str]
    diff: str


class RollbackInput(BaseModel):
    workspace: Workspace
    test_id: str
    attempt: int
    # A fix merged from a worktree (concurrency > 1) is taken back out with this patch, not from backups.
    patch: str | None = None
    # Asked for by a person after the fix was accepted: refused when later fixes changed its files.
    by_hand: bool = False


def _store(ws: Workspace) -> BackupStore:
    return BackupStore(Path(ws.run_dir), Path(ws.path))


@activity.defn
@typed_errors
@on_host
async def apply_edits(inp: ApplyInput) -> AppliedEdits:
    """Back up and apply; a retry after a crash redoes it exactly once."""
    store = _store(inp.workspace)
    files = await asyncio.to_thread(apply_changes, store, inp.test_id, inp.attempt, inp.changes)
    diff = await asyncio.to_thread(store.diff, inp.test_id, inp.attempt)
    log_event(inp.workspace.run_dir, "fix_applied", test=inp.test_id, attempt=inp.attempt, files=files)
    return AppliedEdits(files=files, diff=diff[-20_000:])


@activity.defn
@typed_errors
@on_host
async def rollback_edits(inp: RollbackInput) -> list[str]:
    """Restore every file the attempt touched; idempotent. A fix merged from a
    worktree is taken back out with its patch instead (all or nothing)."""
    if inp.patch is not None:
        patch = require_file(inp.patch, "the merged fix's patch")
        files = await asyncio.to_thread(worktree.unapply, Path(inp.workspace.path), patch)
        log_event(inp.workspace.run_dir, "rolled_back", test=inp.test_id, patch=inp.patch, files=files)
        return files
    files = await asyncio.to_thread(_store(inp.workspace).restore, inp.test_id, inp.attempt,
                                    only_if_unchanged=inp.by_hand)
    log_event(inp.workspace.run_dir, "rolled_back", test=inp.test_id, attempt=inp.attempt, files=files)
    return files
