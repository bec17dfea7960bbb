"""``greenloop parse``: turn a saved run of a test command into a report."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..domain.errors import GreenloopError, UnknownFrameworkError
from ..parsers import RunOutput, TestReport, parse
from .output import console, fail

STATUS_STYLE = {
    "passed": "green", "failed": "red", "errored": "magenta", "skipped": "yellow",
    "xfailed": "cyan", "xpassed": "cyan",
}


class Format(StrEnum):
    json = "json"
    table = "table"


def _existing(path: Path | None, what: str) -> Path | None:
    if path is not None and not path.is_file():
        raise GreenloopError(f"{what} file {path} does not exist", path=str(path))
    return path


def print_report(report: TestReport) -> None:
    """Render a report as a Rich table with totals and warnings."""
    table = Table(title=f"{report.framework}: {report.command or '(no command)'}")
    for col in ("status", "test", "location", "message"):
        table.add_column(col, overflow="fold")
    for t in report.tests:
        loc = f"{t.file}:{t.line}" if t.file and t.line else (t.file or "")
        msg = (t.message or "").splitlines()[0][:120] if t.message else ""
        style = STATUS_STYLE.get(t.status.value, "")
        table.add_row(f"[{style}]{t.status.value}[/]", t.id, loc, msg)
    console.print(table)
    totals = report.totals
    parts = [f"{getattr(totals, s)} {s}" for s in STATUS_STYLE if getattr(totals, s)]
    flags = [f for f, on in (("build error", report.build_error), ("timed out", report.timed_out)) if on]
    console.print(", ".join(parts) or "no tests", *([f"[bold]({', '.join(flags)})[/]"] if flags else []))
    if report.detection:
        console.print(f"[dim]framework detected: {report.detection}[/]")
    if not report.per_test and report.output_tail:
        console.print("[dim]no per-test results; end of the output:[/]")
        console.print(report.output_tail, markup=False, highlight=False)
    for w in report.warnings:
        console.print(f"[yellow]warning:[/] {w}")


def parse_command(
    command: Annotated[str, typer.Option(help="The test command that was run.")] = "",
    exit_code: Annotated[int | None, typer.Option("--exit-code", help="Its exit status.")] = None,
    stdout: Annotated[Path | None, typer.Option(help="File holding its stdout.")] = None,
    stderr: Annotated[Path | None, typer.Option(help="File holding its stderr.")] = None,
    cwd: Annotated[Path | None, typer.Option(help="Where the command ran (report paths resolve here).")] = None,
    project: Annotated[Path | None, typer.Option(help="Project sources, if not --cwd.")] = None,
    framework: Annotated[str | None, typer.Option(help="Framework name; detected when omitted.")] = None,
    format: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.table,
) -> None:
    """Parse a saved run (stdout/stderr files and report files) into per-test results."""
    try:
        run = RunOutput(
            command=command,
            exit_code=exit_code,
            stdout_path=_existing(stdout, "stdout"),
            stderr_path=_existing(stderr, "stderr"),
            cwd=cwd.resolve() if cwd else Path.cwd(),
            project_root=project.resolve() if project else None,
        )
        report = parse(run, framework)
    except UnknownFrameworkError as exc:
        raise fail(exc, "omit --framework to detect it, or use one of the names listed") from None
    except GreenloopError as exc:
        raise fail(exc) from None
    if format is Format.json:
        print(report.model_dump_json(indent=2))
    else:
        print_report(report)
