"""What people type to steer a run: the payloads of the ``answer``, ``rollback``
and ``abort`` signals and updates, as the Temporal Web UI's "Send a Signal" and
"Send an Update" dialogs send them (JSON a person types) and as the CLI sends
them (the models). Each is read into a typed value, or refused with a
``Refused`` (a ``ValueError``) whose message says what is allowed.

Pure functions: they run inside workflows (update validators and signal
handlers), so they do no I/O.
"""

from __future__ import annotations

import json
from typing import cast

from pydantic import ValidationError

from ..domain.answers import Answer
from ..domain.errors import Refused

# What a person types in the Web UI to answer an escalated test (JSON values).
ANSWER_EXAMPLES = '"retry", {"choice":"retry","attempts":2}, "skip" or "abort"'
# The same, for the Web UI's details (Markdown: code spans keep the quotes straight, so they can be copied).
ANSWER_HINT = ('Send Update `answer` (or Signal `answer`) with '
               '`"retry"`, `{"choice":"retry","attempts":2}`, `"skip"` or `"abort"`')
ROLLBACK_HINT = 'Send Update `rollback` (or Signal `rollback`) with the test id, e.g. `"tests/test_x.py::test_y"`'
ABORT_HINT = 'Send Update `abort` (or Signal `abort`) with a reason, e.g. `"wrong branch"`, or no input'


def shown(value: object, limit: int = 120) -> str:
    """A payload as the person typed it (JSON), bounded for messages."""
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def json_object(value: object) -> dict[object, object] | None:
    """``value``'s fields when it is a JSON object (a dict), else None."""
    return cast("dict[object, object]", value) if isinstance(value, dict) else None


def parse_answer(value: object, by: str) -> Answer:
    """An answer: ``"skip"``, ``{"choice": "retry", "attempts": 2}`` or an
    ``Answer``; ``by`` names who answered when the payload does not."""
    if isinstance(value, Answer):
        return value
    try:
        answer = Answer.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            (".".join(str(p) for p in err["loc"]) + ": " if err["loc"] else "") + err["msg"] for err in exc.errors()
        )
        raise Refused(f"not an answer: {shown(value)} ({problems}); type {ANSWER_EXAMPLES}") from None
    if "by" not in answer.model_fields_set:
        answer = answer.model_copy(update={"by": by})
    return answer


def parse_test_id(value: object) -> str:
    """A test to roll back: ``"tests/test_x.py::test_y"`` or ``{"test_id": "..."}``."""
    if (fields := json_object(value)) is not None and set(fields) in ({"test_id"}, {"test"}):
        value = next(iter(fields.values()))
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise Refused(f'not a test id: {shown(value)}; type the test id as a JSON string, e.g. "tests/test_x.py::test_y"')


def parse_reason(value: object) -> str:
    """Why a run is aborted: a string, ``{"reason": "..."}``, or nothing."""
    if value is None:
        return ""
    if (fields := json_object(value)) is not None and set(fields) == {"reason"}:
        value = fields["reason"]
    if isinstance(value, str):
        return value.strip()
    raise Refused(f'not a reason: {shown(value)}; type a JSON string, e.g. "wrong branch", or nothing')
