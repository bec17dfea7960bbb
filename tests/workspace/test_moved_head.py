"""A branch head that moved during a run: detected at the end, the fixes rebased onto it when
they apply cleanly, otherwise the conflict named and the fixes left on the base."""

from __future__ import annotations

from greenloop.git_command import git
from greenloop.workspace.moved_head import follow_head, source_commit
from greenloop.workspace.prepare import commit_fixes, prepare


def make_repo(path):
    path.mkdir()
    (path / "a.py").write_text("a = 1\n")
    (path / "b.py").write_text("b = 1\n")
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


def start(tmp_path, src):
    ws = tmp_path / "run" / "workspace"
    ws.parent.mkdir()
    _, base = prepare(str(src), None, "run-1", ws)
    (ws / "a.py").write_text("a = 2  # the fix\n")
    commit_fixes(ws, "greenloop: fix")
    return ws, base


def commit(src, name, text):
    (src / name).write_text(text)
    git(src, "commit", "-qam", f"the user's {name}")
    return git(src, "rev-parse", "HEAD")


def test_an_unmoved_head_is_nothing_to_say(tmp_path):
    src = make_repo(tmp_path / "src")
    ws, base = start(tmp_path, src)
    assert follow_head(ws, str(src), None, base) is None


def test_a_commit_elsewhere_is_rebased_onto(tmp_path):
    src = make_repo(tmp_path / "src")
    origin = git(src, "rev-parse", "HEAD")
    ws, base = start(tmp_path, src)
    (src / "wip.txt").write_text("the user's uncommitted work\n")
    new = commit(src, "b.py", "b = 2\n")
    move = follow_head(ws, str(src), None, base)
    assert move is not None and move.base == origin and move.head == new
    assert move.rebased and not move.conflicts
    assert f"moved from {origin[:10]} to {new[:10]}" in move.sentence()
    assert f"rebased onto {new[:10]}" in move.sentence()
    assert git(ws, "rev-parse", "HEAD^") == new
    assert (ws / "a.py").read_text() == "a = 2  # the fix\n" and (ws / "b.py").read_text() == "b = 2\n"
    assert (src / "wip.txt").read_text() == "the user's uncommitted work\n"  # never touched
    assert follow_head(ws, str(src), None, base).rebased  # a retried finish: done already


def test_a_conflicting_commit_is_named_and_the_fixes_stay_on_the_base(tmp_path):
    src = make_repo(tmp_path / "src")
    ws, base = start(tmp_path, src)
    tip = git(ws, "rev-parse", "HEAD")
    commit(src, "a.py", "a = 5  # the user's own\n")
    move = follow_head(ws, str(src), None, base)
    assert move is not None and not move.rebased and move.conflicts == ["a.py"]
    assert "conflict with it in a.py" in move.sentence()
    assert git(ws, "rev-parse", "HEAD") == tip  # nothing lost
    assert git(ws, "status", "--porcelain") == ""
    assert not (ws.parent / "rebase").exists()


def test_the_source_commit_skips_the_commit_of_uncommitted_changes(tmp_path):
    src = make_repo(tmp_path / "src")
    origin = git(src, "rev-parse", "HEAD")
    (src / "b.py").write_text("b = 9  # uncommitted\n")
    ws = tmp_path / "ws"
    _, base = prepare(str(src), None, "run-2", ws)
    assert base != origin and source_commit(ws, base) == origin
