"""Git worktrees for fixing tests in parallel (``concurrency > 1``).

Each test in flight gets its own worktree of the run's workspace, started
from the workspace's *current* files (earlier merged fixes included, even
though they are not committed yet). When its fix is accepted, the fix is
merged back with git's own three-way merge: the run workspace's current
files and the fix are both commits on top of the worktree's starting point,
so ``git merge-tree`` merges them against exactly that base. A fix that
does not merge cleanly touches nothing. What was applied is kept as a patch
(a plain ``git apply`` patch, headed by the trees before and after it), so a
rollback by hand can take it back out: ``git apply -R``, or a three-way
merge when later fixes changed lines next to it.

Pure git and file I/O; the activities in ``activities/workspace.py`` call it.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from pathlib import Path

from pydantic import BaseModel

from ..domain.errors import ErrorKind, GreenloopError
from ..git_command import git
from .prepare import write_patch

OID = re.compile(r"^[0-9a-f]{40,64}$")
HEADER = "greenloop-merge:"  # first line of a merge's patch: the trees before and after it


class MergeOutcome(BaseModel):
    """Whether a fix went into the workspace, and if not, why."""

    merged: bool
    reason: str = ""
    files: list[str] = []  # the workspace files the merge changed (or the conflicting ones)


def _with_index(workspace: Path, seed: str | None) -> tuple[dict[str, str], Path]:
    """A private git index (so the workspace's own index is never touched), seeded
    from the workspace's index or from a commit's tree."""
    folder = Path(tempfile.mkdtemp(prefix="greenloop-index-"))
    index = folder / "index"
    env = {"GIT_INDEX_FILE": str(index)}
    if seed is None:
        real = Path(git(workspace, "rev-parse", "--git-path", "index"))
        real = real if real.is_absolute() else workspace / real
        if real.is_file():
            # a warm start: unchanged files are not rehashed. copy2 keeps the index's mtime,
            # which git's racy-clean check compares files against (a fresh mtime would
            # hide a same-size edit made in the second the index was written)
            shutil.copy2(real, index)
    else:
        git(workspace, "read-tree", seed, env=env)
    return env, folder


def content_tree(workspace: Path) -> str:
    """The git tree of every file in the workspace as it is now, untracked ones included
    (ignored ones not): the workspace's content digest (equal trees, equal files). The
    workspace and its index are not changed."""
    env, folder = _with_index(workspace, None)
    try:
        git(workspace, "add", "-A", env=env)
        return git(workspace, "write-tree", env=env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def snapshot(workspace: Path, parent: str, message: str) -> str:
    """A commit (on ``parent``) of every file in the workspace as it is now,
    untracked ones included (ignored ones not); the workspace is not changed."""
    return git(workspace, "commit-tree", content_tree(workspace), "-p", parent, "-m", message)


def _environment_dir(path: Path) -> bool:
    """A dependency folder (``node_modules``, a virtualenv): never copied into a
    worktree; the project's environment is linked or mounted there instead
    (``projectenv.attach``)."""
    return not path.is_symlink() and (path.name == "node_modules" or (path / "pyvenv.cfg").is_file())


def _copy_ignored(workspace: Path, target: Path) -> None:
    """Copy what git ignores but the tests may need (build output, generated files),
    not the dependency folders (``_environment_dir``)."""
    listing = git(workspace, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z")
    for rel in filter(None, listing.split("\0")):
        rel = rel.rstrip("/")
        if rel == ".greenloop" or rel.startswith(".greenloop/"):
            continue
        src, dst = workspace / rel, target / rel
        if _environment_dir(src):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir() and not src.is_symlink():
            shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
        elif src.exists() or src.is_symlink():
            shutil.copy2(src, dst, follow_symlinks=False)


# ``git worktree add`` and ``prune`` on one repository at once race (a prune removes the
# ``.git/worktrees`` folder an add is writing in): this process makes and removes worktrees
# one at a time (checks side by side run in threads of one worker).
_WORKTREES = threading.RLock()


def create(workspace: Path, target: Path) -> str:
    """A detached worktree at ``target`` holding the workspace's current files;
    returns its starting-point commit. Safe to call again (it starts over)."""
    remove(workspace, target)
    start = snapshot(workspace, git(workspace, "rev-parse", "HEAD"), "greenloop: worktree starting point")
    target.parent.mkdir(parents=True, exist_ok=True)
    with _WORKTREES:
        git(workspace, "worktree", "add", "--quiet", "--detach", str(target), start)
    _copy_ignored(workspace, target)
    return start


def fix_commit(worktree: Path, start: str, files: list[str]) -> str:
    """A commit (on ``start``) of the worktree's versions of ``files`` only: the fix,
    without whatever running the tests left behind."""
    env, folder = _with_index(worktree, start)
    try:
        known = set(git(worktree, "ls-files", "-z", "--", *files, env=env).split("\0")) if files else set()
        files = [f for f in files if f in known or (worktree / f).exists() or (worktree / f).is_symlink()]
        if files:  # (a path that exists on neither side would make ``git add`` fail)
            git(worktree, "add", "-A", "--", *files, env=env)
        tree = git(worktree, "write-tree", env=env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return git(worktree, "commit-tree", tree, "-p", start, "-m", "greenloop: fix")


def _changed(repo: Path, base: str, head: str) -> list[str]:
    out = git(repo, "diff", "--name-only", "--no-renames", "-z", base, head)
    return [p for p in out.split("\0") if p]


def merge(workspace: Path, start: str, fix: str, patch: Path) -> MergeOutcome:
    """Merge the fix (a commit on ``start``) into the workspace's current files.

    Both sides changed from ``start``: the workspace by fixes merged since,
    the fix by its own edits. A clean three-way merge is applied to the
    workspace and written to ``patch`` (what ``unapply`` takes back out); a
    conflict changes nothing and says which files clash."""
    current = snapshot(workspace, start, "greenloop: workspace before merge")
    try:
        merged_tree, clashing = _merge_trees(workspace, current, fix)
    except _NoMergeTree:  # git < 2.38: the fix's patch must apply as it is
        return _apply_fix_patch(workspace, start, fix, patch)
    if merged_tree is None:
        return MergeOutcome(merged=False, files=clashing,
                            reason="it conflicts with fixes merged since it started, in " + ", ".join(clashing))
    files = _changed(workspace, current, merged_tree)
    # The trees before and after let ``unapply`` take the fix back out by a three-way merge too.
    before = git(workspace, "rev-parse", f"{current}^{{tree}}")
    write_patch(workspace, current, merged_tree, patch, header=f"{HEADER} {before} {merged_tree}\n")
    if files:
        apply(workspace, patch)
    return MergeOutcome(merged=True, files=files)


class _NoMergeTree(Exception):
    pass


def _merge_trees(workspace: Path, ours: str, theirs: str) -> tuple[str | None, list[str]]:
    """Three-way merge of two commits (against their merge base) without touching
    any working tree: (the merged tree, []) or (None, the clashing files)."""
    out = git(workspace, "merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs, check=False)
    lines = out.splitlines()
    if not lines or not OID.match(lines[0]):
        raise _NoMergeTree(out)
    if len(lines) > 1:
        return None, sorted({ln for ln in lines[1:] if ln})
    return lines[0], []


def _apply_fix_patch(workspace: Path, start: str, fix: str, patch: Path) -> MergeOutcome:
    write_patch(workspace, start, fix, patch)
    files = _changed(workspace, start, fix)
    if not files:
        return MergeOutcome(merged=True)
    try:
        apply(workspace, patch)
    except GreenloopError as exc:
        patch.unlink(missing_ok=True)
        return MergeOutcome(merged=False, files=files, reason=f"its patch does not apply: {exc.message}")
    return MergeOutcome(merged=True, files=files)


def apply(workspace: Path, patch: Path, *, reverse: bool = False) -> None:
    """Apply (or take back out) a patch to the workspace's files, all or nothing:
    checked first, so a patch that does not apply changes nothing."""
    problem = apply_problem(workspace, patch, reverse=reverse)
    if problem is not None:
        what = "taken back out" if reverse else "applied"
        raise GreenloopError(f"the patch {patch.name} cannot be {what} cleanly: {problem}",
                             kind=ErrorKind.VALIDATION_ERROR, patch=str(patch))
    git(workspace, "apply", *_apply_flags(reverse), str(patch))


def apply_problem(workspace: Path, patch: Path, *, reverse: bool = False) -> str | None:
    """Why ``patch`` would not apply (or, ``reverse``, not come back out) cleanly now; None when it would."""
    try:
        git(workspace, "apply", "--check", *_apply_flags(reverse), str(patch))
    except GreenloopError as exc:
        return exc.message
    return None


def _apply_flags(reverse: bool) -> list[str]:
    return ["--binary", "--whitespace=nowarn"] + (["-R"] if reverse else [])


def patch_files(workspace: Path, patch: Path) -> list[str]:
    """The files a patch touches."""
    if not patch.is_file() or not patch.read_bytes().strip():
        return []
    out = git(workspace, "apply", "--numstat", "-z", str(patch))
    return [rec.split("\t", 2)[2] for rec in out.split("\0") if rec.count("\t") >= 2]


def unapply(workspace: Path, patch: Path) -> list[str]:
    """Take a merged fix back out of the workspace (all or nothing); the files it restored.

    Later fixes may have changed lines next to it: then it comes out by a
    three-way merge (the fix's before and after against the files now), and
    only a real clash (later fixes changed the fix's own lines) refuses."""
    files = patch_files(workspace, patch)
    if not files:
        return []
    problem = apply_problem(workspace, patch, reverse=True)
    if problem is None:
        apply(workspace, patch, reverse=True)
        return files
    if apply_problem(workspace, patch) is None:
        return files  # already out (a retried rollback)
    header = patch.read_bytes().split(b"\n", 1)[0].decode(errors="replace").split()
    if len(header) != 3 or header[0] != HEADER:
        raise GreenloopError(f"the patch {patch.name} cannot be taken back out cleanly: {problem}",
                             kind=ErrorKind.VALIDATION_ERROR, patch=str(patch))
    before, after = header[1], header[2]
    base = git(workspace, "commit-tree", after, "-m", "greenloop: with the fix")
    now = snapshot(workspace, base, "greenloop: workspace now")
    without = git(workspace, "commit-tree", before, "-p", base, "-m", "greenloop: without the fix")
    tree, clashing = _merge_trees(workspace, now, without)
    if tree is None:
        raise GreenloopError(f"later fixes changed the lines of {patch.name}, in {', '.join(clashing)}: "
                             "it cannot be taken back out on its own", kind=ErrorKind.VALIDATION_ERROR,
                             patch=str(patch))
    with tempfile.TemporaryDirectory(prefix="greenloop-revert-") as tmp:
        revert = Path(tmp) / "revert.patch"
        write_patch(workspace, now, tree, revert)
        if revert.read_bytes().strip():
            apply(workspace, revert)
    return files


def remove(workspace: Path, target: Path) -> None:
    """Remove a worktree (and git's record of it); nothing happens if it is gone."""
    with _WORKTREES:
        if target.exists():
            git(workspace, "worktree", "remove", "--force", str(target), check=False)
            if target.exists():
                shutil.rmtree(target, ignore_errors=True)
        git(workspace, "worktree", "prune", check=False)
