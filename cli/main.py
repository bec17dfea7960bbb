"""The ``greenloop`` command: one Typer app, one module per command group."""

from __future__ import annotations

import typer

from cli import corpus, parse

app = typer.Typer(
    name="greenloop",
    help="Drive a repository with failing tests back to green.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("parse")(parse.parse_command)
app.command("corpus")(corpus.corpus_command)

if __name__ == "__main__":
    app()
