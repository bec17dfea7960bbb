"""The ``greenloop`` command: one Typer app, one module per command group."""

from __future__ import annotations

import inspect
import re
import sys

import typer

from .. import telemetry
from ..domain.errors import GreenloopError
from ..settings import settings
from . import analyze, bench, ci, corpus, parse, project, recent, runs, schedule, schema, server, test
from .output import say_error

app = typer.Typer(
    name="greenloop",
    help="Drive a repository with failing tests back to green.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def check_environment() -> None:
    """Drive a repository with failing tests back to green."""
    telemetry.forward_core_logs()  # the SDK core's warnings never reach stdout (--json)
    # Before any command: a GREENLOOP_* variable that does not parse is said once, as bad input
    # (its options are not read yet, so --json is looked for on the command line).
    try:
        settings()
    except GreenloopError as exc:
        raise typer.Exit(say_error(exc, as_json="--json" in sys.argv[1:])) from None


app.command("run")(runs.run_command)
app.command("status")(runs.status_command)
app.command("watch")(runs.watch_command)
app.command("resume")(runs.resume_command)
app.command("runs")(recent.runs_command)
app.command("answer")(runs.answer_command)
app.command("rollback")(runs.rollback_command)
app.command("abort")(runs.abort_command)
app.command("ci")(ci.ci_command)
app.command("server")(server.server_command)
app.command("worker")(server.worker_command)
app.add_typer(schedule.app, name="schedule")
app.add_typer(schema.app, name="schema")
app.add_typer(bench.app, name="bench")
app.command("test")(test.test_command)
app.command("parse")(parse.parse_command)
app.command("analyze")(analyze.analyze_command)
app.command("corpus")(corpus.corpus_command)
app.command("init")(project.init_command)
app.command("doctor")(project.doctor_command)



_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")


def _joined(doc: str) -> str:
    """A docstring's paragraphs each on one line (list items kept on their own), so
    Rich wraps them to the terminal instead of breaking where the source did."""
    paragraphs = []
    for paragraph in inspect.cleandoc(doc).split("\n\n"):
        lines: list[str] = []
        for line in paragraph.splitlines():
            if lines and not paragraph.startswith("\b") and not _ITEM.match(line):
                lines[-1] += " " + line.strip()
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def _join_help(typer_app: typer.Typer) -> None:
    for info in typer_app.registered_commands:
        doc = info.help or inspect.getdoc(info.callback)
        if doc:
            info.help = _joined(doc)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _join_help(group.typer_instance)


_join_help(app)

# Click's own usage errors (a missing argument, a choice not offered), whichever click Typer brings.
_USAGE_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def main() -> None:
    """``greenloop``: under --json, a usage error too is one JSON object on stdout."""
    if "--json" not in sys.argv[1:]:
        app()
        return
    try:
        code = typer.main.get_command(app).main(standalone_mode=False)
    except _USAGE_ERROR as exc:
        command = ["greenloop", *(a for a in sys.argv[1:2] if not a.startswith("-")), "--help"]
        code = say_error(GreenloopError(exc.format_message(), suggestion=f"`{' '.join(command)}`"), as_json=True)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
