"""Host affinity: which worker holds a run's files, and activities that refuse
to work on files that are not there.

Every worker polls the shared task queue and its own *host queue*
(``<shared>@<host id>``, the pattern of Temporal's worker-specific task
queues). The activity that makes a run's workspace answers with its worker's
host queue; every later activity that touches the run's files is sent there.
A host id is stable across restarts of a worker that keeps its data directory
(``GREENLOOP_HOST``, else the machine's name and a digest of the data
directory), so a restarted worker takes its runs back; two workers sharing
one data directory share one host queue, as they share the files.

An activity never creates a missing workspace or run file: ``on_host``
checks the workspace first and raises ``WORKSPACE_LOST``, which the workflow
answers by rebuilding the workspace from its history (``workflows/host.py``).
"""

from __future__ import annotations

import functools
import hashlib
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar, overload

from temporalio import activity

from ..domain.errors import ErrorKind, GreenloopError
from ..settings import settings
from .heartbeat import heartbeating

In = TypeVar("In")
R = TypeVar("R")
HOST_SEPARATOR = "@"


def host_id() -> str:
    """This worker's host id: ``GREENLOOP_HOST``, else the machine's name and a
    digest of its data directory (workers sharing a data directory share it)."""
    if explicit := settings().host:
        return explicit
    digest = hashlib.sha1(str(settings().home.resolve()).encode()).hexdigest()[:8]
    return f"{socket.gethostname()}-{digest}"


def host_queue(shared_queue: str) -> str:
    """The host queue this worker polls beside ``shared_queue``."""
    if HOST_SEPARATOR in shared_queue:  # already a host queue
        return shared_queue
    return f"{shared_queue}{HOST_SEPARATOR}{host_id()}"


def my_host_queue() -> str:
    """The host queue of the worker running the current activity."""
    return host_queue(activity.info().task_queue)


def lost(what: str, path: str | Path, **context: Any) -> GreenloopError:
    return GreenloopError(
        f"{what} {path} is not on worker {host_id()} (its disk was lost, or the run moved): "
        "the run rebuilds it from its history", kind=ErrorKind.WORKSPACE_LOST, path=str(path), host=host_id(),
        **context)


def require_workspace(ws: Any) -> None:
    """Raise ``WORKSPACE_LOST`` unless ``ws``'s folder and run directory exist (never create them)."""
    path, run_dir = Path(ws.path), Path(ws.run_dir)
    if not path.is_dir():
        raise lost("the run's workspace", path)
    if not run_dir.is_dir():
        raise lost("the run's directory", run_dir)


def require_file(path: str | Path, what: str = "the run file") -> Path:
    """``path``, or ``WORKSPACE_LOST`` when it is missing."""
    p = Path(path)
    if not p.is_file():
        raise lost(what, p)
    return p


@overload
def on_host(fn: Callable[[In], Awaitable[R]], *, worktree: bool = True) -> Callable[[In], Awaitable[R]]: ...


@overload
def on_host(
    fn: None = None, *, worktree: bool = True) -> Callable[[Callable[[In], Awaitable[R]]], Callable[[In], Awaitable[R]]]: ...


def on_host(fn: Callable[[In], Awaitable[R]] | None = None, *,
            worktree: bool = True) -> Callable[[In], Awaitable[R]] | Callable[[Callable[[In], Awaitable[R]]],
                                                                              Callable[[In], Awaitable[R]]]:
    """An activity on the run's files: its input's workspace (and a worktree's,
    unless ``worktree=False``: removing one that is gone is fine) must exist here,
    and it heartbeats while it runs, so a lost worker is noticed within the
    heartbeat timeout (blocking work inside runs in a thread)."""

    def decorate(fn: Callable[[In], Awaitable[R]]) -> Callable[[In], Awaitable[R]]:
        @functools.wraps(fn)
        async def wrapper(inp: In) -> R:
            tree = getattr(inp, "worktree", None) if worktree else None
            for ws in (getattr(inp, "workspace", None), getattr(tree, "workspace", None)):
                if ws is not None:
                    require_workspace(ws)
            async with heartbeating(fn.__name__):
                return await fn(inp)

        return wrapper

    return decorate(fn) if fn is not None else decorate
