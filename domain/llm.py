"""What a run asks of the model, and what the model's answers cost."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class LLMSettings(BaseModel):
    model: str = "claude-sonnet-4-6"
    max_tokens: int = 8_192
    max_tool_turns: int = 24
    # Per attempt (each conversation, the analyzer's and the fixer's): test runs and sandboxed
    # commands the model may ask for (llm/sandbox_tools.py); a call beyond is answered with a tool error.
    max_test_runs: int = 5
    max_commands: int = 10
    # None: the provider's real endpoint (ANTHROPIC_BASE_URL or the default).
    base_url: str | None = None
    # Cost ceiling for the whole run in US dollars, as the user set it; None means unlimited.
    budget_usd: float | None = None
    # A test's share of the run's budget, set by the run for the test's workflow; None: no budget.
    share_usd: float | None = None
    # What one conversation may still spend (the test's share less what the test spent),
    # set by the test's workflow for each conversation; None: no budget.
    left_usd: float | None = None
    allow_production_edits: bool = True
    # What to do with an edit set that deletes, skips or weakens tests.
    fake_fix_policy: Literal["reject", "escalate"] = "reject"
    analysis_only: bool = False
    # The provider's request limit per minute for this key (Anthropic's lowest paid tier: 50 for
    # each Claude model); None: no limit (the scripted model). The run's default concurrency
    # comes from it (``concurrency_for``).
    requests_per_minute: int | None = Field(default=50, ge=1)


# One conversation in flight asks the model about once every 10 seconds (a call, then its
# tools): six requests a minute. Beyond 8 tests at once, proposals outrun what one
# machine validates, whatever the model allows.
REQUESTS_PER_CONVERSATION_MINUTE = 6
MOST_IN_FLIGHT = 8


def concurrency_for(requests_per_minute: int | None) -> int:
    """How many tests a run fixes at once by default: as many conversations as the
    provider's request limit keeps busy without 429s, at most ``MOST_IN_FLIGHT``."""
    if requests_per_minute is None:
        return MOST_IN_FLIGHT
    return max(1, min(MOST_IN_FLIGHT, requests_per_minute // REQUESTS_PER_CONVERSATION_MINUTE))


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})
