"""Activities for the ANALYZING step: pattern analysis and context (no LLM),
then the LLM analyzer's findings, and the suite-level ordering by root cause."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, Field
from temporalio import activity

from ..analysis.failure_analysis import analyze_report
from ..analysis.localize import Spectrum
from ..analysis.note import AnalysisNote
from ..domain.attempts import AttemptRecord
from ..domain.errors import ErrorKind, GreenloopError
from ..domain.llm import LLMSettings
from ..domain.workspace import Workspace
from ..llm import prompts
from ..llm.first_message import pattern_note
from ..parsers.models import Status, TestResult
from ..runner.plan import SuitePlan
from ..runner.runs import SingleRun, SuiteRun
from ..runner.select import selected
from ..sandbox.models import SandboxSettings
from ..workspace.events import log_event
from .conversation import Conversation, analysis_completed, analysis_of, begin, hands_for, load_conversation
from .errors import typed_errors
from .host import on_host
from .testing import load_report, load_statuses


class SuiteAnalysisInput(BaseModel):
    workspace: Workspace
    run: SuiteRun  # the failures to fix come from this run's statuses
    select: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    # The suite run again: a failure that passes there is flaky (reported, not fixed).
    recheck: SuiteRun | None = None


class GroupNote(BaseModel):
    root_test: str
    tests: list[str]
    reason: str
    kind: str


class SuiteAnalysis(BaseModel):
    order: list[str]  # the failures to fix, in the order to fix them: group roots first
    flaky: list[str] = Field(default_factory=list)  # failed, then passed when the suite ran again
    groups: list[GroupNote]
    root_cause: str


class AnalyzeInput(BaseModel):
    run_id: str
    workspace: Workspace
    test_id: str
    failure_run: SuiteRun
    attempts: list[AttemptRecord]
    llm: LLMSettings
    # The run's plan and sandbox: where the analyzer's run_tests and bash calls run (on a scratch copy).
    plan: SuitePlan | None = None
    sandbox: SandboxSettings | None = None
    # How the test failed after the last attempt's fix (run alone), when it did: this attempt's
    # analysis is of that failure, not of the suite run's first one.
    latest_failure: SingleRun | None = None


class AnalysisStart(BaseModel):
    """The pattern analysis of a failure (no LLM) and, unless the run is analysis
    only, the analyzer's conversation begun on the host (``ref``: its file there)."""

    note: AnalysisNote
    ref: str | None = None


class FinishAnalysisInput(BaseModel):
    workspace: Workspace
    test_id: str
    note: AnalysisNote  # the pattern analysis, which the conversation's findings complete
    ref: str
    stop: str


@activity.defn
@typed_errors
@on_host
async def analyze_suite(inp: SuiteAnalysisInput) -> SuiteAnalysis:
    """The failures of ``inp.run`` to fix (selected, not flaky), grouped by root
    cause, and the order to fix them in (group roots first)."""
    report = load_report(inp.run.report_path)
    failing = [t for t in report.failing if selected(t.id, inp.select, inp.exclude)]
    again = load_statuses(inp.recheck.statuses_path) if inp.recheck else {}
    passed_again = {t for t, s in again.items() if s in (Status.PASSED, Status.XPASSED)}
    flaky = [t.id for t in failing if t.id in passed_again]
    report.tests = [t for t in failing if t.id not in passed_again]
    analysis = await asyncio.to_thread(analyze_report, report, Path(inp.workspace.path),
                                       Spectrum.load(Path(inp.workspace.run_dir)))
    order = list(dict.fromkeys([*(t for g in analysis.groups for t in g.tests), *(t.id for t in report.tests)]))
    groups = [GroupNote(root_test=g.root_test, tests=g.tests, reason=g.reason, kind=g.kind.value)
              for g in analysis.groups]
    log_event(inp.workspace.run_dir, "suite_analysis", root_cause=analysis.root_cause, tests=len(order),
              flaky=flaky[:50], groups=[g.model_dump() for g in groups[:50]])
    return SuiteAnalysis(order=order, flaky=flaky, groups=groups, root_cause=analysis.root_cause)


def _pattern_note(inp: AnalyzeInput) -> tuple[TestResult, AnalysisNote]:
    """The failing test, classified, with its source context (no LLM): the note the fixer's first
    message is made of (``llm/first_message.py``)."""
    report = load_report(inp.failure_run.report_path)
    test = report.find(inp.test_id)
    if test is None:
        raise GreenloopError(f"test {inp.test_id} is not in its suite report", kind=ErrorKind.VALIDATION_ERROR)
    latest = inp.latest_failure
    if latest is not None and not latest.passed and (latest.message or latest.details):
        test = test.model_copy(update={"message": latest.message, "details": latest.details})
    note, _ = pattern_note(Path(inp.workspace.path), report, test, Spectrum.load(Path(inp.workspace.run_dir)))
    return test, note


def _analyzer_user(test: TestResult, note: AnalysisNote, inp: AnalyzeInput) -> str:
    return prompts.analyzer_user(test.id, test.file, test.line, test.message, test.details, note, inp.attempts)


@activity.defn
@typed_errors
@on_host
async def start_analysis(inp: AnalyzeInput) -> AnalysisStart:
    """Classify the failure, gather its context, and begin the analyzer's
    conversation (read-only tools; its model calls are ``analyzer_turn``s)."""
    test, note = _pattern_note(inp)
    if inp.llm.analysis_only:
        return AnalysisStart(note=analysis_completed(inp.workspace.run_dir, inp.test_id, note))
    attempt = len(inp.attempts) + 1
    start = begin(inp.workspace.run_dir, f"analysis-{attempt}", Conversation(
        role="analyzer", context=f"{inp.run_id}/{inp.test_id}", test_id=inp.test_id, attempt=attempt,
        system=prompts.ANALYZER_SYSTEM, allow_production=False,
        messages=[{"role": "user", "content": _analyzer_user(test, note, inp)}],
        hands=hands_for("analyzer", attempt, inp.workspace, inp.test_id, inp.failure_run, inp.llm, inp.plan,
                        inp.sandbox), note=note))
    return AnalysisStart(note=note, ref=start.ref)


@activity.defn
@typed_errors
@on_host
async def finish_analysis(inp: FinishAnalysisInput) -> AnalysisNote:
    """The pattern analysis completed with the analyzer's findings (one that ran out of turns
    or of budget; one the model ended is finished by its last turn)."""
    conv = load_conversation(inp.ref)
    return analysis_of(inp.workspace.run_dir, conv.model_copy(update={"note": inp.note}), inp.stop)
