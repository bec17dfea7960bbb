"""Shared output helpers for CLI commands: consoles and typed error exits."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Coroutine
from typing import Any

import typer
from rich.console import Console

from greenloop import sandbox
from greenloop.domain.errors import GreenloopError

console = Console(soft_wrap=True)  # links and paths must stay copyable
err_console = Console(stderr=True, soft_wrap=True)  # never break paths in messages


def fail(error: GreenloopError, hint: str | None = None) -> typer.Exit:
    """Print a typed error (kind, message, what to do next) and return the exit to raise."""
    err_console.print(f"[bold red]error[/] [dim]({error.kind.value})[/]: {error.message}")
    if hint:
        err_console.print(f"  [yellow]hint:[/] {hint}")
    return typer.Exit(code=2)


def finish(coro: Coroutine[Any, Any, int]) -> None:
    """Run an async command and exit with its status.

    Exits through ``os._exit`` after flushing: the Temporal SDK's native
    threads can abort the interpreter at shutdown (sdk-python issue 300),
    which must not turn a good run into a crash or lose the exit status.
    """
    try:
        code = asyncio.run(coro)
    except GreenloopError as exc:
        err_console.print(f"[bold red]error[/] [dim]({exc.kind.value})[/]: {exc.message}")
        if suggestion := exc.context.get("suggestion"):
            err_console.print(f"  [yellow]hint:[/] {suggestion}")
        code = 2
    except KeyboardInterrupt:
        code = 130
    sandbox.shutdown()  # os._exit skips atexit
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
