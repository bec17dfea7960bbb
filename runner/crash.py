"""A suite run that died inside one test (out of memory, a crash).

That test fails as ``errored`` with the reason (``native_status``
``out_of_memory`` or ``crash``), every other result is kept, and the tests
that never got to run are run again:

* the runner survived (a test's child process was killed): the report is
  whole; the failing tests whose output shows the kill are marked;
* the runner itself died: for pytest, whose ``-v`` lines name each test
  before it runs, the suite is resumed without the tests already done (and
  the one that died), as often as it dies (up to ``MAX_RESUMES``); other
  frameworks keep whatever per-test results their output holds.
"""

from __future__ import annotations

import re
import shlex
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.sandbox.models import ExecResult

OUT_OF_MEMORY = "out_of_memory"
CRASH = "crash"
MAX_RESUMES = 10
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE, signal.SIGKILL}
# What a test's output shows when a process it started was killed for memory (or crashed).
KILLED = re.compile(r"(?<![\w.])-(?:9|11|6)\b|SIGKILL|SIGSEGV|\bKilled\b|MemoryError|out of memory|"
                    r"Cannot allocate memory|exit (?:code|status) 137\b|signal 9\b", re.I)
# A pytest -v line naming the test about to run, with no outcome after it yet.
PYTEST_RUNNING = re.compile(r"^(?P<id>\S+::\S.*?)\s*$")
PYTEST_OUTCOME = re.compile(r"\b(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b|\[\s*\d+%\]\s*$")

Exec = Callable[[str, Path], Awaitable[ExecResult]]
Parse = Callable[[ExecResult], TestReport]


def died(ex: ExecResult) -> str | None:
    """Why a process of the run died inside it: ``out_of_memory``, ``crash``, or None."""
    if ex.timed_out or ex.disk_exceeded:
        return None
    if ex.out_of_memory:
        return OUT_OF_MEMORY
    if ex.killed_by_signal in CRASH_SIGNALS:
        return CRASH
    return None


def runner_died(ex: ExecResult) -> bool:
    """Whether the test runner itself was killed (not only a process it started)."""
    return ex.killed_by_signal is not None


def explain(reason: str, ex: ExecResult, memory_mb: int) -> str:
    if reason == OUT_OF_MEMORY:
        return f"out of memory: killed at the sandbox's memory limit ({memory_mb} MB)"
    sig = ex.killed_by_signal
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
    return f"crash: the test process died ({name})"


def died_test(test_id: str, reason: str, message: str) -> TestResult:
    return TestResult(id=test_id, status=Status.ERRORED, native_status=reason, message=message)


def mark_victims(report: TestReport, reason: str, message: str) -> int:
    """The runner survived: its failing tests whose output shows the kill become
    ``errored`` for ``reason``; how many."""
    marked = 0
    for i, t in enumerate(report.tests):
        if t.native_status in (OUT_OF_MEMORY, CRASH):
            continue  # named already
        if t.status in (Status.FAILED, Status.ERRORED) and KILLED.search(f"{t.message or ''}\n{t.details or ''}"):
            report.tests[i] = t.model_copy(update={
                "status": Status.ERRORED, "native_status": reason,
                "message": f"{message}\n{t.message or ''}".strip()})
            marked += 1
    return marked


def pytest_running(stdout_tail: str) -> str | None:
    """The test a ``pytest -v`` run was in when it died: its last line names it, with no outcome."""
    lines = [line for line in stdout_tail.splitlines() if line.strip()]
    if not lines:
        return None
    last = lines[-1]
    m = PYTEST_RUNNING.match(last)
    if m is None or PYTEST_OUTCOME.search(last):
        return None
    return m.group("id")


async def resume_pytest(command: str, first: TestReport, reason: str, first_exec: ExecResult, run: Exec,
                        parse: Parse, out_dir: Path, memory_mb: int) -> TestReport:
    """Run a pytest suite whose runner died again, verbosely, without the tests
    already done, marking each test it dies in, until it finishes; the merged report."""
    done: dict[str, TestResult] = {t.id: t for t in first.tests}
    warnings = list(first.warnings) if first.tests else []  # what the dead run's parse said of nothing
    last_exec, why = first_exec, reason
    for n in range(MAX_RESUMES):
        deselect = "".join(f" --deselect {shlex.quote(t)}" for t in done)
        ex = await run(f"{command} -v{deselect}", out_dir / f"resume-{n + 1}")
        report = parse(ex)
        for t in report.tests:
            done[t.id] = t
        warnings += [w for w in report.warnings if w not in warnings]
        last_exec, why = ex, died(ex)
        if why is None or not runner_died(ex):
            if why is not None:
                mark_victims_in(done, why, explain(why, ex, memory_mb))
            break
        running = pytest_running(_stdout_end(ex))
        if running is None or running in done:
            warnings.append(f"the test run died again ({why}) and no test could be named; results may be missing")
            break
        done[running] = died_test(running, why, explain(why, ex, memory_mb))
        warnings.append(f"{running} died ({why}); the tests after it were run again")
    else:
        warnings.append(f"the test run died {MAX_RESUMES} times; the tests not yet run are missing")
    tests = list(done.values())
    problems = any(t.status in (Status.FAILED, Status.ERRORED) for t in tests)
    exit_code = last_exec.exit_code if last_exec.exit_code not in (0, None) else (1 if problems else 0)
    return first.model_copy(update={"tests": tests, "per_test": bool(tests), "exit_code": exit_code,
                                    "warnings": warnings})


def _stdout_end(ex: ExecResult) -> str:
    """The last lines of a command's stdout (the sandbox keeps a tail only past its head)."""
    return ex.stdout_tail or ex.stdout_head


def mark_victims_in(done: dict[str, TestResult], reason: str, message: str) -> None:
    probe = TestReport(framework="pytest", tests=list(done.values()))
    if mark_victims(probe, reason, message):
        done.update({t.id: t for t in probe.tests})
