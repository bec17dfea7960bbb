"""What the server keeps of a workflow for the Web UI and the CLI, set from
workflow code: the run's search attributes (their keys, and how they are
registered: ``server/search_attributes.py``) and the final details in the memo."""

from __future__ import annotations

from temporalio import workflow

from ..server.search_attributes import FAILING, REPO, STATE

# The memo key of a workflow's last current details (shown in the Web UI's memo once the
# workflow is closed: the current details themselves come from a query a worker must answer).
FINAL_DETAILS = "details"


def upsert_state(state: str) -> None:
    """Record a workflow's current state as a search attribute."""
    # temporalio's signature leaves SearchAttributeUpdate's type parameter unsolved; the updates are typed.
    workflow.upsert_search_attributes([STATE.value_set(state)])  # pyright: ignore[reportUnknownMemberType]


def upsert_run(repo: str, state: str, failing: int) -> None:
    workflow.upsert_search_attributes(  # pyright: ignore[reportUnknownMemberType] (as above)
        [REPO.value_set(repo), STATE.value_set(state), FAILING.value_set(failing)])


def write_final_details(details: str) -> None:
    """Set the workflow's current details and keep them in its memo, in its history: they stay
    true after the workflow completes, when no worker is left to answer the Web UI's query."""
    workflow.set_current_details(details)
    workflow.upsert_memo({FINAL_DETAILS: details})
