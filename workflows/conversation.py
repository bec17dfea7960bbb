"""The roles' tool-use conversations driven by the workflow (the pattern of
Temporal's AI agent samples): each model call is an activity, and so is each
turn's set of tool calls, all on the worker that holds the workspace (the
conversation's messages and tool results stay in a file there; the history
carries costs, stop reasons and tool names). The analyzer and the fixer share
one loop (``converse``); only how a conversation begins and what it comes to
differ. A worker lost mid-conversation loses at most the model call in flight;
the usage of every completed call is handed to ``on_usage`` as it comes, so it
is counted even if the test's worker is lost later."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ..activities import analysis as analysis_acts
    from ..activities import conversation as conv_acts
    from ..activities.analysis import AnalyzeInput, FinishAnalysisInput
    from ..activities.conversation import FinishFixInput, ModelTurnResult, ToolsInput, TurnInput
    from ..activities.fixing import FixInput, FixProposal
    from ..analysis.note import AnalysisNote
    from ..domain.llm import LLMSettings, Usage
    from ..domain.workspace import Workspace
    from ..llm.sandbox_tools import NAMES as SANDBOXED
    from ..run_request import FixRequest
    from .host import host_activity
    from .options import llm_options, quick_options, test_run_options


Activity = Callable[[ToolsInput], Awaitable[None]]


async def answer_tools(tools_activity: Activity, run_activity: Activity, calls: list[str], ws: Workspace, ref: str,
                       turn: int, request: FixRequest) -> None:
    """Answer one turn's tool calls, in order: the editor's and search's together (one quick
    activity per stretch of them), each sandboxed call (``run_tests``, ``bash``) as an activity
    of its own with a test run's timeouts. A turn without sandboxed calls is one activity."""
    hb, first = request.heartbeat_timeout_s, 0
    while first < len(calls):
        if calls[first] in SANDBOXED:
            await host_activity(run_activity, ToolsInput(workspace=ws, ref=ref, turn=turn, first=first), ws, request,
                                test_run_options(request.sandbox.timeout_s, hb))
            first += 1
            continue
        last = next((i for i in range(first, len(calls)) if calls[i] in SANDBOXED), len(calls))
        await host_activity(tools_activity, ToolsInput(workspace=ws, ref=ref, turn=turn, first=first,
                                                       last=None if last == len(calls) else last),
                            ws, request, quick_options(hb))
        first = last


async def converse(turn_activity: Callable[[TurnInput], Awaitable[ModelTurnResult]], tools_activity: Activity,
                   run_activity: Activity, ws: Workspace, ref: str, llm: LLMSettings, request: FixRequest,
                   on_usage: Callable[[Usage], None]) -> tuple[str, Usage, ModelTurnResult | None]:
    """Converse until the model stops calling tools, runs out of turns (``llm.max_tool_turns``)
    or of its budget (``llm.left_usd``, for this conversation alone): why it stopped
    (the last stop reason, ``"max_turns"`` or ``"budget"``), what all its calls cost, and
    the last turn when the model ended the conversation (it carries what it comes to)."""
    hb = request.heartbeat_timeout_s
    used, stop = Usage(), "max_turns"
    for turn in range(1, llm.max_tool_turns + 1):
        step = await host_activity(
            turn_activity, TurnInput(workspace=ws, ref=ref, turn=turn, llm=llm), ws, request, llm_options(hb))
        used = used + step.usage
        on_usage(step.usage)
        if not step.tool_calls:
            return step.stop, used, step
        if llm.left_usd is not None and used.cost_usd >= llm.left_usd:
            stop = "budget"
            break
        await answer_tools(tools_activity, run_activity, step.tool_calls, ws, ref, turn, request)
    return stop, used, None


async def fixer_conversation(fix: FixInput, request: FixRequest, on_usage: Callable[[Usage], None]) -> FixProposal:
    """Converse with the fixer until it stops calling tools, runs out of turns or
    of its budget; its proposal (``usage``: the whole conversation's)."""
    ws, hb = fix.workspace, request.heartbeat_timeout_s
    start = await host_activity(conv_acts.start_fix, fix, ws, request, quick_options(hb))
    if start.proposal is not None:
        return start.proposal
    assert start.ref is not None
    stop, used, last = await converse(conv_acts.fixer_turn, conv_acts.fixer_tools, conv_acts.fixer_run, ws, start.ref,
                                      fix.llm, request, on_usage)
    # Its last turn ended it with the proposal; else (out of turns, of budget, or a turn recorded
    # before turns carried it) it is finished by a step of its own.
    proposal = last.proposal if last is not None and last.proposal is not None else await host_activity(
        conv_acts.finish_fix, FinishFixInput(fix=fix, ref=start.ref, stop=stop), ws, request, quick_options(hb))
    return proposal.model_copy(update={"usage": used})


async def analyzer_conversation(inp: AnalyzeInput, request: FixRequest,
                                on_usage: Callable[[Usage], None]) -> AnalysisNote:
    """The pattern analysis of the failure, then the analyzer's conversation (read-only
    tools) until it answers, runs out of turns or of its budget; the analysis note
    with its findings (``usage``: the whole conversation's)."""
    ws, hb = inp.workspace, request.heartbeat_timeout_s
    start = await host_activity(analysis_acts.start_analysis, inp, ws, request, quick_options(hb))
    if start.ref is None:  # analysis only: no model asked
        return start.note
    stop, used, last = await converse(conv_acts.analyzer_turn, conv_acts.analyzer_tools, conv_acts.analyzer_run, ws,
                                      start.ref, inp.llm, request, on_usage)
    note = last.note if last is not None and last.note is not None else await host_activity(
        analysis_acts.finish_analysis,
        FinishAnalysisInput(workspace=ws, test_id=inp.test_id, note=start.note, ref=start.ref, stop=stop),
        ws, request, quick_options(hb))
    return note.model_copy(update={"usage": used})
