"""``greenloop schedule``: nightly and recurring runs, backed by Temporal
Schedules (cron or interval; a run still going when the next is due is
skipped, never stacked). A worker must be running (``greenloop worker``)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionExecutionStartWorkflow,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleListInfo,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    WorkflowExecutionStatus,
    WorkflowFailureError,
)
from temporalio.service import RPCError, RPCStatusCode

from ..domain.errors import ErrorKind, GreenloopError
from ..reports.record import RunSummary
from ..server.client import shared_queue
from ..workflows.fix_suite import FixSuiteWorkflow
from .output import JsonOpt, console, fail, finish
from .run_options import with_run_options
from .runs import AddressOpt, NamespaceOpt, _client, build_request, given_options

app = typer.Typer(help="Recurring runs (Temporal Schedules).", no_args_is_help=True)
DURATION = re.compile(r"^(\d+)([smhd])$")


def parse_every(text: str) -> timedelta:
    """'30m', '6h', '1d' -> timedelta."""
    m = DURATION.match(text.strip())
    if not m:
        raise GreenloopError(f"--every takes a number and s/m/h/d, e.g. 24h (got {text!r})",
                             kind=ErrorKind.VALIDATION_ERROR)
    n, unit = int(m.group(1)), m.group(2)
    return timedelta(**{{"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[unit]: n})


@app.command("create")
@with_run_options
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Schedule id.")],
    repo: Annotated[str, typer.Argument(help="Local path (on the worker) or git URL.")],
    cron: Annotated[str | None, typer.Option(help="Cron expression, e.g. '0 2 * * *'.")] = None,
    every: Annotated[str | None, typer.Option(help="Interval, e.g. 24h.")] = None,
    address: AddressOpt = None, namespace: NamespaceOpt = None,
    options: dict | None = None,
) -> None:
    """Create a recurring run (exactly one of --cron or --every); it takes every option of `greenloop run`."""
    try:
        if (cron is None) == (every is None):
            raise GreenloopError("give exactly one of --cron or --every", kind=ErrorKind.VALIDATION_ERROR)
        spec = ScheduleSpec(cron_expressions=[cron]) if cron else ScheduleSpec(
            intervals=[ScheduleIntervalSpec(every=parse_every(every or ""))])
        request = build_request(repo, given_options(ctx), **(options or {}))
    except GreenloopError as exc:
        raise fail(exc) from None

    async def go() -> int:
        client, _ = await _client(address, namespace)
        try:
            await client.create_schedule(name, Schedule(
                action=ScheduleActionStartWorkflow(FixSuiteWorkflow.run, request, id=f"{name}-run",
                                                   task_queue=shared_queue()),
                spec=spec, policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
            ), memo={"spec": f"cron {cron}" if cron else f"every {every}", "repo": request.repo})
        except ScheduleAlreadyRunningError:
            raise GreenloopError(f"a schedule named {name!r} exists already", kind=ErrorKind.VALIDATION_ERROR,
                                 suggestion=f"pick another name, or `greenloop schedule delete {name}` first") from None
        except RPCError as exc:
            raise GreenloopError(f"cannot create schedule {name}: {exc.message}",
                                 kind=ErrorKind.VALIDATION_ERROR) from None
        console.print(f"schedule {name} created")
        return 0

    finish(go())


async def last_outcome(client: Client, info: ScheduleListInfo | None) -> str:
    """The outcome of the schedule's most recent run: its summary's state once it ended
    (completed, suite_unreadable...), else the workflow's status (running, terminated...)."""
    if info is None or not info.recent_actions:
        return ""
    action = info.recent_actions[-1].action
    if not isinstance(action, ScheduleActionExecutionStartWorkflow):
        return ""
    handle = client.get_workflow_handle(action.workflow_id, run_id=action.first_execution_run_id,
                                        result_type=RunSummary)
    try:
        desc = await handle.describe()
        if desc.status == WorkflowExecutionStatus.COMPLETED:
            return (await handle.result(follow_runs=True)).state.value
        return (desc.status.name if desc.status else "unknown").lower()
    except (RPCError, WorkflowFailureError) as exc:
        return f"unknown ({getattr(exc, 'message', exc)})"


@app.command("list")
def list_(address: AddressOpt = None, namespace: NamespaceOpt = None, as_json: JsonOpt = False) -> None:
    """List schedules: when they run, the last run's outcome and the next time."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        rows = []
        async for s in await client.list_schedules():
            info = s.info
            when = await s.memo_value("spec", "")
            nxt = info.next_action_times[0].isoformat() if info and info.next_action_times else ""
            recent = info.recent_actions if info else []
            rows.append({"id": s.id, "paused": bool(s.schedule and s.schedule.state.paused), "spec": when,
                         "repo": await s.memo_value("repo", ""), "next": nxt, "recent": len(recent),
                         "last_run": recent[-1].action.workflow_id if recent and isinstance(
                             recent[-1].action, ScheduleActionExecutionStartWorkflow) else "",
                         "last_outcome": await last_outcome(client, info)})
        if as_json:
            print(json.dumps(rows, indent=2))
            return 0
        table = Table(title="schedules")
        for col in ("id", "repository", "when", "paused", "last run", "last outcome", "next run"):
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(escape(r["id"]), escape(r["repo"]), escape(r["spec"]), str(r["paused"]),
                          escape(r["last_run"]), r["last_outcome"], r["next"])
        console.print(table)
        return 0

    finish(go())


def _simple(action: str, help_text: str):
    def command(name: Annotated[str, typer.Argument(help="Schedule id.")],
                address: AddressOpt = None, namespace: NamespaceOpt = None) -> None:
        async def go() -> int:
            client, _ = await _client(address, namespace)
            handle = client.get_schedule_handle(name)
            try:
                if action == "pause":
                    await handle.pause(note="paused from the greenloop CLI")
                elif action == "unpause":
                    await handle.unpause(note="unpaused from the greenloop CLI")
                elif action == "trigger":
                    await handle.trigger(overlap=ScheduleOverlapPolicy.SKIP)
                else:
                    await handle.delete()
            except RPCError as exc:
                if exc.status == RPCStatusCode.NOT_FOUND:
                    raise GreenloopError(f"no schedule named {name!r}", kind=ErrorKind.VALIDATION_ERROR,
                                         suggestion="`greenloop schedule list` shows the schedules") from None
                raise GreenloopError(f"schedule {name}: {exc.message}", kind=ErrorKind.VALIDATION_ERROR) from None
            done = {"pause": "paused", "unpause": "unpaused", "trigger": "triggered", "delete": "deleted"}[action]
            console.print(f"schedule {name}: {done}")
            return 0

        finish(go())

    command.__doc__ = help_text
    return command


app.command("pause")(_simple("pause", "Pause a schedule."))
app.command("unpause")(_simple("unpause", "Resume a paused schedule."))
app.command("trigger")(_simple("trigger", "Start a run now."))
app.command("delete")(_simple("delete", "Delete a schedule."))
