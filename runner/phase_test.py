"""The phase-testing agent as a function: validated input in, the
protocol's output out, with the retry loop of its flowchart (test failures
and timeouts are retried with backoff, a timeout with a longer limit; build
failures and bad input are not)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from ..domain.errors import ErrorKind, GreenloopError
from ..sandbox.models import SandboxSettings
from .execute import run_tests
from .plan import SuitePlan, plan_tests
from .protocol import FailingTest, PhaseTestInput, PhaseTestOutput, ProtocolError, error_output

TIMEOUT_GROWTH = 1.5


async def execute(inp: PhaseTestInput, sandbox: SandboxSettings, out_dir: Path) -> PhaseTestOutput:
    """Run the protocol for one input."""
    started = time.monotonic()
    root = Path(inp.working_directory)
    elapsed = lambda: int((time.monotonic() - started) * 1000)  # noqa: E731
    try:
        plan: SuitePlan = plan_tests(root, language=inp.language, test_command=inp.test_command,
                                    build_command=inp.build_command, run_build=inp.run_build)
    except GreenloopError as exc:
        return error_output(exc, test_command=inp.test_command, elapsed_ms=elapsed())
    timeout = inp.timeout_seconds
    retries = 0
    while True:
        settings = sandbox.model_copy(update={"timeout_s": int(timeout)})
        try:
            run = await run_tests(plan, root, out_dir / f"attempt-{retries}", settings)
        except GreenloopError as exc:
            if exc.kind is ErrorKind.TIMEOUT and retries < inp.max_retries:
                retries, timeout = retries + 1, timeout * TIMEOUT_GROWTH
                await asyncio.sleep(inp.backoff_s(retries))
                continue
            out = error_output(exc, language=plan.language, test_command=plan.test_command,
                               build_command=plan.build_command, elapsed_ms=elapsed())
            out.retry_count = retries
            out.build_status = "fail" if exc.kind is ErrorKind.BUILD_FAILURE else (
                "pass" if plan.build_command else "skipped")
            return out
        report = run.report
        failing = report.failing
        passed = report.exit_code == 0 and not failing and not report.timed_out
        if passed or retries >= inp.max_retries or report.build_error:
            break
        retries += 1
        if report.timed_out:
            timeout *= TIMEOUT_GROWTH
        await asyncio.sleep(inp.backoff_s(retries))
    totals = report.totals
    out = PhaseTestOutput(
        status="pass" if passed else "fail", execution_time_ms=elapsed(), retry_count=retries,
        tests_run=totals.total - totals.skipped, tests_passed=totals.passed + totals.xfailed,
        tests_failed=totals.failed + totals.errored,
        build_status="pass" if plan.build_command else "skipped",
        failing_tests=[FailingTest(name=t.id, file=t.file, error=(t.message or t.status.value)[:2000])
                       for t in failing],
        language=plan.language, test_command=plan.test_command, build_command=plan.build_command,
    )
    if not passed:
        kind = ErrorKind.TIMEOUT if report.timed_out else (
            ErrorKind.BUILD_FAILURE if report.build_error else ErrorKind.TEST_FAILURE)
        if kind is ErrorKind.BUILD_FAILURE:
            out.build_status = "fail"
        message = (f"{len(failing)} tests failed after {retries} retry attempts" if kind is ErrorKind.TEST_FAILURE
                   else "the test run timed out" if kind is ErrorKind.TIMEOUT else "the build failed, tests not run")
        if not report.per_test:
            message = f"the test command exited {report.exit_code}; no per-test results could be read"
        out.errors = [ProtocolError(type=kind, message=message, context={
            "failed_count": len(failing), "retry_count": retries, "exit_code": report.exit_code,
            "flaky": False, "output_tail": (report.output_tail or "")[-2000:] if not report.per_test else None,
        })]
    return out
