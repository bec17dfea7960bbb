"""``summary.json``: the run's machine-readable summary, with a versioned schema.

The document is the run's summary (the fields of ``RunSummary``: outcome,
per-state test lists, totals before and after, usage, artifact paths) plus
``schema_version`` and ``results``, each driven test's full record (attempts
with analysis, rationale, diff and verdict). ``greenloop schema summary``
prints its JSON Schema.

Versioning: ``schema_version`` grows when a field is removed, renamed or
changes meaning; new optional fields keep the version. Readers should check
it and ignore fields they do not know.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .record import FixOneTestResult, RunSummary

SCHEMA_VERSION = 1


class SummaryFile(RunSummary):
    """summary.json of a Greenloop run (schema version 1)."""

    schema_version: Literal[1] = Field(default=SCHEMA_VERSION, description="Version of this document's schema.")
    results: list[FixOneTestResult] = Field(
        default_factory=list, description="Each test the run drove: its final state and every attempt.")


def summary_document(summary: RunSummary, results: list[FixOneTestResult]) -> SummaryFile:
    return SummaryFile(**summary.model_dump(), results=results)


# What each top-level field means (the schema carries these as descriptions).
FIELDS = {
    "run_id": "The run's id (its FixSuiteWorkflow id).",
    "repo": "The repository: a local path (resolved) or a git URL.",
    "state": "How the run ended: completed only when the final suite run was read; otherwise why not "
             "(aborted, failed, setup_failed, suite_unreadable, suite_timed_out).",
    "reason": "Why the run ended as it did, when it is not plainly completed.",
    "baseline_read": "False when the first suite run could not be read and the run stopped there.",
    "framework": "The test framework the run used.",
    "fixed": "Tests fixed (their fixes are on the run's branch and in its patch).",
    "skipped": "Tests skipped by a person or a default answer.",
    "escalated": "Tests left waiting for a person (attempts or budget used up).",
    "aborted": "Tests aborted by a person or by aborting the run.",
    "flaky": "Tests that failed, then passed on a re-run (reported, never fixed).",
    "still_failing": "Tests failing or erroring in the final suite run (the first 500).",
    "regressions_prevented": "Attempts rolled back because they broke tests that passed.",
    "attempts": "Fix attempts over all tests.",
    "rebased": "Validation queue: fixes rebased (three-way merge) onto files a fix accepted meanwhile changed.",
    "reasked": "Validation queue: fixes whose rebase conflicted, asked again of the model with the conflict.",
    "usage": "LLM calls, tokens and cost in US dollars over the run.",
    "initial": "Test counts per status in the first suite run.",
    "final": "Test counts per status in the final suite run.",
    "report_markdown": "Path of report.md.",
    "report_json": "Path of this file.",
    "report_html": "Path of report.html (self-contained).",
    "junit_before": "Path of the first suite run as JUnit XML.",
    "junit_after": "Path of the final suite run as JUnit XML.",
    "patch": "Path of greenloop.patch (the fixes against the starting point).",
    "branch": "The run's branch (greenloop/<run>) in its workspace.",
    "base_commit": "The user's commit the run started from: the fixes apply to it.",
    "moved_to": "The user's branch head at the end, when it moved during the run (someone committed).",
    "rebased_onto": "The moved head the fixes were rebased onto (branch and patch), when they applied cleanly.",
    "head_conflicts": "Files whose rebase onto the moved head conflicted: the branch and patch stay on the base.",
    "pushed": "Where the branch was pushed (URL and branch), with --push.",
    "pr_markdown": "Path of pr.md (title and body of the pull request), with --pr.",
    "pr_url": "The pull request gh opened, with --pr.",
    "notes": "Things worth knowing about the run (a branch not pushed, why a pull request was not opened...).",
    "caveats": "Why the first suite run's counts may not be the runner's own (tests printed under one name, "
               "output cut at the cap): every view of the run says them beside its counts.",
    "output_cut": "The first suite run's output passed the output cap (output_bytes) and was cut there.",
    "started_at": "When the run's first step was logged (UTC, ISO 8601).",
    "duration_s": "Seconds from the run's first logged step to its report.",
    "tests": "Every test's final view: state, attempts, last verdict, history.",
}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of summary.json, each top-level field described."""
    schema = SummaryFile.model_json_schema()
    schema["title"] = "Greenloop run summary"
    for name, text in FIELDS.items():
        schema["properties"][name].setdefault("description", text)
    return schema
