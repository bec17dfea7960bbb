"""``FixSuiteWorkflow``: a whole run, from a repository with failing tests to
a report and a branch/patch.

1. prepare a worker-local workspace and plan how to test it;
2. run the suite; re-run it once when something fails, to tell flaky tests
   (reported, never "fixed") from real failures;
3. order the real failures root-cause groups first, and drive each through
   a ``TestFixWorkflow`` child, checking the run's time and cost budgets
   before each test (seed 003); a fix that also fixes others spares them;
4. run the whole suite at the end and write the report, the patch and the
   branch.

Long suites continue-as-new before the history grows large, carrying only
where the run is (``SuiteProgress``); per-test results go to the run
directory as they finish. People steer the run with updates: ``abort``
(cancels cleanly: the test in flight is rolled back) and ``rollback`` (undo
a fixed test's edits by hand).
"""

from __future__ import annotations

import asyncio
import fnmatch
import re

from temporalio import workflow
from temporalio.exceptions import ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities import analysis as analysis_acts
    from activities import edits as edit_acts
    from activities import testing as testing_acts
    from activities import workspace as workspace_acts
    from workflows.models import (
        FinalizeInput,
        FixRequest,
        PlanInput,
        PrepareInput,
        RecordInput,
        RollbackInput,
        RunSummary,
        SuiteAnalysisInput,
        SuiteInput,
        SuiteProgress,
        SuiteRun,
        TestFixInput,
        TestFixResult,
        TestState,
        TestStatusView,
        Usage,
    )
    from workflows.options import QUICK_OPTIONS, SETUP_OPTIONS, test_run_options
    from workflows.search import upsert_run
    from workflows.test_fix import TestFixWorkflow

# Tests fixed per workflow run before continuing as new (the server may suggest it earlier).
TESTS_PER_RUN = 100
DONE_PHASES = ("finalizing", "finished")


def child_id(run_id: str, test_id: str) -> str:
    """A readable, unique workflow id for a test's child workflow."""
    slug = re.sub(r"[^A-Za-z0-9_.:/\[\]-]+", "_", test_id)[:180]
    return f"{run_id}/test/{slug}"


def selected(test_id: str, select: list[str], exclude: list[str]) -> bool:
    """Whether a test id passes the run's select/exclude patterns (globs or substrings)."""
    if select and not any(fnmatch.fnmatchcase(test_id, p) or p in test_id for p in select):
        return False
    return not any(fnmatch.fnmatchcase(test_id, p) for p in exclude)


@workflow.defn
class FixSuiteWorkflow:
    def __init__(self) -> None:
        self._progress: SuiteProgress | None = None
        self._views: dict[str, TestStatusView] = {}
        self._abort_requested = False
        self._abort_reason = ""
        self._current: asyncio.Future | None = None
        self._rollback_queue: list[str] = []
        self._rolled_back: set[str] = set()
        self._phase = "starting"

    # --- what people see ---------------------------------------------------------

    @workflow.query
    def status(self) -> list[TestStatusView]:
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
        workflow.set_current_details(f"**{phase}**" + (f"\n\ntests: {states}" if states else ""))

    # --- what people do ------------------------------------------------------------

    @workflow.update
    async def abort(self, reason: str) -> str:
        """Stop the run: the test in flight is cancelled and its edits rolled back."""
        self._abort_requested = True
        self._abort_reason = reason or "aborted by a person"
        if self._current is not None and not self._current.done():
            self._current.cancel()
        await workflow.wait_condition(lambda: self._phase in DONE_PHASES)
        return self._phase

    @abort.validator
    def _validate_abort(self, reason: str) -> None:
        if self._phase in DONE_PHASES:
            raise ValueError(f"the run is already {self._phase}")

    @workflow.update
    async def rollback(self, test_id: str) -> str:
        """Undo a fixed test's edits by hand (between tests, never mid-attempt)."""
        self._rollback_queue.append(test_id)
        await workflow.wait_condition(lambda: test_id in self._rolled_back)
        return f"rolled back {test_id}"

    @rollback.validator
    def _validate_rollback(self, test_id: str) -> None:
        if self._progress is None or test_id not in self._progress.applied:
            raise ValueError(f"{test_id} has no applied fix to roll back")
        if self._phase in DONE_PHASES:
            raise ValueError("the run is finished; revert the commit on its branch instead")

    # --- the run ---------------------------------------------------------------------

    @workflow.run
    async def run(self, request: FixRequest) -> RunSummary:
        progress = request.resume or await self._start(request)
        request = request.model_copy(update={"resume": None})
        self._progress = progress
        self._views = {v.test_id: v for v in progress.views}
        processed = 0
        while progress.remaining:
            await self._process_rollbacks()
            test_id = progress.remaining[0]
            await self._one(request, progress, test_id)
            progress.remaining.pop(0)
            processed += 1
            if progress.remaining and (processed >= TESTS_PER_RUN or workflow.info().is_continue_as_new_suggested()):
                progress.views = list(self._views.values())
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(request.model_copy(update={"resume": progress}))
        await self._process_rollbacks()
        summary = await self._finish(request, progress)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return summary

    async def _start(self, request: FixRequest) -> SuiteProgress:
        run_id = workflow.info().workflow_id
        summary = RunSummary(run_id=run_id, repo=request.repo)
        upsert_run(request.repo, "PREPARING", 0)
        self._set_phase("preparing the workspace")
        ws = await workflow.execute_activity(
            workspace_acts.prepare_workspace, PrepareInput(run_id=run_id, request=request), **SETUP_OPTIONS)
        plan = await workflow.execute_activity(
            testing_acts.plan_tests, PlanInput(workspace=ws, request=request), **QUICK_OPTIONS)
        summary.framework = plan.framework
        run_opts = test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s)

        self._set_phase("running the suite")
        initial: SuiteRun = await workflow.execute_activity(
            testing_acts.run_suite, SuiteInput(workspace=ws, plan=plan, label="initial", sandbox=request.sandbox),
            **run_opts)
        summary.initial = initial.totals
        if not initial.per_test and initial.exit_code not in (0, None):
            summary.notes.append("no per-test results could be read; nothing to fix test by test")
        failing = [t for t in initial.failing_ids if selected(t, request.select, request.exclude)]
        upsert_run(request.repo, "RUNNING", len(failing))
        if failing:
            self._set_phase("re-running to find flaky tests")
            rerun: SuiteRun = await workflow.execute_activity(
                testing_acts.run_suite,
                SuiteInput(workspace=ws, plan=plan, label="flaky-check", sandbox=request.sandbox, compare_to=initial),
                **run_opts)
            summary.flaky = [t for t in failing if t in rerun.newly_passing]
            failing = [t for t in failing if t not in summary.flaky]
        if failing:
            analysis = await workflow.execute_activity(
                analysis_acts.analyze_suite, SuiteAnalysisInput(workspace=ws, run=initial, selected=failing),
                **QUICK_OPTIONS)
            failing = analysis.order
            summary.notes.append(f"root cause: {analysis.root_cause}")
        views = [TestStatusView(test_id=t, state=TestState.PENDING, workflow_id=child_id(run_id, t)) for t in failing]
        return SuiteProgress(workspace=ws, plan=plan, initial=initial, baseline=initial, remaining=failing,
                             views=views, summary=summary,
                             deadline_unix=workflow.now().timestamp() + request.run_budget_s)

    async def _one(self, request: FixRequest, progress: SuiteProgress, test_id: str) -> None:
        """Drive one test, or say why it is not driven."""
        summary, view = progress.summary, self._views[test_id]
        if self._abort_requested:
            view.state = TestState.ABORTED
            summary.aborted.append(test_id)
            return
        if test_id not in progress.baseline.failing_ids:
            view.state = TestState.FIXED
            view.history.append("fixed along with an earlier test")
            summary.fixed.append(test_id)
            return
        if workflow.now().timestamp() >= progress.deadline_unix:
            view.state = TestState.SKIPPED
            view.history.append("the run's time budget was used up before this test")
            summary.skipped.append(test_id)
            return
        if request.llm.budget_usd is not None and summary.usage.cost_usd >= request.llm.budget_usd:
            view.state = TestState.ESCALATED
            view.history.append(f"the LLM budget of ${request.llm.budget_usd:.2f} was used up: left for a person")
            summary.escalated.append(test_id)
            return
        self._set_phase(f"fixing {test_id}")
        result = await self._fix(request, progress, test_id)
        await workflow.execute_activity(workspace_acts.record_result,
                                        RecordInput(workspace=progress.workspace, result=result), **QUICK_OPTIONS)
        view.state, view.attempt = result.state, len(result.attempts)
        view.last_verdict = result.attempts[-1].verdict if result.attempts else None
        view.history = [f"attempt {a.number}: {a.verdict.value if a.verdict else '-'} {a.reason}".strip()
                        for a in result.attempts]
        summary.usage = summary.usage + result.usage
        summary.attempts += len(result.attempts)
        summary.regressions_prevented += result.regressions_prevented
        {TestState.FIXED: summary.fixed, TestState.SKIPPED: summary.skipped,
         TestState.ABORTED: summary.aborted}.get(result.state, summary.escalated).append(test_id)
        if result.state == TestState.FIXED and result.applied_attempt is not None:
            progress.applied[test_id] = result.applied_attempt
            if result.suite_after is not None:
                progress.baseline = result.suite_after
        if result.state == TestState.ABORTED and not self._abort_requested:
            self._abort_requested, self._abort_reason = True, f"aborted by a person at {test_id}"

    async def _fix(self, request: FixRequest, progress: SuiteProgress, test_id: str) -> TestFixResult:
        per_test_deadline = min(progress.deadline_unix, workflow.now().timestamp() + request.per_test_budget_s)
        run_id = workflow.info().workflow_id
        inp = TestFixInput(run_id=run_id, workspace=progress.workspace, plan=progress.plan, test_id=test_id,
                           failure_run=progress.initial, baseline=progress.baseline, request=request,
                           deadline_unix=per_test_deadline)
        self._current = asyncio.ensure_future(workflow.execute_child_workflow(
            TestFixWorkflow.run, inp, id=child_id(run_id, test_id),
            static_summary=f"fix {test_id}", static_details=f"run {run_id}, repository {request.repo}"))
        try:
            return await self._current
        except (asyncio.CancelledError, ChildWorkflowError) as exc:
            if not self._abort_requested:
                raise ApplicationError(f"fixing {test_id} failed: {exc}") from exc
            return TestFixResult(test_id=test_id, state=TestState.ABORTED, attempts=[], usage=Usage())
        finally:
            self._current = None

    async def _process_rollbacks(self) -> None:
        progress = self._progress
        assert progress is not None
        while self._rollback_queue:
            test_id = self._rollback_queue.pop(0)
            attempt = progress.applied.pop(test_id)
            await workflow.execute_activity(
                edit_acts.rollback_edits, RollbackInput(workspace=progress.workspace, test_id=test_id,
                                                        attempt=attempt), **QUICK_OPTIONS)
            self._views[test_id].state = TestState.SKIPPED
            self._views[test_id].history.append("fix rolled back by hand")
            if test_id in progress.summary.fixed:
                progress.summary.fixed.remove(test_id)
            progress.summary.skipped.append(test_id)
            self._rolled_back.add(test_id)

    async def _finish(self, request: FixRequest, progress: SuiteProgress) -> RunSummary:
        self._set_phase("finalizing")
        summary = progress.summary
        final: SuiteRun = await workflow.execute_activity(
            testing_acts.run_suite,
            SuiteInput(workspace=progress.workspace, plan=progress.plan, label="final", sandbox=request.sandbox,
                       compare_to=progress.initial),
            **test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s))
        summary.final = final.totals
        summary.still_failing = final.failing_ids[:500]
        summary.state = "aborted" if self._abort_requested else "completed"
        if self._abort_requested:
            summary.notes.append(self._abort_reason)
        summary.tests = list(self._views.values())
        summary = await workflow.execute_activity(
            workspace_acts.finalize_run,
            FinalizeInput(run_id=workflow.info().workflow_id, workspace=progress.workspace, summary=summary),
            **SETUP_OPTIONS)
        progress.summary = summary
        upsert_run(request.repo, summary.state.upper(), len(final.failing_ids))
        self._set_phase("finished")
        return summary
