"""``FailureAnalysis``: the whole-run view — every failure
classified, grouped by root cause, with suggestions, affected files and the
inferred root cause."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from ..parsers.locate import SourceIndex
from ..parsers.models import TestReport
from .grouping import RUNNERS_UP, FailureGroup, group_failures
from .localize import Localizer, Spectrum, Suspect, failing_test
from .patterns import FailureClassification, FailureKind, classify


class ErrorPattern(BaseModel):
    type: FailureKind
    message: str
    frequency: int
    test_names: list[str]


class FailureAnalysis(BaseModel):
    failures: list[FailureClassification]
    error_patterns: list[ErrorPattern]
    groups: list[FailureGroup]
    suggestions: list[str]
    affected_files: list[str]
    root_cause: str


def analyze_report(report: TestReport, project_root: Path | None, spectrum: Spectrum | None = None) -> FailureAnalysis:
    """Analyse every failing test of ``report`` (grouped by their top suspects when the sources are there)."""
    index = SourceIndex(project_root) if project_root else None
    files = set(index.files()) if index else set()
    classified = [classify(t, files) for t in report.failing]
    groups = group_failures(classified, top_suspects(report, classified, index, spectrum) if index else None)
    patterns: dict[FailureKind, list[FailureClassification]] = {}
    for c in classified:
        patterns.setdefault(c.kind, []).append(c)
    error_patterns = [
        ErrorPattern(type=k, message=v[0].evidence, frequency=len(v), test_names=[c.test_id for c in v])
        for k, v in sorted(patterns.items(), key=lambda kv: -len(kv[1]))
    ]
    affected = list(dict.fromkeys(
        [c.error_site.file for c in classified if c.error_site]
        + [t.file for t in report.failing if t.file]
    ))
    suggestions = list(dict.fromkeys(c.suggestion for c in classified))
    return FailureAnalysis(
        failures=classified, error_patterns=error_patterns, groups=groups, suggestions=suggestions,
        affected_files=affected, root_cause=_root_cause(report, classified, groups),
    )


def top_suspects(report: TestReport, classified: list[FailureClassification], index: SourceIndex,
                 spectrum: Spectrum | None) -> dict[str, list[Suspect]]:
    """Each failing test's top suspects (fault localization, with the other failing tests'
    agreement, as the fixer's first message ranks them), best first, where there are any."""
    localizer = Localizer.for_report(index, report, spectrum)
    ranked = localizer.rank_all([failing_test(test, c) for test, c in zip(report.failing, classified)])
    return {test_id: suspects[:RUNNERS_UP + 1] for test_id, suspects in ranked.items() if suspects}


def _root_cause(report: TestReport, classified: list[FailureClassification], groups: list[FailureGroup]) -> str:
    if not classified:
        return "no failures"
    if report.build_error:
        return "the build fails: fix the compile/load error before anything else"
    big = groups[0]
    if len(big.tests) > 1 and len(big.tests) >= len(classified) / 2:
        return f"{len(big.tests)} of {len(classified)} failures {big.reason}: likely one root cause"
    kinds = Counter(c.kind for c in classified)
    if len(classified) > 2 and len(kinds) == 1 and next(iter(kinds)) in (
        FailureKind.IMPORT_ERROR, FailureKind.FIXTURE_ERROR, FailureKind.TIMEOUT
    ):
        return f"every failure is a {next(iter(kinds)).value}: likely configuration or environment"
    return f"{len(groups)} independent failure group(s)"
