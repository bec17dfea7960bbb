"""The fixer's conversation one step at a time, so that the workflow drives it:
each model call is its own activity, and so is each turn's set of tool calls.

The conversation (messages, tool results, the overlay's pending edits) lives in
a file of the run directory on the host that holds the workspace; only costs,
stop reasons and tool names travel to the workflow. Each step is idempotent:
a model call that was made and saved by a worker that then died is not made
again (its recorded result is returned), and tool calls are applied once per
turn. So a lost worker loses at most the model call in flight, and every call
that completed is counted in the run's usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from temporalio import activity

from greenloop import telemetry
from greenloop.activities.errors import typed_errors
from greenloop.activities.fixing import proposal_from
from greenloop.activities.host import on_host, require_file
from greenloop.activities.llm_errors import provider_errors
from greenloop.activities.testing import load_report
from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.llm import prompts
from greenloop.llm.agent import model_turn, run_tools
from greenloop.llm.client import make_client
from greenloop.llm.tools import Overlay
from greenloop.workflows.models import (
    ConversationStart,
    FinishFixInput,
    FixInput,
    FixProposal,
    ModelTurnResult,
    ToolsInput,
    TurnInput,
)
from greenloop.workspace.backups import atomic_write, slug
from greenloop.workspace.events import log_event


class Conversation(BaseModel):
    """A fixer conversation as its host keeps it."""

    context: str  # "<run>/<test>": what the provider sees with each request
    test_id: str = ""  # whose fix, for traces and metrics
    attempt: int = 0
    system: str
    allow_production: bool
    messages: list[dict[str, Any]]
    changes: dict[str, str | None] = Field(default_factory=dict)  # the overlay's pending edits
    malformed: list[str] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)
    calls: list[str] = Field(default_factory=list)
    turns: list[ModelTurnResult] = Field(default_factory=list)
    text: str = ""  # the model's last text


def _load(ref: str) -> Conversation:
    return Conversation.model_validate_json(require_file(ref, "the fixer's conversation").read_text())


def _save(ref: str, conv: Conversation) -> None:
    atomic_write(Path(ref), conv.model_dump_json().encode())


def _overlay(root: Path, conv: Conversation) -> Overlay:
    overlay = Overlay(root, allow_production=conv.allow_production)
    overlay.changes, overlay.malformed, overlay.refused = dict(conv.changes), list(conv.malformed), list(conv.refused)
    return overlay


@activity.defn
@typed_errors
@on_host
async def start_fix(inp: FixInput) -> ConversationStart:
    """Begin the fixer's conversation for one attempt (its first user message)."""
    test = load_report(inp.failure_run.report_path).find(inp.test_id)
    if test is None:
        raise GreenloopError(f"test {inp.test_id} is not in its suite report", kind=ErrorKind.VALIDATION_ERROR)
    if inp.llm.analysis_only:
        return ConversationStart(proposal=FixProposal(failure_reason="analysis-only run: no fix asked for",
                                                      escalate=True))
    ref = Path(inp.workspace.run_dir) / "conversations" / slug(inp.test_id) / f"attempt-{inp.attempt}.json"
    user = prompts.fixer_user(test.id, test.file, test.line, test.message, test.details, inp.analysis, inp.attempts)
    _save(str(ref), Conversation(context=f"{inp.run_id}/{inp.test_id}", test_id=inp.test_id, attempt=inp.attempt,
                                 system=prompts.fixer_system(inp.llm.allow_production_edits),
                                 allow_production=inp.llm.allow_production_edits,
                                 messages=[{"role": "user", "content": user}]))
    return ConversationStart(ref=str(ref))


@activity.defn
@typed_errors
@on_host
@provider_errors
async def fixer_turn(inp: TurnInput) -> ModelTurnResult:
    """One model call: the conversation so far, the model's answer appended."""
    conv = _load(inp.ref)
    if len(conv.turns) >= inp.turn:  # made and saved before its worker died: not asked again
        return conv.turns[inp.turn - 1].model_copy(update={"replayed": True})
    if len(conv.messages) != 2 * inp.turn - 1:
        raise GreenloopError(f"the conversation {inp.ref} is not at turn {inp.turn}", kind=ErrorKind.WORKSPACE_LOST,
                             path=inp.ref)
    client = make_client(inp.llm, role="fixer", context=conv.context)
    with telemetry.span("greenloop.fix", role="fixer", test_id=conv.test_id, attempt=conv.attempt):
        step = await model_turn(client, inp.llm, conv.system, True, conv.messages)
    result = ModelTurnResult(usage=step.usage, stop=step.stop, tool_calls=[u["name"] for u in step.tool_uses])
    conv.messages.append(step.message)
    conv.turns.append(result)
    conv.text = step.text
    _save(inp.ref, conv)
    return result


@activity.defn
@typed_errors
@on_host
async def fixer_tools(inp: ToolsInput) -> None:
    """Run a model turn's tool calls against the overlay (once), results appended."""
    conv = _load(inp.ref)
    if len(conv.messages) >= 2 * inp.turn + 1:
        return  # applied before its worker died
    overlay = _overlay(Path(inp.workspace.path), conv)
    uses = [b for b in conv.messages[-1]["content"] if b.get("type") == "tool_use"]
    conv.messages.append(run_tools(overlay, uses, True, conv.calls))
    conv.changes, conv.malformed, conv.refused = overlay.changes, overlay.malformed, overlay.refused
    _save(inp.ref, conv)


@activity.defn
@typed_errors
@on_host
async def finish_fix(inp: FinishFixInput) -> FixProposal:
    """What the conversation proposes: its edits, or why there are none."""
    fix, conv = inp.fix, _load(inp.ref)
    root = Path(fix.workspace.path)
    test = load_report(fix.failure_run.report_path).find(fix.test_id)
    proposal = proposal_from(root, _overlay(root, conv), conv.text if inp.stop != "max_turns" else "", inp.stop, fix,
                             test.file if test else None)
    log_event(fix.workspace.run_dir, "fix_proposed", test=fix.test_id, attempt=fix.attempt,
              files=[e.path for e in proposal.edit_set.edits] if proposal.edit_set else [],
              failure=proposal.failure_reason, tool_calls=conv.calls, turns=len(conv.turns))
    return proposal
