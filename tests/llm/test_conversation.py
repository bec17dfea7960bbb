"""The fixer's conversation one activity at a time (the workflow drives it):
against the scripted server through the real client, each step is idempotent,
so a worker that died after a step but before reporting it costs nothing: a
model call made and saved is not made again, tool calls are applied once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from greenloop.activities.conversation import finish_fix, fixer_tools, fixer_turn, start_fix
from greenloop.llm.scripted_server import ScriptedLLMServer
from greenloop.workflows.models import FinishFixInput, ToolsInput, TurnInput
from tests.llm.test_agent import CART, api_key, fix_input, repo, scenario, settings  # noqa: F401 - fixtures

FIX = {"path": "shop/cart.py", "old_text": "sum(items) - 1", "new_text": "sum(items)"}


async def test_each_step_is_done_once_and_the_proposal_comes_from_the_conversation(repo, api_key, tmp_path_factory):
    sc = scenario({"trigger": {"role": "fixer", "turn": 1},
                   "response": {"tool_calls": [{"name": "replace_in_file", "input": FIX}]}},
                  {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "total() subtracted one."}})
    env = ActivityEnvironment()
    with ScriptedLLMServer(sc) as server:
        fix = fix_input(repo, tmp_path_factory, settings(server))
        start = await env.run(start_fix, fix)
        assert start.proposal is None and start.ref is not None
        turn = TurnInput(workspace=fix.workspace, ref=start.ref, turn=1, llm=fix.llm)
        first = await env.run(fixer_turn, turn)
        again = await env.run(fixer_turn, turn)  # a retry after its worker died having saved the answer
        assert first.tool_calls == ["replace_in_file"] and not first.replayed
        assert again.replayed and again.usage == first.usage and len(server.requests) == 1
        tools = ToolsInput(workspace=fix.workspace, ref=start.ref, turn=1)
        await env.run(fixer_tools, tools)
        await env.run(fixer_tools, tools)  # applied once
        saved = json.loads(Path(start.ref).read_text())
        assert [m["role"] for m in saved["messages"]] == ["user", "assistant", "user"]
        second = await env.run(fixer_turn, turn.model_copy(update={"turn": 2}))
        assert second.tool_calls == [] and second.stop == "end_turn" and len(server.requests) == 2
        # the second request carried the first turn's tool result
        assert server.requests[1].body["messages"][-1]["content"][0]["type"] == "tool_result"
        proposal = await env.run(finish_fix, FinishFixInput(fix=fix, ref=start.ref, stop=second.stop))
    assert proposal.edit_set is not None and proposal.failure_reason is None
    assert [(e.path, e.content) for e in proposal.edit_set.edits] == [
        ("shop/cart.py", CART.replace("sum(items) - 1", "sum(items)"))]
    assert proposal.edit_set.rationale == "total() subtracted one."
    assert (repo / "shop" / "cart.py").read_text() == CART  # the overlay, not the workspace


async def test_a_conversation_file_that_is_gone_is_a_lost_workspace(repo, api_key, tmp_path_factory):
    with ScriptedLLMServer(scenario({"trigger": {}, "response": {"text": "x"}})) as server:
        fix = fix_input(repo, tmp_path_factory, settings(server))
        with pytest.raises(ApplicationError) as err:
            await ActivityEnvironment().run(fixer_turn, TurnInput(workspace=fix.workspace, ref=str(
                Path(fix.workspace.run_dir) / "conversations" / "gone.json"), turn=1, llm=fix.llm))
        assert len(server.requests) == 0
    assert err.value.type == "workspace_lost"
