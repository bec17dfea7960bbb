"""Make the run's worker-local workspace, and hand its result back.

The user's repository is never edited in place. A local directory is copied
whole (its dependencies too: ``node_modules``, virtualenvs), a git URL is
cloned. The copy is a git repository on a ``greenloop/<run>`` branch whose
first commit is the starting point (uncommitted changes included), so the
final patch holds exactly Greenloop's fixes, and the branch can be fetched
back into the user's repository without touching their working tree.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from ..domain.errors import ErrorKind, GreenloopError
from ..git_command import GIT_ENV, git

GIT_URL = re.compile(r"^(https?|ssh|git|file)://|^[\w.-]+@[\w.-]+:|\.git$")


def is_git_url(repo: str) -> bool:
    return GIT_URL.search(repo) is not None and not Path(repo).exists()


def prepare(repo: str, ref: str | None, run_id: str, workspace: Path) -> tuple[str, str]:
    """Fill ``workspace`` from ``repo``; returns (branch, base commit)."""
    branch = "greenloop/" + re.sub(r"[^A-Za-z0-9._-]+", "-", run_id).strip("-")
    if workspace.exists():
        shutil.rmtree(workspace)  # a retried activity starts over
    if is_git_url(repo):
        git(workspace.parent, "clone", "--quiet", repo, str(workspace))
        if ref:
            git(workspace, "checkout", "--quiet", ref)
    else:
        src = Path(repo).expanduser()
        if not src.is_dir():
            raise GreenloopError(f"repository {repo} does not exist or is not a directory",
                                 kind=ErrorKind.VALIDATION_ERROR, repo=repo, exists=src.exists())
        shutil.copytree(src, workspace, symlinks=True, ignore=shutil.ignore_patterns(".greenloop"))
        if not (workspace / ".git").exists():
            git(workspace, "init", "--quiet")
        elif ref:
            git(workspace, "checkout", "--quiet", ref)
    git(workspace, "checkout", "--quiet", "-B", branch)
    # Greenloop's own files never enter the repository's history.
    exclude = workspace / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a") as f:
        f.write("\n/.greenloop/\n")
    git(workspace, "add", "-A")
    if git(workspace, "status", "--porcelain"):
        git(workspace, "commit", "--quiet", "--no-verify", "-m", "greenloop: starting point (uncommitted changes)")
    elif not git(workspace, "rev-parse", "--verify", "-q", "HEAD", check=False):
        git(workspace, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", "greenloop: starting point")
    return branch, git(workspace, "rev-parse", "HEAD")


def commit_fixes(workspace: Path, message: str) -> str | None:
    """Commit whatever the run changed; the new commit, or None when nothing changed."""
    git(workspace, "add", "-A")
    if not git(workspace, "status", "--porcelain"):
        return None
    git(workspace, "commit", "--quiet", "--no-verify", "-m", message)
    return git(workspace, "rev-parse", "HEAD")


def write_patch(repo: Path, base: str, head: str, target: Path, header: str = "") -> str:
    """``git diff --binary base head`` (new, deleted and binary files included) into
    ``target``, after ``header`` lines (``git apply`` skips what precedes the diff);
    the patch text. Git writes the file itself: its bytes (CRLF line ends, the blank
    line ending a binary hunk) stay exactly as ``git apply`` needs them."""
    target.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "diff", "--binary", "--no-color", "--no-ext-diff", f"--output={target}", base, head)
    if header:
        target.write_bytes(header.encode() + target.read_bytes())
    return target.read_text(errors="replace")


def export_patch(workspace: Path, base: str, target: Path) -> str:
    """Write ``git diff base..HEAD`` to ``target``; the patch text."""
    return write_patch(workspace, base, "HEAD", target)


def offer_branch(source_repo: str, workspace: Path, branch: str) -> bool:
    """Fetch the run's branch into a local source repository (its working tree untouched)."""
    src = Path(source_repo).expanduser()
    if is_git_url(source_repo) or not (src / ".git").exists():
        return False
    proc = subprocess.run(["git", "-C", str(src), "fetch", "--quiet", str(workspace), f"+{branch}:{branch}"],
                          capture_output=True, text=True, env=GIT_ENV, timeout=600, check=False)
    return proc.returncode == 0
