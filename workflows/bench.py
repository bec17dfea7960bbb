"""The mutant bench (``greenloop bench mutants``): one ordinary Greenloop run per mutant.

The bench's workflow first runs the unmutated repository (a run that fixes nothing: its first
suite run must pass, else the bench stops with a typed error), then starts one
``FixSuiteWorkflow`` child per mutant, at most ``concurrency`` at a time. A mutant whose run finds
no failing test is not kept; a kept one is measured (``activities/bench.py``: the fixer's first
message) and, with ``--fix``, the run's outcome says whether it was fixed, with its attempts,
usage and time. Each run is an ordinary run: visible in the Web UI under its own id
(``<bench>-m01``...), durable, and its escalations end at once (the bench skips them).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from ..activities import bench as bench_acts
    from ..activities.bench import BenchInput, BenchReportInput, BenchResult, MeasureInput, MutantCase, MutantResult
    from ..domain.answers import AnswerChoice
    from ..domain.errors import ErrorKind
    from ..domain.states import RunOutcome
    from ..reports.record import RunSummary
    from ..run_request import FixRequest
    from .fix_suite import FixSuiteWorkflow
    from .options import NON_RETRYABLE_KINDS, ActivityOptions

BENCH_ACTIVITY = ActivityOptions(start_to_close_timeout=timedelta(minutes=10),
                                 retry_policy=RetryPolicy(maximum_attempts=3,
                                                          non_retryable_error_types=NON_RETRYABLE_KINDS))
NOTHING = "greenloop-bench: no test"  # the clean run selects no failure to fix


@workflow.defn
class BenchMutantsWorkflow:
    def __init__(self) -> None:
        self._done = 0

    @workflow.query
    def progress(self) -> int:
        """Mutants whose run has ended."""
        return self._done

    @workflow.run
    async def run(self, inp: BenchInput) -> BenchResult:
        clean = await workflow.execute_child_workflow(
            FixSuiteWorkflow.run, self._request(inp, inp.clean_repo, "clean", select=[NOTHING]),
            id=f"{inp.bench_id}-clean", static_summary=f"bench: {inp.source} before mutation")
        if clean.state != RunOutcome.COMPLETED or clean.initial is None or clean.initial.problems:
            why = (f"{clean.initial.problems} test(s) fail" if clean.initial is not None and clean.initial.problems
                   else f"the run ended {clean.state.value}: {clean.reason.strip()[:500]}")
            raise ApplicationError(f"the suite of {inp.source} does not pass before mutation: {why}",
                                   {"run": clean.run_id, "report": clean.report_html or ""},
                                   type=ErrorKind.VALIDATION_ERROR.value, non_retryable=True)
        slots = asyncio.Semaphore(inp.concurrency)
        results = await asyncio.gather(*(self._mutant(inp, case, slots) for case in inp.cases))
        return await workflow.execute_activity(
            bench_acts.write_bench_report,
            BenchReportInput(bench_id=inp.bench_id, source=inp.source, out_dir=inp.out_dir, fix=inp.fix,
                             results=list(results)), **BENCH_ACTIVITY)

    def _request(self, inp: BenchInput, repo: str, name: str, select: list[str] | None = None) -> FixRequest:
        return inp.request.model_copy(update={
            "repo": repo, "run_dir": f"{inp.out_dir}/runs/{name}", "select": select or inp.request.select,
            "escalation_deadline_s": 1, "escalation_default": AnswerChoice.SKIP})

    async def _mutant(self, inp: BenchInput, case: MutantCase, slots: asyncio.Semaphore) -> MutantResult:
        m = case.mutant
        result = MutantResult(number=case.number, file=m.file, line=m.line, function=m.function, operator=m.operator,
                              before=m.before, after=m.after, run_id=case.run_id(inp.bench_id), kept=False)
        async with slots:
            started = workflow.now()
            summary: RunSummary = await workflow.execute_child_workflow(
                FixSuiteWorkflow.run, self._request(inp, case.repo, case.name), id=result.run_id,
                static_summary=f"bench: {m.file}:{m.line} {m.operator} ({m.function})")
            result.seconds = (workflow.now() - started).total_seconds()
        self._done += 1
        result.state, result.attempts, result.usage = summary.state.value, summary.attempts, summary.usage
        result.failing = summary.initial.problems if summary.initial is not None else 0
        if not summary.baseline_read or summary.initial is None:
            result.why_not = f"the suite was not read ({summary.state.value})"
            return result
        if not result.failing:
            result.why_not = "no test fails"
            return result
        result.kept = True
        result.tests = await workflow.execute_activity(
            bench_acts.measure_mutant, MeasureInput(case=case, run_dir=f"{inp.out_dir}/runs/{case.name}"),
            **BENCH_ACTIVITY)
        if result.tests:
            first = result.tests[0]
            result.in_message, result.rank, result.chars = first.in_message, first.rank, first.chars
        if inp.fix:
            result.fixed = summary.state == RunOutcome.COMPLETED and summary.final is not None \
                and not summary.final.problems and not summary.flaky
        return result
