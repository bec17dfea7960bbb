"""Activities that make the run's workspace and finish the run."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from platformdirs import user_data_dir
from temporalio import activity

from activities.errors import typed_errors
from workflows.models import FinalizeInput, PrepareInput, RecordInput, RunSummary, TestFixResult, Workspace
from workspace import prepare as prep
from workspace.backups import slug
from workspace.events import log_event
from workspace.report import render_markdown


def runs_root() -> Path:
    """Where run directories live: $GREENLOOP_HOME/runs or the user's data dir."""
    home = os.environ.get("GREENLOOP_HOME") or user_data_dir("greenloop")
    return Path(home) / "runs"


def safe_name(run_id: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in run_id)


@activity.defn
@typed_errors
async def prepare_workspace(inp: PrepareInput) -> Workspace:
    """Copy or clone the repository into the run directory, on a new branch."""
    run_dir = Path(inp.request.run_dir) if inp.request.run_dir else runs_root() / safe_name(inp.run_id)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "workspace"
    activity.heartbeat("copying the repository")
    branch, base = await asyncio.to_thread(prep.prepare, inp.request.repo, inp.request.ref, inp.run_id, path)
    log_event(run_dir, "workspace_ready", repo=inp.request.repo, path=str(path), branch=branch, base=base)
    return Workspace(path=str(path), run_dir=str(run_dir), repo=inp.request.repo, branch=branch,
                     base_commit=base, is_git=True)


def _results_dir(ws: Workspace) -> Path:
    return Path(ws.run_dir) / "results"


@activity.defn
@typed_errors
async def record_result(inp: RecordInput) -> None:
    """Keep a finished test's full record in the run directory (not in history)."""
    folder = _results_dir(inp.workspace)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{slug(inp.result.test_id)}.json").write_text(inp.result.model_dump_json(indent=1))


def load_results(ws: Workspace) -> list[TestFixResult]:
    files = sorted(_results_dir(ws).glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    return [TestFixResult.model_validate_json(p.read_text()) for p in files]


@activity.defn
@typed_errors
async def finalize_run(inp: FinalizeInput) -> RunSummary:
    """Commit the fixes on the run's branch, export the patch, write the reports."""
    ws, summary = inp.workspace, inp.summary.model_copy(deep=True)
    path, run_dir = Path(ws.path), Path(ws.run_dir)
    results = load_results(ws)
    fixed = summary.fixed
    message = f"greenloop: fix {len(fixed)} failing test(s)\n\n" + "\n".join(f"- {t}" for t in fixed)
    if fixed:
        await asyncio.to_thread(prep.commit_fixes, path, message)
    if ws.base_commit:
        patch = await asyncio.to_thread(prep.export_patch, path, ws.base_commit, run_dir / "greenloop.patch")
        summary.patch = str(run_dir / "greenloop.patch") if patch else None
    if ws.branch:
        summary.branch = ws.branch
        if fixed and await asyncio.to_thread(prep.offer_branch, ws.repo, path, ws.branch):
            summary.notes.append(f"branch {ws.branch} fetched into {ws.repo}")
    summary.report_markdown = str(run_dir / "report.md")
    summary.report_json = str(run_dir / "summary.json")
    (run_dir / "report.md").write_text(render_markdown(summary, results))
    (run_dir / "summary.json").write_text(summary.model_dump_json(indent=2))
    log_event(run_dir, "run_finished", state=summary.state, fixed=summary.fixed, skipped=summary.skipped,
              escalated=summary.escalated, cost_usd=summary.usage.cost_usd)
    return summary
