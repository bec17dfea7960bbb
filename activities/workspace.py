"""Activities that make the run's workspace and finish the run."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field
from temporalio import activity

from .. import telemetry
from ..domain.changes import FileChange
from ..domain.edits import EditSet
from ..domain.errors import ErrorKind, GreenloopError
from ..domain.workspace import Workspace
from ..git_command import git
from ..parsers.models import Status, Totals
from ..reports.html import render_html
from ..reports.junit import write_junit
from ..reports.markdown import render_markdown
from ..reports.record import FixOneTestResult, RunSummary
from ..reports.summary_file import summary_document
from ..reports.timeline import read_events, run_time, timelines, validations
from ..run_request import ProjectRequest
from ..runner.plan import SuitePlan
from ..runner.runs import SuiteRun
from ..settings import settings
from ..workspace import prepare as prep
from ..workspace import worktree as wt
from ..workspace.backups import BackupStore, slug
from ..workspace.changes import apply_changes
from ..workspace.events import log_event
from ..workspace.moved_head import follow_head, source_commit
from ..workspace.publish import open_pull_request, push_branch
from .environment import SetupInput, build_environment
from .errors import typed_errors
from .heartbeat import heartbeating
from .host import host_id, my_host_queue, on_host
from .testing import SuiteInput, execute_suite, load_statuses


class PrepareInput(BaseModel):
    run_id: str
    request: ProjectRequest


class RecordInput(BaseModel):
    workspace: Workspace
    result: FixOneTestResult


class FinalizeInput(BaseModel):
    run_id: str
    workspace: Workspace
    summary: RunSummary
    # The last full run: the tests still failing are read from it (None: the suite never ran).
    final: SuiteRun | None
    initial: SuiteRun | None = None  # the first full run (the "before" of the JUnit export)
    push: str | None = None  # FixRequest.push
    pull_request: bool = False  # FixRequest.pull_request


class WorktreeInput(BaseModel):
    workspace: Workspace  # the run's workspace
    test_id: str


class Worktree(BaseModel):
    """A test's own copy of the run workspace (concurrency > 1): a git worktree
    started from the run workspace's files when the test started."""

    test_id: str
    workspace: Workspace  # what the test's child workflow edits and validates
    start: str  # the starting-point commit (the run workspace's files then)


class MergeInput(BaseModel):
    workspace: Workspace  # the run's workspace, which the fix is merged into
    worktree: Worktree
    files: list[str]  # the files the accepted attempt changed
    baseline: SuiteRun  # the statuses validations compare with now
    suite_after: SuiteRun | None = None  # the worktree's suite after the fix


class MergeResult(BaseModel):
    merged: bool
    reason: str = ""  # why not
    files: list[str] = Field(default_factory=list)
    patch: str | None = None  # the patch the merge applied, kept in the run directory
    patch_text: str | None = None  # its text: the history holds it, so a rebuild can apply it again
    # What validations compare with from now on: a test passes if it passed before or after the fix.
    baseline: SuiteRun | None = None


class RemoveWorktreeInput(BaseModel):
    workspace: Workspace
    worktree: Worktree


class AcceptedChange(BaseModel):
    """One accepted fix as the history holds it, in the order it entered the run
    workspace: the edit set applied in place, the patch a merge applied, or
    (validation queue) its compact changes, each on the version its file had then."""

    test_id: str
    attempt: int
    edit_set: EditSet | None = None
    patch_text: str | None = None
    changes: list[FileChange] | None = None


class RebuildInput(BaseModel):
    run_id: str
    request: ProjectRequest
    lost: Workspace  # the workspace on the lost worker
    plan: SuitePlan
    accepted: list[AcceptedChange]
    reason: str  # why the host counts as lost


class Rebuilt(BaseModel):
    """A workspace rebuilt on another worker from the history, and the suite run
    there that stands in for the lost reports (failures' details and the baseline)."""

    workspace: Workspace
    run: SuiteRun
    merged: dict[str, str] = Field(default_factory=dict)  # test -> its merge patch, written again
    plan: SuitePlan | None = None  # the plan with this worker's project environment (None: unchanged)


def runs_root() -> Path:
    """Where run directories live: $GREENLOOP_HOME/runs or the user's data dir."""
    return settings().home / "runs"


def safe_name(run_id: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in run_id)


@activity.defn
@typed_errors
async def prepare_workspace(inp: PrepareInput) -> Workspace:
    """Copy or clone the repository into the run directory, on a new branch."""
    run_dir = _run_dir(inp.run_id, inp.request)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "workspace"
    reachable(inp.request.repo)
    async with heartbeating("copying the repository"):
        branch, base = await asyncio.to_thread(prep.prepare, inp.request.repo, inp.request.ref, inp.run_id, path)
        tree = await asyncio.to_thread(git, path, "rev-parse", f"{base}^{{tree}}")
        source = await asyncio.to_thread(source_commit, path, base)
    log_event(run_dir, "workspace_ready", repo=inp.request.repo, path=str(path), branch=branch, base=base,
              source=source, host=host_id())
    return Workspace(path=str(path), run_dir=str(run_dir), repo=inp.request.repo, branch=branch,
                     base_commit=base, source_commit=source, host_queue=my_host_queue(), base_tree=tree,
                     ref=inp.request.ref)


def _run_dir(run_id: str, request: ProjectRequest) -> Path:
    return Path(request.run_dir) if request.run_dir else runs_root() / safe_name(run_id)


def reachable(repo: str) -> None:
    """A local-path repository must be visible on this worker; a typed error that says so
    (retryable: another worker may see it) and recommends a git URL."""
    if prep.is_git_url(repo) or Path(repo).expanduser().is_dir():
        return
    raise GreenloopError(
        f"the repository {repo} is a local path that worker {host_id()} cannot see: a local-path repository "
        "is reachable only by workers that see that path; start the run with a git URL (a git server every "
        "worker reaches) so that any worker can prepare or rebuild its workspace",
        kind=ErrorKind.REPOSITORY_UNREACHABLE, repo=repo, host=host_id())


def _results_dir(ws: Workspace) -> Path:
    return Path(ws.run_dir) / "results"


@activity.defn
@typed_errors
@on_host
async def record_result(inp: RecordInput) -> None:
    """Keep a finished test's full record in the run directory (not in history)."""
    folder = _results_dir(inp.workspace)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{slug(inp.result.test_id)}.json").write_text(inp.result.model_dump_json(indent=1))
    telemetry.record_test_result(inp.result.state.value, len(inp.result.attempts))


def load_results(ws: Workspace) -> list[FixOneTestResult]:
    files = sorted(_results_dir(ws).glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    return [FixOneTestResult.model_validate_json(p.read_text()) for p in files]


@activity.defn
@typed_errors
@on_host
async def finalize_run(inp: FinalizeInput) -> RunSummary:
    """Commit the fixes on the run's branch, export the patch, write the reports."""
    ws, summary = inp.workspace, inp.summary.model_copy(deep=True)
    path, run_dir = Path(ws.path), Path(ws.run_dir)
    if inp.final is not None:
        summary.final = inp.final.totals
        failing = (t for t, s in load_statuses(inp.final.statuses_path).items()
                   if s in (Status.FAILED, Status.ERRORED))
        summary.still_failing = list(itertools.islice(failing, 500))
    results = await asyncio.to_thread(load_results, ws)
    events = read_events(run_dir)
    summary.started_at, summary.duration_s = run_time(events)
    fixed = summary.fixed
    message = f"greenloop: fix {len(fixed)} failing test(s)\n\n" + "\n".join(f"- {t}" for t in fixed)
    if fixed:
        await asyncio.to_thread(prep.commit_fixes, path, message)
    base = ws.base_commit
    if base:
        summary.base_commit = await asyncio.to_thread(source_commit, path, base)
        move = await asyncio.to_thread(follow_head, path, ws.repo, ws.ref, base)
        if move is not None:
            summary.moved_to, summary.head_conflicts = move.head, move.conflicts
            summary.rebased_onto = move.head if move.rebased else None
            base = move.head if move.rebased else base
            summary.notes.append(move.sentence())
            log_event(run_dir, "head_moved", base=move.base, head=move.head, rebased=move.rebased,
                      conflicts=move.conflicts)
        patch = await asyncio.to_thread(prep.export_patch, path, base, run_dir / "greenloop.patch")
        summary.patch = str(run_dir / "greenloop.patch") if patch else None
    if ws.branch:
        summary.branch = ws.branch
        if fixed and await asyncio.to_thread(prep.offer_branch, ws.repo, path, ws.branch):
            summary.notes.append(f"branch {ws.branch} fetched into {ws.repo}")
    summary.report_markdown = str(run_dir / "report.md")
    summary.report_json = str(run_dir / "summary.json")
    await asyncio.to_thread(write_exports, summary, inp.initial, inp.final, run_dir)
    summary.report_html = str(run_dir / "report.html")
    if inp.push and ws.branch:
        await asyncio.to_thread(publish_branch, summary, path, inp.push, ws.branch)
    markdown = render_markdown(summary, results)
    (run_dir / "report.md").write_text(markdown)
    if inp.pull_request and ws.branch:
        pr = await asyncio.to_thread(open_pull_request, path, run_dir, ws.branch, markdown, len(fixed), ws.repo,
                                     summary.pushed)
        summary.pr_markdown, summary.pr_url = pr.markdown, pr.url
        if pr.instead:
            summary.notes.append(f"pull request not opened: {pr.instead}")
    events = read_events(run_dir)  # again: the steps since (a push, a pull request)
    (run_dir / "report.html").write_text(render_html(summary, results, timelines(events), validations(events)))
    (run_dir / "summary.json").write_text(summary_document(summary, results).model_dump_json(indent=2))
    log_event(run_dir, "run_finished", state=summary.state, fixed=summary.fixed, skipped=summary.skipped,
              escalated=summary.escalated, cost_usd=summary.usage.cost_usd)
    return summary


def write_exports(summary: RunSummary, initial: SuiteRun | None, final: SuiteRun | None, run_dir: Path) -> None:
    """The suite before and after as JUnit XML (``junit-before.xml``, ``junit.xml``), for CI systems."""
    if initial is not None and Path(initial.report_path).is_file():
        summary.junit_before = str(write_junit(initial.report_path, "before", run_dir / "junit-before.xml"))
    # Else no suite ran after the first.
    if final is not None and summary.baseline_read and Path(final.report_path).is_file():
        summary.junit_after = str(write_junit(final.report_path, "after", run_dir / "junit.xml"))


def publish_branch(summary: RunSummary, workspace: Path, remote: str, branch: str) -> None:
    """Push the run's branch (when it holds fixes); a failed push is a note, the run's result stands."""
    if not summary.fixed:
        summary.notes.append(f"nothing was fixed: branch {branch} not pushed to {remote}")
        return
    try:
        summary.pushed = f"{push_branch(workspace, remote, branch)} {branch}"
    except GreenloopError as exc:
        summary.notes.append(f"branch not pushed: {exc.message}")


# --- worktrees: one copy of the workspace per test in flight (concurrency > 1) ----------


def _worktree_dir(ws: Workspace, test_id: str) -> Path:
    return Path(ws.run_dir) / "worktrees" / slug(test_id)


@activity.defn
@typed_errors
@on_host
async def create_worktree(inp: WorktreeInput) -> Worktree:
    """A git worktree holding the run workspace's current files, for one test's child.

    Its artifacts (test runs, backups, events) go to its own folder of the run
    directory, so tests in flight never share an artifact folder."""
    ws, folder = inp.workspace, _worktree_dir(inp.workspace, inp.test_id)
    path = folder / "workspace"
    async with heartbeating("creating a worktree"):  # copying ignored dependencies can take a while
        start = await asyncio.to_thread(wt.create, Path(ws.path), path)
    log_event(ws.run_dir, "worktree_ready", test=inp.test_id, path=str(path), start=start)
    return Worktree(test_id=inp.test_id, start=start,
                    workspace=Workspace(path=str(path), run_dir=str(folder), repo=ws.repo, base_commit=start,
                                        host_queue=ws.host_queue))


def merged_baseline(baseline: SuiteRun, after: SuiteRun | None, folder: Path) -> SuiteRun:
    """What validations compare with once a worktree's fix is merged: a test passes
    if it passed before the merge or in the worktree after the fix (each fix was
    validated against the baseline its test started from)."""
    if after is None:
        return baseline
    before, now = load_statuses(baseline.statuses_path), load_statuses(after.statuses_path)
    statuses = {t: Status.PASSED if Status.PASSED in (before.get(t), now.get(t)) else now[t] if t in now else before[t]
                for t in {**before, **now}}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "statuses.json"
    path.write_text(json.dumps({t: s.value for t, s in statuses.items()}))
    counts = Counter(s.value for s in statuses.values())
    return after.as_baseline().model_copy(update={"label": "merged", "statuses_path": str(path),
                                                  "totals": Totals(**counts)})


@activity.defn
@typed_errors
@on_host
async def merge_worktree(inp: MergeInput) -> MergeResult:
    """Merge an accepted fix from its worktree into the run workspace, or say why not.

    A clean three-way merge is applied and its patch kept under ``patches/``
    (a rollback takes it back out); a conflict changes nothing. Safe to retry:
    a merge that was done is not done twice."""
    ws, tree = inp.workspace, inp.worktree
    folder = Path(ws.run_dir) / "patches"
    name = slug(tree.test_id)
    done, pending, patch = folder / f"{name}.json", folder / f"{name}.pending", folder / f"{name}.patch"
    if done.is_file():
        return MergeResult.model_validate_json(done.read_text())
    root = Path(ws.path)
    folder.mkdir(parents=True, exist_ok=True)
    files = await asyncio.to_thread(wt.patch_files, root, pending)
    if files and await asyncio.to_thread(wt.apply_problem, root, pending, reverse=True) is None:
        outcome = wt.MergeOutcome(merged=True, files=files)  # applied before a crash
    else:
        fix = await asyncio.to_thread(wt.fix_commit, Path(tree.workspace.path), tree.start, inp.files)
        await asyncio.to_thread(prep.write_patch, Path(tree.workspace.path), tree.start, fix,
                                folder / f"{name}.fix.patch")
        outcome = await asyncio.to_thread(wt.merge, root, tree.start, fix, pending)
    if not outcome.merged:
        pending.unlink(missing_ok=True)
        log_event(ws.run_dir, "merge_conflict", test=tree.test_id, files=outcome.files, reason=outcome.reason)
        return MergeResult(merged=False, reason=outcome.reason, files=outcome.files)
    os.replace(pending, patch)
    baseline = await asyncio.to_thread(merged_baseline, inp.baseline, inp.suite_after,
                                       Path(ws.run_dir) / "runs" / f"merged-{name}")
    result = MergeResult(merged=True, files=outcome.files, patch=str(patch), baseline=baseline,
                         patch_text=patch.read_text(errors="replace"))
    done.write_text(result.model_dump_json())
    log_event(ws.run_dir, "fix_merged", test=tree.test_id, files=outcome.files, patch=str(patch))
    return result


@activity.defn
@typed_errors
@on_host(worktree=False)
async def remove_worktree(inp: RemoveWorktreeInput) -> None:
    """Remove a test's worktree (its artifacts stay in the run directory); idempotent."""
    await asyncio.to_thread(wt.remove, Path(inp.workspace.path), Path(inp.worktree.workspace.path))
    log_event(inp.workspace.run_dir, "worktree_removed", test=inp.worktree.test_id)


# --- the run moves to another worker: its workspace rebuilt from the history ----------


def rebuild(inp: RebuildInput, run_dir: Path) -> tuple[Workspace, dict[str, str]]:
    """Copy or clone the repository again, check that the starting point is exactly
    the lost one's, and apply every accepted fix in order (edit sets with backups,
    so a rollback by hand still works; merged fixes by their patches)."""
    lost = inp.lost
    for stale in ("backups", "patches", "worktrees"):  # a rebuild on the same disk starts clean
        shutil.rmtree(run_dir / stale, ignore_errors=True)
    path = run_dir / "workspace"
    branch, base = prep.prepare(lost.repo, lost.ref, inp.run_id, path)
    tree = git(path, "rev-parse", f"{base}^{{tree}}")
    if lost.base_tree and tree != lost.base_tree and lost.base_commit and prep.is_git_url(lost.repo) and git(
            path, "rev-parse", "--verify", "-q", f"{lost.base_commit}^{{commit}}", check=False):
        git(path, "checkout", "--quiet", "-B", branch, lost.base_commit)  # the ref moved on: go back to the start
        base = lost.base_commit
        tree = git(path, "rev-parse", f"{base}^{{tree}}")
    if lost.base_tree and tree != lost.base_tree:
        raise GreenloopError(
            f"the repository {lost.repo} changed since the run started (its files are not the run's starting "
            "point any more): the workspace cannot be rebuilt exactly", kind=ErrorKind.VALIDATION_ERROR,
            repo=lost.repo, expected_tree=lost.base_tree, tree=tree)
    store, merged = BackupStore(run_dir, path), dict[str, str]()
    for change in inp.accepted:
        if change.changes is not None:
            apply_changes(store, change.test_id, change.attempt, change.changes)
        elif change.edit_set is not None:
            store.apply(change.test_id, change.attempt, change.edit_set.edits)
        elif change.patch_text is not None:
            patch = run_dir / "patches" / f"{slug(change.test_id)}.patch"
            patch.parent.mkdir(parents=True, exist_ok=True)
            patch.write_text(change.patch_text)
            wt.apply(path, patch)
            merged[change.test_id] = str(patch)
    ws = Workspace(path=str(path), run_dir=str(run_dir), repo=lost.repo, branch=branch, base_commit=base,
                   source_commit=lost.source_commit, host_queue=my_host_queue(), base_tree=tree, ref=lost.ref)
    return ws, merged


@activity.defn
@typed_errors
async def rebuild_workspace(inp: RebuildInput) -> Rebuilt:
    """Rebuild a run's workspace on this worker from what the history holds (the
    repository source and every accepted fix, in order), then run the suite
    there: its report stands in for the lost worker's reports (the remaining
    failures' details and the baseline later validations compare with)."""
    run_dir = _run_dir(inp.run_id, inp.request)
    run_dir.mkdir(parents=True, exist_ok=True)
    reachable(inp.lost.repo)
    async with heartbeating("rebuilding the workspace"):
        ws, merged = await asyncio.to_thread(rebuild, inp, run_dir)
    log_event(run_dir, "workspace_rebuilt", host=host_id(), lost=inp.lost.host_queue, reason=inp.reason,
              fixes=[c.test_id for c in inp.accepted])
    plan = inp.plan
    if plan.environment is not None:  # the lost worker's environment went with it: this worker's own
        environment = await build_environment(SetupInput(workspace=ws, plan=plan, request=inp.request))
        plan = plan.model_copy(update={"environment": environment})
    run = await execute_suite(SuiteInput(workspace=ws, plan=plan, label="rebuilt", sandbox=inp.request.sandbox))
    return Rebuilt(workspace=ws, run=run, merged=merged, plan=plan)
