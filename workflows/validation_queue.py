"""The validation queue's data and pure rules (no I/O: the workflows use them).

A test's child proposes a fix and sends it to the run as a ``Candidate``
(its compact changes, ``domain/changes.py``: pure data, already in the child's
history). Before a batch is checked its candidates are put on the accepted
state: one written on a file an accepted fix changed since is rebased by a
three-way merge; only a conflict goes back to the model. The run validates
candidates in batches on top of the accepted state: one runner invocation for
the batch's own tests, then one full-suite run (``activities/batch.py``). A
passing batch is accepted whole; a failing one is bisected, and the verdict
goes back to each candidate's child (``QueueVerdict``).

The rules here decide what goes into a batch (changes to disjoint files), how results are reused (a
content is the ordered edit sets on top of the accepted state, keyed by their
hashes) and how the batch size adapts (doubles while batches pass, halves
after a failure, within ``1..FixRequest.max_batch``). A ``Candidate`` is in
``domain/candidates.py`` (the child, the run and the batch activity share it);
the batch activity's input and result are beside it in ``activities/batch.py``.
"""

from __future__ import annotations

from pydantic import BaseModel

from ..domain.candidates import Candidate
from ..domain.states import Verdict
from ..runner.runs import SingleRun

# The run's signal a child sends its candidate with (by name: the run's module imports the child's).
CANDIDATE_SIGNAL = "candidate"
# How long a batch waits to fill while children are still proposing (a suite run is not started
# for one fix when more are a model call away).
GATHER_S = 3.0
# Batches checked at once: the next batch is checked on top of the one being judged (a merge
# queue's speculation), redone on the accepted state when that one is not accepted whole.
CHECKS_IN_FLIGHT = 2


class QueueVerdict(BaseModel):
    """What the run tells a child about its candidate."""

    test_id: str
    attempt: int
    verdict: Verdict
    reason: str = ""
    batch: int | None = None
    # Its rebase onto files an accepted fix changed meanwhile conflicts (``reason`` shows the
    # conflict): the attempt is made again on the current files (it does not count as a failed attempt).
    stale: bool = False
    # A FAIL because the test still fails alone: that run, so the next attempt analyses this failure
    # (not the suite run's first one), as it does when each attempt validates itself.
    failure: SingleRun | None = None


def content_key(candidates: list[Candidate]) -> tuple[str, ...]:
    """What a check's result is known by: the edit-set hashes (on the current accepted state). Their
    order does not matter: the candidates of one batch edit disjoint files, so any order gives the same files."""
    return tuple(sorted(c.key() for c in candidates))


def take_batch(pending: list[Candidate], size: int, busy: set[str] | None = None,
               ) -> tuple[list[Candidate], list[Candidate]]:
    """Up to ``size`` candidates in arrival order whose changes touch disjoint files, none of them
    ``busy`` (the batch in flight's: two changes to one file are checked one on top of the other,
    the later rebased); the rest stay queued, in order."""
    batch: list[Candidate] = []
    rest: list[Candidate] = []
    files: set[str] = set(busy or ())
    for c in pending:
        if len(batch) < size and not files & set(c.files):
            batch.append(c)
            files |= set(c.files)
        else:
            rest.append(c)
    return batch, rest


def first_size(concurrency: int, largest: int) -> int:
    """The first batch's size: as many fixes as can be proposed side by side."""
    return max(1, min(largest, max(2, concurrency)))


def next_size(size: int, passed: bool, largest: int) -> int:
    """The next batch size: doubled after a batch that passed, halved after one that did not."""
    return max(1, min(largest, size * 2 if passed else size // 2))


def halves(candidates: list[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    middle = (len(candidates) + 1) // 2
    return candidates[:middle], candidates[middle:]
