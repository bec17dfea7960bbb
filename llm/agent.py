"""The steps of the tool-use conversation shared by the analyzer and the fixer roles:
ask the model once with the conversation so far (the stable prefix marked for
caching), and run the tools it calls against the overlay. The loop is the
workflow's (``workflows/conversation.py``), each step an activity
(``activities/conversation.py``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .. import telemetry
from ..domain.llm import LLMSettings, Usage
from . import editor
from .client import usage_of
from .tools import SEARCH_TOOL, Overlay


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


class ModelTurn(BaseModel):
    """One model call of a tool-use conversation: the assistant message to append,
    what it cost, why it stopped, its text and the tool calls it asks for."""

    message: dict[str, Any]
    usage: Usage
    stop: str
    text: str
    tool_uses: list[dict[str, Any]]


def tool_list(model: str, more: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Anthropic's text-editor tool for ``model`` and the search tool, then ``more`` (the sandboxed
    tools, ``llm/sandbox_tools.py``); the analyzer gets the same tools, and its edit commands are
    answered with an error (``allow_edits``)."""
    return _cached_tools([editor.declaration(model), SEARCH_TOOL, *(more or [])])


def system_blocks(system: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]


async def model_turn(client: Any, settings: LLMSettings, system: str,
                     messages: list[dict[str, Any]], more_tools: list[dict[str, Any]] | None = None) -> ModelTurn:
    """Ask the model once, with the conversation so far (``more_tools``: beside the editor and search)."""
    with telemetry.span("greenloop.llm.call", model=settings.model, turn=len(messages)) as current:
        response = await client.messages.create(
            model=settings.model, max_tokens=settings.max_tokens, system=system_blocks(system),
            tools=tool_list(settings.model, more_tools), messages=_with_cache_breakpoints(messages),
        )
        usage = usage_of(settings.model, response.usage)
        telemetry.record_model_call(current, usage)
    content = [_block_dict(b) for b in list(response.content or [])]
    return ModelTurn(
        message={"role": "assistant", "content": content}, usage=usage,
        stop=response.stop_reason or "end_turn",
        text="\n".join(b["text"] for b in content if b.get("type") == "text").strip(),
        tool_uses=[b for b in content if b.get("type") == "tool_use"])


def tool_result(use: dict[str, Any], out: str, is_error: bool) -> dict[str, Any]:
    """The result block answering the tool call ``use``."""
    return {"type": "tool_result", "tool_use_id": use["id"], "content": out, "is_error": is_error}


def tool_results(overlay: Overlay, tool_uses: list[dict[str, Any]], allow_edits: bool,
                 calls: list[str]) -> list[dict[str, Any]]:
    """Run tool calls against ``overlay``, in order; their result blocks."""
    results = []
    edit = editor.Editor(overlay)
    more = {name: lambda **args: edit.call(args, allow_edits=allow_edits) for name in editor.NAMES}
    for use in tool_uses:
        calls.append(use["name"])
        out, is_error = overlay.call(use["name"], use["input"], allow_edits=allow_edits, more=more)
        results.append(tool_result(use, out, is_error))
    return results
