"""The FIXING step: what the fixer's conversation (``activities/conversation.py``,
``start_fix``/``finish_fix``) is given and what it proposes. The fixer role edits an
overlay of the workspace; the edit set comes back to the workflow, which applies it
with backups.

An answer with no usable edit (malformed or refused tool calls, nothing
changed, out of turns) is a failed attempt with that reason; so is an edit
set that deletes, skips or weakens tests (or it escalates, by policy).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from pydantic import BaseModel, Field

from ..analysis.note import AnalysisNote
from ..domain.attempts import AttemptRecord
from ..domain.changes import FileChange, change_between
from ..domain.edits import EditSet
from ..domain.llm import LLMSettings, Usage
from ..domain.workspace import Workspace
from ..llm.tools import Overlay
from ..runner.plan import SuitePlan
from ..runner.runs import SuiteRun
from ..sandbox.models import SandboxSettings
from ..workspace.changes import Bases
from ..workspace.fake_fix import fake_fix_reasons


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
