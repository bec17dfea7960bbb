"""``greenloop server`` and ``greenloop worker``."""

from __future__ import annotations

import os
import subprocess
from typing import Annotated

import typer

from greenloop.cli.output import console, finish
from greenloop.server import dev
from greenloop.server.client import TASK_QUEUE, configured_address, connect, ensure_search_attributes


def server_command(
    port: Annotated[int, typer.Option(help="gRPC port.")] = dev.DEFAULT_PORT,
    ui_port: Annotated[int, typer.Option(help="Web UI port.")] = dev.DEFAULT_UI_PORT,
) -> None:
    """Run the embedded Temporal dev server (SQLite under the data dir, Web UI) in the foreground."""
    db = dev.home() / "temporal.db"
    console.print(f"Temporal dev server on localhost:{port}, database {db}\nWeb UI: {dev.ui_url(ui_port)}")
    proc = subprocess.run(dev.command(port, ui_port, db), check=False)
    raise typer.Exit(proc.returncode)


def worker_command(
    address: Annotated[str | None, typer.Option(help="Temporal address (default: configured, else embedded).")] = None,
    namespace: Annotated[str | None, typer.Option(help="Namespace.")] = None,
    task_queue: Annotated[str, typer.Option(help="Task queue.")] = TASK_QUEUE,
    metrics_port: Annotated[int | None, typer.Option(help="Serve Prometheus metrics (Temporal's and Greenloop's) "
                                                          "on this port.", min=1, max=65535)] = None,
) -> None:
    """Run a worker until interrupted (SIGINT/SIGTERM shut it down gracefully)."""
    from greenloop.worker import serve

    async def go() -> int:
        target = address or configured_address() or f"localhost:{dev.DEFAULT_PORT}"
        if target == f"localhost:{dev.DEFAULT_PORT}" and not configured_address():
            dev.start_background()
            await ensure_search_attributes(await connect(target, namespace))
        console.print(f"worker on {target}, task queue {task_queue} (pid {os.getpid()})"
                      + (f", metrics on :{metrics_port}/metrics" if metrics_port else ""))
        await serve(target, namespace, task_queue, metrics_port)
        return 0

    finish(go())
