"""The run's workspace: the worker-local copy of the repository that the run edits.
"""

from __future__ import annotations

from pydantic import BaseModel


class Workspace(BaseModel):
    """A worker-local copy of the repository that the run edits."""

    path: str
    run_dir: str
    repo: str
    branch: str | None = None
    base_commit: str | None = None
    # The user's commit the run started from, the one its fixes apply to: ``base_commit``, or its parent
    # when ``base_commit`` holds the user's uncommitted changes (None: the repository had no commit).
    source_commit: str | None = None
    # The task queue of the worker that holds this workspace (its host queue): every activity
    # that touches the run's files goes there. None: the workflow's own queue (one shared disk).
    host_queue: str | None = None
    base_tree: str | None = None  # the starting point's git tree: a rebuild must reproduce it exactly
    ref: str | None = None  # the ref the run started from (a rebuild checks it out again)
