"""The analysis of one failure (``AnalysisNote``): its pattern, evidence and
suggestion, the context shown to the model and the model's own analysis.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..domain.llm import Usage
from .localize import Suspect


class AnalysisNote(BaseModel):
    kind: str
    evidence: str
    suggestion: str
    error_site: str | None = None
    expected: str | None = None
    actual: str | None = None
    context_markdown: str = ""
    # Fault localization's ranked suspects (analysis/localize.py), best first: the report shows them.
    suspects: list[Suspect] = Field(default_factory=list)
    llm_analysis: str = ""
    usage: Usage = Field(default_factory=Usage)
    test_runs: int = 0  # the tests the analyzer ran mid-conversation (on a scratch copy)
    commands: int = 0  # the sandboxed commands it ran
