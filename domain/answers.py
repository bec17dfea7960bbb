"""A person's answer to an escalated test (retry / skip / abort), from the CLI
or typed by hand in the Web UI.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator


class AnswerChoice(StrEnum):
    RETRY = "retry"
    SKIP = "skip"
    ABORT = "abort"



class Answer(BaseModel):
    """A person's answer to an escalation (retry / skip / abort). Typed by hand in
    the Web UI too: a bare choice (``"skip"``) stands for ``{"choice": "skip"}``."""

    model_config = ConfigDict(extra="forbid")

    choice: AnswerChoice
    attempts: int = Field(default=3, ge=1, le=10)  # for retry: how many more attempts
    by: str = "unknown"
    note: str = ""

    @model_validator(mode="before")
    @classmethod
    def _typed_by_hand(cls, value: object) -> object:
        if isinstance(value, str):
            value = {"choice": value}
        if isinstance(value, dict) and isinstance(value.get("choice"), str):
            value = {**value, "choice": value["choice"].strip().lower()}
        return value
