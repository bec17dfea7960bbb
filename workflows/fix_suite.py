"""``FixSuiteWorkflow``: a whole run, from a repository with failing tests to
a report and a branch/patch.

1. prepare a worker-local workspace and plan how to test it;
2. run the suite; re-run it once when something fails, to tell flaky tests
   (reported, never "fixed") from real failures;
3. order the real failures root-cause groups first, and drive each through
   a ``FixOneTestWorkflow`` child, checking the run's time and cost budgets
   before each test; a fix that also fixes others spares them. The driver
   of the run's validation mode does it (``workflows/driver.py``): each fix
   validated alone (``EachDriver``) or in batches (``QueueDriver``);
4. run the whole suite at the end; when it shows failing tests the first
   run could not (a module that did not load hid them, and its fix made it
   load), drive those in another round, at most ``MOST_ROUNDS`` in all;
   then write the report, the patch and the branch.

The run is ``completed`` only when that last suite run was read; a suite
that timed out or could not be read (no tests found, a crash before any
result, an exit code its results contradict) ends the run with that outcome
and the reason (``workflows.outcome``). When the first suite run is not
read the run stops there: with no known state, nothing can be fixed.

With ``concurrency`` N > 1 (and a git workspace) up to N children run at
once, each in its own git worktree started from the run workspace's current
files; an accepted fix is merged back with a three-way merge. A fix that
does not merge cleanly is not applied: its test is queued again, once, and
fixed in the run workspace itself after the tests in flight.

Long suites continue-as-new before the history grows large, carrying only
where the run is (``SuiteProgress``), and only with no child in flight;
per-test results go to the run directory as they finish. People steer the
run with updates or signals of the same names (workflows/control.py reads what
they type): ``abort`` (cancels cleanly: the tests in flight are rolled
back, nothing of theirs is merged) and ``rollback`` (undo a fixed test's
edits by hand).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from ..activities import analysis as analysis_acts
    from ..activities import edits as edit_acts
    from ..activities import environment as environment_acts
    from ..activities import testing as testing_acts
    from ..activities import workspace as workspace_acts
    from ..activities.analysis import SuiteAnalysis, SuiteAnalysisInput
    from ..activities.edits import RollbackInput
    from ..activities.environment import SetupInput
    from ..activities.testing import PlanInput, SuiteInput
    from ..activities.workspace import FinalizeInput, PrepareInput, RebuildInput
    from ..domain.errors import ErrorKind, Refused
    from ..domain.states import FixState, RunOutcome
    from ..domain.workspace import Workspace
    from ..reports.record import FixStatusView, RunSummary
    from ..run_request import FixRequest, ProjectRequest
    from ..runner.runs import SuiteRun
    from .control import ABORT_HINT, ANSWER_HINT, ROLLBACK_HINT, json_object, parse_reason, parse_test_id, shown
    from .driver import Driver, child_id
    from .each_driver import EachDriver
    from .fix_one_test import FixOneTestWorkflow
    from .host import HostLost, host_activity
    from .merge_queue import QueueDriver
    from .models import Continued, SuiteProgress, WorkspaceMoved
    from .options import quick_options, setup_options, test_run_options
    from .outcome import details as outcome_details
    from .outcome import suite_outcome
    from .payloads import StateTooLarge, guarded
    from .run_state import RunState
    from .search import upsert_run, write_final_details
    from .validation_queue import CANDIDATE_SIGNAL, Candidate
    from .waiting import TEST_STATE_SIGNAL, waiting_details

__all__ = ["FixSuiteWorkflow", "child_id"]

DONE_PHASES = ("finalizing", "finished")
# Rounds of driving: the first suite run's failures, then failures that came to light
# once what hid them loads (a syntax error in one module hides every test of a pytest
# session; a fixed one may reveal another).
MOST_ROUNDS = 3


def _queued(run_id: str, tests: list[str], analysis: SuiteAnalysis) -> tuple[list[FixStatusView], dict[str, str]]:
    """The views of ``tests`` about to be driven (PENDING), and which of them follow their
    root-cause group's root (one bug, one conversation)."""
    views = [FixStatusView(test_id=t, state=FixState.PENDING, workflow_id=child_id(run_id, t)) for t in tests]
    chosen = set(tests)
    followers = {t: g.root_test for g in analysis.groups for t in g.tests if t != g.root_test and t in chosen}
    return views, followers

R = TypeVar("R")


class RunStopped(Exception):
    """The run cannot go on before its first suite run (its summary says why)."""

    def __init__(self, workspace: Workspace, summary: RunSummary) -> None:
        super().__init__(summary.reason)
        self.workspace, self.summary = workspace, summary


# The errors of planning a suite that more tries cannot help: a setting must be given.
UNPLANNABLE = {ErrorKind.LANGUAGE_DETECTION_FAILED.value, ErrorKind.VALIDATION_ERROR.value}


def setup_failure(error: ApplicationError) -> str:
    """The setup's error message and the end of its log, as the run's reason."""
    context = json_object(error.details[0]) if error.details else None
    tail = str((context or {}).get("log_tail", "")).strip()
    return f"{error.message}\n{tail}" if tail else error.message


@workflow.defn
class FixSuiteWorkflow:
    def __init__(self) -> None:
        self._run = RunState()
        self._driver: Driver | None = None  # made once the run has its queue of failures
        self._phase = "starting"
        self._ignored: list[str] = []  # signals the run could not take, and why
        self._base_commit: str | None = None  # named from the start (the summary's once the run started)

    # --- what people see ---------------------------------------------------------

    @workflow.query
    def status(self) -> list[FixStatusView]:
        """Every failing test's last known state (a running test: query its child)."""
        return list(self._run.views.values())

    @workflow.query
    def phase(self) -> str:
        return self._phase

    @workflow.query
    def base_commit(self) -> str | None:
        """The user's commit the run started from, the one its fixes apply to (None: not known yet,
        the workspace is being prepared, or the repository had no commit)."""
        if self._run.started:
            return self._run.progress.summary.base_commit
        return self._base_commit

    @workflow.query
    def summary(self) -> RunSummary | None:
        return self._run.progress.summary if self._run.started else None

    def set_phase(self, phase: str) -> None:
        self._phase = phase
        counts: dict[str, int] = {}
        for v in self._run.views.values():
            counts[v.state.value] = counts.get(v.state.value, 0) + 1
        states = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        waiting = waiting_details(list(self._run.views.values()))
        steer = "" if phase in DONE_PHASES else (
            (f"\n\n{waiting}" if waiting else
             f"\n\nan ESCALATED test is answered in its own workflow, `{workflow.info().workflow_id}/test/` "
             f"+ the test id: {ANSWER_HINT}")
            + f"\n\nto undo a fixed test: {ROLLBACK_HINT}\n\nto stop the run: {ABORT_HINT}")
        base = self.base_commit()
        workflow.set_current_details(
            f"**{phase}**" + (f"\n\nbase commit: `{base}` (the fixes apply to it)" if base else "")
            + (f"\n\ntests: {states}" if states else "") + steer
            + "".join(f"\n\nignored: {line}" for line in self._ignored[-3:]))

    def _ignore(self, line: str) -> None:
        """A signal the run cannot take: recorded, shown in the details, and ignored."""
        self._ignored.append(line)
        if self._run.started:
            self._run.progress.summary.notes.append(line)
        self.set_phase(self._phase)

    # --- what people do ------------------------------------------------------------

    @workflow.update
    async def abort(self, reason: object = "") -> str:
        """Stop the run: the tests in flight are cancelled and their edits rolled back
        (``reason``: a string, ``{"reason": "..."}`` or nothing)."""
        self._run.request_abort(parse_reason(reason))
        await workflow.wait_condition(lambda: self._phase in DONE_PHASES)
        return self._phase

    @abort.validator
    def _validate_abort(self, reason: object = "") -> None:
        parse_reason(reason)
        if self._phase in DONE_PHASES:
            raise Refused(f"the run is already {self._phase}")

    @workflow.signal(name="abort")
    def abort_signal(self, reason: object = "") -> None:
        """``abort`` as a signal; one the run cannot take is recorded and ignored."""
        try:
            parsed = parse_reason(reason)
        except ValueError as exc:
            return self._ignore(f"signal abort ignored: {exc}")
        if self._phase in DONE_PHASES:
            return self._ignore(f"signal abort ignored: the run is already {self._phase}")
        self._run.request_abort(parsed)

    @workflow.signal(name="rollback")
    def rollback_signal(self, test_id: object) -> None:
        """``rollback`` as a signal; one the run cannot take is recorded and ignored."""
        try:
            parsed = parse_test_id(test_id)
        except ValueError as exc:
            return self._ignore(f"signal rollback ignored: {exc}")
        refused = self._rollback_refusal(parsed)
        if refused:
            return self._ignore(f"signal rollback {shown(test_id)} ignored: {refused}")
        self._run.rollback_queue.append(parsed)

    def _rollback_refusal(self, test_id: str) -> str:
        """Why ``test_id`` cannot be rolled back now ("" when it can)."""
        if self._phase in DONE_PHASES:
            return "the run is finished; revert the commit on its branch instead"
        if not self._run.started or test_id not in self._run.progress.applied:
            return f"{test_id} has no applied fix to roll back"
        if test_id in self._run.rollback_queue:
            return f"a rollback of {test_id} is already queued"
        return ""

    @workflow.update
    async def rollback(self, test_id: object) -> str:
        """Undo a fixed test's edits by hand (between tests, never mid-attempt);
        ``test_id``: the test id, or ``{"test_id": "..."}``."""
        test_id = parse_test_id(test_id)
        self._run.rolled_back.discard(test_id)
        self._run.rollback_queue.append(test_id)
        await workflow.wait_condition(lambda: test_id in self._run.rolled_back)
        refused = self._run.rollback_refused.pop(test_id, None)
        return f"could not roll back {test_id}: {refused}" if refused else f"rolled back {test_id}"

    @rollback.validator
    def _validate_rollback(self, test_id: object) -> None:
        refused = self._rollback_refusal(parse_test_id(test_id))
        if refused:
            raise Refused(refused)

    @workflow.signal(name=TEST_STATE_SIGNAL)
    def test_state(self, told: FixStatusView) -> None:
        """A test's child in flight tells the state it entered (``workflows/waiting.py``)."""
        view = self._run.views.get(told.test_id)
        if view is None or told.test_id not in self._run.children or view.workflow_id != told.workflow_id:
            return  # not this run's child in flight (an earlier child of the test, moved or retried)
        view.state, view.attempt, view.last_verdict, view.waiting = (
            told.state, told.attempt, told.last_verdict, told.waiting)
        self.set_phase(self._phase)

    @workflow.signal(name=CANDIDATE_SIGNAL)
    def candidate(self, candidate: Candidate) -> None:
        """Validation queue: a test's child sends its proposed fix (``workflows/merge_queue.py``)."""
        if isinstance(self._driver, QueueDriver):
            self._driver.take(candidate)

    # --- the run ---------------------------------------------------------------------

    @workflow.run
    async def run(self, start: FixRequest | Continued) -> RunSummary:
        request, resumed = (start.request, start.progress) if isinstance(start, Continued) else (start, None)
        self._run.request = request
        try:  # set up, run the suite, order its failures (a continued run carries them)
            progress = resumed or await self._start_anywhere(request)
        except RunStopped as stopped:  # before the first suite run: nothing to fix or compare
            return await self._stop(request, stopped.workspace, stopped.summary)
        self._run.progress = progress
        self._driver = QueueDriver(self._run, self) if request.validation == "queue" else EachDriver(self._run, self)
        while True:
            await self._drive(self._driver)
            await self.process_rollbacks()
            final = await self._final_run(request, progress)
            if not await self._revealed(request, progress, final):
                break
        summary = await self._finish(request, progress, final)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return summary

    async def _drive(self, driver: Driver) -> None:
        """Drive the tests left with the run's driver (once aborted, each is settled as
        aborted); continue as new after ``tests_per_run`` tests, or when the server suggests it."""
        run, request, progress = self._run, self._run.request, self._run.progress
        processed = 0
        while progress.remaining:
            await self.process_rollbacks()
            if run.abort_requested:
                run.settled(progress.remaining.pop(0))
                processed += 1
            else:
                processed += await driver.drive(request.tests_per_run - processed)
            if progress.remaining and (processed >= request.tests_per_run
                                       or workflow.info().is_continue_as_new_suggested()):
                progress.views = list(run.views.values())
                await workflow.wait_condition(workflow.all_handlers_finished)
                try:
                    state = guarded("the state the run continues as new with",
                                    Continued(request=request, progress=progress))
                except StateTooLarge as too_large:
                    return self._stop_growing(too_large)
                workflow.continue_as_new(state)

    def _stop_growing(self, too_large: StateTooLarge) -> None:
        """The run cannot carry its state into a new run: it drives no more tests and
        ends here, with its report and patch, the tests left skipped with the reason."""
        run, progress = self._run, self._run.progress
        reason = f"{too_large.message}; {len(progress.remaining)} test(s) were left undriven"
        for test_id in progress.remaining:
            run.views[test_id].state = FixState.SKIPPED
            run.views[test_id].history.append("not driven: the run's state grew too large to go on")
            progress.summary.skipped.append(test_id)
        progress.remaining.clear()
        progress.summary.notes.append(reason)
        run.stop_reason = reason

    async def _start_anywhere(self, request: FixRequest) -> SuiteProgress:
        """Prepare and plan the run; when the worker that prepared it is lost before
        the run's queue of failures exists, start over on another worker."""
        lost_notes: list[str] = []
        while True:
            try:
                progress = await self._start(request)
            except HostLost as lost:
                if len(lost_notes) >= request.max_rebuilds:
                    raise
                lost_notes.append(f"{lost.message}; the run started over on another worker")
                continue
            progress.summary.notes[:0] = lost_notes
            progress.rebuilds = len(lost_notes)
            return progress

    async def _start(self, request: FixRequest) -> SuiteProgress:
        run_id = workflow.info().workflow_id
        summary = RunSummary(run_id=run_id, repo=request.repo)
        upsert_run(request.repo, "PREPARING", 0)
        self.set_phase("preparing the workspace")
        ws = await workflow.execute_activity(
            workspace_acts.prepare_workspace, PrepareInput(run_id=run_id, request=ProjectRequest.of(request)),
            **setup_options(request.heartbeat_timeout_s))
        summary.base_commit = self._base_commit = ws.source_commit
        try:
            plan = await host_activity(
                testing_acts.plan_tests, PlanInput(workspace=ws, request=ProjectRequest.of(request)), ws, request,
                quick_options(request.heartbeat_timeout_s))
        except ActivityError as err:
            if not (isinstance(err.cause, ApplicationError) and err.cause.type in UNPLANNABLE):
                raise
            # Nobody can tell how to run this suite (its language, its framework): the outcome says
            # which setting to give, instead of a failed run.
            summary.state = RunOutcome.SUITE_UNREADABLE
            summary.reason = (f"cannot tell how to test this project: {err.cause.message} "
                              "Give its language (and test command) in greenloop.toml or on the command line.")
            summary.baseline_read = False
            raise RunStopped(ws, summary) from err
        summary.framework = plan.framework
        run_opts = test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s)

        self.set_phase("setting up the environment")
        try:
            environment = await host_activity(
                environment_acts.set_up_environment, SetupInput(workspace=ws, plan=plan, request=ProjectRequest.of(request)), ws,
                request, test_run_options(request.sandbox.setup_timeout_s, request.heartbeat_timeout_s))
        except ActivityError as err:
            if not (isinstance(err.cause, ApplicationError) and err.cause.type == ErrorKind.SETUP_FAILED.value):
                raise
            # The suite cannot run: the outcome says why, with the end of the setup's log.
            summary.state, summary.reason = RunOutcome.SETUP_FAILED, setup_failure(err.cause)
            summary.baseline_read = False
            raise RunStopped(ws, summary) from err
        plan = plan.model_copy(update={"environment": environment})  # every test run uses it
        summary.notes.append(f"environment: {environment.reason}")

        self.set_phase(f"running the suite: {plan.test_command} ({plan.framework}: {plan.reason})")
        summary.notes.append(f"tests ran with `{plan.test_command}` ({plan.framework}): {plan.reason}")
        initial = await host_activity(
            testing_acts.run_suite, SuiteInput(workspace=ws, plan=plan, label="initial", sandbox=request.sandbox),
            ws, request, run_opts)
        summary.initial, summary.caveats, summary.output_cut = initial.totals, initial.caveats, initial.output_cut
        if stop := suite_outcome(initial):
            # The suite's state is unknown: nothing can be judged against it, so the run stops here.
            summary.state, summary.reason = stop
            summary.baseline_read = False
            summary.notes.append("the first suite run was not read: the run stopped before fixing anything")
            return SuiteProgress(workspace=ws, plan=plan, initial=initial, baseline=initial.as_baseline(),
                                 remaining=[], views=[], summary=summary,
                                 deadline_unix=workflow.now().timestamp() + request.run_budget_s)
        upsert_run(request.repo, "RUNNING", initial.totals.problems)
        recheck = None
        if initial.totals.problems:
            self.set_phase("re-running to find flaky tests")
            # In queue mode the re-run also records which tests run which files (test impact).
            mapping = request.validation == "queue" and request.test_impact
            recheck = await host_activity(
                testing_acts.run_suite,
                SuiteInput(workspace=ws, plan=plan, label="flaky-check", sandbox=request.sandbox, impact=mapping),
                ws, request, run_opts)
        analysis = await host_activity(
            analysis_acts.analyze_suite,
            SuiteAnalysisInput(workspace=ws, run=initial, select=request.select, exclude=request.exclude,
                               recheck=recheck),
            ws, request, quick_options(request.heartbeat_timeout_s))
        failing, summary.flaky = analysis.order, analysis.flaky
        if failing:
            summary.notes.append(f"root cause: {analysis.root_cause}")
        views, followers = _queued(run_id, failing, analysis)
        if recheck is not None and recheck.impact:
            summary.notes.append("test impact: which tests run which files recorded in the flaky-check run")
        return SuiteProgress(workspace=ws, plan=plan, initial=initial, baseline=initial.as_baseline(), remaining=failing,
                             views=views, summary=summary, impact=recheck.impact if recheck else None,
                             followers=followers, deadline_unix=workflow.now().timestamp() + request.run_budget_s)

    async def process_rollbacks(self) -> None:
        """Roll back the fixes people asked to undo (between tests, never mid-attempt)."""
        run, progress, request = self._run, self._run.progress, self._run.request
        while run.rollback_queue:
            test_id = run.rollback_queue.pop(0)
            attempt = progress.applied.pop(test_id)
            patch = progress.merged.pop(test_id, None)  # merged from a worktree: its patch comes back out
            try:
                await self.on_host(lambda ws: host_activity(
                    edit_acts.rollback_edits,
                    RollbackInput(workspace=ws, test_id=test_id, attempt=attempt, by_hand=True,
                                  patch=run.rebuilt_patches.get(test_id, patch) if patch is not None else None),
                    ws, request, quick_options(request.heartbeat_timeout_s)))
            except ActivityError as exc:
                # Later fixes built on this one: it stays, and the person is told why.
                reason = str(exc.cause or exc)
                progress.applied[test_id] = attempt
                if patch is not None:
                    progress.merged[test_id] = patch
                run.views[test_id].history.append(f"rollback by hand refused: {reason}")
                run.rollback_refused[test_id] = reason
                run.rolled_back.add(test_id)
                continue
            progress.accepted = [c for c in progress.accepted if c.test_id != test_id]
            run.views[test_id].state = FixState.SKIPPED
            run.views[test_id].history.append("fix rolled back by hand")
            if test_id in progress.summary.fixed:
                progress.summary.fixed.remove(test_id)
            progress.summary.skipped.append(test_id)
            run.rolled_back.add(test_id)

    async def _stop(self, request: FixRequest, ws: Workspace, summary: RunSummary) -> RunSummary:
        self.set_phase("finalizing")
        summary = await host_activity(
            workspace_acts.finalize_run,
            FinalizeInput(run_id=workflow.info().workflow_id, workspace=ws, summary=summary, final=None),
            ws, request, setup_options(request.heartbeat_timeout_s))
        upsert_run(request.repo, summary.state.upper(), 0)
        self.set_phase("finished")
        write_final_details(outcome_details(summary))
        return summary

    async def _final_run(self, request: FixRequest, progress: SuiteProgress) -> SuiteRun:
        """The whole suite on the accepted state (the first run when it was not read: nothing ran since)."""
        self.set_phase("finalizing")
        if not progress.summary.baseline_read:
            return progress.initial
        return await self.on_host(lambda ws: host_activity(
            testing_acts.run_suite,
            SuiteInput(workspace=ws, plan=progress.plan, label="final", sandbox=request.sandbox,
                       compare_to=progress.initial, reuse=progress.baseline),
            ws, request, test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s)))

    async def _revealed(self, request: FixRequest, progress: SuiteProgress, final: SuiteRun) -> bool:
        """Whether ``final`` shows failing tests the run has never driven (hidden from the first
        run by a module that did not load), now queued for another round with ``final`` as the
        failures' run and the baseline. Only when it fails more tests than the run knows of."""
        run, summary = self._run, progress.summary
        known = sum(v.state != FixState.FIXED for v in run.views.values()) + len(summary.flaky)
        if (not summary.baseline_read or run.abort_requested or progress.round >= MOST_ROUNDS
                or final.totals.problems <= known or workflow.now().timestamp() >= progress.deadline_unix
                or not workflow.patched("revealed-failures")):
            return False
        analysis = await self.on_host(lambda ws: host_activity(
            analysis_acts.analyze_suite,
            SuiteAnalysisInput(workspace=ws, run=final, select=request.select, exclude=request.exclude),
            ws, request, quick_options(request.heartbeat_timeout_s)))
        revealed = [t for t in analysis.order if t not in run.views]
        if not revealed:
            return False
        progress.round += 1
        views, followers = _queued(workflow.info().workflow_id, revealed, analysis)
        run.views |= {v.test_id: v for v in views}
        progress.followers |= followers
        progress.initial, progress.baseline, progress.remaining = final, final.as_baseline(), revealed
        summary.notes.append(f"round {progress.round}: {len(revealed)} failing test(s) came to light once the "
                             "tests that hid them loaded: " + ", ".join(revealed[:5])
                             + (f" and {len(revealed) - 5} more" if len(revealed) > 5 else ""))
        self.set_phase(f"round {progress.round}: fixing {len(revealed)} failing test(s) that came to light")
        return True

    async def _finish(self, request: FixRequest, progress: SuiteProgress, final: SuiteRun) -> RunSummary:
        self.set_phase("finalizing")
        summary = progress.summary
        stopped_early = not summary.baseline_read  # the first suite run was not read: nothing ran since
        reused = None if final.reused_as is None else (  # the last accepted batch's run was of exactly these files
            f"the final verdict is the suite run {final.label} ({final.report_path}), made on the same files "
            f"(content digest {(final.tree or '')[:12]}): not run again")
        if reused is not None:
            summary.notes.append(reused)
        if self._run.abort_requested:
            summary.state, summary.reason = RunOutcome.ABORTED, self._run.abort_reason
            summary.notes.append(self._run.abort_reason)
        elif not stopped_early:
            summary.state, summary.reason = suite_outcome(final) or (RunOutcome.COMPLETED, self._run.stop_reason)
        summary.tests = list(self._run.views.values())
        try:
            summary = await host_activity(
                workspace_acts.finalize_run,
                FinalizeInput(run_id=workflow.info().workflow_id, workspace=progress.workspace, summary=summary,
                              final=final, initial=progress.initial, push=request.push,
                              pull_request=request.pull_request),
                progress.workspace, request, setup_options(request.heartbeat_timeout_s))
        except HostLost as lost:  # rebuild, then finish there (the final suite run is redone on it)
            if reused is not None:
                summary.notes.remove(reused)
            await self.rebuild(lost)
            return await self._finish(request, progress, await self._final_run(request, progress))
        progress.summary = summary
        upsert_run(request.repo, summary.state.upper(), final.totals.problems)
        self.set_phase("finished")
        write_final_details(outcome_details(summary))
        return summary

    # --- the worker holding the run's files is lost: the run moves -------------------------

    async def on_host(self, step: Callable[[Workspace], Awaitable[R]]) -> R:
        """``step`` on the run workspace; when its worker is lost, rebuild the
        workspace on another worker and run ``step`` there."""
        while True:
            try:
                return await step(self._run.progress.workspace)
            except HostLost as lost:
                await self.rebuild(lost)

    async def rebuild(self, lost: HostLost) -> None:
        """Rebuild the run workspace on another worker from the history: the repository
        source and every accepted fix in order. Nothing to do when the run already
        moved away from the lost worker."""
        run, progress, request = self._run, self._run.progress, self._run.request
        if run.rebuilding:  # another step found the host lost too: its rebuild serves both
            await workflow.wait_condition(lambda: not run.rebuilding)
            return
        if lost.queue != (progress.workspace.host_queue or workflow.info().task_queue):
            return
        run.rebuilding = True
        try:
            await self._rebuild_now(lost, progress, request)
        finally:
            run.rebuilding = False

    async def _rebuild_now(self, lost: HostLost, progress: SuiteProgress, request: FixRequest) -> None:
        if progress.rebuilds >= request.max_rebuilds:
            raise ApplicationError(f"{lost.message}; the run already moved {progress.rebuilds} time(s) "
                                   f"(max_rebuilds): it stops here", type="host_lost", non_retryable=True)
        progress.rebuilds += 1
        phase = self._phase
        self.set_phase(f"rebuilding the workspace on another worker: {lost.reason}")
        rebuilt = await workflow.execute_activity(
            workspace_acts.rebuild_workspace,
            guarded("the rebuild's input", RebuildInput(
                run_id=workflow.info().workflow_id, request=ProjectRequest.of(request), lost=progress.workspace,
                plan=progress.plan, accepted=progress.accepted, reason=lost.reason)),
            **test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s))
        lost_workspace = progress.workspace
        progress.workspace, progress.initial = rebuilt.workspace, rebuilt.run
        progress.plan = rebuilt.plan or progress.plan
        progress.baseline = rebuilt.run.as_baseline()
        progress.impact = None  # the test-impact map stayed on the lost worker
        progress.merged = {t: rebuilt.merged.get(t, p) for t, p in progress.merged.items()}
        self._run.rebuilt_patches = rebuilt.merged
        progress.summary.notes.append(
            f"{lost.message}; the workspace was rebuilt on {rebuilt.workspace.host_queue} from the history "
            f"({len(progress.accepted)} accepted fix(es) replayed); reports of earlier tests stayed on the lost worker")
        # Children waiting on the lost worker's files (for a verdict, for an answer) go on here.
        await self._run.signal_children(FixOneTestWorkflow.workspace_moved,
                                        WorkspaceMoved(lost=lost_workspace, now=progress.workspace,
                                                       plan=progress.plan, failure_run=progress.initial,
                                                       baseline=progress.baseline))
        self.set_phase(phase)
