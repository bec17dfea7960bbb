"""Setting the run's search attributes from workflow code (their keys, and how
they are registered: ``server/search_attributes.py``)."""

from __future__ import annotations

from temporalio import workflow

from ..server.search_attributes import FAILING, REPO, STATE


def upsert_state(state: str) -> None:
    """Record a workflow's current state as a search attribute."""
    # temporalio's signature leaves SearchAttributeUpdate's type parameter unsolved; the updates are typed.
    workflow.upsert_search_attributes([STATE.value_set(state)])  # pyright: ignore[reportUnknownMemberType]


def upsert_run(repo: str, state: str, failing: int) -> None:
    workflow.upsert_search_attributes(  # pyright: ignore[reportUnknownMemberType] (as above)
        [REPO.value_set(repo), STATE.value_set(state), FAILING.value_set(failing)])
