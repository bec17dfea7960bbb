"""``EachDriver`` (``FixRequest.validation == "each"``): every attempt is
validated alone, by its own child.

With ``concurrency`` 1 (or no git workspace) one test at a time, in the run
workspace. With ``concurrency`` N > 1 up to N children run at once, each in
its own git worktree started from the run workspace's current files; an
accepted fix is merged back with a three-way merge. A fix that does not
merge cleanly is not applied: its test is queued again, once, and fixed in
the run workspace itself after the tests in flight.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ..activities import workspace as workspace_acts
    from ..activities.workspace import AcceptedChange, MergeInput, RemoveWorktreeInput, Worktree, WorktreeInput
    from ..domain.states import FixState
    from ..reports.record import FixOneTestResult
    from .driver import Driver
    from .host import HostLost, host_activity
    from .options import quick_options, setup_options


class EachDriver(Driver):
    async def drive(self, limit: int) -> int:
        progress = self.run.progress
        if self.run.request.in_flight > 1 and progress.remaining[0] not in progress.retrying:
            return await self._side_by_side(limit)
        # One at a time, in the run workspace (and a concurrent run's fixes that did not merge).
        await self._one(progress.remaining[0])
        progress.remaining.pop(0)
        return 1

    async def _one(self, test_id: str) -> None:
        """Drive one test in the run workspace, or say why it is not driven."""
        run, progress = self.run, self.run.progress
        if run.settled(test_id):
            return
        self.steps.set_phase(f"fixing {test_id}")
        result = await self.fix(run.set_aside(test_id, slots=1), test_id, progress.workspace)
        while result.host_lost is not None:  # its worker is gone: again, on the rebuilt workspace
            await self.moved(result)
            if run.settled(test_id):
                return
            result = await self.fix(run.set_aside(test_id, slots=1), test_id, progress.workspace)
        await self.record(result)
        if result.state == FixState.FIXED and result.applied_changes is not None:
            progress.accepted.append(AcceptedChange(test_id=test_id, attempt=result.applied_attempt or 0,
                                                    changes=result.applied_changes))

    # --- concurrency > 1: tests in flight side by side, each in its own worktree -------------

    async def _side_by_side(self, limit: int) -> int:
        """Take tests from the head of the queue, up to ``concurrency`` in flight at
        once, until the queue's head is a test to retry in the run workspace, the run
        is aborted, or ``limit`` tests were taken (or the server suggests continuing
        as new); returns with nothing in flight, and how many tests it took."""
        run, progress, request = self.run, self.run.progress, self.run.request
        running: dict[asyncio.Future[FixOneTestResult], Worktree] = {}
        taken = 0
        while True:
            while (len(running) < request.in_flight and self.may_take(taken, limit, bool(running))
                   and progress.remaining[0] not in progress.retrying):
                next_id = self.next_test({t.test_id for t in running.values()})
                if next_id is None:  # the queued tests wait for their groups' roots
                    break
                test_id = next_id
                if test_id in progress.retrying:  # retried in the run workspace, once nothing is in flight
                    progress.remaining.insert(0, test_id)
                    break
                taken += 1
                if run.settled(test_id):
                    continue
                tree = await self.steps.on_host(lambda ws: host_activity(
                    workspace_acts.create_worktree, WorktreeInput(workspace=ws, test_id=test_id), ws, request,
                    setup_options(request.heartbeat_timeout_s)))
                if run.abort_requested:  # aborted while the worktree was being made
                    await self._remove(tree)
                    run.settled(test_id)
                    continue
                mine = run.set_aside(test_id, slots=min(request.in_flight - len(running),
                                                        len(progress.remaining) + 1))
                running[asyncio.ensure_future(self.fix(mine, test_id, tree.workspace))] = tree
            if not running:
                return taken
            self.steps.set_phase("fixing " + ", ".join(t.test_id for t in running.values()))
            # A rollback by hand need not wait for the tests in flight: they edit their own worktrees.
            rollback_asked = asyncio.ensure_future(workflow.wait_condition(lambda: bool(run.rollback_queue)))
            done, _ = await workflow.wait([*running, rollback_asked], return_when=asyncio.FIRST_COMPLETED)
            rollback_asked.cancel()
            for task in [t for t in running if t in done]:  # in the order they started: deterministic
                await self._land(task.result(), running.pop(task))
            await self.steps.process_rollbacks()

    async def _land(self, result: FixOneTestResult, tree: Worktree) -> None:
        """A child in a worktree ended: merge its fix (if it has one, and the run
        goes on), keep its result, remove its worktree."""
        run, progress, request = self.run, self.run.progress, self.run.request
        test_id = result.test_id
        if result.host_lost is not None or tree.workspace.host_queue != progress.workspace.host_queue:
            # Its worktree was on a worker that is gone: nothing of it stays; the test goes back to the queue.
            await self.moved(result)
            progress.remaining.insert(0, test_id)
            return
        if result.state == FixState.FIXED and result.applied_attempt is not None and run.abort_requested:
            # Fixed in its worktree as the run was aborted: nothing more goes into the workspace.
            await self.record(result.model_copy(
                update={"state": FixState.ABORTED, "applied_attempt": None, "suite_after": None}))
            run.views[test_id].history.append("fixed in its worktree, but not merged: the run was aborted")
        elif result.state == FixState.FIXED and result.applied_attempt is not None:
            applied = next(a for a in result.attempts if a.number == result.applied_attempt)
            try:
                merge = await host_activity(
                    workspace_acts.merge_worktree,
                    MergeInput(workspace=progress.workspace, worktree=tree, files=applied.files,
                               baseline=progress.baseline, suite_after=result.suite_after),
                    progress.workspace, request, quick_options(request.heartbeat_timeout_s))
            except HostLost as lost:  # the run workspace and this worktree went with their worker
                await self.moved(result.model_copy(update={"host_lost": lost.reason, "host_queue": lost.queue}))
                progress.remaining.insert(0, test_id)
                return
            if merge.merged:
                await self.record(result)
                progress.merged[test_id] = merge.patch or ""
                progress.accepted.append(AcceptedChange(test_id=test_id, attempt=result.applied_attempt,
                                                        patch_text=merge.patch_text))
                if merge.baseline is not None:
                    progress.baseline = merge.baseline
                run.views[test_id].history.append("fix merged into the run workspace")
            else:
                await self.record(result, not_merged=(
                    f"fixed in its worktree, but the fix was not merged: {merge.reason}; queued again, "
                    "to be fixed in the run workspace after the tests in flight"))
        else:
            await self.record(result)
        await self._remove(tree)

    async def _remove(self, tree: Worktree) -> None:
        progress, request = self.run.progress, self.run.request
        if tree.workspace.host_queue != progress.workspace.host_queue:
            return  # it went with a lost worker
        try:
            await host_activity(
                workspace_acts.remove_worktree, RemoveWorktreeInput(workspace=progress.workspace, worktree=tree),
                progress.workspace, request, quick_options(request.heartbeat_timeout_s))
        except HostLost:
            pass  # the next activity on the run's files rebuilds the workspace
