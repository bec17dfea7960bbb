"""Prompts for the analyzer and fixer roles.

System prompts are stable (cached); everything about the failure goes in the
user message: the test, its error, Greenloop's own pattern analysis, the
source context, and what earlier attempts tried and why they failed, with
the instruction to take a different approach.
"""

from __future__ import annotations

from ..analysis.note import AnalysisNote
from ..domain.attempts import AttemptRecord

ANALYZER_SYSTEM = """You are Greenloop's analyzer. A test in this repository fails. Find the ROOT CAUSE, \
not the symptom: read the failing test and the code it exercises with the text editor tool's view command \
and the search tool. You cannot edit files. Where you have them, the run_tests tool runs tests and the bash \
tool runs a command in a sandboxed scratch copy of the repository (nothing it changes is kept).

Answer in Markdown with exactly these sections:
## Root Cause
## Evidence
(file:line references and the error)
## Recommended Fix
(the minimal change, in which file; alternatives if any)"""

FIXER_SYSTEM = """You are Greenloop's fixer. Make the failing test pass with a minimal, correct change, \
using the text editor tool (view to look, str_replace, insert and create to edit) and the search tool. \
Your edits are applied only when you finish, then validated by running the test and the whole suite: a change \
that breaks another test is rolled back. Where you have them, the run_tests tool runs tests with your pending \
edits (check an edit before you finish; runs are limited) and the bash tool runs a command in a sandboxed scratch \
copy of the repository (nothing it changes is kept).

Rules:
- Fix the real defect. You may change production code {production}.
- Never delete, skip, xfail, ignore or weaken a test, and never remove assertions: such edits are rejected.
- Do not touch .git/, CI configuration, or files outside the repository.
- When you are done, reply with a short rationale (no tool call): what was wrong and what you changed."""


def fixer_system(allow_production: bool) -> str:
    production = "as well as tests" if allow_production else "— NOT in this run: edit test code only"
    return FIXER_SYSTEM.format(production=production)


def _failure_block(test_id: str, file: str | None, line: int | None, message: str | None, details: str | None) -> str:
    where = f"{file}:{line}" if file and line else (file or "unknown location")
    parts = [f"Failing test: `{test_id}` ({where})"]
    if message:
        parts.append(f"Error:\n```\n{message}\n```")
    if details and details != message:
        parts.append(f"Details:\n```\n{details[-6000:]}\n```")
    return "\n\n".join(parts)


def attempts_block(attempts: list[AttemptRecord]) -> str:
    """What earlier attempts tried and why they failed (fed into the next one)."""
    if not attempts:
        return ""
    parts = ["Previous attempts failed. Take a DIFFERENT approach from each of them."]
    for a in attempts:
        verdict = a.verdict.value if a.verdict else "not validated"
        parts.append(
            f"### Attempt {a.number}: {verdict}\nWhy it failed: {a.reason or 'unknown'}\n"
            + (f"Rationale given: {a.rationale}\n" if a.rationale else "")
            + (f"Diff:\n```diff\n{a.diff[-4000:]}\n```" if a.diff else "")
        )
    return "\n\n".join(parts)


def analyzer_user(test_id: str, file: str | None, line: int | None, message: str | None, details: str | None,
                  note: AnalysisNote, attempts: list[AttemptRecord]) -> str:
    sections = [
        _failure_block(test_id, file, line, message, details),
        f"Greenloop's pattern analysis: {note.kind} — {note.evidence}\nSuggestion: {note.suggestion}",
        note.context_markdown,
        attempts_block(attempts),
    ]
    return "\n\n".join(s for s in sections if s)


def fixer_user(test_id: str, file: str | None, line: int | None, message: str | None, details: str | None,
               note: AnalysisNote, attempts: list[AttemptRecord]) -> str:
    sections = [
        _failure_block(test_id, file, line, message, details),
        f"Analysis ({note.kind}): {note.evidence}\nSuggestion: {note.suggestion}"
        + (f"\nError site: {note.error_site}" if note.error_site else "")
        + (f"\nExpected: {note.expected}\nActual: {note.actual}" if note.expected is not None else ""),
        f"Analyzer's findings:\n{note.llm_analysis}" if note.llm_analysis else "",
        note.context_markdown,
        attempts_block(attempts),
    ]
    return "\n\n".join(s for s in sections if s)
