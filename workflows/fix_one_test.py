"""``FixOneTestWorkflow``: one failing test through the state machine

    PENDING → ANALYZING → FIXING → VALIDATING → FIXED | SKIPPED | ESCALATED → (answer) | ABORTED

Each attempt analyses the failure (with what earlier attempts tried and why
they failed), asks the fixer for an edit set, applies it with backups and
validates it: the test alone first, then the whole suite against the
baseline. FAIL and REGRESSION roll the attempt's edits back exactly before
the next attempt. When attempts run out the test is ESCALATED and waits for
a person's ``answer`` (retry N more / skip / abort; an update or a signal, as
typed in the Web UI or sent by the CLI), or for the deadline's default answer.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from ..activities import batch as batch_acts
    from ..activities import edits as edit_acts
    from ..activities import testing as testing_acts
    from ..activities.analysis import AnalyzeInput
    from ..activities.batch import CheckInput
    from ..activities.edits import ApplyInput, RollbackInput
    from ..activities.fixing import FixInput, FixProposal
    from ..activities.testing import SingleInput, SuiteInput
    from ..domain.answers import Answer, AnswerChoice
    from ..domain.attempts import AttemptRecord, CandidateRecord
    from ..domain.candidates import Candidate
    from ..domain.changes import FileChange
    from ..domain.errors import Refused
    from ..domain.llm import LLMSettings, Usage
    from ..domain.states import FixState, Verdict
    from ..domain.suspects import Suspect
    from ..reports.record import FixOneTestResult, FixStatusView
    from ..runner.runs import SingleRun, SuiteRun
    from ..workspace.backups import slug
    from .control import ANSWER_HINT, parse_answer, shown
    from .conversation import analyzer_conversation, fixer_conversation
    from .host import HostLost, host_activity
    from .models import FixOneTestInput, WorkspaceMoved
    from .options import quick_options, test_run_options
    from .search import upsert_state, write_final_details
    from .validation_queue import CANDIDATE_SIGNAL, QueueVerdict
    from .waiting import StateReporter


BY_DEADLINE = "deadline"  # who answered an escalation nobody answered in time
# What failed, by activity, for a failed attempt's reason.
STEPS = {
    "apply_edits": "the edits could not be applied", "run_single_test": "the test could not be run",
    "run_suite": "the suite could not be run", "rollback_edits": "the rollback failed",
    "check_batch": "the candidate's test could not be run",
    "start_fix": "the fixer failed", "fixer_turn": "the fixer failed", "fixer_tools": "the fixer failed",
    "finish_fix": "the fixer failed",
    "start_analysis": "the analysis failed", "analyzer_turn": "the analysis failed",
    "analyzer_tools": "the analysis failed", "finish_analysis": "the analysis failed",
}


SUSPECTS_KEPT = 8   # an attempt keeps this many of its ranked suspects (reports)
SUSPECTS_SHOWN = 3  # the Web UI's details name this many


def _suspects_line(attempts: list[AttemptRecord]) -> str:
    """The latest attempt's top suspects, for the Web UI's details."""
    none: list[Suspect] = []
    latest = next((a.suspects for a in reversed(attempts) if a.suspects), none)
    return "; ".join(f"{s.function} ({s.file}:{s.start})" for s in latest[:SUSPECTS_SHOWN])


def candidate_llm(llm: LLMSettings, k: int, candidate: int) -> LLMSettings:
    """What one of an attempt's ``k`` candidate conversations may spend: a ``k``-th of the money
    left, and of the test runs and commands (the first candidates take the remainder)."""
    def part(n: int) -> int:
        return n // k + (1 if candidate <= n % k else 0)
    return llm.model_copy(update={
        "left_usd": None if llm.left_usd is None else llm.left_usd / k,
        "max_test_runs": part(llm.max_test_runs), "max_commands": part(llm.max_commands)})


def failed_step(exc: ActivityError) -> str:
    """A failed attempt's reason, from the activity error that ended it."""
    cause = exc.cause
    what = cause.message if isinstance(cause, ApplicationError) else str(cause or exc)
    kind = f" ({cause.type})" if isinstance(cause, ApplicationError) and cause.type else ""
    return f"{STEPS.get(exc.activity_type or '', f'{exc.activity_type} failed')}{kind}: {what}"


@workflow.defn
class FixOneTestWorkflow:
    def __init__(self) -> None:
        self._state = FixState.PENDING
        self._test_id = ""
        self._attempts: list[AttemptRecord] = []
        self._history: list[str] = []
        self._answer: Answer | None = None
        self._usage = Usage()
        self._regressions_prevented = 0
        self._applied_attempt: int | None = None
        self._suite_after: SuiteRun | None = None
        self._latest_failure: SingleRun | None = None  # how the test failed alone after the last attempt
        self._waiting = False  # ESCALATED and waiting for a person's answer
        self._note = ""  # what the last state change said
        self._ignored: list[str] = []  # answers by signal that the state could not take
        self._changes: dict[int, list[FileChange]] = {}  # attempt -> the changes it applied (compact)
        self._host_lost: HostLost | None = None
        self._verdicts: dict[int, QueueVerdict] = {}  # validation queue: attempt -> the run's verdict
        self._passes_now: str | None = None  # validation queue: why the test passes without a fix of its own
        self._remade: list[AttemptRecord] = []  # validation queue: attempts made again on the current files
        self._attempt_started = 0.0
        self._reporter = StateReporter()  # tells the run each state this test enters
        self._moves: list[WorkspaceMoved] = []  # the run workspace's moves, not yet followed

    # --- what people see ---------------------------------------------------------

    @workflow.query
    def status(self) -> FixStatusView:
        """State, attempt, last verdict and history of this test."""
        return self._view(history=True)

    def _view(self, history: bool) -> FixStatusView:
        last = self._attempts[-1].verdict if self._attempts else None
        return FixStatusView(
            test_id=self._test_id, state=self._state, attempt=len(self._attempts),
            last_verdict=last, history=list(self._history) if history else [],
            workflow_id=workflow.info().workflow_id, usage=self._usage, waiting=self._waiting,
        )

    def _set(self, state: FixState, note: str = "") -> None:
        self._state = state
        line = f"{state.value}" + (f": {note}" if note else "")
        self._history.append(line)
        upsert_state(state.value)
        self._note = note
        self._show()
        self._reporter.tell(self._view(history=False))

    def _show(self) -> None:
        workflow.set_current_details(self._details())

    def _details(self) -> str:
        """The Web UI's current details: the test, its state, the last verdict,
        what to type when it waits for an answer, and answers that were ignored."""
        attempt = len(self._attempts)
        verdicts = ", ".join(f"#{a.number} {a.verdict.value if a.verdict else '?'}" for a in self._attempts)
        last = next((a for a in reversed(self._attempts) if a.verdict), None)
        return (
            f"**{self._test_id}**\n\nstate: **{self._state.value}**"
            + (f" (attempt {attempt})" if attempt else "")
            + (f"\n\nlast verdict: **{last.verdict.value}**" + (f" ({last.reason})" if last.reason else "")
               if last and last.verdict else "")
            + (f"\n\nattempts: {verdicts}" if verdicts else "")
            + (f"\n\nsuspects: {suspects}" if (suspects := _suspects_line(self._attempts)) else "")
            + (f"\n\n{self._note}" if self._note else "")
            + (f"\n\nto answer: {ANSWER_HINT}" if self._waiting else "")
            + "".join(f"\n\nignored: {line}" for line in self._ignored[-3:])
        )

    # --- what people answer ------------------------------------------------------

    @workflow.update
    async def answer(self, answer: object) -> str:
        """A person's answer to the escalation: retry N more attempts, skip or abort
        (``"skip"``, ``{"choice": "retry", "attempts": 2}`` or an ``Answer``)."""
        answer = parse_answer(answer, by="an update")
        self._answer = answer
        # Done once the run loop has consumed this answer (it moves on, or resets
        # the answer for a new escalation).
        await workflow.wait_condition(lambda: self._state != FixState.ESCALATED or self._answer is not answer)
        return self._state.value

    @answer.validator
    def _validate_answer(self, answer: object) -> None:
        parse_answer(answer, by="an update")
        refused = self._refusal()
        if refused:
            raise Refused(refused)

    @workflow.signal(name="answer")
    def answer_signal(self, answer: object) -> None:
        """The same answer as a signal (tools and UIs that only send signals). One
        that cannot be read, or that the state cannot take, is recorded and ignored:
        the test's history and current details say so."""
        try:
            parsed = parse_answer(answer, by="a signal")
        except ValueError as exc:
            return self._ignore(f"signal answer ignored: {exc}")
        refused = self._refusal()
        if refused:
            return self._ignore(f"signal answer {shown(answer)} ignored: {refused}")
        self._answer = parsed

    def _refusal(self) -> str:
        """Why the state cannot take an answer now ("" when it can)."""
        if self._state != FixState.ESCALATED or not self._waiting:
            return (f"test {self._test_id} is {self._state.value}, not waiting for an answer "
                    "(only an ESCALATED test takes retry/skip/abort)")
        if self._answer is not None:
            return "this escalation already has an answer"
        return ""

    def _ignore(self, line: str) -> None:
        self._history.append(line)
        self._ignored.append(line)
        self._show()

    # --- what the run tells a candidate in its validation queue ------------------------

    @workflow.signal
    def verdict(self, verdict: QueueVerdict) -> None:
        """The run's verdict on this test's candidate fix."""
        self._verdicts[verdict.attempt] = verdict

    @workflow.signal
    def passes_now(self, reason: str) -> None:
        """The test passes on the run's accepted state (a fix accepted for another test fixed it
        too): it ends FIXED at its next step, with no fix of its own."""
        self._passes_now = reason

    @workflow.signal
    def queue_note(self, note: str) -> None:
        """Where the candidate is in the run's validation queue ("in batch 3 (8 fixes)", "bisecting")."""
        if self._state == FixState.VALIDATING:
            self._note = note
            self._show()

    @workflow.signal
    def workspace_moved(self, moved: WorkspaceMoved) -> None:
        """The run workspace was rebuilt on another worker: a test working on it (one
        waiting for its verdict or for an answer) takes its next steps there."""
        self._moves.append(moved)

    def _follow_moves(self) -> None:
        for moved in self._moves:
            if self._inp.workspace == moved.lost:
                self._inp = self._inp.model_copy(update={
                    "workspace": moved.now, "plan": moved.plan, "failure_run": moved.failure_run,
                    "baseline": moved.baseline})
                self._history.append(f"the run moved to {moved.now.host_queue or 'another worker'}: "
                                     "its next steps go there")
        self._moves.clear()

    # --- the state machine -------------------------------------------------------

    @workflow.run
    async def run(self, inp: FixOneTestInput) -> FixOneTestResult:
        result = await self._fix(inp)
        # Before completing: the run has the last state, and the last details stay in the
        # workflow's memo, true once no worker is left to answer the Web UI's query.
        await self._reporter.delivered()
        write_final_details(self._details())
        return result

    async def _fix(self, inp: FixOneTestInput) -> FixOneTestResult:
        self._inp = inp
        self._test_id = inp.test_id
        self._set(FixState.PENDING)
        budget = inp.request.max_attempts
        try:
            while True:
                escalate_now = False
                while len(self._attempts) < budget and not escalate_now:
                    if self._out_of_time():
                        self._history.append("time budget used up")
                        break
                    if self._out_of_money():
                        # No answer could buy more: left for a person, without waiting for one.
                        self._set(FixState.ESCALATED, f"its share of the LLM budget "
                                  f"(${self._inp.request.llm.share_usd:.4f}) was used up: left for a person")
                        return self._result()
                    if self._passes_now:
                        break
                    verdict, escalate_now = await self._attempt(len(self._attempts) + 1)
                    if verdict is Verdict.PASS:
                        self._set(FixState.FIXED, f"fixed on attempt {len(self._attempts)}")
                        return self._result()
                answer = None if self._passes_now else await self._escalate()
                if answer is None:  # it passes now: fixed along with another test's fix
                    self._applied_attempt = None
                    self._history.append(self._passes_now or "")
                    self._set(FixState.FIXED, self._passes_now or "")
                    return self._result()
                if answer.choice is AnswerChoice.RETRY and answer.by == BY_DEADLINE and (
                        self._out_of_time() or self._out_of_money()):
                    # The default answer never outlives the run's budgets: no one asked for more.
                    self._set(FixState.ESCALATED, "the deadline's default answer is retry, but the test's "
                              "budget is used up: left for a person")
                    return self._result()
                if answer.choice is AnswerChoice.RETRY:
                    budget = len(self._attempts) + answer.attempts
                    self._history.append(f"retry {answer.attempts} more, answered by {answer.by}")
                    continue
                if answer.choice is AnswerChoice.SKIP:
                    self._set(FixState.SKIPPED, f"skipped by {answer.by}")
                else:
                    self._set(FixState.ABORTED, f"aborted by {answer.by}")
                return self._result()
        except HostLost as lost:
            # The worker holding this test's workspace is gone: nothing of it stays; the run
            # rebuilds the workspace on another worker and drives the test again there.
            self._host_lost = lost
            self._history.append(f"{lost.message}; the test is driven again on another worker")
            return self._result()
        except asyncio.CancelledError:
            # Cancellation (abort of the run): undo this test's unvalidated edits, then stop.
            if self._applied_attempt is not None and self._state != FixState.FIXED:
                try:
                    await self._rollback(self._applied_attempt)
                except HostLost:
                    pass  # its edits went with the lost worker
            self._set(FixState.ABORTED, "run aborted")
            return self._result()

    def _count(self, usage: Usage) -> None:
        self._usage = self._usage + usage

    def _out_of_money(self) -> bool:
        share = self._inp.request.llm.share_usd
        return share is not None and self._usage.cost_usd >= share

    def _llm(self) -> LLMSettings:
        """Settings for the next conversation: it stops once this test's share is spent."""
        llm = self._inp.request.llm
        if llm.share_usd is None:
            return llm
        return llm.model_copy(update={"left_usd": max(llm.share_usd - self._usage.cost_usd, 0.0)})

    def _out_of_time(self) -> bool:
        deadline = self._inp.deadline_unix
        return deadline is not None and workflow.now().timestamp() >= deadline

    async def _attempt(self, number: int) -> tuple[Verdict, bool]:
        """One analyse → fix → validate cycle. Returns the verdict and whether
        to escalate at once (the fake-fix policy says a person must look).
        An activity that fails inside it (its retries spent) fails the attempt,
        with the reason, and its edits are rolled back: never the run."""
        record = AttemptRecord(number=number)
        self._attempts.append(record)
        try:
            return await self._attempt_steps(number, record)
        except ActivityError as exc:
            if is_cancelled_exception(exc):
                raise
            record.verdict, record.reason = Verdict.FAIL, failed_step(exc)
            self._history.append(f"attempt {number}: FAIL ({record.reason})")
            if self._applied_attempt == number:
                await self._rollback(number)
            return Verdict.FAIL, False

    async def _attempt_steps(self, number: int, record: AttemptRecord) -> tuple[Verdict, bool]:
        self._follow_moves()
        inp = self._inp
        self._attempt_started = workflow.now().timestamp()

        self._set(FixState.ANALYZING)
        analyze_input = AnalyzeInput(run_id=inp.run_id, workspace=inp.workspace, test_id=inp.test_id,
                                     failure_run=inp.failure_run, attempts=self._earlier(number), llm=self._llm(),
                                     plan=inp.plan, sandbox=inp.request.sandbox, latest_failure=self._latest_failure)
        note = await analyzer_conversation(analyze_input, inp.request, self._count)
        record.usage = note.usage
        record.analysis = f"{note.kind}: {note.evidence}" + (f"\n{note.llm_analysis}" if note.llm_analysis else "")
        record.suspects = note.suspects[:SUSPECTS_KEPT]
        if self._out_of_money():
            record.verdict, record.reason = Verdict.FAIL, "the analysis used up the test's share of the LLM budget"
            self._history.append(f"attempt {number}: {record.reason}")
            return Verdict.FAIL, False

        self._set(FixState.FIXING)
        fix_input = FixInput(run_id=inp.run_id, workspace=inp.workspace, plan=inp.plan, test_id=inp.test_id,
                             attempt=number, failure_run=inp.failure_run, analysis=note,
                             attempts=self._earlier(number), llm=self._llm(), sandbox=inp.request.sandbox)
        if inp.request.candidates > 1:
            record.test_runs, record.commands = note.test_runs, note.commands  # the candidates' add up
            return await self._candidates(number, record, fix_input)
        proposal = await fixer_conversation(fix_input, inp.request, self._count)
        record.usage = record.usage + proposal.usage
        record.test_runs, record.commands = note.test_runs + proposal.test_runs, note.commands + proposal.commands
        if not proposal.changes:
            record.verdict, record.reason = Verdict.FAIL, proposal.failure_reason or "no edit proposed"
            self._history.append(f"attempt {number}: {record.reason}")
            return Verdict.FAIL, proposal.escalate
        return await self._try(number, record, proposal)

    async def _candidates(self, number: int, record: AttemptRecord, fix_input: FixInput) -> tuple[Verdict, bool]:
        """``--candidates K``: K fixer conversations at once, each with its share of the budgets; their
        fixes' own test checked side by side (``_own_tests``); those that pass validated smallest first
        (changed lines; ties: the first asked), each as a single fix is, until one passes: that one is
        kept. Every candidate is recorded with its size and verdict."""
        inp, k = self._inp, self._inp.request.candidates
        inputs = [fix_input.model_copy(update={"candidate": c, "llm": candidate_llm(fix_input.llm, k, c)})
                  for c in range(1, k + 1)]
        done = await asyncio.gather(*(fixer_conversation(i, inp.request, self._count) for i in inputs),
                                    return_exceptions=True)
        proposals: list[FixProposal | None] = []
        for c, outcome in enumerate(done, 1):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, ActivityError) or is_cancelled_exception(outcome):
                    raise outcome
                record.candidates.append(CandidateRecord(number=c, verdict=Verdict.FAIL, reason=failed_step(outcome)))
                proposals.append(None)
                continue
            record.usage = record.usage + outcome.usage
            record.test_runs, record.commands = record.test_runs + outcome.test_runs, record.commands + outcome.commands
            if not outcome.changes:
                record.candidates.append(CandidateRecord(
                    number=c, verdict=Verdict.FAIL, reason=outcome.failure_reason or "no edit proposed"))
            else:
                record.candidates.append(CandidateRecord(
                    number=c, size=outcome.changed_lines(), files=outcome.files))
            proposals.append(outcome if outcome.changes else None)
        escalate = any(isinstance(p, FixProposal) and p.escalate for p in done)
        ready = sorted((cand for cand in record.candidates if proposals[cand.number - 1]),
                       key=lambda r: (r.size, r.number))
        passing = await self._own_tests(number, ready, proposals)
        for cand in passing:
            proposal = proposals[cand.number - 1]
            assert proposal is not None
            verdict, _ = await self._try(number, record, proposal, cand.number)
            if not self._attempts or self._attempts[-1] is not record:  # made again on the current files
                return verdict, False
            cand.verdict, cand.reason = verdict, record.reason
            if verdict is Verdict.PASS:
                cand.kept = True
                for other in passing:
                    if other.verdict is None:
                        other.reason = "its test passes alone; a smaller passing fix was kept"
                return verdict, False
        regressed = any(c.verdict is Verdict.REGRESSION for c in record.candidates)
        record.verdict = Verdict.REGRESSION if regressed else Verdict.FAIL
        record.reason = f"none of {k} candidates passed: " + "; ".join(c.line() for c in record.candidates)
        if not passing:
            self._history.append(f"attempt {number}: {record.reason}")
        return record.verdict, escalate

    async def _own_tests(self, number: int, ready: list[CandidateRecord],
                         proposals: list[FixProposal | None]) -> list[CandidateRecord]:
        """Each candidate's own test, checked side by side, each in its own scratch worktree of the
        workspace (as the validation queue checks a batch): those whose test fails are FAIL with
        the failure; the others are returned, smallest first, to be validated whole one by one."""
        inp = self._inp
        if ready:
            self._set(FixState.VALIDATING, f"checking {len(ready)} candidates' test side by side")

        def check(cand: CandidateRecord) -> CheckInput:
            proposal = proposals[cand.number - 1]
            assert proposal is not None
            return CheckInput(
                workspace=inp.workspace, plan=inp.plan, baseline=inp.baseline, failure_run=inp.failure_run,
                candidates=[Candidate(test_id=inp.test_id, attempt=number, changes=proposal.changes,
                                      started_at=self._attempt_started)],
                sandbox=inp.request.sandbox, label=f"{slug(inp.test_id)}-{number}-candidate-{cand.number}",
                suite=False)
        checked = await asyncio.gather(*(host_activity(
            batch_acts.check_batch, check(cand), inp.workspace, inp.request,
            test_run_options(inp.request.sandbox.timeout_s, inp.request.heartbeat_timeout_s)) for cand in ready),
            return_exceptions=True)
        passing: list[CandidateRecord] = []
        failures: list[SingleRun] = []
        for cand, outcome in zip(ready, checked, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, ActivityError) or is_cancelled_exception(outcome):
                    raise outcome
                cand.verdict, cand.reason = Verdict.FAIL, failed_step(outcome)
            elif outcome.ok:
                passing.append(cand)
                continue
            else:
                cand.verdict, cand.reason = Verdict.FAIL, outcome.still_failing.get(inp.test_id) or outcome.why()
                failures += [outcome.failures[inp.test_id]] if inp.test_id in outcome.failures else []
            self._history.append(f"attempt {number}: candidate {cand.number}'s test: FAIL ({cand.reason})")
        if failures and not passing:
            self._latest_failure = failures[0]  # the next attempt analyses the smallest candidate's failure
        return passing

    async def _try(self, number: int, record: AttemptRecord, proposal: FixProposal,
                   candidate: int | None = None) -> tuple[Verdict, bool]:
        """Validate one proposed fix (applied here, or through the run's validation queue);
        ``candidate``: which of the attempt's candidates it is (history lines say so)."""
        inp = self._inp
        assert proposal.changes
        record.rationale = proposal.rationale
        if candidate is not None:
            self._history.append(f"attempt {number}: validating candidate {candidate}")
        if inp.queue:
            return await self._queued(number, record, proposal)

        applied = await host_activity(
            edit_acts.apply_edits,
            ApplyInput(workspace=inp.workspace, test_id=inp.test_id, attempt=number, changes=proposal.changes),
            inp.workspace, inp.request, quick_options(inp.request.heartbeat_timeout_s),
        )
        self._applied_attempt = number
        self._changes[number] = proposal.changes
        record.diff, record.files = applied.diff, applied.files

        self._set(FixState.VALIDATING)
        verdict, reason = await self._validate(number)
        record.verdict, record.reason = verdict, reason
        self._history.append(f"attempt {number}: {verdict.value}" + (f" ({reason})" if reason else ""))
        if verdict is not Verdict.PASS:
            if verdict is Verdict.REGRESSION:
                self._regressions_prevented += 1
            await self._rollback(number)
        return verdict, False

    def _earlier(self, number: int) -> list[AttemptRecord]:
        """What the attempt ``number`` is told of: the earlier attempts, and this one's own
        proposals the run sent back to be made again (with the conflict that stopped each)."""
        return self._attempts[:-1] + [r for r in self._remade if r.number == number]

    async def _queued(self, number: int, record: AttemptRecord, proposal: FixProposal) -> tuple[Verdict, bool]:
        """Validation queue: send the candidate to the run and wait for its verdict.
        Nothing is applied here: the run applies a fix to the workspace once its batch passed."""
        changes = proposal.changes
        record.diff, record.files = proposal.diff, proposal.files
        self._set(FixState.VALIDATING, "waiting for a batch")
        parent = workflow.info().parent
        assert parent is not None, "a queued test is always a child of its run"
        # By name: the run's module imports this one.
        await workflow.get_external_workflow_handle(parent.workflow_id).signal(CANDIDATE_SIGNAL, Candidate(
            test_id=self._test_id, attempt=number, changes=changes, started_at=self._attempt_started))
        await workflow.wait_condition(lambda: number in self._verdicts)
        verdict = self._verdicts.pop(number)
        if verdict.stale:  # written on files a fix accepted meanwhile changed: made again, not counted
            remade = self._attempts.pop()
            remade.reason = f"made again on the current files: {verdict.reason}"
            self._remade.append(remade)
            self._history.append(f"attempt {number} {remade.reason}")
            return Verdict.FAIL, False
        record.verdict, record.reason = verdict.verdict, verdict.reason
        if verdict.failure is not None:
            self._latest_failure = verdict.failure  # the next attempt analyses this failure
        where = f" in batch {verdict.batch}" if verdict.batch is not None else ""
        self._history.append(f"attempt {number}: {verdict.verdict.value}{where}"
                             + (f" ({verdict.reason})" if verdict.reason else ""))
        if verdict.verdict is Verdict.PASS:
            self._applied_attempt = number
            self._changes[number] = changes
        elif verdict.verdict is Verdict.REGRESSION:
            self._regressions_prevented += 1
        return verdict.verdict, False

    async def _validate(self, number: int) -> tuple[Verdict, str]:
        """The test alone first; the whole suite only when it passes."""
        inp = self._inp
        single = await host_activity(
            testing_acts.run_single_test,
            SingleInput(workspace=inp.workspace, plan=inp.plan, test_id=inp.test_id, failure_run=inp.failure_run,
                        sandbox=inp.request.sandbox, label=f"validate-{number}-single"),
            inp.workspace, inp.request,
            test_run_options(inp.request.sandbox.timeout_s, inp.request.heartbeat_timeout_s),
        )
        if not single.passed:
            self._latest_failure = single  # the next attempt analyses this failure
            return Verdict.FAIL, single.failure_reason()
        suite = await host_activity(
            testing_acts.run_suite,
            SuiteInput(workspace=inp.workspace, plan=inp.plan, label=f"validate-{number}-suite",
                       sandbox=inp.request.sandbox, compare_to=inp.baseline, focus=inp.test_id),
            inp.workspace, inp.request,
            test_run_options(inp.request.sandbox.timeout_s, inp.request.heartbeat_timeout_s),
        )
        self._suite_after = suite
        broken = suite.broken_since(inp.baseline, by="the fix", after="the fix")
        if broken:
            return Verdict.REGRESSION, broken
        if suite.regression_count:
            shown = ", ".join(suite.regressions[:5])
            more = f" and {suite.regression_count - 5} more" if suite.regression_count > 5 else ""
            return Verdict.REGRESSION, f"{suite.regression_count} test(s) that passed now fail: {shown}{more}"
        if suite.passed_now < suite.passed_before:
            return Verdict.REGRESSION, f"fewer tests pass ({suite.passed_now} < {suite.passed_before})"
        if suite.focus_failing:
            return Verdict.FAIL, "the test passes alone but fails in the full suite"
        return Verdict.PASS, ""

    async def _rollback(self, number: int) -> None:
        await host_activity(
            edit_acts.rollback_edits,
            RollbackInput(workspace=self._inp.workspace, test_id=self._inp.test_id, attempt=number),
            self._inp.workspace, self._inp.request, quick_options(self._inp.request.heartbeat_timeout_s),
        )
        self._applied_attempt = None

    async def _escalate(self) -> Answer | None:
        """Wait for a person's answer, or the deadline's default answer; None when the
        run says meanwhile that the test passes now."""
        self._answer = None
        inp = self._inp
        self._waiting = True
        self._set(FixState.ESCALATED, f"{len(self._attempts)} attempt(s) failed; waiting for retry/skip/abort")
        try:
            await workflow.wait_condition(
                lambda: self._answer is not None or self._passes_now is not None,
                timeout=timedelta(seconds=inp.request.escalation_deadline_s),
                timeout_summary="escalation deadline",
            )
        except asyncio.TimeoutError:
            self._answer = Answer(choice=inp.request.escalation_default, by=BY_DEADLINE)
        self._waiting = False
        return self._answer

    def _result(self) -> FixOneTestResult:
        return FixOneTestResult(
            test_id=self._test_id, state=self._state, attempts=self._attempts, usage=self._usage,
            regressions_prevented=self._regressions_prevented, answer=self._answer,
            applied_attempt=self._applied_attempt if self._state == FixState.FIXED else None,
            suite_after=self._suite_after if self._state == FixState.FIXED else None,
            applied_changes=self._changes.get(self._applied_attempt or 0) if self._state == FixState.FIXED else None,
            host_lost=self._host_lost.reason if self._host_lost else None,
            host_queue=self._host_lost.queue if self._host_lost else None,
            remade=list(self._remade),
        )

