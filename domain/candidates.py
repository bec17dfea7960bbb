"""A fix waiting for validation in the validation queue: one attempt's changes
for one test. The child workflow proposes it, the run batches it
(``workflows/validation_queue.py``), the batch activity checks it.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel

from .changes import FileChange, changes_key


class Candidate(BaseModel):
    """A fix waiting for validation: one attempt's changes for one test, each
    written on the version of its file the attempt read (rebased by the run when an
    accepted fix changed that file meanwhile)."""

    test_id: str
    attempt: int
    changes: list[FileChange]
    # When the attempt began reading the workspace (its child's clock).
    started_at: float

    @property
    def files(self) -> list[str]:
        return [c.path for c in self.changes]

    def key(self) -> str:
        """The changes' hash (with the test and attempt they belong to)."""
        body = f"{self.test_id}\0{self.attempt}\0{changes_key(self.changes)}"
        return hashlib.sha256(body.encode()).hexdigest()[:16]
