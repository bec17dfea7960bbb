"""The ``greenloop`` command: one Typer app, one module per command group."""

from __future__ import annotations

import typer

from . import analyze, corpus, parse, project, recent, runs, schedule, schema, server, test

app = typer.Typer(
    name="greenloop",
    help="Drive a repository with failing tests back to green.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("run")(runs.run_command)
app.command("status")(runs.status_command)
app.command("watch")(runs.watch_command)
app.command("resume")(runs.resume_command)
app.command("runs")(recent.runs_command)
app.command("answer")(runs.answer_command)
app.command("rollback")(runs.rollback_command)
app.command("abort")(runs.abort_command)
app.command("server")(server.server_command)
app.command("worker")(server.worker_command)
app.add_typer(schedule.app, name="schedule")
app.add_typer(schema.app, name="schema")
app.command("test")(test.test_command)
app.command("parse")(parse.parse_command)
app.command("analyze")(analyze.analyze_command)
app.command("corpus")(corpus.corpus_command)
app.command("init")(project.init_command)
app.command("doctor")(project.doctor_command)

if __name__ == "__main__":
    app()
