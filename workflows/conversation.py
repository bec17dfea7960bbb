"""The fixer's tool-use conversation driven by the workflow (the pattern of
Temporal's AI agent samples): each model call is an activity, and so is each
turn's set of tool calls, all on the worker that holds the workspace (the
conversation's messages and tool results stay in a file there; the history
carries costs, stop reasons and tool names). A worker lost mid-conversation
loses at most the model call in flight; the usage of every completed call is
handed to ``on_usage`` as it comes, so it is counted even if the test's
worker is lost later."""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from greenloop.activities import conversation as conv_acts
    from greenloop.workflows.host import host_activity
    from greenloop.workflows.models import (
        FinishFixInput,
        FixInput,
        FixProposal,
        FixRequest,
        ModelTurnResult,
        ToolsInput,
        TurnInput,
        Usage,
    )
    from greenloop.workflows.options import llm_options, quick_options


async def fixer_conversation(fix: FixInput, request: FixRequest, on_usage: Callable[[Usage], None]) -> FixProposal:
    """Converse with the fixer until it stops calling tools, runs out of turns or
    of its budget; its proposal (``usage``: the whole conversation's)."""
    ws, hb = fix.workspace, request.heartbeat_timeout_s
    start = await host_activity(conv_acts.start_fix, fix, ws, request, quick_options(hb))
    if start.proposal is not None:
        return start.proposal
    assert start.ref is not None
    used, stop = Usage(), "max_turns"
    for turn in range(1, fix.llm.max_tool_turns + 1):
        step: ModelTurnResult = await host_activity(
            conv_acts.fixer_turn, TurnInput(workspace=ws, ref=start.ref, turn=turn, llm=fix.llm), ws, request,
            llm_options(hb))
        used = used + step.usage
        on_usage(step.usage)
        if not step.tool_calls:
            stop = step.stop
            break
        if fix.llm.budget_usd is not None and used.cost_usd >= fix.llm.budget_usd:
            stop = "budget"
            break
        await host_activity(conv_acts.fixer_tools, ToolsInput(workspace=ws, ref=start.ref, turn=turn), ws, request,
                            quick_options(hb))
    proposal: FixProposal = await host_activity(
        conv_acts.finish_fix, FinishFixInput(fix=fix, ref=start.ref, stop=stop), ws, request, quick_options(hb))
    return proposal.model_copy(update={"usage": used})
