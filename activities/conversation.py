"""A role's tool-use conversation one step at a time, so that the workflow drives
it: each model call is its own activity, and so is each turn's set of tool calls.
The fixer and the analyzer share these steps (``fixer_turn``/``fixer_tools`` and
``analyzer_turn``/``analyzer_tools`` are the same step under each role's name,
so the history says whose call it is); how a conversation begins and what it
comes to differ by role (``start_fix``/``finish_fix`` here, ``start_analysis``/
``finish_analysis`` in activities/analysis.py). A conversation that ends because
the model stops calling tools ends in its last model turn: the turn's result
carries what it comes to (the fixer's proposal, the analyzer's completed note),
so no finishing step of its own follows it; one that runs out of turns or of
budget is finished by ``finish_fix``/``finish_analysis``.

The conversation (messages, tool results, the overlay's pending edits) lives in
a file of the run directory on the host that holds the workspace; only costs,
stop reasons and tool names travel to the workflow. Each step is idempotent:
a model call that was made and saved by a worker that then died is not made
again (its recorded result is returned), and tool calls are applied once per
turn. So a lost worker loses at most the model call in flight, and every call
that completed is counted in the run's usage."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from temporalio import activity

from .. import telemetry
from ..analysis.note import AnalysisNote
from ..domain.errors import ErrorKind, GreenloopError
from ..domain.llm import LLMSettings, Usage
from ..domain.workspace import Workspace
from ..llm import prompts, sandbox_tools
from ..llm.agent import model_turn, tool_result, tool_results
from ..llm.client import make_client
from ..llm.sandbox_tools import Counts, Hands
from ..llm.tools import Overlay
from ..runner.plan import SuitePlan
from ..runner.runs import SuiteRun
from ..sandbox.models import SandboxSettings
from ..workspace.backups import atomic_write, slug
from ..workspace.events import log_event
from .errors import typed_errors
from .fixing import FixInput, FixProposal, proposal_from
from .heartbeat import heartbeating
from .host import on_host, require_file
from .llm_errors import provider_errors
from .testing import load_report


class ConversationStart(BaseModel):
    """A fixer conversation begun on the host (``ref``: its file there, with the
    messages and tool results, which never travel), or a proposal without one."""

    ref: str | None = None
    proposal: FixProposal | None = None


class TurnInput(BaseModel):
    workspace: Workspace
    ref: str
    turn: int
    llm: LLMSettings


class ModelTurnResult(BaseModel):
    """One model call of a conversation, as the workflow sees it: what it cost,
    why it stopped, the tools it asks for (names; their inputs stay on the host)."""

    usage: Usage
    stop: str
    tool_calls: list[str] = Field(default_factory=list)
    replayed: bool = False  # made earlier by a worker that died before reporting it: not asked again
    # The last turn (no tool calls): what the conversation comes to, its finishing step folded in.
    proposal: FixProposal | None = None  # the fixer's
    note: AnalysisNote | None = None  # the analyzer's completed note


class ToolsInput(BaseModel):
    """Tool calls of one model turn to run: ``first`` to ``last`` (exclusive; None: to the end).
    The editor's and search's calls run together; each sandboxed call (``run_tests``, ``bash``)
    is an activity of its own, with a test run's timeouts."""

    workspace: Workspace
    ref: str
    turn: int
    first: int = 0
    last: int | None = None


class FinishFixInput(BaseModel):
    fix: FixInput
    ref: str
    stop: str


# The trace span of each role's conversation.
In = TypeVar("In")
R = TypeVar("R")
SPANS = {"fixer": "greenloop.fix", "analyzer": "greenloop.analysis"}


class Conversation(BaseModel):
    """A conversation as its host keeps it."""

    role: str = "fixer"  # who converses: the fixer (may edit the overlay) or the analyzer (reads only)
    context: str  # "<run>/<test>": what the provider sees with each request
    test_id: str = ""  # whose fix, for traces and metrics
    attempt: int = 0
    candidate: int = 1  # which of the attempt's candidate fixes (--candidates)
    system: str
    allow_production: bool
    messages: list[dict[str, Any]]
    changes: dict[str, str | None] = Field(default_factory=dict)  # the overlay's pending edits
    malformed: list[str] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)
    calls: list[str] = Field(default_factory=list)
    turns: list[ModelTurnResult] = Field(default_factory=list[ModelTurnResult])
    text: str = ""  # the model's last text
    hands: Hands | None = None  # what its sandboxed tools need (None: it has none)
    counts: Counts = Field(default_factory=Counts)  # its sandboxed calls that ran
    pending: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])  # this turn's results so far
    # What it ends with, kept here so that its last model turn ends it: the fixer's attempt, or the
    # analyzer's pattern note (which its findings complete).
    fix: FixInput | None = None
    note: AnalysisNote | None = None

    @property
    def allow_edits(self) -> bool:
        return self.role == "fixer"


def load_conversation(ref: str) -> Conversation:
    return Conversation.model_validate_json(require_file(ref, "the conversation").read_text())


def _save(ref: str, conv: Conversation) -> None:
    atomic_write(Path(ref), conv.model_dump_json().encode())


def begin(run_dir: str, name: str, conv: Conversation) -> ConversationStart:
    """Save a new conversation (its first user message) in the run directory,
    ``conversations/<test>/<name>.json``, replacing any earlier one of that name."""
    ref = Path(run_dir) / "conversations" / slug(conv.test_id) / f"{name}.json"
    _save(str(ref), conv)
    return ConversationStart(ref=str(ref))


def final_text(conv: Conversation, stop: str) -> str:
    """What the conversation comes to: the model's last text, unless it ran out of turns."""
    return conv.text if stop != "max_turns" else ""


def analysis_completed(run_dir: str, test_id: str, note: AnalysisNote) -> AnalysisNote:
    log_event(run_dir, "analysis_complete", test=test_id, kind=note.kind, evidence=note.evidence,
              llm_analysis=note.llm_analysis[:2000])
    return note


def analysis_of(run_dir: str, conv: Conversation, stop: str) -> AnalysisNote:
    """The analyzer's pattern note completed with its findings (its last text)."""
    assert conv.note is not None
    note = conv.note.model_copy(update={"llm_analysis": final_text(conv, stop)[:8000],
                                        "test_runs": conv.counts.test_runs, "commands": conv.counts.commands})
    return analysis_completed(run_dir, conv.test_id, note)


def proposal_of(fix: FixInput, conv: Conversation, stop: str) -> FixProposal:
    """What the fixer's conversation proposes: its edits, or why there are none."""
    root = Path(fix.workspace.path)
    test = load_report(fix.failure_run.report_path).find(fix.test_id)
    proposal = proposal_from(root, _overlay(root, conv), final_text(conv, stop), stop, fix,
                             test.file if test else None)
    log_event(fix.workspace.run_dir, "fix_proposed", test=fix.test_id, attempt=fix.attempt,
              files=proposal.files,
              failure=proposal.failure_reason, tool_calls=conv.calls, turns=len(conv.turns),
              test_runs=conv.counts.test_runs, commands=conv.counts.commands)
    return proposal.model_copy(update={"test_runs": conv.counts.test_runs, "commands": conv.counts.commands})


def _ended(run_dir: str, conv: Conversation, result: ModelTurnResult) -> ModelTurnResult:
    """``result``, with what the conversation comes to when it is the last turn (no tool calls)."""
    if result.tool_calls:
        return result
    if conv.fix is not None:
        return result.model_copy(update={"proposal": proposal_of(conv.fix, conv, result.stop)})
    if conv.note is not None:
        return result.model_copy(update={"note": analysis_of(run_dir, conv, result.stop)})
    return result


def hands_for(role: str, attempt: int, ws: Workspace, test_id: str, failure_run: SuiteRun, llm: LLMSettings,
              plan: SuitePlan | None, sandbox: SandboxSettings | None, candidate: int = 1) -> Hands | None:
    """What a conversation's sandboxed tools need (None without the run's plan and sandbox,
    or when the settings allow no test run and no command)."""
    if plan is None or sandbox is None or not (llm.max_test_runs or llm.max_commands):
        return None
    return Hands(plan=plan, sandbox=sandbox, report_path=failure_run.report_path, test_id=test_id,
                 run_dir=ws.run_dir, role=role, attempt=attempt, max_test_runs=llm.max_test_runs,
                 max_commands=llm.max_commands, candidate=candidate)


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
    user = prompts.fixer_user(test.id, test.file, test.line, test.message, test.details, inp.analysis, inp.attempts)
    name = f"attempt-{inp.attempt}" + (f"-candidate-{inp.candidate}" if inp.candidate > 1 else "")
    return begin(inp.workspace.run_dir, name, Conversation(
        role="fixer", context=f"{inp.run_id}/{inp.test_id}", test_id=inp.test_id, attempt=inp.attempt,
        candidate=inp.candidate,
        system=prompts.fixer_system(inp.llm.allow_production_edits), allow_production=inp.llm.allow_production_edits,
        messages=[{"role": "user", "content": user}],
        hands=hands_for("fixer", inp.attempt, inp.workspace, inp.test_id, inp.failure_run, inp.llm, inp.plan,
                        inp.sandbox, inp.candidate), fix=inp))


async def _model_call(inp: TurnInput) -> ModelTurnResult:
    """One model call: the conversation so far, the model's answer appended."""
    conv = load_conversation(inp.ref)
    if len(conv.turns) >= inp.turn:  # made and saved before its worker died: not asked again
        return _ended(inp.workspace.run_dir, conv, conv.turns[inp.turn - 1].model_copy(update={"replayed": True}))
    if len(conv.messages) != 2 * inp.turn - 1:
        raise GreenloopError(f"the conversation {inp.ref} is not at turn {inp.turn}", kind=ErrorKind.WORKSPACE_LOST,
                             path=inp.ref)
    client = make_client(inp.llm, role=conv.role, context=conv.context, candidate=conv.candidate)
    with telemetry.span(SPANS[conv.role], role=conv.role, test_id=conv.test_id, attempt=conv.attempt):
        step = await model_turn(client, inp.llm, conv.system, conv.messages, sandbox_tools.declarations(conv.hands))
    result = ModelTurnResult(usage=step.usage, stop=step.stop, tool_calls=[u["name"] for u in step.tool_uses])
    conv.messages.append(step.message)
    conv.turns.append(result)
    conv.text = step.text
    _save(inp.ref, conv)
    return _ended(inp.workspace.run_dir, conv, result)


def _turn_uses(inp: ToolsInput) -> tuple[Conversation, list[dict[str, Any]]] | None:
    """The conversation and its last turn's tool calls, or None when their results are in already
    (applied before a worker died)."""
    conv = load_conversation(inp.ref)
    if len(conv.messages) >= 2 * inp.turn + 1:
        return None
    return conv, [b for b in conv.messages[-1]["content"] if b.get("type") == "tool_use"]


def _answered(inp: ToolsInput, conv: Conversation, uses: list[dict[str, Any]]) -> None:
    """Save the results so far; once every call of the turn has one, they are the next user message."""
    if len(conv.pending) >= len(uses):
        conv.messages.append({"role": "user", "content": conv.pending})
        conv.pending = []
    _save(inp.ref, conv)


async def _tool_calls(inp: ToolsInput) -> None:
    """Run tool calls of a model turn against the overlay (once), their results kept."""
    found = _turn_uses(inp)
    if found is None:
        return
    conv, uses = found
    last = len(uses) if inp.last is None else inp.last
    first = max(inp.first, len(conv.pending))  # (those before were answered before a worker died)
    overlay = _overlay(Path(inp.workspace.path), conv)
    conv.pending += tool_results(overlay, uses[first:last], conv.allow_edits, conv.calls)
    conv.changes, conv.malformed, conv.refused = overlay.changes, overlay.malformed, overlay.refused
    _answered(inp, conv, uses)


async def _sandbox_call(inp: ToolsInput) -> None:
    """Run the turn's sandboxed tool call ``first`` (once) on a scratch copy with the overlay's edits."""
    found = _turn_uses(inp)
    if found is None:
        return
    conv, uses = found
    if len(conv.pending) > inp.first:
        return  # answered before its worker died
    use = uses[inp.first]
    conv.calls.append(use["name"])
    if conv.hands is None:
        out, is_error = f"error: {use['name']} is not available in this conversation", True
    else:
        async with heartbeating(f"running {use['name']}"):
            out, is_error = await sandbox_tools.call(conv.hands, use["name"], use["input"], Path(inp.workspace.path),
                                                     conv.changes, conv.counts, activity.heartbeat)
    conv.pending.append(tool_result(use, out, is_error))
    _answered(inp, conv, uses)


def _role_activity(step: Callable[[In], Awaitable[R]], role: str, kind: str) -> Callable[[In], Awaitable[R]]:
    """``step`` as the activity ``<role>_<kind>``: one implementation for every role,
    under each role's own name, so the history says whose call it is."""
    name = f"{role}_{kind}"

    @functools.wraps(step)
    async def run(inp: In) -> R:
        return await step(inp)

    run.__name__ = run.__qualname__ = name  # what its heartbeats say
    on_files = on_host(provider_errors(run) if kind == "turn" else run)
    return activity.defn(name=name)(typed_errors(on_files))


# One model call of a role's conversation; one turn's tool calls (the analyzer's read only).
fixer_turn = _role_activity(_model_call, "fixer", "turn")
fixer_tools = _role_activity(_tool_calls, "fixer", "tools")
analyzer_turn = _role_activity(_model_call, "analyzer", "turn")
analyzer_tools = _role_activity(_tool_calls, "analyzer", "tools")
# One sandboxed tool call (run_tests, bash) of a role's conversation: long, heartbeating.
fixer_run = _role_activity(_sandbox_call, "fixer", "run")
analyzer_run = _role_activity(_sandbox_call, "analyzer", "run")


@activity.defn
@typed_errors
@on_host
async def finish_fix(inp: FinishFixInput) -> FixProposal:
    """What the conversation proposes (one that ran out of turns or of budget; one the model
    ended is finished by its last turn)."""
    return proposal_of(inp.fix, load_conversation(inp.ref), inp.stop)
