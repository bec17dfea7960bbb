"""The suite's mutable state during one workflow run (``RunState``), and the
steps of ``FixSuiteWorkflow`` a test driver calls back (``Steps``).

``SuiteProgress`` is where the run is: it is carried across continue-as-new.
``RunState`` holds it together with what only this workflow run knows: the
tests' views, the children in flight and the LLM money set aside for them,
what people asked (abort, rollbacks) and whether the workspace is being
rebuilt. The workflow creates it in ``__init__`` (signals may come before
the run starts) and fills in the request and the progress as ``run`` learns
them; the drivers (``workflows/driver.py``) share it with the workflow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ..domain.states import FixState
    from ..domain.workspace import Workspace
    from ..reports.record import FixOneTestResult, FixStatusView
    from ..run_request import FixRequest
    from .fix_one_test import FixOneTestWorkflow
    from .host import HostLost
    from .models import SuiteProgress

# Less LLM money than this left for a test counts as none (a share this small buys no model call).
MIN_SHARE_USD = 0.0001

R = TypeVar("R")
A = TypeVar("A")


class RunState:
    """The suite's mutable state (one per workflow run)."""

    def __init__(self) -> None:
        self.views: dict[str, FixStatusView] = {}  # every failing test's last known state
        self.abort_requested = False
        self.abort_reason = ""
        self.stop_reason = ""  # why the run stopped driving tests on its own (its state grew too large)
        self.children: dict[str, asyncio.Future[FixOneTestResult]] = {}  # test -> its child, while in flight
        self.shares: dict[str, float] = {}  # test in flight -> the LLM money set aside for it
        self.rollback_queue: list[str] = []  # tests whose fix a person asked to roll back
        self.rolled_back: set[str] = set()  # rollbacks done (or refused), for the update waiting on them
        self.rollback_refused: dict[str, str] = {}  # test -> why its rollback was refused
        self.rebuilt_patches: dict[str, str] = {}  # merged test -> its patch in the last rebuilt workspace
        self.rebuilding = False  # a rebuild in flight (the validation queue's checks may lose the host too)
        self._request: FixRequest | None = None
        self._progress: SuiteProgress | None = None

    # --- what the run learns as it starts ----------------------------------------------

    @property
    def request(self) -> FixRequest:
        assert self._request is not None, "the run has not started"
        return self._request

    @request.setter
    def request(self, request: FixRequest) -> None:
        self._request = request

    @property
    def started(self) -> bool:
        """Whether the run has its queue of failures (``progress``)."""
        return self._progress is not None

    @property
    def progress(self) -> SuiteProgress:
        assert self._progress is not None, "the run has no progress before its first suite run"
        return self._progress

    @progress.setter
    def progress(self, progress: SuiteProgress) -> None:
        self._progress = progress
        self.views = {v.test_id: v for v in progress.views}

    # --- abort -----------------------------------------------------------------------------

    def request_abort(self, reason: str) -> None:
        self.abort_requested = True
        self.abort_reason = reason or "aborted by a person"
        self.cancel_children()

    def cancel_children(self) -> None:
        for child in self.children.values():
            if not child.done():
                child.cancel()

    # --- what the run tells its children -----------------------------------------------------

    async def signal_child(self, test_id: str, signal: Callable[[FixOneTestWorkflow, A], None], arg: A) -> None:
        """Send ``signal(arg)`` to ``test_id``'s child, if it is still running."""
        workflow_id = self.views[test_id].workflow_id  # set as its child started
        if test_id not in self.children or workflow_id is None:
            return  # it ended (aborted): nobody to tell
        child = workflow.get_external_workflow_handle_for(FixOneTestWorkflow.run, workflow_id)
        try:
            await child.signal(signal, arg)
        except Exception:  # noqa: BLE001 - it ended meanwhile: nobody to tell
            pass

    async def signal_children(self, signal: Callable[[FixOneTestWorkflow, A], None], arg: A) -> None:
        """Send ``signal(arg)`` to every child still running (in the order they started)."""
        await asyncio.gather(*(self.signal_child(test_id, signal, arg) for test_id in list(self.children)))

    # --- which test is driven, with how much money ----------------------------------------------

    def settled(self, test_id: str) -> bool:
        """Settle a test without driving it, when the run says so (abort, fixed
        already, budgets used up); whether it was settled."""
        progress, request = self.progress, self.request
        summary, view = progress.summary, self.views[test_id]
        if self.abort_requested:
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
        if self.out_of_money():
            view.state = FixState.ESCALATED
            view.history.append(f"the LLM budget of ${request.llm.budget_usd:.2f} was used up: left for a person")
            summary.escalated.append(test_id)
            return True
        return False

    def money_left(self) -> float | None:
        """The run's LLM money neither spent nor set aside for tests in flight; None: no budget."""
        budget = self.request.llm.budget_usd
        if budget is None:
            return None
        return budget - self.progress.summary.usage.cost_usd - sum(self.shares.values())

    def out_of_money(self) -> bool:
        left = self.money_left()
        return left is not None and left < MIN_SHARE_USD

    def set_aside(self, test_id: str, slots: int) -> FixRequest:
        """The request a test's child gets: with an LLM budget, the child may spend
        an equal share of what is left among the ``slots`` tests that can start now
        (``llm.share_usd``), so tests in flight side by side cannot together spend
        more than the run's budget (each stops within one model call of its share)."""
        request, left = self.request, self.money_left()
        if left is None:
            return request
        self.shares[test_id] = max(left, 0.0) / max(slots, 1)
        return request.model_copy(update={"llm": request.llm.model_copy(update={"share_usd": self.shares[test_id]})})


class Steps(Protocol):
    """What a test driver asks of the suite workflow."""

    def set_phase(self, phase: str) -> None:
        """Show where the run is (the ``phase`` query and the Web UI's details)."""
        ...

    async def on_host(self, step: Callable[[Workspace], Awaitable[R]]) -> R:
        """``step`` on the run workspace, rebuilt on another worker when its worker is lost."""
        ...

    async def rebuild(self, lost: HostLost) -> None:
        """Rebuild the run workspace on another worker (nothing when the run already moved)."""
        ...

    async def process_rollbacks(self) -> None:
        """Roll back the fixes people asked to undo (between tests, never mid-attempt)."""
        ...
