"""A function fault localization suspects (``analysis/localize.py``): carried by the analysis
note, each attempt's record and the reports."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Suspect(BaseModel):
    """One function that may hold the bug, with why it was chosen."""

    file: str
    function: str
    start: int
    end: int
    score: float
    reasons: list[str] = Field(default_factory=list)
    passing: int = Field(default=0, exclude=True)  # passing tests that ran it (ties go to the fewer)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.start}-{self.end}"
