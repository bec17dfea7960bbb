"""The fixer's first message for a failing test, built the one way a run builds it: the test
classified (``analysis/patterns.py``), fault localization over the sources with the suite's
per-test coverage when it was recorded and the run's other failing tests (``analysis/localize.py``),
the ranked suspects' code (``analysis/context.py``), all in the fixer's prompt (``llm/prompts.py``).
The analysis activity builds its note with ``pattern_note``; the mutant benchmarks measure the
message with ``first_message`` (is the mutated line shown, where does its function rank)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from ..analysis.context import FailureContext, build_context
from ..analysis.localize import Localizer, Spectrum, failing_test
from ..analysis.note import AnalysisNote
from ..analysis.patterns import classify
from ..parsers.locate import SourceIndex
from ..parsers.models import TestReport, TestResult
from . import prompts

# Failing tests whose suspects are compared with a test's own (agreement).
MAX_AGREEING = 200


def pattern_note(root: Path, report: TestReport, test: TestResult,
                 spectrum: Spectrum | None) -> tuple[AnalysisNote, FailureContext]:
    """The failing ``test`` of ``report`` classified, with its source context (no LLM): the
    analysis note and the context it renders."""
    index = SourceIndex(root)
    files = set(index.files())
    c = classify(test, files)
    others = [failing_test(t, classify(t, files)) for t in report.failing[:MAX_AGREEING]]
    localizer = Localizer.for_report(index, report, spectrum)
    context = build_context(root, test, c, localizer, others)
    note = AnalysisNote(
        kind=c.kind.value, evidence=c.evidence, suggestion=c.suggestion,
        error_site=f"{c.error_site.file}:{c.error_site.line}" if c.error_site else None,
        expected=c.expected, actual=c.actual, context_markdown=context.render(),
        suspects=context.suspects,
    )
    return note, context


class FirstMessage(BaseModel):
    """The fixer's first user message for one failing test (before any analyzer findings), and
    what it was made of."""

    test_id: str
    text: str
    context: FailureContext

    def shows(self, file: str, line: int) -> bool:
        """Is ``file``'s line ``line`` inside a code excerpt of the message?"""
        return any(s.file == file and s.start_line <= line <= s.end_line for s in self.context.snippets)

    def rank(self, file: str, function: str) -> int | None:
        """Where ``file``'s function ``function`` stands among the ranked suspects (1: first)."""
        return next((i + 1 for i, s in enumerate(self.context.suspects) if (s.file, s.function) == (file, function)),
                    None)


def first_message(root: Path, report: TestReport, test: TestResult, spectrum: Spectrum | None) -> FirstMessage:
    """The message a run's fixer gets first for ``test`` (its first attempt)."""
    note, context = pattern_note(root, report, test, spectrum)
    text = prompts.fixer_user(test.id, test.file, test.line, test.message, test.details, note, [])
    return FirstMessage(test_id=test.id, text=text, context=context)
