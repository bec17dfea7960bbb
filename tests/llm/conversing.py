"""A role's conversation as runs drive it, alone: a workflow that runs the fixer's or the
analyzer's conversation (``workflows/conversation.py``, the loop a test's workflow uses)
with the worker's real activities, on the test dev server, against the scripted LLM."""

from __future__ import annotations

import uuid
from pathlib import Path

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from greenloop.activities.analysis import AnalyzeInput
    from greenloop.activities.fixing import FixInput, FixProposal
    from greenloop.analysis.note import AnalysisNote
    from greenloop.domain.llm import Usage
    from greenloop.run_request import FixRequest
    from greenloop.worker import ACTIVITIES
    from greenloop.workflows.conversation import analyzer_conversation, fixer_conversation
    from tests.workflows.conftest import fix_request


class Conversing(BaseModel):
    request: FixRequest
    fix: FixInput | None = None  # the fixer's conversation for this attempt, or
    analyze: AnalyzeInput | None = None  # the analyzer's


class Conversed(BaseModel):
    proposal: FixProposal | None = None
    note: AnalysisNote | None = None
    calls: list[Usage] = Field(default_factory=list[Usage])  # each model call's usage, as the workflow was told


@workflow.defn
class ConversationWorkflow:
    @workflow.run
    async def run(self, inp: Conversing) -> Conversed:
        out = Conversed()
        if inp.fix is not None:
            out.proposal = await fixer_conversation(inp.fix, inp.request, out.calls.append)
        if inp.analyze is not None:
            out.note = await analyzer_conversation(inp.analyze, inp.request, out.calls.append)
        return out


async def converse(env, fix: FixInput | None = None, analyze: AnalyzeInput | None = None) -> Conversed:
    """Run one conversation to its end on ``env``'s server, with a fresh worker on its own task queue."""
    ws = (fix or analyze).workspace  # type: ignore[union-attr]
    request = fix_request(Path(ws.repo), Path(ws.run_dir))
    queue = f"conv-{uuid.uuid4().hex[:6]}"
    async with Worker(env.client, task_queue=queue, workflows=[ConversationWorkflow], activities=ACTIVITIES):
        return await env.client.execute_workflow(
            ConversationWorkflow.run, Conversing(request=request, fix=fix, analyze=analyze),
            id=f"conversation-{uuid.uuid4().hex[:6]}", task_queue=queue, result_type=Conversed)
