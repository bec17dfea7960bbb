"""The validation queue's pure rules (workflows/validation_queue.py): what goes into a
batch, how results are keyed and how the batch size adapts."""

from __future__ import annotations

from greenloop.domain.candidates import Candidate
from greenloop.domain.changes import change_between
from greenloop.workflows.payloads import payload_size
from greenloop.workflows.validation_queue import (
    MOST_BATCH_BYTES,
    batch_full,
    content_key,
    first_size,
    halves,
    next_size,
    take_batch,
    weight,
)


def cand(test: str, *files: str, attempt: int = 1, started_at: float = 10.0, text: str = "x") -> Candidate:
    return Candidate(test_id=test, attempt=attempt, started_at=started_at,
                     changes=[change_between(f, "", text) for f in files])


def test_a_batch_takes_candidates_in_order_whose_files_are_disjoint():
    a, b, c, d = cand("a", "x.py"), cand("b", "x.py", "y.py"), cand("c", "z.py"), cand("d", "w.py")
    batch, rest = take_batch([a, b, c, d], size=2)
    assert [x.test_id for x in batch] == ["a", "c"]  # b touches a's file: it waits for the next batch
    assert [x.test_id for x in rest] == ["b", "d"]  # in their order
    assert take_batch([a, b], size=5) == ([a], [b])


LINE = "x = '" + "p" * 57 + "'\n"  # 64 characters: a line of generated data


def heavy(test: str, kb: int) -> Candidate:
    """A candidate that adds ``kb`` kB of new lines to its own file."""
    return cand(test, f"{test}.py", text=LINE * (kb * 1024 // len(LINE)))


def test_a_batch_takes_candidates_while_their_weight_stays_under_the_bound():
    # Ten fixes of ~60 kB each: by count they would make one batch; by weight three at a time.
    pending = [heavy(f"t{i}", 58) for i in range(10)]
    assert 3 * payload_size(pending[0]) < MOST_BATCH_BYTES < 4 * payload_size(pending[0])
    batches: list[list[Candidate]] = []
    while pending:
        batch, pending = take_batch(pending, size=32)
        batches.append(batch)
    assert [len(b) for b in batches] == [3, 3, 3, 1]
    assert all(weight(b) <= MOST_BATCH_BYTES for b in batches)
    assert [c.test_id for b in batches for c in b] == [f"t{i}" for i in range(10)]  # in arrival order


def test_the_first_candidate_too_heavy_ends_the_batch_and_leads_the_next():
    small, big, after = cand("a", "a.py"), heavy("b", 185), cand("c", "c.py")
    assert weight([small, big]) > MOST_BATCH_BYTES
    batch, rest = take_batch([small, big, after], size=8)
    # The small fix after the heavy one does not pass it: the heavy one leads the next batch.
    assert [c.test_id for c in batch] == ["a"] and [c.test_id for c in rest] == ["b", "c"]
    # With nothing in flight, a candidate heavier than the bound alone is taken alone (a fix's new
    # lines are bounded on their own, MOST_FIX_BYTES).
    assert weight([heavy("d", 200)]) > MOST_BATCH_BYTES
    batch, rest = take_batch([heavy("d", 200), small], size=8)
    assert [c.test_id for c in batch] == ["d"] and [c.test_id for c in rest] == ["a"]


def test_a_batch_checked_on_top_of_one_in_flight_counts_that_ones_weight():
    # A check on top of the batch in flight carries both: what it may take is what is left.
    ahead = [heavy("a", 58), heavy("b", 58)]
    batch, rest = take_batch([heavy("c", 58), heavy("d", 58)], size=8, carried=weight(ahead))
    assert [c.test_id for c in batch] == ["c"] and [c.test_id for c in rest] == ["d"]
    assert weight(ahead + batch) <= MOST_BATCH_BYTES
    # Nothing fits on top of a heavy batch in flight: nothing is taken (it waits for that one's verdict).
    batch, rest = take_batch([cand("e", "e.py")], size=8, carried=MOST_BATCH_BYTES)
    assert batch == [] and [c.test_id for c in rest] == ["e"]
    # The explicit bound wins over the default.
    assert [len(take_batch([cand(t, f"{t}.py") for t in "xyz"], size=8, most=1)[0])] == [1]


def test_a_batch_is_full_by_count_or_by_weight():
    assert batch_full([cand("a", "a.py"), cand("b", "b.py")], size=2)
    assert not batch_full([cand("a", "a.py")], size=2)
    assert batch_full([heavy("a", 100), heavy("b", 100)], size=8)
    assert batch_full([heavy("a", 100)], size=8, carried=100 * 1024)
    assert not batch_full([heavy("a", 100)], size=8)


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
