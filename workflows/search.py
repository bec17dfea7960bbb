"""Custom search attributes, so people can filter runs in the Web UI and CLI
(``GreenloopRepo = '...' AND GreenloopState = 'ESCALATED'``).

They must be registered in the namespace: ``greenloop server`` does it for the
embedded dev server; on a cluster, ``temporal operator search-attribute create``
(see deploy/README.md).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import SearchAttributeKey

REPO = SearchAttributeKey.for_keyword("GreenloopRepo")
STATE = SearchAttributeKey.for_keyword("GreenloopState")
FAILING = SearchAttributeKey.for_int("GreenloopFailing")
ALL = [REPO, STATE, FAILING]


def upsert_state(state: str) -> None:
    """Record a workflow's current state as a search attribute."""
    # temporalio's signature leaves SearchAttributeUpdate's type parameter unsolved; the updates are typed.
    workflow.upsert_search_attributes([STATE.value_set(state)])  # pyright: ignore[reportUnknownMemberType]


def upsert_run(repo: str, state: str, failing: int) -> None:
    workflow.upsert_search_attributes(  # pyright: ignore[reportUnknownMemberType] (as above)
        [REPO.value_set(repo), STATE.value_set(state), FAILING.value_set(failing)])
