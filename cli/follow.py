"""What following a run (``greenloop run``, ``watch``, ``resume``) survives, and
what it leaves behind when it stops.

- The Temporal server unreachable for a while (restarted, a network blip): the
  follower says so, reconnects with backoff and ends with the run's real
  outcome; only a server gone for ``GIVE_UP_S`` ends it, saying how to re-attach.
- Ctrl-C: the follower says what happens to the run next (it goes on on the
  cluster's workers, or it is paused until resumed when its worker was this
  command) and the exact commands to re-attach, resume or abort it.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from rich.markup import escape
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from ..domain.errors import ErrorKind, GreenloopError
from ..server.client import private_prefix, queue_pollers
from .exit_codes import ExitCode
from .output import err_console

# Statuses of a call that did not reach the server (or its answer did not come back):
# the server restarts, or the network is down for a while.
UNREACHABLE = {RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNKNOWN,
               RPCStatusCode.CANCELLED}
FIRST_WAIT_S, LONGEST_WAIT_S = 1.0, 5.0
GIVE_UP_S = 600.0  # a server gone this long is not restarting: the follower stops, the run is untouched

T = TypeVar("T")


def unreachable(exc: RPCError) -> bool:
    """Whether ``exc`` says the server could not be reached (rather than refusing the call)."""
    return exc.status in UNREACHABLE


def target_options(address: str | None, namespace: str | None) -> str:
    """The ``--address``/``--namespace`` a command about the run needs ("" for the defaults)."""
    return "".join(f" {flag} {shlex.quote(value)}" for flag, value in
                   (("--address", address), ("--namespace", namespace)) if value)


class Reconnecting:
    """Calls to the server that outlive its restarts: ``call`` retries while the server is
    unreachable, with backoff, saying so once per outage (and when it is back)."""

    def __init__(self, address: str, give_up_s: float = GIVE_UP_S) -> None:
        self.address, self.give_up_s = address, give_up_s
        self.lost_since: float | None = None  # the server is unreachable since (None: it answers)
        self.back_at = 0.0  # when it answered again after an outage (its workers re-poll meanwhile)

    async def call(self, what: Callable[[], Awaitable[T]]) -> T:
        """``what()``'s result, asked again while the server is unreachable."""
        wait = FIRST_WAIT_S
        while True:
            try:
                result = await what()
            except RPCError as exc:
                if not unreachable(exc):
                    raise
                self.lost(exc)
                await asyncio.sleep(wait)
                wait = min(wait * 2, LONGEST_WAIT_S)
                continue
            self.answered()
            return result

    def lost(self, exc: RPCError) -> None:
        now = time.monotonic()
        if self.lost_since is None:
            self.lost_since = now
            err_console.print(f"[yellow]reconnecting:[/] the Temporal server at {escape(self.address)} does not "
                              f"answer ({escape(exc.message or exc.status.name)}); the run goes on on its "
                              "worker(s) meanwhile, and this command waits for the server, retrying with backoff")
        elif now - self.lost_since >= self.give_up_s:
            raise GreenloopError(
                f"the Temporal server at {self.address} has not answered for {self.give_up_s:.0f} s: "
                "stopped following the run (it is kept in the server's database)",
                kind=ErrorKind.TIMEOUT, exit=int(ExitCode.STOPPED),
                suggestion="once the server is back, `greenloop watch RUN` follows the run again")

    def answered(self) -> None:
        if self.lost_since is not None:
            err_console.print(f"[green]reconnected[/] to the Temporal server after "
                              f"{time.monotonic() - self.lost_since:.0f} s")
            self.lost_since, self.back_at = None, time.monotonic()

    @property
    def reachable(self) -> bool:
        return self.lost_since is None


async def polled(client: Client, queue: str) -> bool:
    """Whether a worker polls ``queue`` (False when that cannot be told)."""
    from .watch import has_pollers

    try:
        return await has_pollers(client, queue)
    except RPCError:
        return False


def interrupted(run_id: str, paused: bool, address: str | None, namespace: str | None) -> None:
    """What Ctrl-C on a follower leaves behind, and the commands that pick the run up again."""
    opts = target_options(address, namespace)
    rid = shlex.quote(run_id)
    if paused:
        err_console.print(
            f"\n[bold yellow]interrupted[/]: run {escape(run_id)} is paused: its worker was this command. "
            "Its progress is kept in the Temporal server; nothing runs until it is resumed.\n"
            f"  resume it:  greenloop resume {escape(rid + opts)}\n"
            f"  abort it:   greenloop resume {escape(rid + opts)}, then in another terminal "
            f"greenloop abort {escape(rid + opts)}\n"
            f"  its state:  greenloop status {escape(rid + opts)}")
    else:
        err_console.print(
            f"\n[bold yellow]stopped following[/]: run {escape(run_id)} goes on on its worker(s).\n"
            f"  re-attach:  greenloop watch {escape(rid + opts)}\n"
            f"  abort it:   greenloop abort {escape(rid + opts)}\n"
            f"  its state:  greenloop status {escape(rid + opts)}")


def gone(identity: str) -> bool:
    """Whether a worker's identity (the SDK's default, ``pid@host``) is a process of this machine
    that no longer runs: an interrupted command whose polls the server still lists for minutes."""
    pid, _, host = identity.partition("@")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's, or named otherwise: taken as alive
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


async def served_by_a_live_worker(client: Client, queue: str) -> bool:
    """Whether a worker serves ``queue``: one polled it lately, and, for a run's private queue (its only
    worker was the command that started it), that command still runs."""
    if not queue.startswith(private_prefix()):
        return await polled(client, queue)
    try:
        return any(not gone(identity) for identity in await queue_pollers(client, queue))
    except RPCError:
        return False


async def paused_runs(client: Client, repo: str) -> list[str]:
    """Runs of ``repo`` that are in progress but that no worker serves (their command was
    interrupted): the next run of the repository names them."""
    query = (f"WorkflowType = 'FixSuiteWorkflow' AND ExecutionStatus = 'Running' "
             f"AND GreenloopRepo = '{repo.replace(chr(39), '')}'")
    paused = []
    try:
        async for w in client.list_workflows(query, limit=20):
            if not await served_by_a_live_worker(client, w.task_queue):
                paused.append(w.id)
    except RPCError:
        return paused  # not known: nothing said
    return paused


def name_paused(run_ids: list[str], address: str | None, namespace: str | None) -> None:
    """Name the runs of the repository an interrupted command left paused (``paused_runs``), with the
    commands that finish or drop each. They are named, not resumed: the new run is what was asked for
    (its options, its scenario), and the old one, resumed unasked, would run beside it."""
    opts = target_options(address, namespace)
    for run_id in run_ids:
        rid = escape(shlex.quote(run_id) + opts)
        err_console.print(f"[yellow]note:[/] run {escape(run_id)} of this repository was interrupted and is paused "
                          f"(nothing serves it). To finish it: `greenloop resume {rid}`. To drop it: "
                          f"`greenloop resume {rid}`, then in another terminal `greenloop abort {rid}`. "
                          f"Where it stopped: `greenloop status {rid}`")


async def served(client: Client, handle: WorkflowHandle) -> bool:
    """Whether a worker serves the run's queue now (what Ctrl-C on ``watch`` says depends on it)."""
    try:
        queue = (await asyncio.wait_for(handle.describe(), timeout=5)).task_queue
        return await asyncio.wait_for(polled(client, queue), timeout=5)
    except (RPCError, asyncio.TimeoutError):
        return True  # not known: the run goes on wherever its worker is
