"""The tool-use loop shared by the analyzer and the fixer roles: ask, run the
tools the model calls against the overlay, send the results back, until the
model answers in text or the turn limit is reached."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from greenloop import telemetry
from greenloop.domain.llm import LLMSettings, Usage
from greenloop.llm.client import usage_of
from greenloop.llm.tools import EDIT_TOOLS, READ_TOOLS, Overlay


class AgentOutcome(BaseModel):
    text: str
    usage: Usage
    turns: int
    stop: str  # the last stop_reason, "max_turns", or "budget"
    tool_calls: list[str]


def _block_dict(block: Any) -> dict[str, Any]:
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.model_dump(exclude_none=True) if hasattr(block, "model_dump") else dict(block)


def _cached_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The tool list and the system prompt are the stable prefix: cache them.
    out = [dict(t) for t in tools]
    out[-1]["cache_control"] = {"type": "ephemeral"}
    return out


def _with_cache_breakpoints(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with cache breakpoints on the first user message (the
    failure and its source context, the big stable part: tools and system
    prompt alone are under the provider's minimum cacheable length) and on the
    latest one, so each turn of the tool loop reads the previous turns from
    the cache. With tools and system: 4 breakpoints, the provider's maximum."""
    out = list(messages)
    for i in sorted({0, len(out) - 1}):
        content = out[i]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content]
        blocks[-1]["cache_control"] = {"type": "ephemeral"}
        out[i] = {**out[i], "content": blocks}
    return out


async def run_agent(
    client: Any,
    settings: LLMSettings,
    *,
    system: str,
    user: str,
    overlay: Overlay,
    allow_edits: bool,
    heartbeat: Callable[[str], None] = lambda _: None,
) -> AgentOutcome:
    """Converse until the model stops calling tools; edits land in ``overlay``.

    Stops early (``stop="budget"``) once the conversation alone has cost the
    run's whole LLM budget (``settings.budget_usd``): the workflow checks the
    run's total between tests, this bounds a runaway tool loop within one."""
    tools = _cached_tools(READ_TOOLS + (EDIT_TOOLS if allow_edits else []))
    system_blocks = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    usage = Usage()
    calls: list[str] = []
    stop = "max_turns"
    for turn in range(1, settings.max_tool_turns + 1):
        heartbeat(f"model turn {turn}")
        with telemetry.span("greenloop.llm.call", model=settings.model, turn=turn) as current:
            response = await client.messages.create(
                model=settings.model, max_tokens=settings.max_tokens, system=system_blocks,
                tools=tools, messages=_with_cache_breakpoints(messages),
            )
            call = usage_of(settings.model, response.usage)
            telemetry.record_model_call(current, call)
        usage = usage + call
        stop = response.stop_reason or "end_turn"
        content = list(response.content or [])
        tool_uses = [b for b in content if getattr(b, "type", None) == "tool_use"]
        text = "\n".join(b.text for b in content if getattr(b, "type", None) == "text").strip()
        if not tool_uses:
            return AgentOutcome(text=text, usage=usage, turns=turn, stop=stop, tool_calls=calls)
        if settings.budget_usd is not None and usage.cost_usd >= settings.budget_usd:
            return AgentOutcome(text=text, usage=usage, turns=turn, stop="budget", tool_calls=calls)
        messages.append({"role": "assistant", "content": [_block_dict(b) for b in content]})
        results = []
        for use in tool_uses:
            calls.append(use.name)
            out, is_error = overlay.call(use.name, use.input, allow_edits=allow_edits)
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": out, "is_error": is_error})
        messages.append({"role": "user", "content": results})
    return AgentOutcome(text="", usage=usage, turns=settings.max_tool_turns, stop="max_turns", tool_calls=calls)
