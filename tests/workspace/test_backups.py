"""Edits applied with backups roll back exactly, also after a crash mid-apply."""

from __future__ import annotations

import os

import pytest

from greenloop.domain.edits import Edit
from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.workspace.backups import BackupStore
from greenloop.workspace.policy import EditRejected


@pytest.fixture
def repo(tmp_path):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("a = 1\n")
    (ws / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(ws / "run.sh", 0o755)
    return ws


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_apply_then_restore_is_exact(tmp_path, repo):
    store = BackupStore(tmp_path / "run", repo)
    before = snapshot(repo)
    files = store.apply("t::x", 1, [Edit(path="src/a.py", content="a = 2\n"),
                                    Edit(path="src/new.py", content="b = 1\n"),
                                    Edit(path="run.sh", content="#!/bin/sh\necho hi\n")])
    assert files == ["src/a.py", "src/new.py", "run.sh"]
    assert (repo / "src/a.py").read_text() == "a = 2\n" and (repo / "src/new.py").exists()
    assert os.stat(repo / "run.sh").st_mode & 0o777 == 0o755  # mode kept
    assert "+a = 2" in store.diff("t::x", 1)
    store.restore("t::x", 1)
    assert snapshot(repo) == before
    store.restore("t::x", 1)  # idempotent
    assert snapshot(repo) == before


def test_deleting_a_file_is_restored(tmp_path, repo):
    store = BackupStore(tmp_path / "run", repo)
    store.apply("t", 1, [Edit(path="src/a.py", content=None)])
    assert not (repo / "src/a.py").exists()
    store.restore("t", 1)
    assert (repo / "src/a.py").read_text() == "a = 1\n"


def test_retried_apply_after_a_crash_applies_once(tmp_path, repo):
    store = BackupStore(tmp_path / "run", repo)
    edits = [Edit(path="src/a.py", content="a = 2\n"), Edit(path="src/b.py", content="b\n")]
    store.apply("t", 1, edits)
    # A dead worker left the workspace half-edited by something else; the retry starts clean.
    (repo / "src/a.py").write_text("garbage\n")
    store.apply("t", 1, edits)
    assert (repo / "src/a.py").read_text() == "a = 2\n"
    store.restore("t", 1)
    assert (repo / "src/a.py").read_text() == "a = 1\n" and not (repo / "src/b.py").exists()


def test_attempts_are_independent(tmp_path, repo):
    store = BackupStore(tmp_path / "run", repo)
    store.apply("t", 1, [Edit(path="src/a.py", content="a = 2\n")])
    store.restore("t", 1)
    store.apply("t", 2, [Edit(path="src/a.py", content="a = 3\n")])
    store.restore("t", 2)
    assert (repo / "src/a.py").read_text() == "a = 1\n"


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd", ".git/hooks/pre-commit", ".github/workflows/ci.yml",
                                  "sub/../../x", ".gitlab-ci.yml", "link/escape.py"])
def test_edits_outside_the_repository_are_rejected_before_anything_is_written(tmp_path, repo, path):
    (repo / "link").symlink_to(tmp_path)
    store = BackupStore(tmp_path / "run", repo)
    before = snapshot(repo)
    with pytest.raises(EditRejected):
        store.apply("t", 1, [Edit(path="src/a.py", content="a = 9\n"), Edit(path=path, content="x")])
    assert snapshot(repo) == before
    assert not (tmp_path / "outside.py").exists() and not (tmp_path / "x").exists()


def test_binary_and_oversized_content_is_rejected(tmp_path, repo):
    (repo / "img.png").write_bytes(b"\x89PNG\x00\x00")
    store = BackupStore(tmp_path / "run", repo)
    with pytest.raises(EditRejected, match="binary"):
        store.apply("t", 1, [Edit(path="img.png", content="text")])
    with pytest.raises(EditRejected, match="larger"):
        store.apply("t", 1, [Edit(path="big.txt", content="x" * 300_000)])


def test_tests_only_policy(tmp_path, repo):
    store = BackupStore(tmp_path / "run", repo)
    with pytest.raises(EditRejected, match="test code"):
        store.apply("t", 1, [Edit(path="src/a.py", content="a = 2\n")], allow_production=False)
    assert store.apply("t", 1, [Edit(path="tests/test_a.py", content="x\n")], allow_production=False)


def test_a_rollback_by_hand_never_takes_a_later_fix_out_with_it(tmp_path, repo):
    store = BackupStore(tmp_path / "run", repo)
    before = snapshot(repo)
    store.apply("t::first", 1, [Edit(path="src/a.py", content="a = 2\n"), Edit(path="src/new.py", content="n = 1\n")])
    store.apply("t::second", 1, [Edit(path="src/a.py", content="a = 2\nb = 3\n")])  # builds on the first
    after_both = snapshot(repo)
    with pytest.raises(GreenloopError, match="later fixes changed src/a.py") as refused:
        store.restore("t::first", 1, only_if_unchanged=True)
    assert refused.value.kind == ErrorKind.VALIDATION_ERROR
    assert snapshot(repo) == after_both  # refused whole: nothing was restored, not even src/new.py
    store.restore("t::second", 1, only_if_unchanged=True)  # the later fix goes first
    store.restore("t::first", 1, only_if_unchanged=True)  # then the first one can
    assert snapshot(repo) == before


def test_a_rollback_by_hand_of_a_deleted_file_checks_it_is_still_gone(tmp_path, repo):
    store = BackupStore(tmp_path / "run", repo)
    store.apply("t::rm", 1, [Edit(path="run.sh", content=None)])
    (repo / "run.sh").write_text("recreated by someone else\n")
    with pytest.raises(GreenloopError, match="run.sh"):
        store.restore("t::rm", 1, only_if_unchanged=True)
    (repo / "run.sh").unlink()
    store.restore("t::rm", 1, only_if_unchanged=True)
    assert (repo / "run.sh").read_text() == "#!/bin/sh\n"
