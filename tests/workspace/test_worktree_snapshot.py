"""A worktree's starting point holds the workspace's files as they are, even an
edit git's stat cache cannot tell apart from the indexed file (same size, same
time as the index was written: git's "racily clean" case)."""

import os
import subprocess

from greenloop.workspace import worktree

THEN = 1_600_000_000  # one instant for the file, its index entry and the index itself


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_a_racily_clean_edit_is_in_the_snapshot(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "core.trustctime", "false")  # the change time cannot be set back: leave it out
    (repo / "a.txt").write_text("one\n")
    os.utime(repo / "a.txt", (THEN, THEN))
    _git(repo, "add", "a.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    (repo / "a.txt").write_text("ONE\n")  # same size,
    os.utime(repo / "a.txt", (THEN, THEN))  # same time as the index entry says
    os.utime(repo / ".git" / "index", (THEN, THEN))  # and the index written in that second: only a rehash sees it
    commit = worktree.snapshot(repo, _git(repo, "rev-parse", "HEAD").strip(), "snap")
    assert _git(repo, "show", f"{commit}:a.txt") == "ONE\n"
