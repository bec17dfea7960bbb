"""Activities of the validation queue: check a batch of candidate fixes in a
scratch worktree, and accept a validated batch into the run workspace.

A check copies the accepted state (the run workspace's current files) into a
scratch git worktree, applies the candidates' edit sets there and runs (1) the
candidates' own tests in one runner invocation, each one that fails there
again alone, then (2) the whole suite once, compared with the baseline. A
test that passed on the accepted state and fails here is run again with the
same content: one that passes then is flaky, never a regression. The run
workspace itself is never touched by a check, so checks run side by side.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from temporalio import activity

from greenloop import telemetry
from greenloop.activities.errors import typed_errors
from greenloop.activities.host import on_host
from greenloop.activities.testing import _heartbeat, _out_dir, execute_suite, load_report, load_statuses
from greenloop.activities.testing import run_single_test as run_alone
from greenloop.domain.errors import GreenloopError
from greenloop.parsers.models import Status
from greenloop.runner.execute import run_tests
from greenloop.runner.select import selection_command
from greenloop.workflows.models import SingleInput, SuiteInput, SuiteRun, Workspace
from greenloop.workflows.validation_queue import AcceptInput, CheckInput, CheckResult
from greenloop.workspace import worktree as wt
from greenloop.workspace.backups import BackupStore
from greenloop.workspace.events import log_event

PASSING = (Status.PASSED, Status.XPASSED)


def _scratch(inp: CheckInput) -> tuple[Workspace, Path]:
    """The accepted state plus the candidates' edits, in a fresh worktree of the run workspace."""
    folder = Path(inp.workspace.run_dir) / "batches" / inp.label
    shutil.rmtree(folder / "backups", ignore_errors=True)  # a retried check starts over
    path = folder / "workspace"
    wt.create(Path(inp.workspace.path), path)
    store = BackupStore(folder, path)
    for c in inp.candidates:
        store.apply(c.test_id, c.attempt, c.edit_set.edits)
    return inp.workspace.model_copy(update={"path": str(path), "run_dir": str(folder), "branch": None}), path


async def _singles(inp: CheckInput, ws: Workspace) -> tuple[dict[str, str], int]:
    """The candidates' own tests in one runner invocation (where the framework selects
    several at once); each that fails there is run again alone before its fix is judged.
    Returns the tests that still fail (-> why) and how many runs it took."""
    report = load_report(inp.failure_run.report_path)
    ids = [c.test_id for c in inp.candidates]
    tests = [t for t in (report.find(i) for i in ids) if t is not None]
    runs, suspects = 0, ids
    if len(tests) > 1 and not inp.plan.single_test_command:
        try:
            command = selection_command(inp.plan, tests)
        except GreenloopError:
            command = None  # the framework cannot select these together: each alone
        if command is not None:
            run = await run_tests(inp.plan, Path(ws.path), _out_dir(ws, "validate-batch-single"), inp.sandbox,
                                  _heartbeat, command=command)
            telemetry.record_suite_run("validate-batch-single", run.test.duration_s if run.test else 0.0)
            runs += 1
            together = {i: run.report.find(i) for i in ids}
            suspects = [i for i, t in together.items() if t is None or t.status not in PASSING]
    failing: dict[str, str] = {}
    for test_id in suspects:
        alone = await run_alone(SingleInput(workspace=ws, plan=inp.plan, test_id=test_id, failure_run=inp.failure_run,
                                            sandbox=inp.sandbox, label="validate-batch-single"))
        runs += 1
        if not alone.passed:
            failing[test_id] = alone.failure_reason()
    return failing, runs


def _regressed(inp: CheckInput, run: SuiteRun) -> list[str]:
    """Tests that passed on the accepted state and do not here (a fix rolled back by hand: its test is expected to fail)."""
    before, now = load_statuses(inp.baseline.statuses_path), load_statuses(run.statuses_path)
    expected = set(inp.rolled_back)
    return [t for t, s in before.items() if s == Status.PASSED and now.get(t) not in PASSING and t not in expected]


async def _suite(inp: CheckInput, ws: Workspace, label: str) -> SuiteRun:
    return await execute_suite(SuiteInput(workspace=ws, plan=inp.plan, label=label, sandbox=inp.sandbox,
                                          compare_to=inp.baseline))


@activity.defn
@typed_errors
@on_host
async def check_batch(inp: CheckInput) -> CheckResult:
    """Check the accepted state plus ``inp.candidates`` (see the module docstring)."""
    ws, path = await asyncio.to_thread(_scratch, inp)
    result = CheckResult(label=inp.label, ok=False)
    try:
        if inp.singles:
            result.still_failing, result.single_runs = await _singles(inp, ws)
            if result.still_failing:  # those fixes do not work: judged before any suite run
                return result
        suite = await _suite(inp, ws, "validate-batch-suite")
        result.suite_runs = 1
        result.broken = suite.broken_since(inp.baseline, by="the batch", after="the fixes")
        regressions = [] if result.broken else _regressed(inp, suite)
        if regressions:  # the same content again: what passes now was flaky, not broken by a fix
            again = await _suite(inp, ws, "validate-batch-suite-again")
            result.suite_runs += 1
            twice = set(_regressed(inp, again))
            result.flaky = [t for t in regressions if t not in twice]
            regressions = [t for t in regressions if t in twice]
            suite = again if not regressions else suite
        statuses = load_statuses(suite.statuses_path)
        for c in inp.candidates:
            if not result.broken and statuses.get(c.test_id) not in PASSING:
                result.still_failing[c.test_id] = "the test passes alone but fails in the full suite"
        result.regressions, result.regression_count = regressions[:20], len(regressions)
        result.suite = suite
        result.ok = not (result.broken or regressions or result.still_failing)
        return result
    finally:
        await asyncio.to_thread(wt.remove, Path(inp.workspace.path), path)
        log_event(inp.workspace.run_dir, "batch_checked", label=inp.label, ok=result.ok,
                  tests=[c.test_id for c in inp.candidates], regressions=result.regressions,
                  still_failing=sorted(result.still_failing), flaky=result.flaky, broken=result.broken)


@activity.defn
@typed_errors
@on_host
async def accept_batch(inp: AcceptInput) -> list[str]:
    """Apply a validated batch's edit sets to the run workspace, in order, with backups
    (a rollback by hand restores them); a retry after a crash redoes it exactly once."""
    store = BackupStore(Path(inp.workspace.run_dir), Path(inp.workspace.path))
    files: list[str] = []
    for c in inp.candidates:
        files += await asyncio.to_thread(store.apply, c.test_id, c.attempt, c.edit_set.edits)
    log_event(inp.workspace.run_dir, "batch_accepted", tests=[c.test_id for c in inp.candidates], files=files)
    return files
