"""The size guard on what a run hands Temporal: an activity's input, the state it
continues as new with.

Temporal refuses a payload over 2 MiB (``PayloadsTooLarge``), and a workflow
task that produces one fails again on every retry: the run wedges with
nothing said. The run's payloads are bounded by design (compact changes,
references to files in the run directory); this guard fails loudly, with the
payload named and measured, long before the limit, should one grow anyway.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

# Temporal's limit is 2 MiB per payload: the guard stops at half of it.
MOST_PAYLOAD_BYTES = 1024 * 1024
STATE_TOO_LARGE = "state_too_large"

M = TypeVar("M", bound=BaseModel)


class StateTooLarge(ApplicationError):
    """A payload the run was about to hand Temporal is over ``MOST_PAYLOAD_BYTES``."""

    def __init__(self, what: str, size: int, most: int = MOST_PAYLOAD_BYTES) -> None:
        super().__init__(
            f"{what} would be {size / 1024 / 1024:.2f} MiB, over the run's limit of "
            f"{most / 1024 / 1024:.2f} MiB (Temporal refuses payloads over 2 MiB): "
            "the run stops here rather than wedge", type=STATE_TOO_LARGE, non_retryable=True)
        self.what, self.size = what, size


def payload_size(payload: BaseModel) -> int:
    """About what ``payload`` weighs once serialized (its JSON)."""
    return len(payload.model_dump_json().encode())


def guarded(what: str, payload: M, most: int | None = None) -> M:
    """``payload``, or ``StateTooLarge`` when it weighs more than ``most`` (``MOST_PAYLOAD_BYTES``)."""
    most = MOST_PAYLOAD_BYTES if most is None else most
    size = payload_size(payload)
    if size > most:
        raise StateTooLarge(what, size, most)
    return payload
