"""The run's workspace: a copy on its own branch, never the user's files."""

from __future__ import annotations

import subprocess

import pytest

from greenloop.domain.errors import GreenloopError
from greenloop.git_command import git
from greenloop.workspace.prepare import commit_fixes, export_patch, offer_branch, prepare


def make_repo(path, *, commit=True):
    path.mkdir()
    (path / "a.py").write_text("a = 1\n")
    (path / "node_modules").mkdir()
    (path / "node_modules" / "dep.js").write_text("dep\n")
    (path / ".gitignore").write_text("node_modules/\n")
    if commit:
        git(path, "init", "-q")
        git(path, "add", "-A")
        git(path, "commit", "-qm", "init")
    return path


def test_local_git_repo_with_uncommitted_changes(tmp_path):
    src = make_repo(tmp_path / "src")
    (src / "a.py").write_text("a = 2  # uncommitted\n")
    ws = tmp_path / "ws"
    branch, base = prepare(str(src), None, "run-1", ws)
    assert branch == "greenloop/run-1"
    assert (ws / "a.py").read_text() == "a = 2  # uncommitted\n"
    assert (ws / "node_modules" / "dep.js").exists()  # dependencies come along
    assert git(ws, "rev-parse", "HEAD") == base
    # Edits in the workspace never touch the user's files; the patch holds only them.
    (ws / "a.py").write_text("a = 3\n")
    commit_fixes(ws, "greenloop: fix")
    patch = export_patch(ws, base, tmp_path / "p.patch")
    assert "-a = 2  # uncommitted" in patch and "+a = 3" in patch
    assert (src / "a.py").read_text() == "a = 2  # uncommitted\n"
    assert offer_branch(str(src), ws, branch)
    assert git(src, "show", f"{branch}:a.py") == "a = 3"
    assert git(src, "status", "--porcelain") == "M a.py"  # their working tree untouched


def test_plain_directory_becomes_a_repository(tmp_path):
    src = make_repo(tmp_path / "src", commit=False)
    branch, base = prepare(str(src), None, "run-2", tmp_path / "ws")
    assert base and git(tmp_path / "ws", "branch", "--show-current") == branch
    assert not (src / ".git").exists()


def test_missing_path_is_a_validation_error(tmp_path):
    with pytest.raises(GreenloopError) as err:
        prepare(str(tmp_path / "nope"), None, "r", tmp_path / "ws")
    assert err.value.kind.value == "validation_error"


def test_git_url_is_cloned(tmp_path):
    src = make_repo(tmp_path / "src")
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(tmp_path / "remote.git")], check=True)
    branch, _ = prepare(f"file://{tmp_path / 'remote.git'}", None, "run-3", tmp_path / "ws")
    assert (tmp_path / "ws" / "a.py").read_text() == "a = 1\n"
