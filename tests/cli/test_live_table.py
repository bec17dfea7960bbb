"""The live table (cli/live.py) drawn on narrow terminals: a test waiting for a person says so,
the command that answers it stays whole (bash, given the lines as shown, runs that one command),
and before any test is known the table says what the run is doing."""

from __future__ import annotations

import subprocess

import pytest
from rich.console import Console

from greenloop.cli.live import Board, ShellCommand
from greenloop.cli.runs import _answer_hint
from greenloop.domain.states import FixState, Verdict
from greenloop.reports.record import FixStatusView

RUN = "greenloop-demo-python-7f3a9c2e41"
WAITING_TEST = "tests/test_cart.py::test_discount_applies_to_every_line[percent-10]"
ANSWER = ["greenloop", "answer", RUN, WAITING_TEST]


def drawn(board: Board, width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False, color_system=None)
    console.print(board.render())
    return console.export_text()


def board(width: int) -> Board:
    return Board(Console(width=width, force_terminal=True), RUN, lambda test_id: _answer_hint(RUN, test_id), live=True)


def pasted(text: str) -> list[str]:
    """The words bash runs when the command, as shown from its first word on, is pasted into it
    (``greenloop`` replaced by ``printf`` so bash prints them; the choices kept as one word)."""
    lines = text[text.index("greenloop answer"):].splitlines()
    end = next(i for i, line in enumerate(lines) if not line.rstrip().endswith("\\"))
    command = "\n".join(line.rstrip() for line in lines[:end + 1]).replace("retry|skip|abort", "'retry|skip|abort'")
    out = subprocess.run(["bash", "-c", "printf '%s\\n' " + command.removeprefix("greenloop ")],
                         capture_output=True, text=True, check=True).stdout
    return ["greenloop", *out.splitlines()]


@pytest.mark.parametrize("width", [40, 60, 100, 200])
def test_the_answer_command_stays_whole_at_any_width(width):
    b = board(width)
    b.set_phase(f"fixing {WAITING_TEST}")
    b.set_test(FixStatusView(test_id=WAITING_TEST, state=FixState.ESCALATED, attempt=3,
                             last_verdict=Verdict.FAIL, waiting=True))
    b.set_test(FixStatusView(test_id="tests/test_money.py::test_format", state=FixState.FIXING, attempt=1))
    text = drawn(b, width)

    assert pasted(text) == [*ANSWER, "retry|skip|abort"]
    # Nothing is cut: no line is wider than the terminal, nothing elided.
    assert all(len(line) <= width for line in text.splitlines()), text
    assert "…" not in text


def test_a_test_waiting_for_an_answer_reads_waiting_for_a_person():
    b = board(140)
    b.set_phase(f"fixing {WAITING_TEST}")
    b.set_test(FixStatusView(test_id=WAITING_TEST, state=FixState.ESCALATED, attempt=3, waiting=True))
    text = drawn(b, 140)
    row = next(line for line in text.splitlines() if WAITING_TEST in line and "│" in line)
    assert "waiting for a person" in row and "ESCALATED" not in row
    assert f"{RUN}: fixing {WAITING_TEST} (1 waiting for a person)" in text

    # Once the run is over it is no longer answerable: ESCALATED, and no command offered.
    b.set_test(FixStatusView(test_id=WAITING_TEST, state=FixState.ESCALATED, attempt=3, waiting=True),
               answerable=False)
    text = drawn(b, 140)
    assert "ESCALATED" in text and "waiting for a person" not in text and "greenloop answer" not in text


def test_setup_shows_what_the_run_is_doing():
    b = board(120)
    b.set_phase("setting up the environment")
    text = drawn(b, 120)
    assert "now:" not in text  # nothing in flight known yet
    b.set_doing("set_up_environment for 0m12s: setting up: uv venv, pip install -e .[test]")
    text = drawn(b, 120)
    assert f"{RUN}: setting up the environment" in text
    assert "now: set_up_environment for 0m12s: setting up: uv venv, pip install -e .[test]" in text


def test_a_plain_log_says_waiting_and_prints_the_whole_command():
    console = Console(width=50, record=True, force_terminal=False, color_system=None)
    b = Board(console, RUN, lambda test_id: _answer_hint(RUN, test_id), live=False)
    b.set_doing("set_up_environment for 0m01s: setting up: uv venv")
    b.set_doing("set_up_environment for 0m06s: running for 5s")  # the same step: not said again
    b.set_test(FixStatusView(test_id=WAITING_TEST, state=FixState.ESCALATED, attempt=3, waiting=True))
    text = console.export_text()
    assert text.count("set_up_environment") == 1
    assert f"{WAITING_TEST}: waiting for a person" in text.replace("\n", "")
    assert pasted(text.split("answer with:")[1]) == [*ANSWER, "retry|skip|abort"]


def test_a_word_wider_than_the_line_is_cut_in_pieces_the_shell_joins():
    command = ShellCommand(["greenloop", "answer", "x" * 40, "y z"])
    lines = command.lines(20)
    assert all(len(line) <= 20 for line in lines), lines
    assert pasted("\n".join(lines)) == ["greenloop", "answer", "x" * 40, "y z"]
