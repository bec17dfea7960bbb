"""One attempt at fixing a test, as the run records it: what the analysis said,
the edits' rationale and diff, the verdict and what the model calls cost.
The prompts read earlier attempts; the reports render them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .llm import Usage
from .states import Verdict
from .suspects import Suspect


class CandidateRecord(BaseModel):
    """One of an attempt's several candidate fixes (``--candidates K``): its size,
    and what validating it said (no verdict: not validated, a smaller one passed first)."""

    number: int
    size: int = 0  # changed lines of its diff
    files: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None
    reason: str = ""
    kept: bool = False

    def line(self) -> str:
        """How the reports say it."""
        verdict = self.verdict.value if self.verdict else "not validated"
        return (f"candidate {self.number}: {self.size} changed line(s), {verdict}"
                + (f" ({self.reason})" if self.reason else "") + (", kept" if self.kept else ""))


class AttemptRecord(BaseModel):
    number: int
    analysis: str = ""
    rationale: str = ""
    diff: str = ""
    verdict: Verdict | None = None
    reason: str = ""
    files: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)  # what this attempt's model calls cost (analysis and fix)
    # What the analyzer and the fixer ran mid-conversation: test runs (run_tests) and sandboxed commands (bash).
    test_runs: int = 0
    commands: int = 0
    # Fault localization's ranked suspects for this attempt's failure, best first (the first message showed them).
    suspects: list[Suspect] = Field(default_factory=list[Suspect])
    # With --candidates K > 1: each candidate fix the attempt asked for, in the order they were asked.
    candidates: list[CandidateRecord] = Field(default_factory=list[CandidateRecord])

    def ran(self) -> str:
        """What the attempt's conversations ran, as the reports say it ("" when nothing)."""
        parts = [f"{n} {what}" + ("s" if n != 1 else "") for n, what in
                 ((self.test_runs, "test run"), (self.commands, "command")) if n]
        return f"Ran mid-conversation: {' and '.join(parts)}." if parts else ""
