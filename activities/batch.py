"""Activities of the validation queue: check a batch of candidate fixes in a
scratch worktree, and accept a validated batch into the run workspace.

A check copies the accepted state (the run workspace's current files) into a
scratch git worktree, applies the candidates' edit sets there and runs (1) the
candidates' own tests in one runner invocation, with the tests that run the
candidates' files (test impact, ``runner/impact.py``), each one that fails
there again alone, then (2) the whole suite once, compared with the baseline
(an own test the framework cannot run alone, whose run alone would be the suite's,
is judged by that suite run only).
An impacted test that fails there twice and passes without the fixes
(selected the same way) is a regression found without the suite run; the candidates whose files none of the regressing tests ran are
named (``innocent``), so that a bisection judges them first.
A batch's first check (``singles`` and ``suite``) on a suite that reports each
test (the baseline did), when no other test is known to run the candidates'
files (no impacted test), runs the suite first instead: one runner invocation
in all when the fixes work, since the suite reports the candidates' own tests
anyway and they are judged from it. Only when one of them does not pass there
(or the build broke) are they run as in (1), together and each that fails again
alone, so that a fix that does not work is told apart from one that fails only
in the full suite, and its next attempt gets the failure of its test alone. The
quick check stays first where it tells more than the suite for less: with
impacted tests (a regression there is found, and its fix named, without a
suite run), in bisection steps (their fixes' own tests already passed; only the
impacted tests run there) and for an attempt's candidates checked side by side
(no suite). The suite run carries the scratch's
content digest (``SuiteRun.tree``), so that a later run of the same files can
reuse it (the final verdict, ``activities/testing.py``). A
test that passed on the accepted state and fails here is run again with the
same content: one that passes then is flaky, never a regression. The run
workspace itself is never touched by a check, so checks run side by side.
A check without the suite (``suite=False``) is how an attempt's several
candidate fixes (``--candidates K``) have their own test checked side by side
before the smallest passing one is validated whole.
"""

from __future__ import annotations

import asyncio
import fcntl
import shutil
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, Field
from temporalio import activity

from .. import telemetry
from ..domain.candidates import Candidate
from ..domain.errors import GreenloopError
from ..domain.workspace import Workspace
from ..parsers.containers import outcome
from ..parsers.models import Status
from ..runner import impact as impact_map
from ..runner.execute import run_tests
from ..runner.impact import ImpactMap
from ..runner.plan import SuitePlan
from ..runner.runs import SingleRun, SuiteRun
from ..runner.select import selection_command, tests_command
from ..sandbox.models import SandboxSettings
from ..workspace import worktree as wt
from ..workspace.backups import BackupStore
from ..workspace.changes import Bases, apply_changes, rebase
from ..workspace.events import log_event
from .errors import typed_errors
from .host import on_host
from .testing import SingleInput, SuiteInput, execute_suite, heartbeat_message, load_report, load_statuses, out_dir
from .testing import run_single_test as run_alone


class CheckInput(BaseModel):
    """One content to check: the accepted state (the run workspace's files) plus ``candidates``."""

    workspace: Workspace  # the run's workspace: the accepted state
    plan: SuitePlan
    baseline: SuiteRun  # what passed on the accepted state
    failure_run: SuiteRun  # where the candidates' tests come from (their files, for selectors)
    candidates: list[Candidate]
    sandbox: SandboxSettings
    label: str  # names the scratch worktree and the artifacts: "batch-<n>-<k>"
    # A speculative check: the batch in flight these candidates are checked on top of (applied in
    # the scratch first, unless it was accepted into the run workspace meanwhile).
    ahead: list[Candidate] = Field(default_factory=list[Candidate])
    singles: bool = True  # check the candidates' own tests first (one runner invocation)
    suite: bool = True  # then the whole suite; False: the own tests only (an attempt's candidates, side by side)
    # Tests whose fix was rolled back by hand since the baseline was taken: they are expected to fail.
    rolled_back: list[str] = Field(default_factory=list)
    impact: str | None = None  # the run's test-impact map (``ImpactResult.path``), when there is one


class CheckResult(BaseModel):
    """How one content did. ``ok``: every candidate's test passes and nothing that
    passed on the accepted state fails (a failure that passes on a re-run of the
    same content is flaky, not a regression)."""

    label: str
    ok: bool
    # A candidate's test that fails (alone, or in the full suite) -> why: its own fix does not work.
    still_failing: dict[str, str] = Field(default_factory=dict)
    # Of those, each that failed alone: that run (the message and traceback the next attempt analyses).
    failures: dict[str, SingleRun] = Field(default_factory=dict)
    regressions: list[str] = Field(default_factory=list)  # passed on the accepted state, fail here (the first 20)
    regression_count: int = 0
    broken: str | None = None  # the content breaks the build, or the suite cannot be read
    flaky: list[str] = Field(default_factory=list)  # failed, then passed on the re-run of the same content
    suite: SuiteRun | None = None  # the clean full-suite run (the next baseline when accepted)
    suite_runs: int = 0
    single_runs: int = 0
    # Test impact: candidates whose files none of the regressing tests ran (judged first on a failure).
    innocent: list[str] = Field(default_factory=list)
    impacted: int = 0  # tests the quick check ran because the candidates' files are theirs

    def why(self) -> str:
        """The regression, as a failed attempt's reason (what the next attempt is told)."""
        if self.broken:
            return self.broken
        shown = ", ".join(self.regressions[:5])
        more = f" and {self.regression_count - 5} more" if self.regression_count > 5 else ""
        return f"{self.regression_count} test(s) that passed now fail: {shown}{more}"


class AcceptInput(BaseModel):
    workspace: Workspace
    candidates: list[Candidate]


class RebaseInput(BaseModel):
    """A batch's candidates, to be put on the accepted state (the run workspace's files)."""

    workspace: Workspace
    candidates: list[Candidate]


class RebaseResult(BaseModel):
    """The candidates that apply to the accepted state (rebased where a file moved), in
    order, and those that conflict with it (test -> the conflict, shown to the model)."""

    candidates: list[Candidate] = Field(default_factory=list[Candidate])
    rebased: list[str] = Field(default_factory=list)  # tests whose candidate was merged onto moved files
    conflicts: dict[str, str] = Field(default_factory=dict)


PASSING = (Status.PASSED, Status.XPASSED)


@contextmanager
def _accepting(run_dir: str) -> Generator[None]:
    """Held while the run workspace's accepted state is copied or changed: a speculative
    check's scratch sees a batch in flight either wholly accepted or not at all."""
    lock = Path(run_dir) / "accept.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _scratch(inp: CheckInput) -> tuple[Workspace, Path]:
    """The accepted state plus the candidates' edits (on top of ``inp.ahead``'s, those not
    accepted yet), in a fresh worktree of the run workspace."""
    folder = Path(inp.workspace.run_dir) / "batches" / inp.label
    shutil.rmtree(folder / "backups", ignore_errors=True)  # a retried check starts over
    path = folder / "workspace"
    with _accepting(inp.workspace.run_dir):
        wt.create(Path(inp.workspace.path), path)
        accepted = BackupStore(Path(inp.workspace.run_dir), Path(inp.workspace.path))
        ahead = [c for c in inp.ahead if not accepted.has(c.test_id, c.attempt)]
    store = BackupStore(folder, path)
    for c in ahead + inp.candidates:
        apply_changes(store, c.test_id, c.attempt, c.changes)
    return inp.workspace.model_copy(update={"path": str(path), "run_dir": str(folder), "branch": None}), path


# Most tests a quick check runs besides the fixes' own because the fixes' files are theirs.
MOST_IMPACTED = 200


def _impacted(inp: CheckInput, found: ImpactMap | None) -> list[str]:
    """Tests that passed on the accepted state and ran the candidates' files (capped; none
    without a map, or when a candidate's file is one no test ran)."""
    if found is None:
        return []
    tests: set[str] = set()
    for c in inp.candidates:
        mine = found.impacted(c.files)
        if mine is None:
            return []
        tests |= mine
    before = load_statuses(inp.baseline.statuses_path)
    own = {c.test_id for c in inp.candidates}
    return sorted(t for t in tests if before.get(t) == Status.PASSED and t not in own)[:MOST_IMPACTED]


async def _together(inp: CheckInput, ws: Workspace, ids: list[str], at_least: int = 2) -> dict[str, bool] | None:
    """``ids`` in one runner invocation: whether each passed; None when the framework
    cannot select them together (or a repository command runs one test at a time)."""
    report = load_report(inp.failure_run.report_path)
    tests = [t for t in (report.find(i) for i in ids) if t is not None]
    if len(tests) < at_least or inp.plan.single_test_command:
        return None
    try:
        command = selection_command(inp.plan, tests)
    except GreenloopError:
        return None  # the framework cannot select these together: each alone
    with telemetry.span("greenloop.sandbox.run", label="validate-batch-single", backend=inp.sandbox.backend):
        run = await run_tests(inp.plan, Path(ws.path), out_dir(ws, "validate-batch-single"), inp.sandbox,
                              heartbeat_message, command=command)
    telemetry.record_suite_run("validate-batch-single", run.test.duration_s if run.test else 0.0)
    return {t.id: outcome(t, run.report.tests).passed for t in tests}


async def _alone(inp: CheckInput, ws: Workspace, test_id: str) -> SingleRun:
    # A candidate's own test is labelled with its attempt, as in each mode (the report's validation
    # output and the sandbox run's span name the attempt).
    attempt = next((c.attempt for c in inp.candidates if c.test_id == test_id), None)
    return await run_alone(SingleInput(workspace=ws, plan=inp.plan, test_id=test_id, failure_run=inp.failure_run,
                                       sandbox=inp.sandbox,
                                       label="validate-batch-single" if attempt is None else f"validate-{attempt}-single"))


def _suite_only(inp: CheckInput) -> set[str]:
    """The candidates' own tests the framework cannot run without the rest of the suite
    (unittest's generated tests printing one name): their run alone would be the suite's."""
    failing = load_report(inp.failure_run.report_path)
    entries = [e for e in (failing.find(c.test_id) for c in inp.candidates) if e is not None]
    return {e.id for e in entries if tests_command(inp.plan, [e]) == inp.plan.test_command}


async def _quick(inp: CheckInput, ws: Workspace, impacted: list[str], result: CheckResult,
                 suite_only: set[str]) -> list[str]:
    """The quick check before the suite: the candidates' own tests (``inp.singles``) and
    the ``impacted`` ones in one runner invocation where the framework selects several
    at once; each that fails there is run again alone before anything is judged. Fills
    ``result.still_failing`` (own tests) and returns the impacted tests that fail alone too.
    An own test in ``suite_only`` is left to the suite run, which judges it anyway."""
    own = [c.test_id for c in inp.candidates if c.test_id not in suite_only] if inp.singles else []
    together = await _together(inp, ws, own + impacted) if own or impacted else None
    result.single_runs += together is not None
    own_suspects = own if together is None else [i for i in own if not together[i]]
    for test_id in own_suspects:
        alone = await _alone(inp, ws, test_id)
        result.single_runs += 1
        if not alone.passed:
            result.still_failing[test_id] = alone.failure_reason()
            result.failures[test_id] = alone
    suspects = [] if together is None else [i for i in impacted if not together[i]]
    return await _broken_by_the_fixes(inp, ws, suspects, result) if suspects and not result.still_failing else []


async def _broken_by_the_fixes(inp: CheckInput, ws: Workspace, suspects: list[str], result: CheckResult) -> list[str]:
    """Of the impacted tests that failed in the quick check, those that fail again with the
    fixes and pass without them, selected the same way (a test that fails when selected
    on its own, or only once, is left to the full-suite run)."""
    again = await _together(inp, ws, suspects, at_least=1)
    result.single_runs += again is not None
    still = [i for i in suspects if again is not None and not again[i]]
    if not still:
        return []
    folder = Path(ws.run_dir) / "accepted"
    await asyncio.to_thread(wt.create, Path(inp.workspace.path), folder)  # the accepted state, without the fixes
    try:
        without = await _together(inp, ws.model_copy(update={"path": str(folder)}), still, at_least=1)
    finally:
        await asyncio.to_thread(wt.remove, Path(inp.workspace.path), folder)
    result.single_runs += without is not None
    return [i for i in still if without is not None and without[i]]


def _regressions(result: CheckResult, regressions: list[str], inp: CheckInput, found: ImpactMap | None) -> None:
    """Record the regressions, and the candidates whose files none of them ran (test impact)."""
    result.regressions, result.regression_count = regressions[:20], len(regressions)
    if found is not None and regressions:
        known = {c.test_id: found.impacted(c.files) for c in inp.candidates}
        result.innocent = [t for t, tests in known.items() if tests is not None and not tests & set(regressions)]


def _regressed(inp: CheckInput, run: SuiteRun) -> list[str]:
    """Tests that passed on the accepted state and do not here (a fix rolled back by hand: its test is expected to fail)."""
    before, now = load_statuses(inp.baseline.statuses_path), load_statuses(run.statuses_path)
    expected = set(inp.rolled_back)
    return [t for t, s in before.items() if s == Status.PASSED and now.get(t) not in PASSING and t not in expected]


async def _suite(inp: CheckInput, ws: Workspace, label: str, tree: str) -> SuiteRun:
    run = await execute_suite(SuiteInput(workspace=ws, plan=inp.plan, label=label, sandbox=inp.sandbox,
                                         compare_to=inp.baseline))
    return run.model_copy(update={"tree": tree})


def _from_the_suite(inp: CheckInput) -> bool:
    """Whether the candidates' own tests are judged from the suite run (run first): a batch's
    first check, on a suite whose runs report each test."""
    return inp.singles and inp.suite and inp.baseline.per_test and not inp.baseline.unreadable


def _own_not_passing(inp: CheckInput, suite: SuiteRun) -> list[str]:
    """The candidates' own tests that do not pass in the full-suite run (a file or package that
    failed to load is judged by the tests it holds once it loads)."""
    failing, now = load_report(inp.failure_run.report_path), load_report(suite.report_path).tests
    return [c.test_id for c in inp.candidates
            if (entry := failing.find(c.test_id)) is None or not outcome(entry, now).passed]


def _own_pass_in(inp: CheckInput, suite: SuiteRun) -> bool:
    """Whether the suite run reports every candidate's own test as passing (and nothing broke)."""
    return not (suite.build_error or suite.unreadable or not suite.per_test or _own_not_passing(inp, suite))


def _own_tests_in_the_suite(inp: CheckInput, suite: SuiteRun, result: CheckResult, suite_only: set[str]) -> None:
    """Each candidate's test that does not pass in the full-suite run, with why."""
    for test_id in _own_not_passing(inp, suite):
        result.still_failing[test_id] = "the test still fails in the full suite" if test_id in suite_only \
            else "the test passes alone but fails in the full suite"


@activity.defn
@typed_errors
@on_host
async def check_batch(inp: CheckInput) -> CheckResult:
    """Check the accepted state plus ``inp.candidates`` (see the module docstring)."""
    ws, path = await asyncio.to_thread(_scratch, inp)
    result = CheckResult(label=inp.label, ok=False)
    try:
        found = impact_map.load(inp.impact)
        tree = await asyncio.to_thread(wt.content_tree, path)
        impacted = _impacted(inp, found)
        suite_only = await asyncio.to_thread(_suite_only, inp) if inp.suite else set[str]()
        if _from_the_suite(inp) and not impacted:
            suite = await _suite(inp, ws, "validate-batch-suite", tree)
            result.suite_runs = 1
            if not _own_pass_in(inp, suite):  # judged as without the suite: together, each that fails alone
                await _quick(inp, ws, [], result, suite_only)
                if result.still_failing:
                    return result
            return await _judged_with(inp, ws, found, result, suite, tree, suite_only)
        result.impacted = len(impacted)
        regressed = await _quick(inp, ws, impacted, result, suite_only)
        if result.still_failing:  # those fixes do not work: judged before any suite run
            return result
        if regressed:  # a test that runs the fixes' files fails with them, passes without: no suite run needed
            _regressions(result, regressed, inp, found)
            return result
        if not inp.suite:  # the own tests were all that was asked
            result.ok = True
            return result
        suite = await _suite(inp, ws, "validate-batch-suite", tree)
        result.suite_runs = 1
        return await _judged_with(inp, ws, found, result, suite, tree, suite_only)
    finally:
        await asyncio.to_thread(wt.remove, Path(inp.workspace.path), path)
        log_event(inp.workspace.run_dir, "batch_checked", label=inp.label, ok=result.ok,
                  tests=[c.test_id for c in inp.candidates], ahead=[c.test_id for c in inp.ahead], regressions=result.regressions,
                  still_failing=sorted(result.still_failing), flaky=result.flaky, broken=result.broken,
                  suite_runs=result.suite_runs, single_runs=result.single_runs, impacted=result.impacted,
                  innocent=result.innocent)


async def _judged_with(inp: CheckInput, ws: Workspace, found: ImpactMap | None, result: CheckResult,
                       suite: SuiteRun, tree: str, suite_only: set[str]) -> CheckResult:
    """The check's verdict from its full-suite run: the build, the regressions (each run
    again with the same content: one that passes then is flaky), the candidates' own tests."""
    one = len(inp.candidates) == 1
    result.broken = suite.broken_since(inp.baseline, by="the fix" if one else "the batch",
                                       after="the fix" if one else "the fixes")
    regressions = [] if result.broken else _regressed(inp, suite)
    if regressions:  # the same content again: what passes now was flaky, not broken by a fix
        again = await _suite(inp, ws, "validate-batch-suite-again", tree)
        result.suite_runs += 1
        twice = set(_regressed(inp, again))
        result.flaky = [t for t in regressions if t not in twice]
        regressions = [t for t in regressions if t in twice]
        suite = again if not regressions else suite
    if not result.broken:
        _own_tests_in_the_suite(inp, suite, result, suite_only)
    _regressions(result, regressions, inp, found)
    result.suite = suite
    result.ok = not (result.broken or regressions or result.still_failing)
    return result


def _apply_accepted(inp: AcceptInput) -> list[str]:
    store = BackupStore(Path(inp.workspace.run_dir), Path(inp.workspace.path))
    files: list[str] = []
    with _accepting(inp.workspace.run_dir):
        for c in inp.candidates:
            files += apply_changes(store, c.test_id, c.attempt, c.changes)
    return files


@activity.defn
@typed_errors
@on_host
async def accept_batch(inp: AcceptInput) -> list[str]:
    """Apply a validated batch's edit sets to the run workspace, in order, with backups
    (a rollback by hand restores them); a retry after a crash redoes it exactly once."""
    files = await asyncio.to_thread(_apply_accepted, inp)
    log_event(inp.workspace.run_dir, "batch_accepted", tests=[c.test_id for c in inp.candidates], files=files)
    return files


@activity.defn
@typed_errors
@on_host
async def rebase_batch(inp: RebaseInput) -> RebaseResult:
    """Put each candidate on the accepted state: a candidate written on files an accepted fix
    changed since is rebased by a three-way merge of each such file (base: the version it was
    written on); one whose merge conflicts is left out, with the conflict."""
    root, bases, result = Path(inp.workspace.path), Bases(Path(inp.workspace.run_dir)), RebaseResult()
    for c in inp.candidates:
        rebased = [await asyncio.to_thread(rebase, root, bases, change) for change in c.changes]
        conflicts = [r.conflict for r in rebased if r.conflict]
        if conflicts:
            result.conflicts[c.test_id] = "\n".join(conflicts)
            continue
        result.candidates.append(c.model_copy(update={"changes": [r.change for r in rebased if r.change]}))
        if any(r.moved for r in rebased):
            result.rebased.append(c.test_id)
    if result.rebased or result.conflicts:
        log_event(inp.workspace.run_dir, "batch_rebased", rebased=result.rebased, conflicts=sorted(result.conflicts))
    return result
