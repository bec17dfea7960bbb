"""One attempt at fixing a test, as the run records it: what the analysis said,
the edits' rationale and diff, the verdict and what the model calls cost.
The prompts read earlier attempts; the reports render them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .llm import Usage
from .states import Verdict
from .suspects import Suspect


class AttemptRecord(BaseModel):
    number: int
    analysis: str = ""
    rationale: str = ""
    diff: str = ""
    verdict: Verdict | None = None
    reason: str = ""
    files: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)  # what this attempt's model calls cost (analysis and fix)
    # Fault localization's ranked suspects for this attempt's failure, best first (the first message showed them).
    suspects: list[Suspect] = Field(default_factory=list[Suspect])
