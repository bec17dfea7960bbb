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

The rules here decide what goes into a batch (changes to disjoint files, within a weight), how results are reused (a
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
from .payloads import payload_size

# The run's signal a child sends its candidate with (by name: the run's module imports the child's).
CANDIDATE_SIGNAL = "candidate"
# How long a batch waits to fill while children are still proposing (a suite run is not started
# for one fix when more are a model call away).
GATHER_S = 3.0
# The most a check's candidates may weigh (their JSON: the batch's, and the batch in flight's when
# it is checked on top of that one): batches are cut by weight as well as by count, so no check's
# input grows with the size of its fixes. A one-line fix weighs ~0.7 kB whatever its file's size
# (32 such fixes and 32 in flight: ~45 kB), so only batches of large fixes are cut. A fifth of the
# run's guard on any payload (``MOST_PAYLOAD_BYTES``, 1 MiB), a tenth of Temporal's 2 MiB, and under
# the tests' bound (256 KiB, ``tests/payload_bound.py``) with room for the rest of a check's input.
MOST_BATCH_BYTES = 192 * 1024
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


def weight(candidates: list[Candidate]) -> int:
    """What ``candidates`` weigh in a payload (their JSON)."""
    return sum(payload_size(c) for c in candidates)


def batch_full(pending: list[Candidate], size: int, carried: int = 0) -> bool:
    """Whether ``pending`` fills a batch: ``size`` candidates, or their weight with ``carried`` (the
    batch in flight's, when checked on top of it) reaches ``MOST_BATCH_BYTES``."""
    return len(pending) >= size or carried + weight(pending) >= MOST_BATCH_BYTES


def take_batch(pending: list[Candidate], size: int, busy: set[str] | None = None, carried: int = 0,
               most: int | None = None) -> tuple[list[Candidate], list[Candidate]]:
    """Up to ``size`` candidates in arrival order whose changes touch disjoint files, none of them
    ``busy`` (the batch in flight's: two changes to one file are checked one on top of the other,
    the later rebased), while their weight with ``carried`` (the batch in flight's, which a check on
    top of it carries too) stays under ``most`` (``MOST_BATCH_BYTES``); the rest stay queued, in
    order. The first candidate too heavy to fit ends the batch (it leads the next one, so small
    fixes do not pass it forever); with nothing in flight it is taken alone however heavy
    (a fix's new lines are bounded on their own: ``MOST_FIX_BYTES``, ``activities/fixing.py``)."""
    most = MOST_BATCH_BYTES if most is None else most
    batch: list[Candidate] = []
    rest: list[Candidate] = []
    files: set[str] = set(busy or ())
    used, full = carried, False
    for c in pending:
        if full or len(batch) >= size or files & set(c.files):
            rest.append(c)
            continue
        heavy = payload_size(c)
        if used + heavy > most and (batch or carried):
            full = True
            rest.append(c)
            continue
        batch.append(c)
        files |= set(c.files)
        used += heavy
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
