"""``greenloop server`` and ``greenloop worker``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Annotated

import typer

from ..domain.errors import GreenloopError
from ..llm.scenario import Scenario
from ..server import dev
from ..server.client import configured_address, connect, ensure_search_attributes, shared_queue
from .output import console, fail, finish


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
    task_queue: Annotated[str | None, typer.Option(
        help="Task queue (default: GREENLOOP_TASK_QUEUE, else greenloop).")] = None,
    metrics_port: Annotated[int | None, typer.Option(help="Serve Prometheus metrics (Temporal's and Greenloop's) "
                                                          "on this port.", min=1, max=65535)] = None,
    scripted: Annotated[Path | None, typer.Option(
        help="Answer LLM calls with this scripted scenario (YAML) instead of Claude: rehearsals and tests.")] = None,
    host: Annotated[str | None, typer.Option(
        help="This worker's host id (default: GREENLOOP_HOST, else the machine's name and its data "
             "directory).")] = None,
) -> None:
    """Run a worker until interrupted (SIGINT/SIGTERM shut it down gracefully).

    It polls the shared task queue and its own host queue (TASK_QUEUE@HOST): the
    runs whose workspace it prepares stay with it while it is there."""
    from ..worker import Workers, serve

    if scripted is not None:
        try:
            Scenario.load(scripted)  # a file that is not a scenario is said now, before the worker polls
        except GreenloopError as exc:
            raise fail(exc) from None
    if host:
        os.environ["GREENLOOP_HOST"] = host

    task_queue = task_queue or shared_queue()

    def ready(workers: Workers) -> None:
        console.print(f"polling {task_queue} and {workers.host_queue}"
                      + (f", LLM scripted by {scripted}" if scripted else ""))

    async def go() -> int:
        target = address or configured_address() or f"localhost:{dev.DEFAULT_PORT}"
        if target == f"localhost:{dev.DEFAULT_PORT}" and not configured_address():
            dev.start_background()
        await ensure_search_attributes(await connect(target, namespace))
        console.print(f"worker on {target}, task queue {task_queue} (pid {os.getpid()})"
                      + (f", metrics on :{metrics_port}/metrics" if metrics_port else ""))
        await serve(target, namespace, task_queue, metrics_port, scripted=scripted, on_ready=ready)
        return 0

    finish(go())
