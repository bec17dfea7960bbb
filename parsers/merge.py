"""The one merge rule for a test read twice.

A framework that prints a test in its console and writes it to a report
(pytest's console and JUnit XML, a console beside a JSON report) records both
readings through ``add``, so one rule decides what the test's entry says; the
normalizer (``normalize.py``) decides what an id repeated in a parser's list
is (``repeats``): one test read twice, merged by the same rule, or distinct
tests that print one name, kept apart under distinct ids. It imports only the
report models, so every parser and the normalizer can use it.
"""

from __future__ import annotations

from collections import Counter

from .models import Status, TestResult

# When one test is read twice, the reading that needs a fix wins: a teardown
# error after a pass or a failure is an error, an XPASS beats the plain pass a
# JUnit report shows for it.
RANK = {Status.PASSED: 0, Status.SKIPPED: 1, Status.XFAILED: 2, Status.XPASSED: 3, Status.FAILED: 4,
        Status.ERRORED: 5}


def merge(kept: TestResult, again: TestResult) -> None:
    """Fold a second reading of one test into ``kept`` (in place): the worse
    status wins with its message and details; what ``kept`` lacks (file, line,
    message, duration...) is taken from ``again``; a timeout in either stays."""
    if RANK[again.status] > RANK[kept.status]:
        kept.status, kept.message, kept.details = again.status, again.message or kept.message, \
            again.details or kept.details
    for name in ("file", "line", "message", "details", "duration_s", "native_status", "suite"):
        if getattr(kept, name) is None and getattr(again, name) is not None:
            setattr(kept, name, getattr(again, name))
    kept.timed_out = kept.timed_out or again.timed_out


def add(results: dict, result: TestResult, key: object = None) -> TestResult:
    """Record ``result`` in ``results`` under ``key`` (its id by default): a
    new test is added, a test already there is merged (``merge``); returns the
    entry kept."""
    key = result.id if key is None else key
    kept = results.get(key)
    if kept is None:
        results[key] = result
        return result
    merge(kept, result)
    return kept


def numbered(test_id: str, n: int) -> str:
    """The id of the ``n``-th (from 2) distinct test printed as ``test_id``."""
    return f"{test_id} [#{n}]"


def repeats(tests: list[TestResult], runner_total: int | None) -> tuple[list[TestResult], str | None]:
    """``tests`` with every id once, and what was done about repeated ids.

    A parser lists each result its input printed; one that read a test twice
    (console and report) merged it through ``add``. So an id still repeated
    is, by default, distinct tests that print one name (generated tests, a
    parametrization without ids): each is kept, the first under the printed
    id, the next ones numbered in order (``numbered``), every one's printed id
    kept in ``printed`` (what selects them again). Only when the runner's own
    total counts them once (it equals the merged count) are they one test
    read twice, merged by ``merge``."""
    seen = Counter(t.id for t in tests)
    repeated = {k: n for k, n in seen.items() if n > 1}
    if not repeated:
        return tests, None
    names = ", ".join(list(repeated)[:5])
    if runner_total is not None and runner_total == len(seen):
        kept: dict[str, TestResult] = {}
        for t in tests:
            add(kept, t)
        return list(kept.values()), (f"{sum(repeated.values()) - len(repeated)} result(s) repeated an id and "
                                     f"were merged, as the runner's total counts them once: {names}")
    count: Counter[str] = Counter()
    out: list[TestResult] = []
    for t in tests:
        count[t.id] += 1
        if count[t.id] > 1:
            t = t.model_copy(update={"id": numbered(t.id, count[t.id]), "printed": t.id})
        elif t.id in repeated:
            t = t.model_copy(update={"printed": t.id})
        out.append(t)
    return out, (f"{sum(repeated.values())} tests printed {len(repeated)} name(s) more than once and are counted "
                 f"apart, numbered [#2], [#3]... in order: {names}")
