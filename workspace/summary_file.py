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

from greenloop.workflows.models import FixOneTestResult, RunSummary

SCHEMA_VERSION = 1


class SummaryFile(RunSummary):
    """summary.json of a Greenloop run (schema version 1)."""

    schema_version: Literal[1] = Field(default=SCHEMA_VERSION, description="Version of this document's schema.")
    results: list[FixOneTestResult] = Field(
        default_factory=list, description="Each test the run drove: its final state and every attempt.")


def summary_document(summary: RunSummary, results: list[FixOneTestResult]) -> SummaryFile:
    return SummaryFile(**summary.model_dump(), results=results)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of summary.json."""
    schema = SummaryFile.model_json_schema()
    schema["title"] = "Greenloop run summary"
    return schema
