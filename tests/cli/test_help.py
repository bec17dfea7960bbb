"""Help pages as people read them: a command's description wraps where the
terminal ends, not where the docstring's source line did."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import typer

from greenloop.cli import main
from tests.conftest import REPO


def test_paragraphs_are_joined_and_list_items_kept():
    doc = """Start a run and
    follow it.

    Options:
    - one item
      that wraps
    - another"""
    assert main._joined(doc) == "Start a run and follow it.\n\nOptions:\n- one item that wraps\n- another"


def _groups(group: typer.Typer, path: tuple[str, ...] = ()):
    yield path, group
    for sub in group.registered_groups:
        assert sub.typer_instance is not None and sub.name
        yield from _groups(sub.typer_instance, (*path, sub.name))


def test_the_command_lists_show_each_commands_description_on_one_line_of_a_wide_terminal():
    """Typer's command list keeps a docstring's line breaks unless they are joined
    (``bench mutants``'s description broke mid-sentence)."""
    env = {**os.environ, "COLUMNS": "400", "TERM": "dumb"}
    groups = list(_groups(main.app))
    assert [path for path, _ in groups] == [(), ("schedule",), ("schema",), ("bench",)]
    for path, group in groups:
        shown = subprocess.run([sys.executable, "-m", "greenloop.cli.main", *path, "--help"], cwd=REPO,
                               capture_output=True, text=True, env=env, timeout=60).stdout
        rows = [" ".join(line.replace("│", " ").split()) for line in shown.splitlines()]
        for info in group.registered_commands:
            assert info.callback is not None
            doc = inspect.getdoc(info.callback) or ""
            first = " ".join(doc.split("\n\n")[0].split())
            row = f"{info.name} {first}"
            assert any(r == row for r in rows), (path, row, shown)
