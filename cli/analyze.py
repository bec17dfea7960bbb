"""``greenloop analyze``: failure analysis of a saved run, no LLM needed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..analysis.failure_analysis import analyze_report
from ..domain.errors import GreenloopError
from ..parsers import RunOutput, parse
from .output import console, fail, json_output
from .parse import Format, _existing


def analyze_command(
    command: Annotated[str, typer.Option(help="The test command that was run.")] = "",
    exit_code: Annotated[int | None, typer.Option("--exit-code", help="Its exit status.")] = None,
    stdout: Annotated[Path | None, typer.Option(help="File holding its stdout.")] = None,
    stderr: Annotated[Path | None, typer.Option(help="File holding its stderr.")] = None,
    cwd: Annotated[Path | None, typer.Option(help="Where the command ran (reports and sources).")] = None,
    framework: Annotated[str | None, typer.Option(help="Framework name; detected when omitted.")] = None,
    format: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.table,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output (same as --format json).",
                                                  callback=json_output, is_eager=True)] = False,
) -> None:
    """Classify each failure, group them by root cause, and suggest what to fix first."""
    try:
        root = (cwd or Path.cwd()).resolve()
        run = RunOutput(command=command, exit_code=exit_code, stdout_path=_existing(stdout, "stdout"),
                        stderr_path=_existing(stderr, "stderr"), cwd=root)
        analysis = analyze_report(parse(run, framework), root)
    except GreenloopError as exc:
        raise fail(exc) from None
    if as_json or format is Format.json:
        print(analysis.model_dump_json(indent=2))
        return
    table = Table(title=f"root cause: {analysis.root_cause}")
    for col in ("test", "kind", "evidence", "error site"):
        table.add_column(col, overflow="fold")
    for c in analysis.failures:
        site = f"{c.error_site.file}:{c.error_site.line}" if c.error_site else ""
        table.add_row(c.test_id, c.kind.value, c.evidence, site)
    console.print(table)
    for g in analysis.groups:
        if len(g.tests) > 1:
            console.print(f"group of {len(g.tests)} ({g.reason}): fix [bold]{g.root_test}[/] first")
    for s in analysis.suggestions:
        console.print(f"• {s}")
