"""Compact changes (domain/changes.py) and their rebase by a three-way merge
(workspace/changes.py), on real files and the real ``git merge-file``."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.domain.changes import ChangeRefused, apply_change, change_between
from greenloop.domain.errors import GreenloopError
from greenloop.workspace.changes import Bases, edits_for, rebase

BIG = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(2000))  # ~40 KB


def test_a_change_carries_what_it_replaces_not_the_file():
    after = BIG.replace("return 7\n", "return 70\n", 1)
    change = change_between("m.py", BIG, after)
    assert change.size() < 100 and len(change.model_dump_json()) < 400
    assert apply_change(change, BIG) == after
    with pytest.raises(ChangeRefused):  # on another version of the file: refused, never guessed
        apply_change(change, BIG + "x = 1\n")
    created, deleted = change_between("n.py", None, "x = 1\n"), change_between("m.py", BIG, None)
    assert apply_change(created, None) == "x = 1\n" and apply_change(deleted, BIG) is None


def test_a_change_to_a_moved_file_is_rebased_by_a_three_way_merge(tmp_path: Path):
    root, bases = tmp_path / "ws", Bases(tmp_path / "run")
    root.mkdir()
    mine = change_between("m.py", BIG, BIG.replace("return 7\n", "return 70\n", 1))
    bases.keep(BIG)  # the fixer keeps the version it wrote on
    (root / "m.py").write_text(BIG.replace("return 1999\n", "return -1\n"))  # accepted meanwhile, elsewhere
    with pytest.raises(GreenloopError, match="rebased first"):
        edits_for(root, [mine])
    rebased = rebase(root, bases, mine)
    assert rebased.moved and rebased.conflict is None and rebased.change is not None
    [edit] = edits_for(root, [rebased.change])
    assert edit.content is not None and "return 70\n" in edit.content and "return -1\n" in edit.content
    # Unmoved: as it is.
    (root / "m.py").write_text(BIG)
    assert rebase(root, bases, mine) == type(rebased)(change=mine)


def test_a_real_conflict_is_shown_not_merged(tmp_path: Path):
    root, bases = tmp_path / "ws", Bases(tmp_path / "run")
    root.mkdir()
    mine = change_between("m.py", BIG, BIG.replace("return 7\n", "return 70\n", 1))
    bases.keep(BIG)
    (root / "m.py").write_text(BIG.replace("return 7\n", "return 77\n", 1))
    rebased = rebase(root, bases, mine)
    assert rebased.change is None and rebased.conflict is not None
    assert "return 70" in rebased.conflict and "return 77" in rebased.conflict and "<<<<<<< accepted now" in rebased.conflict
    # The same change made twice (fixed along): no conflict, nothing left to apply.
    (root / "m.py").write_text(BIG.replace("return 7\n", "return 70\n", 1))
    same = rebase(root, bases, mine)
    assert same.conflict is None and same.change is not None and same.change.hunks == []


def test_changes_anywhere_in_a_large_file_round_trip_quickly():
    import random
    import time

    rng = random.Random(7)
    lines = BIG.splitlines(keepends=True)
    started = time.monotonic()
    for _ in range(30):
        after = list(lines)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(after))
            after[at:at + rng.randint(0, 3)] = [f"    changed = {rng.random()}\n"] * rng.randint(0, 3)
        text = "".join(after)
        assert apply_change(change_between("m.py", BIG, text), BIG) == text
    assert time.monotonic() - started < 10
