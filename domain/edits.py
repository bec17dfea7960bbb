"""Edits a fix proposes: whole-file contents, applied and rolled back exactly."""

from __future__ import annotations

from pydantic import BaseModel


class Edit(BaseModel):
    """One file change of an edit set; ``content`` None deletes the file."""

    path: str
    content: str | None


class EditSet(BaseModel):
    edits: list[Edit]
    rationale: str = ""
    diff: str = ""
