"""``QueueDriver``: the run's validation queue (``FixRequest.validation ==
"queue"``), the driver ``FixSuiteWorkflow`` drives its tests with in that mode:
fixes are validated like a merge queue validates pull requests.

Children analyse and propose side by side on the run workspace (the fixer's
tools see their own edits in an overlay; nothing is applied) and send their
candidate to the run. Up to ``concurrency`` children propose at once; a child
waiting for its verdict makes no model calls and does not count. One
validator task takes batches of candidates (edits to disjoint files, in
arrival order, within a weight: ``MOST_BATCH_BYTES``) and checks each on top of the accepted state in a scratch
worktree (``activities/batch.py``): the batch's own tests in one runner
invocation, then one full-suite run. A batch that passes is accepted whole:
applied to the run workspace and recorded, in order, as accepted edit sets
(what a rebuild on another worker replays). A failing batch is bisected, its
halves checked side by side, results reused by content; the fixes that
regress go back to their child as a REGRESSION with the regressing tests. When
neither half fails alone but both together do, the first half is kept and the
second judged on top of it. What is accepted was always validated as a whole:
an abort or a lost worker in the middle of a bisection accepts nothing more.
The batch size doubles while batches pass and halves after a failure.
Two batches are checked at once (``CHECKS_IN_FLIGHT``): while one is judged, the next
(edits to other files, gathered until it is full) is checked on top of it, like a merge
queue's speculation; that check stands when the batch under it was accepted whole and
everything that passed with it still passes, else the batch is checked again on the
accepted state. Batches are accepted in order.
With a test-impact map (``runner/impact.py``) a failing batch first checks
the fixes whose files none of the regressing tests ran, and judges the others
on top of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ..activities import batch as batch_acts
    from ..activities.batch import AcceptInput, CheckInput, CheckResult, RebaseInput
    from ..activities.workspace import AcceptedChange
    from ..domain.candidates import Candidate
    from ..domain.states import FixState, Verdict
    from ..domain.workspace import Workspace
    from ..reports.record import FixOneTestResult
    from ..runner.runs import SuiteRun
    from .driver import Driver
    from .fix_one_test import FixOneTestWorkflow
    from .host import host_activity
    from .options import quick_options, test_run_options
    from .payloads import StateTooLarge, guarded
    from .run_state import RunState, Steps
    from .validation_queue import (
        CHECKS_IN_FLIGHT,
        GATHER_S,
        QueueVerdict,
        batch_full,
        content_key,
        first_size,
        halves,
        next_size,
        take_batch,
        weight,
    )


# A batch's checks: the content checked (its candidates' keys) -> its check, in flight or done.
Checks = dict[tuple[str, ...], asyncio.Future[CheckResult]]


def _here(baseline: SuiteRun | None, ws: Workspace) -> SuiteRun | None:
    """``baseline`` when its files are on ``ws``'s host; None when it was written on a host the run
    has since moved from (the rebuilt baseline, the same accepted state, stands in for it)."""
    if baseline is None or not baseline.statuses_path.startswith(ws.run_dir.rstrip("/") + "/"):
        return None
    return baseline


class _InFlight:
    """A batch being validated, as the batch after it sees it: its candidates (rebased),
    its first check and that check's baseline once known, and whether it was accepted whole."""

    def __init__(self, n: int, candidates: list[Candidate]) -> None:
        self.n = n
        self.candidates = candidates
        loop = asyncio.get_running_loop()
        self.first: asyncio.Future[tuple[asyncio.Future[CheckResult] | None, SuiteRun | None]] = loop.create_future()
        self.judged: asyncio.Future[bool] = loop.create_future()

    def files(self) -> set[str]:
        return {f for c in self.candidates for f in c.files}

    def first_is(self, check: Coroutine[Any, Any, CheckResult] | asyncio.Future[CheckResult], baseline: SuiteRun) -> None:
        """The check this batch is judged by first (started now if not yet)."""
        if not self.first.done():
            self.first.set_result((asyncio.ensure_future(check), baseline))
        elif isinstance(check, Coroutine):
            check.close()

    def settle(self, accepted_whole: bool) -> None:
        if not self.first.done():
            self.first.set_result((None, None))
        if not self.judged.done():
            self.judged.set_result(accepted_whole)


class Aborted(Exception):
    """The run was aborted in the middle of a batch: nothing of it is accepted."""


class QueueDriver(Driver):
    """Drives tests with their fixes validated in batches; the run's ``candidate``
    signal hands it each child's proposed fix (``take``)."""

    def __init__(self, run: RunState, steps: Steps) -> None:
        super().__init__(run, steps)
        self._pending: list[Candidate] = []  # candidates waiting for a batch, in arrival order
        self._waiting: set[str] = set()  # tests whose child waits for a verdict
        self._accepted_in: dict[str, tuple[int, int]] = {}  # test -> (batch, attempt) that accepted its fix
        self._rebased: dict[str, int] = {}  # test -> the batch its fix was last rebased for
        self._queue_changed = 0
        self._closing = False
        self._in_flight = 0  # children running (proposing, or waiting for a verdict)
        self._along: dict[str, str] = {}  # test being fixed -> why an accepted batch made it pass
        self._proposing: list[str] = []  # tests whose child is proposing a fix (not waiting for a verdict)
        self._validating = 0  # batches being checked (their phase stands)

    def take(self, candidate: Candidate) -> None:
        """A child's proposed fix, queued for a batch."""
        if candidate.test_id not in self.run.children:  # its child is gone (aborted): nothing to validate
            return
        self._pending.append(candidate)
        self._waiting.add(candidate.test_id)
        self._queue_changed += 1

    # --- children: proposing side by side ------------------------------------------------

    async def drive(self, limit: int) -> int:
        """Drive tests from the head of the queue with their fixes validated in batches,
        until the queue is empty, the run is aborted or ``limit`` tests were taken;
        returns with nothing in flight, and how many tests it took."""
        run, progress, request = self.run, self.run.progress, self.run.request
        running: dict[asyncio.Future[FixOneTestResult], str] = {}
        taken = 0
        self._closing = False
        validator = asyncio.ensure_future(self._validator())
        while True:
            while (len(running) - len(self._waiting) < request.in_flight
                   and len(running) < request.in_flight + request.max_batch
                   and self.may_take(taken, limit, bool(running))):
                test_id = self.next_test(set(running.values()))
                if test_id is None:  # the queued tests wait for their groups' roots
                    break
                taken += 1
                if run.settled(test_id):
                    continue
                proposing = len(running) - len(self._waiting)
                mine = run.set_aside(test_id, slots=min(request.in_flight - proposing, len(progress.remaining) + 1))
                running[asyncio.ensure_future(self.fix(mine, test_id, progress.workspace, queue=True))] = test_id
            self._in_flight = len(running)
            self._proposing = [t for t in running.values() if t not in self._waiting]
            self._queue_phase()
            if not running:
                break
            seen = self._queue_changed
            changed = asyncio.ensure_future(workflow.wait_condition(lambda: self._queue_changed != seen))
            done, _ = await workflow.wait([*running, changed], return_when=asyncio.FIRST_COMPLETED)
            changed.cancel()
            for task in [t for t in running if t in done]:  # in the order they started: deterministic
                running.pop(task)
                await self._landed(task.result())
        self._closing = True
        await validator
        return taken

    def _queue_phase(self) -> None:
        """The run's phase while no batch is being checked: the tests whose fixes are being proposed."""
        if not self._validating and self._proposing:
            shown, more = self._proposing[:3], len(self._proposing) - 3
            self.steps.set_phase("fixing " + ", ".join(shown) + (f" and {more} more" if more > 0 else ""))

    async def _landed(self, result: FixOneTestResult) -> None:
        progress, test_id = self.run.progress, result.test_id
        self._waiting.discard(test_id)
        self._pending = [c for c in self._pending if c.test_id != test_id]
        if result.host_lost is not None:  # its worker is gone: driven again (its accepted fix, if any, stays)
            await self.moved(result)
            progress.remaining.insert(0, test_id)
            return
        if test_id in self._accepted_in:
            batch, attempt = self._accepted_in[test_id]
            # Accepted (validated, in the workspace): fixed, even if the run was aborted as it was told.
            result = result.model_copy(update={"state": FixState.FIXED, "applied_attempt": attempt, "batch": batch})
        await self.record(result)
        if result.state == FixState.FIXED and result.applied_attempt is None and test_id in self._along:
            self.run.views[test_id].history.append(self._along[test_id])
        if test_id in self._accepted_in:
            batch = self._accepted_in[test_id][0]
            if self._rebased.get(test_id) == batch:
                self.run.views[test_id].history.append(
                    "fix rebased (three-way merge) onto files changed by a fix accepted since it was written")
            self.run.views[test_id].history.append(f"fix accepted in batch {batch}")

    # --- the validator: batches, bisection, verdicts ----------------------------------------

    async def _validator(self) -> None:
        progress, request = self.run.progress, self.run.request
        batches: list[asyncio.Task[None]] = []  # batches being validated, oldest first (at most CHECKS_IN_FLIGHT)
        ahead: _InFlight | None = None  # the latest batch: the next one is checked on top of it until it is judged

        def busy() -> int:
            batches[:] = [b for b in batches if not b.done()]
            return len(batches)

        while True:
            await workflow.wait_condition(
                lambda: (bool(self._pending) and busy() < CHECKS_IN_FLIGHT) or bool(self.run.rollback_queue)
                or (self._closing and not self._pending) or self.run.abort_requested)
            if self.run.abort_requested:
                self._pending.clear()
                await asyncio.gather(*batches)
                await workflow.wait_condition(lambda: self._closing)
                return
            if self.run.rollback_queue:  # between batches: a batch is checked on a state that stays
                await asyncio.gather(*batches)
                ahead = None
                await self.steps.process_rollbacks()
            if not self._pending:
                if self._closing:
                    await asyncio.gather(*batches)
                    return
                continue
            size = progress.batch_size or first_size(request.in_flight, request.max_batch)
            if ahead is not None and ahead.judged.done():
                ahead = None
            judging = ahead.judged if ahead is not None else None
            carried = weight(ahead.candidates) if ahead is not None else 0
            try:  # a batch fills while children are still proposing: for a few seconds at most, or, when it
                # would be checked on top of a batch in flight, until it is full (by count or by weight)
                # or that batch is judged
                await workflow.wait_condition(
                    lambda: batch_full(self._pending, size, carried) or self._in_flight <= len(self._waiting)
                    or self._closing or self.run.abort_requested or bool(self.run.rollback_queue)
                    or (judging is not None and judging.done()),
                    timeout=None if judging is not None else timedelta(seconds=GATHER_S),
                    timeout_summary="a batch fills")
            except asyncio.TimeoutError:
                pass
            if self.run.abort_requested or self.run.rollback_queue:
                continue
            if ahead is not None and ahead.judged.done():
                ahead = None
            batch, self._pending = take_batch(self._pending, size, busy=ahead.files() if ahead else set(),
                                              carried=weight(ahead.candidates) if ahead else 0)
            if not batch:  # what waits edits the files of the batch in flight, or is too heavy to be checked
                # with it: it is checked once that batch is judged, on the accepted state
                await workflow.wait_condition(lambda: ahead is None or ahead.judged.done())
                continue
            progress.batches += 1
            mine = _InFlight(progress.batches, batch)
            batches.append(asyncio.ensure_future(self._batch(mine, size, ahead)))
            ahead = mine

    async def _batch(self, mine: _InFlight, size: int, ahead: _InFlight | None) -> None:
        """Validate one batch (checked on top of ``ahead`` while that one is judged); the next batch size."""
        progress, request = self.run.progress, self.run.request
        n, batch = mine.n, mine.candidates
        self._validating += 1
        passed = False
        try:
            passed = await self._validate_batch(mine, ahead)
        except Aborted:
            return
        except (ActivityError, StateTooLarge) as failed:  # its checks failed for good: its fixes fail
            await self._failed(n, batch, failed)
        finally:
            self._validating -= 1
            mine.settle(passed)
            self._queue_phase()
        progress.batch_size = next_size(size, passed, request.max_batch)

    async def _failed(self, n: int, batch: list[Candidate], failed: ActivityError | StateTooLarge) -> None:
        """A batch whose validation failed for good (its activity's retries spent): nothing of
        it is accepted, each of its fixes fails with the reason, and the queue goes on."""
        cause = failed.cause if isinstance(failed, ActivityError) else failed
        what = f"{failed.activity_type} failed" if isinstance(failed, ActivityError) else "the batch"
        reason = f"the validation of batch {n} failed ({what}: {getattr(cause, 'message', None) or cause or failed})"
        self.run.progress.summary.notes.append(reason)
        await asyncio.gather(*(self._tell(QueueVerdict(test_id=c.test_id, attempt=c.attempt, verdict=Verdict.FAIL,
                                                       batch=n, reason=reason)) for c in batch
                               if c.test_id in self._waiting))

    async def _validate_batch(self, mine: _InFlight, ahead: _InFlight | None) -> bool:
        """Check, bisect, accept what passed, tell every child its verdict; whether the batch passed whole.
        While ``ahead`` (the batch before) is judged, this one is checked on top of it; that check
        stands when ``ahead`` is accepted whole, and is redone on the accepted state otherwise."""
        n, batch = mine.n, mine.candidates
        size = f"{len(batch)} fix" + ("es" if len(batch) > 1 else "")
        self.steps.set_phase(f"validating batch {n} ({size})")
        await self._notify(batch, f"in batch {n} ({size})")
        batch = mine.candidates = await self._rebase(n, batch)
        if not batch:
            return False
        cache: Checks = {}
        spec: Checks = {}  # its check on top of ``ahead``
        watcher = asyncio.ensure_future(self._cancel_on_abort(cache, spec))
        try:
            if ahead is not None and not ahead.judged.done():
                await self._speculate(mine, ahead, cache, spec)
            else:
                mine.first_is(self._check(n, batch, cache, singles=True), self.run.progress.baseline)
            return await self._validate(n, batch, cache)
        finally:
            watcher.cancel()

    async def _speculate(self, mine: _InFlight, ahead: _InFlight, cache: Checks, spec: Checks) -> None:
        """Check ``mine`` on top of ``ahead`` while ``ahead`` is judged; keep that check as
        ``mine``'s first one when ``ahead`` was accepted whole and everything that passed
        with ``ahead`` still passes (compared with the same baseline), else nothing."""
        first, baseline = await ahead.first
        if first is None or baseline is None:  # ahead ended before its first check: judged on the accepted state
            await ahead.judged
            mine.first_is(self._check(mine.n, mine.candidates, cache, singles=True), self.run.progress.baseline)
            return
        check = self._check(mine.n, mine.candidates, spec, singles=True, ahead=ahead.candidates, baseline=baseline)
        task = asyncio.ensure_future(check)
        try:
            accepted_whole = await ahead.judged
            if not accepted_whole:
                task.cancel()
            result = await task
            before = await first
        except (asyncio.CancelledError, ActivityError, StateTooLarge):
            if self.run.abort_requested:
                raise Aborted from None
            result = before = None
        if (result is not None and before is not None and result.ok and result.suite is not None
                and before.suite is not None and set(before.suite.newly_passing) <= set(result.suite.newly_passing)):
            cache[content_key(mine.candidates)] = spec[content_key(ahead.candidates + mine.candidates)]
            mine.first_is(task, baseline)
            return
        self.run.progress.summary.notes.append(
            f"batch {mine.n} was checked again on the accepted state (its check on top of batch {ahead.n} "
            "did not stand)")
        mine.first_is(self._check(mine.n, mine.candidates, cache, singles=True), self.run.progress.baseline)

    async def _rebase(self, n: int, batch: list[Candidate]) -> list[Candidate]:
        """The batch's candidates on the accepted state: those written on files an accepted
        fix changed since are rebased (a three-way merge); one whose merge conflicts goes
        back to its child with the conflict, to be made again (it is not a failed attempt)."""
        progress, request = self.run.progress, self.run.request
        rebased = await self.steps.on_host(lambda ws: host_activity(
            batch_acts.rebase_batch, guarded(f"batch {n}'s rebase input", RebaseInput(workspace=ws, candidates=batch)),
            ws, request, quick_options(request.heartbeat_timeout_s)))
        summary = progress.summary
        summary.rebased += len(rebased.rebased)
        summary.reasked += len(rebased.conflicts)
        for t in rebased.rebased:
            self._rebased[t] = n
        await asyncio.gather(*(self._tell(QueueVerdict(
            test_id=c.test_id, attempt=c.attempt, verdict=Verdict.FAIL, stale=True, batch=n,
            reason=rebased.conflicts[c.test_id])) for c in batch if c.test_id in rebased.conflicts))
        return rebased.candidates

    async def _cancel_on_abort(self, *caches: Checks) -> None:
        """An abort cancels the batch's checks in flight (their test processes are killed)."""
        await workflow.wait_condition(lambda: self.run.abort_requested)
        for check in (c for cache in caches for c in cache.values()):
            if not check.done():
                check.cancel()

    async def _validate(self, n: int, batch: list[Candidate], cache: Checks) -> bool:
        progress = self.run.progress
        first = await self._check(n, batch, cache, singles=True)
        verdicts = [QueueVerdict(test_id=c.test_id, attempt=c.attempt, verdict=Verdict.FAIL, batch=n,
                                 reason=first.still_failing[c.test_id], failure=first.failures.get(c.test_id))
                    for c in batch if c.test_id in first.still_failing]
        rest = [c for c in batch if c.test_id not in first.still_failing]
        accepted: list[Candidate]
        rejected: dict[str, CheckResult]
        if first.ok or not rest:
            accepted, rejected = (batch if first.ok else []), {}
        else:
            if len(rest) > 1:
                self.steps.set_phase(f"bisecting batch {n} ({len(rest)} fixes)")
                await self._notify(rest, f"bisecting batch {n}")
            accepted, rejected = await self._judge(n, [], rest, cache)
        if self.run.abort_requested:
            raise Aborted
        if accepted:
            await self._accept(n, accepted, cache[content_key(accepted)].result())
        for c in accepted:
            verdicts.append(QueueVerdict(test_id=c.test_id, attempt=c.attempt, verdict=Verdict.PASS, batch=n))
        for c in batch:
            if c.test_id in rejected:
                check = rejected[c.test_id]
                fail = c.test_id in check.still_failing
                verdicts.append(QueueVerdict(
                    test_id=c.test_id, attempt=c.attempt, batch=n,
                    verdict=Verdict.FAIL if fail else Verdict.REGRESSION,
                    reason=check.still_failing[c.test_id] if fail else check.why(),
                    failure=check.failures.get(c.test_id) if fail else None))
        checked = [f.result() for f in cache.values() if f.done() and not f.exception()]
        for flaky in sorted({t for r in checked for t in r.flaky} - set(progress.summary.flaky)):
            progress.summary.flaky.append(flaky)
            progress.summary.notes.append(f"{flaky} failed in batch {n}, then passed on a re-run of the same "
                                          "files: flaky, not blamed on a fix")
        await asyncio.gather(*(self._tell(v) for v in verdicts))
        return len(accepted) == len(batch)

    async def _judge(self, n: int, prefix: list[Candidate], candidates: list[Candidate],
                     cache: Checks) -> tuple[list[Candidate], dict[str, CheckResult]]:
        """Which of ``candidates`` to accept on top of the accepted state plus ``prefix``
        (a content already validated), and the rejected ones with the check that
        rejected them. What it accepts was checked as a whole with ``prefix``."""
        whole = await self._check(n, prefix + candidates, cache)
        if whole.ok:
            return candidates, {}
        if len(candidates) == 1:
            return [], {candidates[0].test_id: whole}
        innocent = [c for c in candidates if c.test_id in whole.innocent]
        if innocent and len(innocent) < len(candidates):  # test impact: judge the rest on top of them
            suspects = [c for c in candidates if c.test_id not in whole.innocent]
            if (await self._check(n, prefix + innocent, cache)).ok:
                kept, rejected = await self._judge(n, prefix + innocent, suspects, cache)
                return innocent + kept, rejected
        left, right = halves(candidates)
        on_left, on_right = await asyncio.gather(self._check(n, prefix + left, cache),
                                                 self._check(n, prefix + right, cache))
        if on_left.ok and on_right.ok:  # they fail only together: the first half stays, the second is judged on it
            kept, rejected = await self._judge(n, prefix + left, right, cache)
            return left + kept, rejected
        rejected: dict[str, CheckResult]
        kept_left, rejected = (left, {}) if on_left.ok else await self._judge(n, prefix, left, cache)
        kept_right, rejected_right = await self._judge(n, prefix + kept_left, right, cache)
        return kept_left + kept_right, {**rejected, **rejected_right}

    async def _check(self, n: int, candidates: list[Candidate], cache: Checks, singles: bool = False,
                     ahead: list[Candidate] | None = None, baseline: SuiteRun | None = None) -> CheckResult:
        """The accepted state plus ``candidates`` checked once: a content already checked
        (or being checked, side by side) is not run again. A speculative check adds them
        on top of ``ahead`` (a batch in flight), compared with ``baseline`` (``ahead``'s)."""
        progress, request = self.run.progress, self.run.request
        key = content_key((ahead or []) + candidates)
        if key not in cache:
            if self.run.abort_requested:
                raise Aborted
            label = f"batch-{n}-{len(cache) + 1}" + ("-ahead" if ahead else "")
            cache[key] = asyncio.ensure_future(self.steps.on_host(lambda ws: host_activity(
                batch_acts.check_batch,
                guarded(f"the check {label}'s input", CheckInput(
                    workspace=ws, plan=progress.plan, baseline=_here(baseline, ws) or progress.baseline,
                    failure_run=progress.initial, candidates=candidates, ahead=ahead or [],
                    sandbox=request.sandbox, label=label, singles=singles,
                    impact=progress.impact,
                    rolled_back=[t for t in progress.summary.skipped
                                 if "fix rolled back by hand" in self.run.views[t].history])),
                ws, request, test_run_options(request.sandbox.timeout_s, request.heartbeat_timeout_s))))
        try:
            return await cache[key]
        except (asyncio.CancelledError, ActivityError):
            if self.run.abort_requested:  # cancelled by the abort: nothing of this batch is judged
                raise Aborted from None
            raise

    async def _accept(self, n: int, accepted: list[Candidate], check: CheckResult) -> None:
        """Apply a validated content to the run workspace and record it, in order."""
        progress, request = self.run.progress, self.run.request
        await self.steps.on_host(lambda ws: host_activity(
            batch_acts.accept_batch, guarded(f"batch {n}'s accept input", AcceptInput(workspace=ws, candidates=accepted)),
            ws, request,
            quick_options(request.heartbeat_timeout_s)))
        for c in accepted:
            progress.accepted.append(AcceptedChange(test_id=c.test_id, attempt=c.attempt, changes=c.changes))
            progress.applied[c.test_id] = c.attempt
            self._accepted_in[c.test_id] = (n, c.attempt)
        if check.suite is not None:
            progress.baseline = check.suite.as_baseline()
            queued, known = set(progress.remaining), set(progress.fixed_along)
            progress.fixed_along += [t for t in check.suite.newly_passing if t in queued and t not in known]
            mine = {c.test_id for c in accepted}
            along = [t for t in check.suite.newly_passing if t in self.run.children and t not in mine
                     and t not in self._accepted_in and t not in self._along]
            for t in along:
                self._along[t] = f"passes now: fixed along with batch {n}"
            await asyncio.gather(*(self.run.signal_child(t, FixOneTestWorkflow.passes_now, self._along[t]) for t in along))
        progress.summary.notes.append(f"batch {n}: {len(accepted)} fix(es) accepted ("
                                      + ", ".join(c.test_id for c in accepted[:5])
                                      + (", ..." if len(accepted) > 5 else "") + ")")

    async def _notify(self, batch: list[Candidate], note: str) -> None:
        await asyncio.gather(*(self.run.signal_child(c.test_id, FixOneTestWorkflow.queue_note, note) for c in batch))

    async def _tell(self, verdict: QueueVerdict) -> None:
        self._waiting.discard(verdict.test_id)
        self._queue_changed += 1
        await self.run.signal_child(verdict.test_id, FixOneTestWorkflow.verdict, verdict)
