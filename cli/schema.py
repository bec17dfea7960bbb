"""``greenloop schema``: the JSON Schemas of the files Greenloop writes for tools."""

from __future__ import annotations

import json

import typer

from ..reports.summary_file import json_schema

app = typer.Typer(help="JSON Schemas of Greenloop's machine-readable files.", no_args_is_help=True)


@app.command("summary")
def summary_schema() -> None:
    """The JSON Schema of a run's summary.json (versioned by its schema_version)."""
    print(json.dumps(json_schema(), indent=2))
