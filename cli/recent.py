"""``greenloop runs``: recent runs, newest first, read from the search attributes
(GreenloopRepo, GreenloopState, GreenloopFailing) that every run keeps up to date;
the number fixed comes from the summary of a run that ended."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus
from temporalio.service import RPCError

from ..domain.errors import ErrorKind, GreenloopError
from ..reports.record import RunSummary
from ..server import search_attributes as search
from .output import JsonOpt, console, finish
from .runs import AddressOpt, NamespaceOpt, _client


async def _fixed(client: Client, w: WorkflowExecution) -> int | None:
    if w.status != WorkflowExecutionStatus.COMPLETED:
        return None
    try:
        summary = await client.get_workflow_handle(w.id, run_id=w.run_id, result_type=RunSummary).result()
    except Exception:  # noqa: BLE001 - a result that cannot be read shows as unknown
        return None
    return len(summary.fixed)


async def recent_runs(client: Client, limit: int, repo: str | None = None) -> list[dict]:
    """The latest ``limit`` runs (optionally of one repository), newest first."""
    query = "WorkflowType = 'FixSuiteWorkflow'"
    if repo:
        query += f" AND GreenloopRepo = '{repo.replace(chr(39), '')}'"
    rows = []
    async for w in client.list_workflows(query, limit=limit):
        attrs = w.typed_search_attributes
        rows.append({
            "run_id": w.id,
            "repo": attrs.get(search.REPO) or "",
            "state": attrs.get(search.STATE) or (w.status.name.lower() if w.status else ""),
            "status": w.status.name.lower() if w.status else "",
            "fixed": await _fixed(client, w),
            "failing": attrs.get(search.FAILING),
            "started": w.start_time.isoformat(timespec="seconds"),
        })
    return rows


def runs_command(
    limit: Annotated[int, typer.Option(help="How many runs.", min=1, max=1000)] = 20,
    repo: Annotated[str | None, typer.Option(help="Only runs of this repository (its path or URL).")] = None,
    address: AddressOpt = None, namespace: NamespaceOpt = None, as_json: JsonOpt = False,
) -> None:
    """Recent runs: id, repository, state, fixed/failing, started."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        try:
            rows = await recent_runs(client, limit, repo)
        except RPCError as exc:
            raise GreenloopError(f"cannot list runs: {exc.message}", kind=ErrorKind.VALIDATION_ERROR) from None
        if as_json:
            print(json.dumps(rows, indent=2))
            return 0
        table = Table(title="recent runs")
        for col in ("run", "repository", "state", "fixed/failing", "started"):
            table.add_column(col, overflow="fold")
        for r in rows:
            fixed = "-" if r["fixed"] is None else str(r["fixed"])
            failing = "-" if r["failing"] is None else str(r["failing"])
            table.add_row(escape(r["run_id"]), escape(r["repo"]), r["state"], f"{fixed}/{failing}", r["started"])
        console.print(table)
        return 0

    finish(go())
