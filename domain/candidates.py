"""A fix waiting for validation in the validation queue: one attempt's edit set
for one test. The child workflow proposes it, the run batches it
(``workflows/validation_queue.py``), the batch activity checks it.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel

from .edits import EditSet


class Candidate(BaseModel):
    """A fix waiting for validation: one attempt's edit set for one test."""

    test_id: str
    attempt: int
    edit_set: EditSet
    # When the attempt began reading the workspace (its child's clock): an accepted fix
    # that changed one of its files after that makes it stale (its whole-file edits would undo it).
    started_at: float

    @property
    def files(self) -> list[str]:
        return [e.path for e in self.edit_set.edits]

    def key(self) -> str:
        """The edit set's hash (with the test and attempt it belongs to)."""
        body = f"{self.test_id}\0{self.attempt}\0" + "\0".join(
            f"{e.path}\0{'-' if e.content is None else e.content}" for e in self.edit_set.edits)
        return hashlib.sha256(body.encode()).hexdigest()[:16]
