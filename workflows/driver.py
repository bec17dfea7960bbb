"""How ``FixSuiteWorkflow`` drives its failing tests: one driver per validation
mode, sharing the run's state (``workflows/run_state.py``).

- ``EachDriver`` (``validation="each"``, ``workflows/each_driver.py``): every
  attempt is validated alone by its own child; one test at a time in the run
  workspace, or with ``concurrency`` N > 1 up to N side by side, each in its
  own git worktree, merged back when fixed.
- ``QueueDriver`` (``validation="queue"``, ``workflows/merge_queue.py``):
  children propose side by side and the run validates their fixes in batches.

A driver's ``drive(limit)`` takes tests from the head of the run's queue
until it is empty, the run is aborted, ``limit`` tests were taken or the
server suggests continuing as new, and returns with nothing in flight and
how many tests it took. What both share is here: starting a test's child,
keeping its result, and driving a test again when its worker was lost.
"""

from __future__ import annotations

import asyncio
import re

from temporalio import workflow
from temporalio.exceptions import ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from ..activities import workspace as workspace_acts
    from ..activities.workspace import RecordInput
    from ..domain.llm import Usage
    from ..domain.states import FixState
    from ..domain.workspace import Workspace
    from ..reports.record import FixOneTestResult
    from ..run_request import FixRequest
    from .control import ANSWER_HINT
    from .fix_one_test import FixOneTestWorkflow
    from .host import HostLost, host_activity
    from .models import FixOneTestInput
    from .options import quick_options
    from .run_state import RunState, Steps


def child_id(run_id: str, test_id: str) -> str:
    """A readable, unique workflow id for a test's child workflow."""
    slug = re.sub(r"[^A-Za-z0-9_.:/\[\]-]+", "_", test_id)[:180]
    return f"{run_id}/test/{slug}"


class Driver:
    """What every driver does with a test's child (a driver is made once per workflow run)."""

    def __init__(self, run: RunState, steps: Steps) -> None:
        self.run, self.steps = run, steps

    async def drive(self, limit: int) -> int:
        raise NotImplementedError

    def may_take(self, taken: int, limit: int, in_flight: bool) -> bool:
        """Whether a driver that took ``taken`` tests (and has some ``in_flight``) may take
        the next: tests are left, the run goes on, ``limit`` is not reached, the server
        does not suggest continuing as new, and with no money left nothing is in flight
        (what the tests in flight do not spend decides the next test)."""
        run, progress = self.run, self.run.progress
        return (bool(progress.remaining) and not run.abort_requested and taken < limit
                and not (taken and workflow.info().is_continue_as_new_suggested())
                and not (in_flight and run.out_of_money()))

    def next_test(self, in_flight: set[str]) -> str | None:
        """The next test to drive, out of the queue: the first whose root-cause group's root is
        neither queued nor ``in_flight`` (one bug, one conversation: the group's other tests wait
        for the root's verdict, and its accepted fix usually fixes them along); None: every
        queued test waits for its root."""
        progress = self.run.progress
        for i, test_id in enumerate(progress.remaining):
            root = progress.followers.get(test_id)
            if root is None or (root not in in_flight and root not in progress.remaining):
                return progress.remaining.pop(i)
        return None

    async def fix(self, request: FixRequest, test_id: str, workspace: Workspace,
                  queue: bool = False) -> FixOneTestResult:
        """Run a test's child workflow on ``workspace`` (the run's, or the test's worktree);
        ``request`` as ``RunState.set_aside`` made it for the test."""
        run, progress = self.run, self.run.progress
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
        run.views[test_id].workflow_id = workflow_id
        child = asyncio.ensure_future(workflow.execute_child_workflow(
            FixOneTestWorkflow.run, inp, id=workflow_id, static_summary=f"fix {test_id}",
            static_details=f"run {run_id}, repository {request.repo}\n\nwhen ESCALATED: {ANSWER_HINT}"))
        run.children[test_id] = child
        try:
            return await child
        except (asyncio.CancelledError, ChildWorkflowError) as exc:
            if not run.abort_requested:
                raise ApplicationError(f"fixing {test_id} failed: {exc}") from exc
            return FixOneTestResult(test_id=test_id, state=FixState.ABORTED, attempts=[], usage=Usage())
        finally:
            run.children.pop(test_id, None)

    async def record(self, result: FixOneTestResult, not_merged: str | None = None) -> None:
        """Keep a child's result: the run directory, the test's view, the summary.
        ``not_merged``: its fix was not merged (why); the test goes back to the queue."""
        run, progress, request = self.run, self.run.progress, self.run.request
        summary, test_id = progress.summary, result.test_id
        view = run.views[test_id]
        run.shares.pop(test_id, None)  # what it spent is in its usage now
        await self.steps.on_host(lambda ws: host_activity(
            workspace_acts.record_result, RecordInput(workspace=ws, result=result), ws, request,
            quick_options(request.heartbeat_timeout_s)))
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
        if result.state == FixState.ABORTED and not run.abort_requested:
            run.abort_requested, run.abort_reason = True, f"aborted by a person at {test_id}"
            run.cancel_children()

    async def moved(self, result: FixOneTestResult) -> None:
        """A test's child ended because its worker was lost: count what it spent,
        note it, and make sure the run workspace lives on a worker that is there."""
        run, progress = self.run, self.run.progress
        test_id, view = result.test_id, run.views[result.test_id]
        run.shares.pop(test_id, None)
        progress.summary.usage = progress.summary.usage + result.usage
        progress.summary.attempts += len(result.attempts)
        progress.redriven[test_id] = progress.redriven.get(test_id, 0) + 1
        view.state = FixState.PENDING
        view.history.append(f"worker lost after {len(result.attempts)} attempt(s) "
                            f"({result.host_lost or 'its worktree went with a lost worker'}): driven again")
        if result.host_queue:
            await self.steps.rebuild(HostLost(result.host_queue, result.host_lost or ""))
