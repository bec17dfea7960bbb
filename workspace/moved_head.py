"""A branch head that moved during a run: the user committed while the run worked.

At the end the run fetches the user's ref again (read-only: the user's working tree and
uncommitted work are never touched), compares it with the commit the run started from
and, when it moved, replays the run's fixes onto the new head in a temporary worktree:
a clean replay moves the run's branch there; a conflict leaves it on the base and names
the conflicting files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pydantic import BaseModel, Field

from ..domain.errors import GreenloopError
from ..git_command import git
from .prepare import is_git_url

_STARTING_POINT = "greenloop: starting point"


class HeadMove(BaseModel):
    """What became of the user's branch head during the run."""

    base: str  # the user's commit the run started from
    head: str  # the branch head at the end
    rebased: bool = False  # the fixes now sit on ``head``
    conflicts: list[str] = Field(default_factory=list)  # files whose replay conflicted (fixes stay on ``base``)

    def sentence(self) -> str:
        moved = f"the branch moved from {self.base[:10]} to {self.head[:10]} during the run"
        if self.rebased:
            return f"{moved}: the fixes were rebased onto {self.head[:10]}"
        if self.conflicts:
            return (f"{moved}: the fixes conflict with it in {', '.join(self.conflicts)}; "
                    f"the branch and patch stay on {self.base[:10]}")
        return f"{moved}: the branch and patch stay on {self.base[:10]}"


def _rebasing(worktree: Path) -> bool:
    return any((worktree / git(worktree, "rev-parse", "--git-path", d)).exists() for d in ("rebase-merge", "rebase-apply"))


def _descends(repo: Path, commit: str, ancestor: str) -> bool:
    try:
        git(repo, "merge-base", "--is-ancestor", ancestor, commit)
    except GreenloopError:
        return False
    return True


def source_commit(workspace: Path, base: str) -> str | None:
    """The user's commit the run started from: ``base``, or its parent when ``base`` is the commit
    that holds the user's uncommitted changes (None: the repository had no commit)."""
    subject = git(workspace, "log", "-1", "--format=%s", base)
    if not subject.startswith(_STARTING_POINT):
        return base
    return git(workspace, "rev-parse", "--verify", "-q", f"{base}^", check=False) or None


def current_head(repo: str, ref: str | None, workspace: Path) -> str | None:
    """The user's ref (or HEAD) now, fetched into ``workspace``; None when it cannot be read."""
    src = repo if is_git_url(repo) else str(Path(repo).expanduser())
    if not is_git_url(repo) and not (Path(src) / ".git").exists():
        return None
    try:
        git(workspace, "fetch", "--quiet", "--no-tags", src, ref or "HEAD")
    except GreenloopError:
        return None  # unreachable now, or the ref is a commit: nothing to follow
    return git(workspace, "rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}", check=False) or None


def follow_head(workspace: Path, repo: str, ref: str | None, base: str) -> HeadMove | None:
    """None when the user's branch did not move (or cannot be read); otherwise the move, and the
    run's commits after ``base`` replayed onto the new head when they apply cleanly."""
    origin = source_commit(workspace, base)
    head = current_head(repo, ref, workspace)
    if origin is None or head is None or head == origin:
        return None
    move = HeadMove(base=origin, head=head)
    if git(workspace, "rev-parse", "HEAD") == base:
        return move  # no fixes to carry
    if _descends(workspace, "HEAD", head):
        move.rebased = True  # done already (a retried finish)
        return move
    scratch = workspace.parent / "rebase"
    shutil.rmtree(scratch, ignore_errors=True)
    git(workspace, "worktree", "add", "--quiet", "--detach", str(scratch), "HEAD")
    try:
        git(scratch, "rebase", "--quiet", "--onto", head, base, check=False, env={"GIT_EDITOR": "true"})
        if _rebasing(scratch):
            move.conflicts = git(scratch, "diff", "--name-only", "--diff-filter=U", check=False).splitlines()
            git(scratch, "rebase", "--abort", check=False)
            move.conflicts = move.conflicts or ["(the replay failed)"]
            return move
        tip = git(scratch, "rev-parse", "HEAD")
        if not _descends(scratch, tip, head):
            move.conflicts = ["(the replay failed)"]
            return move
    finally:
        git(workspace, "worktree", "remove", "--force", str(scratch), check=False)
    git(workspace, "reset", "--quiet", "--keep", tip, check=False)
    move.rebased = git(workspace, "rev-parse", "HEAD") == tip
    return move
