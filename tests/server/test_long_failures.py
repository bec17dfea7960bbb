"""A failure longer than Temporal's size limit is trimmed, the whole text kept in a file it names
(else Temporal would keep only "Failure exceeds size limit")."""

from __future__ import annotations

import re
from pathlib import Path

from temporalio.api.failure.v1 import Failure
from temporalio.exceptions import ApplicationError

from greenloop.server.client import DATA_CONVERTER, FAILURE_TEXT_LIMIT


def to_failure(exc: BaseException) -> Failure:
    failure = Failure()
    DATA_CONVERTER.failure_converter.to_failure(exc, DATA_CONVERTER.payload_converter, failure)
    return failure


def test_a_long_reason_is_trimmed_and_kept_in_the_file_it_names(tmp_path, monkeypatch):
    monkeypatch.setenv("GREENLOOP_HOME", str(tmp_path))
    reason = "the model answered: " + "x" * 3 * FAILURE_TEXT_LIMIT + " END"
    try:
        raise ApplicationError("the model call failed", "d" * 2 * FAILURE_TEXT_LIMIT, type="timeout") from \
            ValueError(reason)
    except ApplicationError as exc:
        failure = to_failure(exc)
    cause = failure.cause
    assert len(cause.message) < FAILURE_TEXT_LIMIT + 300 and cause.message.startswith("the model answered: xxx")
    kept = re.search(r"the whole failure is in (\S+\.txt)", cause.message)
    assert kept is not None and Path(kept[1]).parent == tmp_path / "failures"
    assert reason in Path(kept[1]).read_text()
    # Its details were too long: kept the same way.
    kept = re.search(r"the model call failed \(trimmed: the whole failure is in (\S+\.txt)\)", failure.message)
    assert kept is not None and "d" * 2 * FAILURE_TEXT_LIMIT in Path(kept[1]).read_text()
    assert not failure.application_failure_info.HasField("details")
    back = DATA_CONVERTER.failure_converter.from_failure(failure, DATA_CONVERTER.payload_converter)
    assert isinstance(back, ApplicationError) and back.type == "timeout"


def test_a_short_failure_is_left_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("GREENLOOP_HOME", str(tmp_path))
    failure = to_failure(ApplicationError("short", {"k": "v"}, type="timeout"))
    assert failure.message == "short" and failure.application_failure_info.HasField("details")
    assert not (tmp_path / "failures").exists()
