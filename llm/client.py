"""The Anthropic client as Greenloop uses it: configured from the worker's
environment (the API key never leaves the worker: it is not passed to any
sandbox), no client-side retries (Temporal retries activities, visibly), and
token/cost accounting per call."""

from __future__ import annotations

import asyncio
import os
import weakref
from typing import Any

from ..domain.errors import ErrorKind, GreenloopError
from ..domain.llm import LLMSettings, Usage

# US dollars per million tokens: (input, output). Cache writes cost 1.25x
# input, cache reads 0.1x input (Anthropic's published pricing).
PRICES = {
    "opus-4-5": (5.0, 25.0), "opus-4-6": (5.0, 25.0), "opus-4-1": (15.0, 75.0), "opus-4": (15.0, 75.0),
    "opus": (15.0, 75.0), "sonnet": (3.0, 15.0), "haiku-4-5": (1.0, 5.0), "haiku-3-5": (0.8, 4.0),
    "3-5-haiku": (0.8, 4.0),  # the Claude 3.5 ids put the version first: claude-3-5-haiku-20241022
    "haiku": (0.25, 1.25),
}


def price_for(model: str) -> tuple[float, float]:
    """(input, output) $/MTok for a model name, by its family; sonnet's when unknown."""
    name = model.lower().replace(".", "-")
    for key in sorted(PRICES, key=len, reverse=True):
        if key in name:
            return PRICES[key]
    return PRICES["sonnet"]


def usage_of(model: str, usage: Any) -> Usage:
    """Tokens and cost of one Messages API response's ``usage``."""
    inp = int(getattr(usage, "input_tokens", 0) or 0)
    out = int(getattr(usage, "output_tokens", 0) or 0)
    cw = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
    cr = int(getattr(usage, "cache_read_input_tokens", 0) or 0)
    p_in, p_out = price_for(model)
    cost = (inp * p_in + out * p_out + cw * p_in * 1.25 + cr * p_in * 0.1) / 1_000_000
    return Usage(input_tokens=inp, output_tokens=out, cache_creation_input_tokens=cw,
                 cache_read_input_tokens=cr, cost_usd=round(cost, 6), calls=1)


# One connection pool per event loop, key and endpoint: a new client per activity would
# build a new TLS context each time (~30 ms) and never reuse a connection.
_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str | None], Any]] = (
    weakref.WeakKeyDictionary())


def make_client(settings: LLMSettings, *, role: str, context: str, candidate: int = 1) -> Any:
    """An ``anthropic.AsyncAnthropic`` client (async, so a cancelled activity stops
    waiting at once) for one conversation, sharing the worker's connection pool;
    a typed error when no key is set. Call it from the event loop that will use it.
    ``candidate``: which of an attempt's candidate fixes the conversation is for (``--candidates``)."""
    import anthropic  # imported here: workflow code must never import it

    key = os.environ.get("ANTHROPIC_API_KEY")
    base_url = settings.base_url or os.environ.get("ANTHROPIC_BASE_URL")
    if not key:
        raise GreenloopError(
            "no ANTHROPIC_API_KEY in the worker's environment: set it, use the scripted LLM "
            "(greenloop run --scripted SCENARIO), or run analysis only (--analysis-only)",
            kind=ErrorKind.VALIDATION_ERROR,
        )
    pools = _POOLS.setdefault(asyncio.get_running_loop(), {})
    if (key, base_url) not in pools:
        pools[key, base_url] = anthropic.AsyncAnthropic(api_key=key, base_url=base_url, max_retries=0, timeout=600.0)
    return pools[key, base_url].with_options(
        default_headers={"x-greenloop-role": role, "x-greenloop-context": context,
                         "x-greenloop-candidate": str(candidate)})
