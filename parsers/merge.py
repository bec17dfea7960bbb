"""The one merge rule for a test read twice.

A framework that prints a test in its console and writes it to a report
(pytest's console and JUnit XML, a console beside a JSON report) records both
readings through ``add``, so one rule decides what the test's entry says; the
normalizer (``normalize.py``) merges repeated ids by the same rule. It imports
only the report models, so every parser and the normalizer can use it.
"""

from __future__ import annotations

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
