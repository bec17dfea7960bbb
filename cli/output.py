"""Shared output helpers for CLI commands: consoles and typed error exits."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import traceback
from collections.abc import Coroutine
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from .. import sandbox, telemetry
from ..domain.errors import ErrorKind, GreenloopError
from ..run_settings import BY_FIELD
from ..settings import settings


def _width(stream: Any) -> int | None:
    """A terminal's own width; for a pipe or a file (CI logs, ``| grep``), wide enough that a
    table's cells are not cut to 80 columns (COLUMNS still wins when set)."""
    if os.environ.get("COLUMNS") or stream.isatty():
        return None
    return 240


console = Console(soft_wrap=True, width=_width(sys.stdout))  # links and paths must stay copyable
err_console = Console(stderr=True, soft_wrap=True, width=_width(sys.stderr))  # never break paths in messages


class _Errors:
    """How errors are said in this process: lines on stderr, or one JSON object on stdout (--json)."""

    as_json = False


def json_output(value: bool) -> bool:
    """``--json``'s callback (it is read before the other options): from here on an error is
    said as a JSON object on stdout, where a script reads the command's output."""
    _Errors.as_json = _Errors.as_json or value
    return value


JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output (errors too, as a JSON object).",
                                       callback=json_output, is_eager=True)]


def say_error(error: GreenloopError, hint: str | None = None, as_json: bool | None = None) -> int:
    """Say a typed error (kind, message, what to do next, all literal): lines on stderr, or under
    --json one object on stdout (``error``, ``kind``, ``hint``, ``exit_code``); the exit code it asks for."""
    hint = hint or error.context.get("suggestion")
    code = int(error.context.get("exit", 2))
    if _Errors.as_json if as_json is None else as_json:
        print(json.dumps({"error": error.message, "kind": error.kind.value, "hint": str(hint) if hint else None,
                          "exit_code": code}))
        return code
    err_console.print(f"[bold red]error[/] [dim]({error.kind.value})[/]: {escape(error.message)}")
    if hint:
        err_console.print(f"  [yellow]hint:[/] {escape(str(hint))}")
    return code


def fail(error: GreenloopError, hint: str | None = None) -> typer.Exit:
    """Print a typed error (kind, message, what to do next) and return the exit to raise."""
    return typer.Exit(code=say_error(error, hint))


def invalid_options(exc: ValidationError) -> GreenloopError:
    """Options out of range, said option by option (never pydantic's traceback)."""
    parts = []
    for e in exc.errors():
        loc = [str(part) for part in e["loc"]]
        # The setting that holds the value (the value itself may sit deeper: a list's item).
        setting = next((BY_FIELD[f] for n in range(len(loc), 0, -1) if (f := ".".join(loc[:n])) in BY_FIELD), None)
        name = (setting.option or setting.toml or setting.name).split("/")[0] if setting else ".".join(loc) or "an option"
        parts.append(f"{name}: {e['msg']} (got {e.get('input')!r})")
    return GreenloopError("invalid option: " + "; ".join(parts), kind=ErrorKind.VALIDATION_ERROR,
                          suggestion="`greenloop run --help` lists every option and its range")


class _NoTraceback(logging.Filter):
    """Keeps the SDK's own errors to one line each (their tracebacks are in the run's history)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def _debug() -> bool:
    """GREENLOOP_DEBUG, also when another variable does not parse (that error is being said)."""
    try:
        return settings().debug
    except GreenloopError:
        return os.environ.get("GREENLOOP_DEBUG", "") not in ("", "0")


def quiet_worker_logs() -> None:
    """A worker inside the CLI process: what it retries or records (an activity that failed
    and is retried, a failed attempt) is in the run's history and the Web UI, not on the
    user's terminal; what is left of its errors prints without tracebacks.
    GREENLOOP_DEBUG=1 shows everything."""
    if _debug():
        return
    sdk = logging.getLogger("temporalio")  # its children (activity, workflow, worker) log through it
    sdk.setLevel(logging.ERROR)
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_NoTraceback())
    handler.setFormatter(logging.Formatter("worker: %(message)s"))
    sdk.addHandler(handler)
    sdk.propagate = False


def quiet_core_logs() -> None:
    """The SDK's native core logs its own retries (a server restarting: "gRPC call ... retried 6
    times") straight to stdout, in the middle of a command's output (and its --json). The
    commands say what matters themselves (``cli/follow.py``): the core's logs are forwarded to
    the Python logger ``temporalio.core`` (``telemetry.forward_core_logs``, before any command),
    which keeps its errors only, on stderr. GREENLOOP_DEBUG=1 shows everything."""
    if _debug():
        return
    core = logging.getLogger("temporalio.core")
    core.setLevel(logging.ERROR)
    core.propagate = False
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_NoTraceback())
    handler.setFormatter(logging.Formatter("temporal: %(message)s"))
    core.addHandler(handler)


def finish(coro: Coroutine[Any, Any, int]) -> None:
    """Run an async command and exit with its status.

    Exits through ``os._exit`` after flushing: the Temporal SDK's native
    threads can abort the interpreter at shutdown (sdk-python issue 300),
    which must not turn a good run into a crash or lose the exit status.
    """
    quiet_core_logs()
    try:
        code = asyncio.run(coro)
    except GreenloopError as exc:
        code = say_error(exc)
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # noqa: BLE001 - a user never sees a traceback; GREENLOOP_DEBUG=1 shows it
        if _debug():
            traceback.print_exc()
        if _Errors.as_json:
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}", "kind": "internal",
                              "hint": "run again with GREENLOOP_DEBUG=1 to see where, and report it", "exit_code": 4}))
        else:
            err_console.print(f"[bold red]error[/] [dim](internal)[/]: {escape(f'{type(exc).__name__}: {exc}')}")
            err_console.print("  [yellow]hint:[/] run again with GREENLOOP_DEBUG=1 to see where, and report it")
        code = 4
    telemetry.flush_traces()  # spans of an in-process worker
    sandbox.shutdown()  # os._exit skips atexit
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
