"""The validation queue's pure rules (workflows/validation_queue.py): what goes into a
batch, how results are keyed and how the batch size adapts."""

from __future__ import annotations

from greenloop.domain.candidates import Candidate
from greenloop.domain.changes import change_between
from greenloop.workflows.validation_queue import content_key, first_size, halves, next_size, take_batch


def cand(test: str, *files: str, attempt: int = 1, started_at: float = 10.0, text: str = "x") -> Candidate:
    return Candidate(test_id=test, attempt=attempt, started_at=started_at,
                     changes=[change_between(f, "", text) for f in files])


def test_a_batch_takes_candidates_in_order_whose_files_are_disjoint():
    a, b, c, d = cand("a", "x.py"), cand("b", "x.py", "y.py"), cand("c", "z.py"), cand("d", "w.py")
    batch, rest = take_batch([a, b, c, d], size=2)
    assert [x.test_id for x in batch] == ["a", "c"]  # b touches a's file: it waits for the next batch
    assert [x.test_id for x in rest] == ["b", "d"]  # in their order
    assert take_batch([a, b], size=5) == ([a], [b])


def test_results_are_keyed_by_the_edit_sets_in_any_order():
    # A batch's candidates edit disjoint files: applied in any order they give the same files.
    a, b = cand("a", "x.py"), cand("b", "y.py")
    assert content_key([a, b]) == content_key([cand("a", "x.py"), cand("b", "y.py")])
    assert content_key([a, b]) == content_key([b, a])
    assert content_key([a, b]) != content_key([a])
    assert content_key([a]) != content_key([cand("a", "x.py", text="other")])
    assert content_key([a]) != content_key([cand("a", "x.py", attempt=2)])


def test_the_batch_size_grows_while_batches_pass_and_halves_after_a_failure():
    assert first_size(concurrency=16, largest=32) == 16 and first_size(1, 32) == 2 and first_size(16, 4) == 4
    assert next_size(16, True, 32) == 32 and next_size(32, True, 32) == 32
    assert next_size(32, False, 32) == 16 and next_size(1, False, 32) == 1


def test_halves_split_in_order():
    xs = [cand(t, f"{t}.py") for t in "abcde"]
    left, right = halves(xs)
    assert [x.test_id for x in left] == ["a", "b", "c"] and [x.test_id for x in right] == ["d", "e"]
