"""Live progress of a run in the terminal (``greenloop run``, ``greenloop watch``):
a Rich table that redraws in place (each test's state, attempt, last verdict and
elapsed time; the run's phase and, before and between tests, what the run is
doing; the LLM spend against the budget; for each test waiting for a person,
the whole command that answers it), or, when the output is not a terminal (a
pipe, a CI log), plain lines as states change."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.client import Client, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError

from ..domain.llm import Usage
from ..domain.states import FixState
from ..reports.record import FixStatusView, RunSummary
from ..run_request import FixRequest
from ..workflows.fix_one_test import FixOneTestWorkflow
from ..workflows.fix_suite import FixSuiteWorkflow

STATE_STYLE = {"FIXED": "green", "SKIPPED": "yellow", "ESCALATED": "bold yellow", "ABORTED": "red",
               "PENDING": "dim", "ANALYZING": "cyan", "FIXING": "cyan", "VALIDATING": "cyan"}
WAITING = "waiting for a person"  # an ESCALATED test whose workflow waits for an answer


def state_label(view: FixStatusView) -> str:
    return WAITING if view.waiting and view.state == FixState.ESCALATED else view.state.value


class ShellCommand:
    """A command line that stays whole and copyable at any width: it breaks between words
    with a backslash that continues it, and a word wider than the line in pieces quoted
    apart, so pasted into a shell it runs as one command. ``tail`` is shown as it is
    (choices such as ``retry|skip|abort``, the person keeps one)."""

    def __init__(self, argv: list[str], tail: str = "", style: str = "") -> None:
        self.argv, self.tail, self.style = argv, tail, style

    def __str__(self) -> str:
        return " ".join([shlex.quote(a) for a in self.argv] + ([self.tail] if self.tail else []))

    def lines(self, width: int) -> list[str]:
        words = [self._pieces(a, width) for a in self.argv] + ([[self.tail]] if self.tail else [])
        lines: list[str] = []
        line = ""
        for pieces in words:
            for i, piece in enumerate(pieces):
                if i:  # the same word goes on: no space, no indentation
                    lines.append(line + "\\")
                    line = piece
                elif line and len(line) + 1 + len(piece) + 2 > width:  # room for " \\"
                    lines.append(line + " \\")
                    line = "  " + piece
                else:
                    line = f"{line} {piece}" if line else piece
        return [*lines, line]

    @staticmethod
    def _pieces(word: str, width: int) -> list[str]:
        """``word`` quoted for the shell, in pieces that each fit a continued line."""
        room = max(width - 5, 8)  # an indented line that ends with a backslash
        if len(shlex.quote(word)) <= room:
            return [shlex.quote(word)]
        pieces: list[str] = []
        while word:
            n = room
            while n > 1 and len(shlex.quote(word[:n])) > room:
                n -= 1
            pieces.append(shlex.quote(word[:n]))
            word = word[n:]
        return pieces

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        for line in self.lines(options.max_width):
            yield Text(line, style=self.style, no_wrap=True, overflow="ignore")


def elapsed(seconds: float | None) -> str:
    if seconds is None:
        return ""
    s = int(seconds)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Board:
    """What is known of a run, shown live (a terminal) or as plain lines (anything else).

    ``answer_hint(test_id)`` is the command that answers an escalated test."""

    def __init__(self, console: Console, run_id: str, answer_hint: Callable[[str], ShellCommand], quiet: bool = False,
                 live: bool | None = None) -> None:
        self.console, self.run_id, self.answer_hint, self.quiet = console, run_id, answer_hint, quiet
        self.live = (console.is_terminal if live is None else live) and not quiet
        self.phase = ""
        self.base_commit: str | None = None  # the user's commit the fixes apply to, once the run named it
        self.doing = ""  # what the run's own activity in flight is doing (set-up, a suite run)
        self.views: dict[str, FixStatusView] = {}
        self.started: dict[str, datetime] = {}
        self.ended: dict[str, datetime] = {}
        self.spent = 0.0
        self.budget: float | None = None
        self.slow_calls: dict[str, str] = {}  # test -> "waiting for the model for 45s (...)"
        self._live: Live | None = None

    def __enter__(self) -> Board:
        if self.live:
            self._live = Live(self.render(), console=self.console, auto_refresh=False, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self.render(), refresh=True)
            self._live.__exit__(None, None, None)
            self._live = None

    # --- what is learnt -------------------------------------------------------

    def set_phase(self, phase: str) -> None:
        if phase and phase != self.phase:
            self.phase = phase
            if not self.live and not self.quiet:
                self.console.print(f"[dim]{escape(phase)}[/]")

    def set_base_commit(self, commit: str | None) -> None:
        """The commit the run's fixes apply to: in the header, or a plain line when it is learnt."""
        if commit and commit != self.base_commit:
            self.base_commit = commit
            if not self.live and not self.quiet:
                self.console.print(f"base commit: {escape(commit)}")

    def set_doing(self, doing: str) -> None:
        """What the run's activity in flight is doing ("" when none runs); a plain line for a new step."""
        before, self.doing = self.doing, doing
        if doing and doing.split()[0] != (before.split() or [""])[0] and not self.live and not self.quiet:
            self.console.print(f"[dim]  {escape(doing)}[/]")

    def set_test(self, view: FixStatusView, answerable: bool = True) -> None:
        before = self.views.get(view.test_id)
        if not answerable:
            view = view.model_copy(update={"waiting": False})
        self.views[view.test_id] = view
        if before is not None and state_label(before) == state_label(view) or self.live or self.quiet:
            return
        self.console.print(f"  {escape(view.test_id)}: [bold]{escape(state_label(view))}[/]")
        if state_label(view) == WAITING:
            self.console.print("    answer with:")
            self.console.print(self.answer_hint(view.test_id))

    def set_slow_call(self, test_id: str, waiting: str) -> None:
        """A model call of ``test_id`` taking long ("" when none): a line under the table, or a plain
        line when it starts being slow."""
        if not waiting:
            self.slow_calls.pop(test_id, None)
            return
        if test_id not in self.slow_calls and not self.live and not self.quiet:
            self.console.print(f"[dim]  {escape(waiting)}[/]")
        self.slow_calls[test_id] = waiting

    def refresh(self) -> None:
        if self._live is not None:
            self._live.update(self.render(), refresh=True)

    # --- what is shown --------------------------------------------------------

    def _elapsed(self, test_id: str) -> str:
        start = self.started.get(test_id)
        if start is None:
            return ""
        end = self.ended.get(test_id) or datetime.now(timezone.utc)
        return elapsed((end - start).total_seconds())

    def render(self) -> Group:
        waiting = [v for v in self.views.values() if state_label(v) == WAITING]
        title = f"{self.run_id}: {self.phase or 'starting'}" + (f" ({len(waiting)} {WAITING})" if waiting else "")
        table = Table(expand=False)
        for col in ("test", "state", "attempt", "last verdict", "elapsed"):
            table.add_column(col, overflow="fold")
        for v in self.views.values():
            label = state_label(v)
            table.add_row(escape(v.test_id), Text(label, style=STATE_STYLE.get(v.state.value, "")),
                          str(v.attempt or ""), v.last_verdict.value if v.last_verdict else "",
                          self._elapsed(v.test_id))
        budget = f" of ${self.budget:.2f}" if self.budget is not None else " (no budget)"
        lines: list[RenderableType] = [Text(title, style="italic")]
        if self.base_commit:
            lines.append(Text(f"base commit: {self.base_commit}", style="dim"))
        lines.append(table)
        if self.doing:
            lines.append(Text(f"now: {self.doing}", style="cyan"))
        lines += [Text(w, style="cyan") for w in self.slow_calls.values()]
        lines.append(Text(f"LLM spend: ${self.spent:.4f}{budget}"))
        for v in waiting:
            lines.append(Text(f"{v.test_id} waits for a person; answer with:", style="yellow"))
            lines.append(self.answer_hint(v.test_id))
        return Group(*lines)


async def run_request(client: Client, handle: WorkflowHandle) -> FixRequest | None:
    """What the run was started with (its first event's input), or None if it cannot be read."""
    try:
        async for event in handle.fetch_history_events():
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            (request,) = await client.data_converter.decode(payloads, [FixRequest])
            return request
    except (RPCError, ValueError, TypeError):
        return None
    return None


async def base_commit(handle: WorkflowHandle, timeout: timedelta | None = None) -> str | None:
    """The commit a running run's fixes apply to (None: not named yet, or a worker whose code
    has no such query)."""
    try:
        return await handle.query(FixSuiteWorkflow.base_commit, rpc_timeout=timeout)
    except (RPCError, WorkflowQueryFailedError):
        return None


# A model call running this long is named under the table (a slow model, a long answer).
SLOW_CALL_S = 20.0


def running_for(act: PendingActivityInfo) -> float | None:
    """How long a pending activity has been running (its current try), when it has started."""
    if not act.HasField("last_started_time"):
        return None
    return max(datetime.now(timezone.utc).timestamp() - act.last_started_time.ToSeconds(), 0.0)


class Tracker:
    """Fills a ``Board`` from the run's queries and its children's, on each look."""

    def __init__(self, client: Client, handle: WorkflowHandle, board: Board,
                 query_timeout: timedelta | None = None, slow_call_s: float = SLOW_CALL_S) -> None:
        self.client, self.handle, self.board, self.timeout = client, handle, board, query_timeout
        self.slow_call_s = slow_call_s
        self._request_read = False

    async def look(self) -> None:
        b = self.board
        if not self._request_read:
            self._request_read = True
            request = await run_request(self.client, self.handle)
            b.budget = request.llm.budget_usd if request else None
        try:
            phase = await self.handle.query(FixSuiteWorkflow.phase, rpc_timeout=self.timeout)
            views = await self.handle.query(FixSuiteWorkflow.status, rpc_timeout=self.timeout)
            summary = await self.handle.query(FixSuiteWorkflow.summary, rpc_timeout=self.timeout)
        except RPCError:
            return
        b.set_phase(phase)
        if b.base_commit is None:
            b.set_base_commit(await base_commit(self.handle, self.timeout))
        b.set_doing(await self._doing())
        in_flight = Usage()
        for v in views:
            if v.workflow_id and v.test_id not in b.ended:
                await self._times(v)
            if v.state not in (FixState.FIXED, FixState.SKIPPED, FixState.ABORTED) and v.workflow_id:
                try:
                    v = await self.client.get_workflow_handle_for(FixOneTestWorkflow.run, v.workflow_id).query(
                        FixOneTestWorkflow.status, rpc_timeout=self.timeout)
                    in_flight = in_flight + (v.usage or Usage())
                except RPCError:
                    pass  # not started yet: the parent's view stands
            b.set_test(v)
        b.spent = (summary.usage.cost_usd if summary else 0.0) + in_flight.cost_usd
        b.refresh()

    async def _doing(self) -> str:
        """The run's own activity in flight (set-up, a suite run): its name, for how long,
        and what it last said ("" when none runs: its tests' rows say what happens)."""
        try:
            desc = await self.handle.describe(rpc_timeout=self.timeout)
        except RPCError:
            return self.board.doing
        for act in desc.raw_description.pending_activities:
            said = ""
            if act.heartbeat_details.payloads:
                try:
                    said = str((await self.client.data_converter.decode(act.heartbeat_details.payloads))[0])
                except (ValueError, TypeError):
                    said = ""
            seconds = running_for(act)
            took = "" if seconds is None else f" for {elapsed(seconds)}"
            return f"{act.activity_type.name}{took}" + (f": {said}" if said else "")
        return ""

    async def _times(self, view: FixStatusView) -> None:
        try:
            desc = await self.client.get_workflow_handle(view.workflow_id or "").describe(rpc_timeout=self.timeout)
        except RPCError:
            return
        self.board.started[view.test_id] = desc.start_time
        if desc.close_time is not None:
            self.board.ended[view.test_id] = desc.close_time
        waiting = ""
        for act in desc.raw_description.pending_activities:
            seconds = running_for(act)
            role, _, kind = act.activity_type.name.rpartition("_")
            if kind == "turn" and seconds is not None and seconds >= self.slow_call_s:
                waiting = (f"waiting for the model for {elapsed(seconds)} ({view.test_id}, {role}"
                           + (f", attempt {view.attempt}" if view.attempt else "") + ")")
        self.board.set_slow_call(view.test_id, waiting)

    async def finished(self, summary: RunSummary) -> None:
        """The run ended: every test's last state (no longer answerable), its times (also for a
        test that started and ended between two looks) and the whole spend."""
        self.board.set_base_commit(summary.base_commit)
        for v in summary.tests:
            if v.workflow_id and v.test_id not in self.board.ended:
                await self._times(v)
            self.board.set_test(v, answerable=False)
        self.board.spent = summary.usage.cost_usd
        self.board.slow_calls.clear()
        self.board.set_doing("")
        self.board.set_phase("finished")
        self.board.refresh()
