"""Shared output helpers for CLI commands: consoles and typed error exits."""

from __future__ import annotations

import typer
from rich.console import Console

from parsers.errors import GreenloopError

console = Console()
err_console = Console(stderr=True)


def fail(error: GreenloopError, hint: str | None = None) -> typer.Exit:
    """Print a typed error (kind, message, what to do next) and return the exit to raise."""
    err_console.print(f"[bold red]error[/] [dim]({error.kind.value})[/]: {error.message}")
    if hint:
        err_console.print(f"  [yellow]hint:[/] {hint}")
    return typer.Exit(code=2)
