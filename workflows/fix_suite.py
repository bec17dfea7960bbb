"""``FixSuiteWorkflow``: a whole run, from a repository with failing tests to
a report and a branch/patch.

1. prepare a worker-local workspace and plan how to test it;
2. run the suite; re-run it once when something fails, to tell flaky tests
   (reported, never "fixed") from real failures;
3. order the real failures root-cause groups first, and drive each through
   a ``FixOneTestWorkflow`` child, checking the run's time and cost budgets
   before each test; a fix that also fixes others spares them;
4. run the whole suite at the end and write the report, the patch and the
   branch.

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

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from ..activities import analysis as analysis_acts
    from ..activities import edits as edit_acts
    from ..activities import environment as environment_acts
    from ..activities import testing as testing_acts
    from ..activities import workspace as workspace_acts
    from ..domain.errors import ErrorKind
    from .control import ABORT_HINT, ANSWER_HINT, ROLLBACK_HINT, parse_reason, parse_test_id, shown
    from .fix_one_test import FixOneTestWorkflow
    from .host import HostLost, host_activity
    from .merge_queue import MergeQueue
    from .models import (
        AcceptedChange,
        Continued,
        FinalizeInput,
        FixOneTestInput,
        FixOneTestResult,
        FixRequest,
        FixState,
        FixStatusView,
        MergeInput,
        PlanInput,
        PrepareInput,
        RebuildInput,
        Rebuilt,
        RecordInput,
        RemoveWorktreeInput,
        RollbackInput,
        RunOutcome,
        RunSummary,
        SetupInput,
        SuiteAnalysisInput,
        SuiteInput,
        SuiteProgress,
        SuiteRun,
        Usage,
        Workspace,
        Worktree,
        WorktreeInput,
    )
    from .options import quick_options, setup_options, test_run_options
    from .outcome import details as outcome_details
    from .outcome import suite_outcome
    from .search import upsert_run
    from .validation_queue import CANDIDATE_SIGNAL, Candidate

DONE_PHASES = ("finalizing", "finished")
# Less LLM money than this left for a test counts as none (a share this small buys no model call).
MIN_SHARE_USD = 0.0001


def child_id(run_id: str, test_id: str) -> str:
    """A readable, unique workflow id for a test's child workflow."""
    slug = re.sub(r"[^A-Za-z0-9_.:/\[\]-]+", "_", test_id)[:180]
    return f"{run_id}/test/{slug}"




class RunStopped(Exception):
    """The run cannot go on before its first suite run (its summary says why)."""

    def __init__(self, workspace: Workspace, summary: RunSummary) -> None:
        super().__init__(summary.reason)
        self.workspace, self.summary = workspace, summary


def setup_failure(error: ApplicationError) -> str:
    """The setup's error message and the end of its log, as the run's reason."""
    context = error.details[0] if error.details and isinstance(error.details[0], dict) else {}
    tail = str(context.get("log_tail", "")).strip()
    return f"{error.message}\n{tail}" if tail else error.message


@workflow.defn
class FixSuiteWorkflow(MergeQueue):
    def __init__(self) -> None:
        self._progress: SuiteProgress | None = None
        self._views: dict[str, FixStatusView] = {}
        self._abort_requested = False
        self._abort_reason = ""
        self._children: dict[str, asyncio.Future] = {}  # test -> its child workflow, while in flight
        self._shares: dict[str, float] = {}  # test in flight -> the LLM money set aside for it
        self._rollback_queue: list[str] = []
        self._rolled_back: set[str] = set()
        self._rollback_refused: dict[str, str] = {}
        self._phase = "starting"
        self._ignored: list[str] = []  # signals the run could not take, and why
        self._request: FixRequest | None = None
        self._rebuilt_patches: dict[str, str] = {}  # merged test -> its patch in the last rebuilt workspace
        self._rebuilding = False  # a rebuild in flight (the validation queue's checks may lose the host too)
        self._queue_init()

    # --- what people see ---------------------------------------------------------

    @workflow.query
    def status(self) -> list[FixStatusView]:
        """Every failing test's last known state (a running test: query its child)."""
        return list(self._views.values())

    @workflow.query
    def phase(self) -> str:
        return self._phase

    @workflow.query
    def summary(self) -> RunSummary | None:
        return self._progress.summary if self._progress else None

    def _set_phase(self, phase: str) -> None:
        self._phase = phase
        counts: dict[str, int] = {}
        for v in self._views.values():
            counts[v.state.value] = counts.get(v.state.value, 0) + 1
        states = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        steer = "" if phase in DONE_PHASES else (
            f"\n\nan ESCALATED test is answered in its own workflow, `{workflow.info().workflow_id}/test/` + the test id: "
            f"{ANSWER_HINT}\n\nto undo a fixed test: {ROLLBACK_HINT}\n\nto stop the run: {ABORT_HINT}")
        workflow.set_current_details(
            f"**{phase}**" + (f"\n\ntests: {states}" if states else "") + steer
            + "".join(f"\n\nignored: {line}" for line in self._ignored[-3:]))

    def _ignore(self, line: str) -> None:
        """A signal the run cannot take: recorded, shown in the details, and ignored."""
        self._ignored.append(line)
        if self._progress is not None:
            self._progress.summary.notes.append(line)
        self._set_phase(self._phase)

    # --- what people do ------------------------------------------------------------

    @workflow.update
    async def abort(self, reason: Any = "") -> str:
        """Stop the run: the tests in flight are cancelled and their edits rolled back
        (``reason``: a string, ``{"reason": "..."}`` or nothing)."""
        self._request_abort(parse_reason(reason))
        await workflow.wait_condition(lambda: self._phase in DONE_PHASES)
        return self._phase

    @abort.validator
    def _validate_abort(self, reason: Any = "") -> None:
        parse_reason(reason)
        if self._phase in DONE_PHASES:
            raise ValueError(f"the run is already {self._phase}")

    @workflow.signal(name="abort")
    def abort_signal(self, reason: Any = "") -> None:
        """``abort`` as a signal; one the run cannot take is recorded and ignored."""
        try:
            parsed = parse_reason(reason)
        except ValueError as exc:
            return self._ignore(f"signal abort ignored: {exc}")
        if self._phase in DONE_PHASES:
            return self._ignore(f"signal abort ignored: the run is already {self._phase}")
        self._request_abort(parsed)

    def _request_abort(self, reason: str) -> None:
        self._abort_requested = True
        self._abort_reason = reason or "aborted by a person"
        self._cancel_children()

    @workflow.signal(name="rollback")
    def rollback_signal(self, test_id: Any) -> None:
        """``rollback`` as a signal; one the run cannot take is recorded and ignored."""
        try:
            parsed = parse_test_id(test_id)
        except ValueError as exc:
            return self._ignore(f"signal rollback ignored: {exc}")
        refused = self._rollback_refusal(parsed)
        if refused:
            return self._ignore(f"signal rollback {shown(test_id)} ignored: {refused}")
        self._rollback_queue.append(parsed)

    def _rollback_refusal(self, test_id: str) -> str:
        """Why ``test_id`` cannot be rolled back now ("" when it can)."""
        if self._phase in DONE_PHASES:
            return "the run is finished; revert the commit on its branch instead"
        if self._progress is None or test_id not in self._progress.applied:
            return f"{test_id} has no applied fix to roll back"
        if test_id in self._rollback_queue:
            return f"a rollback of {test_id} is already queued"
        return ""

    @workflow.update
    async def rollback(self, test_id: Any) -> str:
        """Undo a fixed test's edits by hand (between tests, never mid-attempt);
        ``test_id``: the test id, or ``{"test_id": "..."}``."""
        test_id = parse_test_id(test_id)
        self._rolled_back.discard(test_id)
        self._rollback_queue.append(test_id)
        await workflow.wait_condition(lambda: test_id in self._rolled_back)
        refused = self._rollback_refused.pop(test_id, None)
        return f"could not roll back {test_id}: {refused}" if refused else f"rolled back {test_id}"

    @rollback.validator
    def _validate_rollback(self, test_id: Any) -> None:
        refused = self._rollback_refusal(parse_test_id(test_id))
        if refused:
            raise ValueError(refused)

    @workflow.signal(name=CANDIDATE_SIGNAL)
    def candidate(self, candidate: Candidate) -> None:
        """Validation queue: a test's child sends its proposed fix (``workflows/merge_queue.py``)."""
        self._take_candidate(candidate)

    # --- the run ---------------------------------------------------------------------

    @workflow.run
    async def run(self, start: FixRequest | Continued) -> RunSummary:
        request, resumed = (start.request, start.progress) if isinstance(start, Continued) else (start, None)
        self._request = request
        try:
            progress = resumed or await self._start_anywhere(request)
        except RunStopped as stopped:  # before the first suite run: nothing to fix or compare
            return await self._stop(self._request, stopped.workspace, stopped.summary)
        request = self._request
        self._progress = progress
        self._views = {v.test_id: v for v in progress.views}
        processed = 0
        concurrent = request.concurrency > 1
        queue = request.validation == "queue"
        while progress.remaining:
            await self._process_rollbacks()
            if queue and not self._abort_requested:
                processed += await self._queued(request, progress, request.tests_per_run - processed)
            elif concurrent and not self._abort_requested and progress.remaining[0] not in progress.retrying:
                processed += await self._batch(request, progress, request.tests_per_run - processed)
            else:  # one at a time, in the run workspace (and a concurrent run's fixes that did not merge)
                test_id = progress.remaining[0]
                await self._one(request, progress, test_id)
                progress.remaining.pop(0)
                processed += 1
            if progress.remaining and (processed >= request.tests_per_run or workflow.info().is_continue_as_new_suggested()):
                progress.views = list(self._views.values())
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(Continued(request=request, progress=progress))
        await self._process_rollbacks()
        summary = await self._finish(request, progress)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return summary

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
        self._set_phase("preparing the workspace")
        ws = await workflow.execute_activity(
            workspace_acts.prepare_workspace, PrepareInput(run_id=run_id, request=request),
            **setup_options(request.heartbeat_timeout_s))
        plan = await host_activity(
            testing_acts.plan_tests, PlanInput(workspace=ws, request=request), ws, request,
            quick_options(request.heartbeat_timeout_s))
        summary.framework = plan.framework
        run_opts = test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s)

        self._set_phase("setting up the environment")
        try:
            environment = await host_activity(
                environment_acts.set_up_environment, SetupInput(workspace=ws, plan=plan, request=request), ws,
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

        self._set_phase(f"running the suite: {plan.test_command} ({plan.framework}: {plan.reason})")
        summary.notes.append(f"tests ran with `{plan.test_command}` ({plan.framework}): {plan.reason}")
        initial: SuiteRun = await host_activity(
            testing_acts.run_suite, SuiteInput(workspace=ws, plan=plan, label="initial", sandbox=request.sandbox),
            ws, request, run_opts)
        summary.initial = initial.totals
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
            self._set_phase("re-running to find flaky tests")
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
        views = [FixStatusView(test_id=t, state=FixState.PENDING, workflow_id=child_id(run_id, t)) for t in failing]
        if recheck is not None and recheck.impact:
            summary.notes.append("test impact: which tests run which files recorded in the flaky-check run")
        return SuiteProgress(workspace=ws, plan=plan, initial=initial, baseline=initial.as_baseline(), remaining=failing,
                             views=views, summary=summary, impact=recheck.impact if recheck else None,
                             deadline_unix=workflow.now().timestamp() + request.run_budget_s)

    async def _one(self, request: FixRequest, progress: SuiteProgress, test_id: str) -> None:
        """Drive one test in the run workspace, or say why it is not driven."""
        if self._settled(request, progress, test_id):
            return
        self._set_phase(f"fixing {test_id}")
        result = await self._fix(self._set_aside(request, progress, test_id, slots=1), progress, test_id,
                                 progress.workspace)
        while result.host_lost is not None:  # its worker is gone: again, on the rebuilt workspace
            await self._moved(request, progress, result)
            if self._settled(request, progress, test_id):
                return
            result = await self._fix(self._set_aside(request, progress, test_id, slots=1), progress, test_id,
                                     progress.workspace)
        await self._record(progress, result)
        if result.state == FixState.FIXED and result.applied_edit_set is not None:
            progress.accepted.append(AcceptedChange(test_id=test_id, attempt=result.applied_attempt or 0,
                                                    edit_set=result.applied_edit_set))

    def _settled(self, request: FixRequest, progress: SuiteProgress, test_id: str) -> bool:
        """Settle a test without driving it, when the run says so (abort, fixed
        already, budgets used up); whether it was settled."""
        summary, view = progress.summary, self._views[test_id]
        if self._abort_requested:
            view.state = FixState.ABORTED
            summary.aborted.append(test_id)
            return True
        if test_id in progress.fixed_along:
            progress.fixed_along.remove(test_id)
            view.state = FixState.FIXED
            view.history.append("fixed along with an earlier test")
            summary.fixed.append(test_id)
            return True
        if workflow.now().timestamp() >= progress.deadline_unix:
            view.state = FixState.SKIPPED
            view.history.append("the run's time budget was used up before this test")
            summary.skipped.append(test_id)
            return True
        if self._out_of_money(request, progress):
            view.state = FixState.ESCALATED
            view.history.append(f"the LLM budget of ${request.llm.budget_usd:.2f} was used up: left for a person")
            summary.escalated.append(test_id)
            return True
        return False

    def _money_left(self, request: FixRequest, progress: SuiteProgress) -> float | None:
        """The run's LLM money neither spent nor set aside for tests in flight; None: no budget."""
        if request.llm.budget_usd is None:
            return None
        return request.llm.budget_usd - progress.summary.usage.cost_usd - sum(self._shares.values())

    def _out_of_money(self, request: FixRequest, progress: SuiteProgress) -> bool:
        left = self._money_left(request, progress)
        return left is not None and left < MIN_SHARE_USD

    async def _record(self, progress: SuiteProgress, result: FixOneTestResult, not_merged: str | None = None) -> None:
        """Keep a child's result: the run directory, the test's view, the summary.
        ``not_merged``: its fix was not merged (why); the test goes back to the queue."""
        summary, test_id = progress.summary, result.test_id
        view = self._views[test_id]
        self._shares.pop(test_id, None)  # what it spent is in its usage now
        await self._on_host(lambda ws: host_activity(
            workspace_acts.record_result, RecordInput(workspace=ws, result=result), ws, self._req(),
            quick_options(self._req().heartbeat_timeout_s)))
        earlier = view.history if test_id in progress.retrying else []  # a retried test keeps its first try
        view.state, view.attempt = result.state, len(result.attempts)
        view.last_verdict = result.attempts[-1].verdict if result.attempts else None
        view.history = earlier + [f"attempt {a.number} {a.reason}" for a in result.remade] + [
            f"attempt {a.number}: {a.verdict.value if a.verdict else '-'} {a.reason}".strip() for a in result.attempts]
        summary.usage = summary.usage + result.usage
        summary.attempts += len(result.attempts)
        summary.regressions_prevented += result.regressions_prevented
        if not_merged is not None:
            view.state = FixState.PENDING
            view.history.append(not_merged)
            progress.retrying.append(test_id)
            progress.remaining.append(test_id)
            return
        {FixState.FIXED: summary.fixed, FixState.SKIPPED: summary.skipped,
         FixState.ABORTED: summary.aborted}.get(result.state, summary.escalated).append(test_id)
        if result.state == FixState.FIXED and result.applied_attempt is not None:
            progress.applied[test_id] = result.applied_attempt
            if result.suite_after is not None:
                progress.baseline = result.suite_after.as_baseline()
                queued, known = set(progress.remaining) - {test_id}, set(progress.fixed_along)
                progress.fixed_along += [t for t in result.suite_after.newly_passing if t in queued and t not in known]
        if result.state == FixState.ABORTED and not self._abort_requested:
            self._abort_requested, self._abort_reason = True, f"aborted by a person at {test_id}"
            self._cancel_children()

    def _set_aside(self, request: FixRequest, progress: SuiteProgress, test_id: str, slots: int) -> FixRequest:
        """The request a test's child gets: with an LLM budget, the child may spend
        an equal share of what is left among the ``slots`` tests that can start now,
        so tests in flight side by side cannot together spend more than the run's
        budget (each stops within one model call of its share)."""
        left = self._money_left(request, progress)
        if left is None:
            return request
        self._shares[test_id] = max(left, 0.0) / max(slots, 1)
        return request.model_copy(update={"llm": request.llm.model_copy(update={"share_usd": self._shares[test_id]})})

    async def _fix(self, request: FixRequest, progress: SuiteProgress, test_id: str,
                   workspace: Workspace, queue: bool = False) -> FixOneTestResult:
        """Run a test's child workflow on ``workspace`` (the run's, or the test's worktree);
        ``request`` as ``_set_aside`` made it for the test."""
        per_test_deadline = min(progress.deadline_unix, workflow.now().timestamp() + request.per_test_budget_s)
        run_id = workflow.info().workflow_id
        inp = FixOneTestInput(run_id=run_id, workspace=workspace, plan=progress.plan, test_id=test_id,
                           failure_run=progress.initial, baseline=progress.baseline, request=request,
                           deadline_unix=per_test_deadline, queue=queue)
        # A fix that did not merge is fixed again by a second child, in the run workspace;
        # a test whose worker was lost, by another child on the rebuilt workspace.
        workflow_id = child_id(run_id, test_id) + ("/retry" if test_id in progress.retrying else "")
        if moved := progress.redriven.get(test_id):
            workflow_id += f"/moved-{moved}"
        self._views[test_id].workflow_id = workflow_id
        child = asyncio.ensure_future(workflow.execute_child_workflow(
            FixOneTestWorkflow.run, inp, id=workflow_id,
            static_summary=f"fix {test_id}", static_details=f"run {run_id}, repository {request.repo}\n\nwhen ESCALATED: {ANSWER_HINT}"))
        self._children[test_id] = child
        try:
            return await child
        except (asyncio.CancelledError, ChildWorkflowError) as exc:
            if not self._abort_requested:
                raise ApplicationError(f"fixing {test_id} failed: {exc}") from exc
            return FixOneTestResult(test_id=test_id, state=FixState.ABORTED, attempts=[], usage=Usage())
        finally:
            self._children.pop(test_id, None)

    def _cancel_children(self) -> None:
        for child in self._children.values():
            if not child.done():
                child.cancel()

    # --- concurrency > 1: tests in flight side by side, each in its own worktree -------------

    async def _batch(self, request: FixRequest, progress: SuiteProgress, limit: int) -> int:
        """Take tests from the head of the queue, up to ``request.concurrency`` in
        flight at once, until the queue's head is a test to retry in the run
        workspace, the run is aborted, or ``limit`` tests were taken (or the server
        suggests continuing as new); returns with nothing in flight, and how many
        tests it took."""
        running: dict[asyncio.Future, Worktree] = {}
        taken = 0
        while True:
            while (len(running) < request.concurrency and progress.remaining and not self._abort_requested
                   and progress.remaining[0] not in progress.retrying and taken < limit
                   and not (taken and workflow.info().is_continue_as_new_suggested())
                   # No money left but tests in flight: what they do not spend decides the next test.
                   and not (running and self._out_of_money(request, progress))):
                test_id = progress.remaining.pop(0)
                taken += 1
                if self._settled(request, progress, test_id):
                    continue
                tree: Worktree = await self._on_host(lambda ws: host_activity(
                    workspace_acts.create_worktree, WorktreeInput(workspace=ws, test_id=test_id), ws, request,
                    setup_options(request.heartbeat_timeout_s)))
                if self._abort_requested:  # aborted while the worktree was being made
                    await self._remove(progress, tree)
                    self._settled(request, progress, test_id)
                    continue
                mine = self._set_aside(request, progress, test_id,
                                       slots=min(request.concurrency - len(running), len(progress.remaining) + 1))
                running[asyncio.ensure_future(self._fix(mine, progress, test_id, tree.workspace))] = tree
            if not running:
                return taken
            self._set_phase("fixing " + ", ".join(t.test_id for t in running.values()))
            # A rollback by hand need not wait for the tests in flight: they edit their own worktrees.
            rollback_asked = asyncio.ensure_future(workflow.wait_condition(lambda: bool(self._rollback_queue)))
            done, _ = await workflow.wait([*running, rollback_asked], return_when=asyncio.FIRST_COMPLETED)
            rollback_asked.cancel()
            for task in [t for t in running if t in done]:  # in the order they started: deterministic
                await self._land(request, progress, task.result(), running.pop(task))
            await self._process_rollbacks()

    async def _land(self, request: FixRequest, progress: SuiteProgress, result: FixOneTestResult,
                    tree: Worktree) -> None:
        """A child in a worktree ended: merge its fix (if it has one, and the run
        goes on), keep its result, remove its worktree."""
        test_id = result.test_id
        if result.host_lost is not None or tree.workspace.host_queue != progress.workspace.host_queue:
            # Its worktree was on a worker that is gone: nothing of it stays; the test goes back to the queue.
            await self._moved(request, progress, result)
            progress.remaining.insert(0, test_id)
            return
        if result.state == FixState.FIXED and result.applied_attempt is not None and self._abort_requested:
            # Fixed in its worktree as the run was aborted: nothing more goes into the workspace.
            await self._record(progress, result.model_copy(
                update={"state": FixState.ABORTED, "applied_attempt": None, "suite_after": None}))
            self._views[test_id].history.append("fixed in its worktree, but not merged: the run was aborted")
        elif result.state == FixState.FIXED and result.applied_attempt is not None:
            applied = next(a for a in result.attempts if a.number == result.applied_attempt)
            try:
                merge = await host_activity(
                    workspace_acts.merge_worktree,
                    MergeInput(workspace=progress.workspace, worktree=tree, files=applied.files,
                               baseline=progress.baseline, suite_after=result.suite_after),
                    progress.workspace, request, quick_options(request.heartbeat_timeout_s))
            except HostLost as lost:  # the run workspace and this worktree went with their worker
                await self._moved(request, progress, result.model_copy(
                    update={"host_lost": lost.reason, "host_queue": lost.queue}))
                progress.remaining.insert(0, test_id)
                return
            if merge.merged:
                await self._record(progress, result)
                progress.merged[test_id] = merge.patch or ""
                progress.accepted.append(AcceptedChange(test_id=test_id, attempt=result.applied_attempt,
                                                        patch_text=merge.patch_text))
                if merge.baseline is not None:
                    progress.baseline = merge.baseline
                self._views[test_id].history.append("fix merged into the run workspace")
            else:
                await self._record(progress, result, not_merged=(
                    f"fixed in its worktree, but the fix was not merged: {merge.reason}; queued again, "
                    "to be fixed in the run workspace after the tests in flight"))
        else:
            await self._record(progress, result)
        await self._remove(progress, tree)

    async def _remove(self, progress: SuiteProgress, tree: Worktree) -> None:
        if tree.workspace.host_queue != progress.workspace.host_queue:
            return  # it went with a lost worker
        try:
            await host_activity(
                workspace_acts.remove_worktree, RemoveWorktreeInput(workspace=progress.workspace, worktree=tree),
                progress.workspace, self._req(), quick_options(self._req().heartbeat_timeout_s))
        except HostLost:
            pass  # the next activity on the run's files rebuilds the workspace

    async def _process_rollbacks(self) -> None:
        progress = self._progress
        assert progress is not None
        while self._rollback_queue:
            test_id = self._rollback_queue.pop(0)
            attempt = progress.applied.pop(test_id)
            patch = progress.merged.pop(test_id, None)  # merged from a worktree: its patch comes back out
            try:
                await self._on_host(lambda ws: host_activity(
                    edit_acts.rollback_edits,
                    RollbackInput(workspace=ws, test_id=test_id, attempt=attempt, by_hand=True,
                                  patch=self._rebuilt_patches.get(test_id, patch) if patch is not None else None),
                    ws, self._req(), quick_options(self._req().heartbeat_timeout_s)))
            except ActivityError as exc:
                # Later fixes built on this one: it stays, and the person is told why.
                reason = str(exc.cause or exc)
                progress.applied[test_id] = attempt
                if patch is not None:
                    progress.merged[test_id] = patch
                self._views[test_id].history.append(f"rollback by hand refused: {reason}")
                self._rollback_refused[test_id] = reason
                self._rolled_back.add(test_id)
                continue
            progress.accepted = [c for c in progress.accepted if c.test_id != test_id]
            self._views[test_id].state = FixState.SKIPPED
            self._views[test_id].history.append("fix rolled back by hand")
            if test_id in progress.summary.fixed:
                progress.summary.fixed.remove(test_id)
            progress.summary.skipped.append(test_id)
            self._rolled_back.add(test_id)

    async def _stop(self, request: FixRequest, ws: Workspace, summary: RunSummary) -> RunSummary:
        self._set_phase("finalizing")
        summary = await host_activity(
            workspace_acts.finalize_run,
            FinalizeInput(run_id=workflow.info().workflow_id, workspace=ws, summary=summary, final=None),
            ws, request, setup_options(request.heartbeat_timeout_s))
        upsert_run(request.repo, summary.state.upper(), 0)
        self._set_phase("finished")
        workflow.set_current_details(outcome_details(summary))
        return summary

    async def _finish(self, request: FixRequest, progress: SuiteProgress) -> RunSummary:
        self._set_phase("finalizing")
        summary = progress.summary
        stopped_early = not summary.baseline_read  # the first suite run was not read: nothing ran since
        final: SuiteRun = progress.initial if stopped_early else await self._on_host(lambda ws: host_activity(
            testing_acts.run_suite,
            SuiteInput(workspace=ws, plan=progress.plan, label="final", sandbox=request.sandbox,
                       compare_to=progress.initial),
            ws, request, test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s)))
        if self._abort_requested:
            summary.state, summary.reason = RunOutcome.ABORTED, self._abort_reason
            summary.notes.append(self._abort_reason)
        elif not stopped_early:
            summary.state, summary.reason = suite_outcome(final) or (RunOutcome.COMPLETED, "")
        summary.tests = list(self._views.values())
        try:
            summary = await host_activity(
                workspace_acts.finalize_run,
                FinalizeInput(run_id=workflow.info().workflow_id, workspace=progress.workspace, summary=summary,
                              final=final, initial=progress.initial, push=request.push,
                              pull_request=request.pull_request),
                progress.workspace, request, setup_options(request.heartbeat_timeout_s))
        except HostLost as lost:  # rebuild, then finish there (the final suite run is redone on it)
            await self._rebuild(lost)
            return await self._finish(request, progress)
        progress.summary = summary
        upsert_run(request.repo, summary.state.upper(), final.totals.problems)
        self._set_phase("finished")
        workflow.set_current_details(outcome_details(summary))
        return summary

    # --- the worker holding the run's files is lost: the run moves -------------------------

    def _req(self) -> FixRequest:
        assert self._request is not None
        return self._request

    async def _on_host(self, step: Callable[[Workspace], Awaitable[Any]]) -> Any:
        """``step`` on the run workspace; when its worker is lost, rebuild the
        workspace on another worker and run ``step`` there."""
        while True:
            assert self._progress is not None
            try:
                return await step(self._progress.workspace)
            except HostLost as lost:
                await self._rebuild(lost)

    async def _moved(self, request: FixRequest, progress: SuiteProgress, result: FixOneTestResult) -> None:
        """A test's child ended because its worker was lost: count what it spent,
        note it, and make sure the run workspace lives on a worker that is there."""
        test_id, view = result.test_id, self._views[result.test_id]
        self._shares.pop(test_id, None)
        progress.summary.usage = progress.summary.usage + result.usage
        progress.summary.attempts += len(result.attempts)
        progress.redriven[test_id] = progress.redriven.get(test_id, 0) + 1
        view.state = FixState.PENDING
        view.history.append(f"worker lost after {len(result.attempts)} attempt(s) "
                            f"({result.host_lost or 'its worktree went with a lost worker'}): driven again")
        if result.host_queue:
            await self._rebuild(HostLost(result.host_queue, result.host_lost or ""))

    async def _rebuild(self, lost: HostLost) -> None:
        """Rebuild the run workspace on another worker from the history: the repository
        source and every accepted fix in order. Nothing to do when the run already
        moved away from the lost worker."""
        progress, request = self._progress, self._req()
        assert progress is not None
        if self._rebuilding:  # another step found the host lost too: its rebuild serves both
            await workflow.wait_condition(lambda: not self._rebuilding)
            return
        if lost.queue != (progress.workspace.host_queue or workflow.info().task_queue):
            return
        self._rebuilding = True
        try:
            await self._rebuild_now(lost, progress, request)
        finally:
            self._rebuilding = False

    async def _rebuild_now(self, lost: HostLost, progress: SuiteProgress, request: FixRequest) -> None:
        if progress.rebuilds >= request.max_rebuilds:
            raise ApplicationError(f"{lost.message}; the run already moved {progress.rebuilds} time(s) "
                                   f"(max_rebuilds): it stops here", type="host_lost", non_retryable=True)
        progress.rebuilds += 1
        phase = self._phase
        self._set_phase(f"rebuilding the workspace on another worker: {lost.reason}")
        rebuilt: Rebuilt = await workflow.execute_activity(
            workspace_acts.rebuild_workspace,
            RebuildInput(run_id=workflow.info().workflow_id, request=request, lost=progress.workspace,
                         plan=progress.plan, accepted=progress.accepted, reason=lost.reason),
            **test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s))
        progress.workspace, progress.initial = rebuilt.workspace, rebuilt.run
        progress.plan = rebuilt.plan or progress.plan
        progress.baseline = rebuilt.run.as_baseline()
        progress.impact = None  # the test-impact map stayed on the lost worker
        progress.merged = {t: rebuilt.merged.get(t, p) for t, p in progress.merged.items()}
        self._rebuilt_patches = rebuilt.merged
        progress.summary.notes.append(
            f"{lost.message}; the workspace was rebuilt on {rebuilt.workspace.host_queue} from the history "
            f"({len(progress.accepted)} accepted fix(es) replayed); reports of earlier tests stayed on the lost worker")
        self._set_phase(phase)
