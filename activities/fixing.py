"""The FIXING step: what the fixer's conversation (``activities/conversation.py``,
``start_fix``/``finish_fix``) is given and what it proposes. The fixer role edits an
overlay of the workspace; the fix comes back to the workflow as compact changes
(``domain/changes.py``: per file, the lines it replaces in the version it was
written on, never the whole file), which the workflow applies with backups or
sends to the validation queue.

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
from ..domain.llm import LLMSettings, Usage
from ..domain.workspace import Workspace
from ..llm.tools import Overlay
from ..runner.plan import SuitePlan
from ..runner.runs import SuiteRun
from ..sandbox.models import SandboxSettings
from ..workspace.changes import Bases
from ..workspace.fake_fix import fake_fix_reasons

# A proposal's diff (for the attempt's record and the reports) is cut to its last this many characters.
MOST_DIFF_CHARS = 20_000
# A fix whose changes weigh more than this (their new lines) is refused: it would make a payload that
# grows with what the model writes (a whole generated file), where every other one is bounded.
MOST_FIX_BYTES = 128 * 1024


class FixProposal(BaseModel):
    """What the fixer activity returns: a fix, or why there is none.

    The fix travels as compact changes, so the payload grows with what the fix changes, not with the
    size of the files it touches (a one-line fix to a 100 kB module weighs about a kilobyte); the
    versions they were written on are kept in the run directory (``Bases``) for a rebase."""

    changes: list[FileChange] = Field(default_factory=list[FileChange])  # empty: no fix
    rationale: str = ""
    diff: str = ""  # its unified diff, cut to ``MOST_DIFF_CHARS`` (what the reports show)
    failure_reason: str | None = None  # malformed answer, rejected edit, no edit...
    escalate: bool = False  # the policy says a person must look (fake-fix policy "escalate")
    usage: Usage = Field(default_factory=Usage)
    test_runs: int = 0  # the tests the fixer ran mid-conversation (its run_tests calls that ran)
    commands: int = 0  # the sandboxed commands it ran (its bash calls that ran)

    @property
    def files(self) -> list[str]:
        return [c.path for c in self.changes]

    def changed_lines(self) -> int:
        return sum(c.changed_lines() for c in self.changes)


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
        compact = [change_between(path, before, after) for path, before, after in changes]
        weight = sum(c.size() for c in compact)
        if weight > MOST_FIX_BYTES:
            proposal.failure_reason = (f"the fix writes {weight / 1024:.0f} kB of new lines, over the "
                                       f"{MOST_FIX_BYTES // 1024} kB a fix may change: make a smaller one")
        elif fake:
            proposal.failure_reason = "rejected as a fake fix: " + "; ".join(fake)
            proposal.escalate = inp.llm.fake_fix_policy == "escalate"
        else:
            proposal.rationale, proposal.diff = outcome_text[:4000], _diff(root, overlay)[-MOST_DIFF_CHARS:]
            proposal.changes = compact
            bases = Bases(Path(inp.workspace.run_dir))
            for _, before, _ in changes:
                bases.keep(before)
    return proposal
