"""The FIXING step: the fixer role edits an overlay of the workspace; the
edit set comes back to the workflow, which applies it with backups.

An answer with no usable edit (malformed or refused tool calls, nothing
changed, out of turns) is a failed attempt with that reason; so is an edit
set that deletes, skips or weakens tests (or it escalates, by policy).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from pydantic import BaseModel, Field
from temporalio import activity

from .. import telemetry
from ..analysis.note import AnalysisNote
from ..domain.attempts import AttemptRecord
from ..domain.changes import FileChange, change_between
from ..domain.edits import EditSet
from ..domain.errors import ErrorKind, GreenloopError
from ..domain.llm import LLMSettings, Usage
from ..domain.workspace import Workspace
from ..llm import prompts
from ..llm.agent import run_agent
from ..llm.client import make_client
from ..llm.tools import Overlay
from ..runner.plan import SuitePlan
from ..runner.runs import SuiteRun
from ..sandbox.models import SandboxSettings
from ..workspace.changes import Bases
from ..workspace.events import log_event
from ..workspace.fake_fix import fake_fix_reasons
from .errors import typed_errors
from .heartbeat import heartbeating
from .host import on_host
from .llm_errors import provider_errors
from .testing import load_report


class FixProposal(BaseModel):
    """What the fixer activity returns: edits, or why there are none."""

    edit_set: EditSet | None = None
    # The same edits, compact: what each replaces in the version it was written on (the validation
    # queue's candidate; those versions are kept in the run directory for a rebase).
    changes: list[FileChange] = Field(default_factory=list[FileChange])
    failure_reason: str | None = None  # malformed answer, rejected edit, no edit...
    escalate: bool = False  # the policy says a person must look (fake-fix policy "escalate")
    usage: Usage = Field(default_factory=Usage)
    test_runs: int = 0  # the tests the fixer ran mid-conversation (its run_tests calls that ran)
    commands: int = 0  # the sandboxed commands it ran (its bash calls that ran)


class FixInput(BaseModel):
    run_id: str
    workspace: Workspace
    plan: SuitePlan
    test_id: str
    attempt: int
    failure_run: SuiteRun
    analysis: AnalysisNote
    attempts: list[AttemptRecord]
    llm: LLMSettings
    sandbox: SandboxSettings | None = None  # the run's: where the fixer's run_tests and bash calls run
    candidate: int = 1  # which of the attempt's independent candidate fixes (--candidates K: 1..K)


def _diff(root: Path, overlay: Overlay) -> str:
    chunks: list[str] = []
    for e in overlay.edits():
        before_path = root / e.path
        before = before_path.read_text(errors="replace") if before_path.is_file() else ""
        chunks.extend(difflib.unified_diff(
            before.splitlines(keepends=True), (e.content or "").splitlines(keepends=True),
            fromfile=f"a/{e.path}", tofile=f"b/{e.path}" if e.content is not None else "/dev/null"))
    return "".join(chunks)


@activity.defn
@typed_errors
@on_host
@provider_errors
async def propose_fix(inp: FixInput) -> FixProposal:
    """Ask the fixer for an edit set for one failing test."""
    root = Path(inp.workspace.path)
    test = load_report(inp.failure_run.report_path).find(inp.test_id)
    if test is None:
        raise GreenloopError(f"test {inp.test_id} is not in its suite report", kind=ErrorKind.VALIDATION_ERROR)
    if inp.llm.analysis_only:
        return FixProposal(failure_reason="analysis-only run: no fix asked for", escalate=True)
    overlay = Overlay(root, allow_production=inp.llm.allow_production_edits)
    client = make_client(inp.llm, role="fixer", context=f"{inp.run_id}/{inp.test_id}", candidate=inp.candidate)
    async with heartbeating("asking the fixer"):
        with telemetry.span("greenloop.fix", role="fixer", test_id=inp.test_id, attempt=inp.attempt):
            outcome = await run_agent(
                client, inp.llm, system=prompts.fixer_system(inp.llm.allow_production_edits),
                user=prompts.fixer_user(test.id, test.file, test.line, test.message, test.details, inp.analysis,
                                        inp.attempts),
                overlay=overlay, allow_edits=True, heartbeat=activity.heartbeat,
            )
    proposal = proposal_from(root, overlay, outcome.text, outcome.stop, inp, test.file)
    proposal.usage = outcome.usage
    log_event(inp.workspace.run_dir, "fix_proposed", test=inp.test_id, attempt=inp.attempt,
              files=[e.path for e in overlay.edits()], failure=proposal.failure_reason,
              tool_calls=outcome.tool_calls, usage=proposal.usage.model_dump())
    return proposal


def proposal_from(root: Path, overlay: Overlay, text: str, stop: str, inp: FixInput,
                  test_file: str | None) -> FixProposal:
    """What a finished fixer conversation proposes: its edits (unless they are a fake
    fix), or why there are none."""
    edits = overlay.edits()
    proposal = FixProposal()
    outcome_text = text
    if not edits:
        if overlay.refused:
            proposal.failure_reason = "edits refused: " + "; ".join(overlay.refused[:5])
        elif overlay.malformed:
            proposal.failure_reason = "malformed tool call(s): " + "; ".join(overlay.malformed[:5])
        elif stop == "budget":
            proposal.failure_reason = f"the LLM budget left for this test (${inp.llm.left_usd:.4f}) was used up"
        elif stop == "max_turns":
            proposal.failure_reason = f"no fix within {inp.llm.max_tool_turns} model turns"
        else:
            proposal.failure_reason = "the fixer proposed no edit" + (f": {outcome_text[:300]}" if outcome_text else "")
    else:
        changes: list[tuple[str, str | None, str | None]] = []
        for e in edits:
            p = root / e.path
            changes.append((e.path, p.read_text(errors="replace") if p.is_file() else None, e.content))
        fake = fake_fix_reasons(changes, test_file)
        if fake:
            proposal.failure_reason = "rejected as a fake fix: " + "; ".join(fake)
            proposal.escalate = inp.llm.fake_fix_policy == "escalate"
        else:
            proposal.edit_set = EditSet(edits=edits, rationale=outcome_text[:4000], diff=_diff(root, overlay))
            proposal.changes = [change_between(path, before, after) for path, before, after in changes]
            bases = Bases(Path(inp.workspace.run_dir))
            for _, before, _ in changes:
                bases.keep(before)
    return proposal
