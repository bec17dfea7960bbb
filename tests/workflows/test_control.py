"""What people type into the Web UI's Signal and Update dialogs is read into
answers, test ids and reasons; anything else is refused with a message that
says what is allowed."""

from __future__ import annotations

import pytest

from greenloop.domain.answers import Answer, AnswerChoice
from greenloop.workflows.control import ANSWER_EXAMPLES, parse_answer, parse_reason, parse_test_id


@pytest.mark.parametrize(("typed", "choice", "attempts"), [
    ("skip", AnswerChoice.SKIP, 3),
    (" Abort ", AnswerChoice.ABORT, 3),
    ("retry", AnswerChoice.RETRY, 3),
    ({"choice": "retry", "attempts": 2}, AnswerChoice.RETRY, 2),
    ({"choice": "SKIP", "note": "flaky upstream"}, AnswerChoice.SKIP, 3),
])
def test_typed_answers_are_read(typed, choice, attempts):
    answer = parse_answer(typed, by="a signal")
    assert (answer.choice, answer.attempts, answer.by) == (choice, attempts, "a signal")


def test_the_model_itself_takes_a_bare_choice_and_keeps_who_answered():
    assert Answer.model_validate("skip").choice is AnswerChoice.SKIP
    # The CLI's answers name who answered; that survives the round trip through JSON.
    sent = Answer(choice=AnswerChoice.RETRY, attempts=4, by="alice")
    assert parse_answer(sent.model_dump(mode="json"), by="an update") == sent


@pytest.mark.parametrize(("typed", "says"), [
    ("maybe", "choice: Input should be 'retry', 'skip' or 'abort'"),
    ({"choice": "retry", "attempts": 0}, "attempts: Input should be greater than or equal to 1"),
    ({"choice": "retry", "attempts": 11}, "attempts: Input should be less than or equal to 10"),
    ({"choice": "skip", "attempt": 2}, "attempt: Extra inputs are not permitted"),
    ({"attempts": 2}, "choice: Field required"),
    (7, "Input should be a valid dictionary"),
    (None, "Input should be a valid dictionary"),
])
def test_bad_answers_say_what_is_allowed(typed, says):
    with pytest.raises(ValueError) as exc:
        parse_answer(typed, by="an update")
    message = str(exc.value)
    assert message.startswith("not an answer: ")
    assert says in message
    assert message.endswith(f"type {ANSWER_EXAMPLES}")


def test_test_ids_and_reasons():
    assert parse_test_id("tests/t.py::test_a") == "tests/t.py::test_a"
    assert parse_test_id({"test_id": " tests/t.py::test_a "}) == "tests/t.py::test_a"
    for bad in ("", "  ", 3, {"test_id": "a", "x": 1}, ["a"]):
        with pytest.raises(ValueError, match="not a test id: .*type the test id as a JSON string"):
            parse_test_id(bad)
    assert parse_reason(None) == "" and parse_reason("wrong branch") == "wrong branch"
    assert parse_reason({"reason": "late"}) == "late"
    with pytest.raises(ValueError, match="not a reason: 42; type a JSON string"):
        parse_reason(42)
