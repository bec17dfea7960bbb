"""A suite run that died inside one test (out of memory, a crash).

That test fails as ``errored`` with the reason (``native_status``
``out_of_memory`` or ``crash``), every other result is kept, and the tests
that never got to run are run again:

* the runner survived and reported every test (a test's child process was
  killed): the failing tests whose output shows the kill are marked;
* the process that ran the tests died, for a framework whose output names
  the test a run is in (``RESUMABLE``): the suite, or the unit that died, is
  run again, one test at a time, without the tests already done, and the test
  each run dies in is named; as often as it dies (up to ``MAX_RESUMES``):

  - pytest: the runner itself, or a session that ended by itself in the
    middle (a test called ``os._exit``: the report the command asked for is
    missing, whatever the exit code); ``-v`` lines name each test before it runs
    (``--deselect`` leaves the done ones out);
  - cargo test: one test binary (cargo goes on with the others); libtest
    with ``--test-threads=1`` prints ``test NAME ... `` before each test
    (``--skip NAME --exact``);
  - go test: one package's test binary (go goes on with the others); its
    top-level tests are listed (``-list``) and those not done run again with
    ``-run '^(?:...)$' -parallel=1``; ``=== RUN`` without a result names the
    test (and a subtest's parents);
  - googletest: the binary; ``[ RUN      ] NAME`` without its end names the
    test at once (a negative ``--gtest_filter``);
  - Jest: the process, or a worker; Jest names tests only when their file
    ends, so the tests not done run again in one process (``--runInBand``,
    ``-t '^(?!...)'``) with Greenloop's reporter, which names each test as
    it starts (``parsers/jest.py``: ``STARTED_REPORTER``);
  - Mocha (spec/list reporters): the process; a run without its summary died
    in the first test after the last one reported, in the spec files' order
    (``--grep ... --invert``);

  A failure whose message the dead run never printed (cargo and Mocha print
  them at the end) is run again for it too.

* ctest runs each test in a process of its own and outlives it: a test whose
  process died (``Subprocess aborted``, ``SegFault``, ``Subprocess killed``)
  is marked (``mark_isolated``); nothing needs running again;
* other frameworks keep whatever per-test results their output holds.

What each framework does is its module's (``parsers/plugin.py``: ``RESUMABLE``,
``DIED``, ``SERIAL``, ``rerun_command``...); this module only drives it.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from ..parsers.invocation import Invocation
from ..parsers.models import Status, TestReport, TestResult
from ..parsers.plugin import Plugin, plugin
from ..sandbox.models import ExecResult
from .plan import SuitePlan
from .select import invocation_in

OUT_OF_MEMORY = "out_of_memory"
CRASH = "crash"
MAX_RESUMES = 10
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE, signal.SIGKILL}
# What a test's output shows when a process it started was killed for memory (or crashed).
KILLED = re.compile(r"(?<![\w.])-(?:9|11|6)\b|SIGKILL|SIGSEGV|\bKilled\b|MemoryError|out of memory|"
                    r"Cannot allocate memory|exit (?:code|status) 137\b|signal 9\b", re.I)
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


def exited_early(framework: str, ex: ExecResult, root: Path | None) -> bool:
    """The runner exited by itself in the middle of its run, as its framework module
    tells (pytest: a test called ``os._exit``, and the report a session writes at its
    end is missing)."""
    if root is None or ex.timed_out or ex.killed_by_signal is not None:
        return False
    return plugin(framework).exited_early(ex.command, ex.exit_code, root)


def runner_ended(framework: str, ex: ExecResult, root: Path | None) -> bool:
    """Whether the runner itself ended inside the run: killed, or exited by itself mid-session."""
    return (died(ex) is not None and runner_died(ex)) or exited_early(framework, ex, root)


def ended(framework: str, ex: ExecResult, memory_mb: int, root: Path | None) -> str:
    """What a person reads of how the run's test process ended (its reason, then how)."""
    why = died(ex)
    if why is None and exited_early(framework, ex, root):
        return f"crash: the test process exited in the middle of the run (exit code {ex.exit_code})"
    return explain(why or CRASH, ex, memory_mb)


def explain(reason: str, ex: ExecResult, memory_mb: int) -> str:
    if reason == OUT_OF_MEMORY:
        return f"out of memory: killed at the sandbox's memory limit ({memory_mb} MB)"
    sig = ex.killed_by_signal
    if sig is None:  # the runner outlived it (a cargo test binary); the parser says how it died
        return "crash: the test process died"
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
    return f"crash: the test process died ({name})"


def died_test(test_id: str, reason: str, message: str, said: TestResult | None = None) -> TestResult:
    """The test a process died in: ``errored`` for ``reason``, where the parser placed it (``said``)."""
    where = {"file": said.file, "line": said.line, "suite": said.suite} if said else {}
    return TestResult(id=test_id, status=Status.ERRORED, native_status=reason, message=message, **where)


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


def mark_isolated(framework: str, report: TestReport, ex: ExecResult, memory_mb: int) -> int:
    """A runner that runs each test in a process of its own and outlives it (ctest): the
    tests whose own process died become ``errored`` for ``out_of_memory`` (killed when the
    sandbox saw its memory limit reached) or ``crash``; how many."""
    if ex.timed_out:
        return 0
    deaths = plugin(framework).isolated_deaths(_stdout_end(ex), report.tests)
    marked = 0
    for i, t in enumerate(report.tests):
        if t.id not in deaths:
            continue
        kind = deaths[t.id]
        why = OUT_OF_MEMORY if ex.out_of_memory and "killed" in kind.lower() else CRASH
        text = explain(why, ex, memory_mb) if why == OUT_OF_MEMORY else \
            f"crash: the test process died ({kind or t.native_status})"
        report.tests[i] = t.model_copy(update={"status": Status.ERRORED, "native_status": why,
                                               "message": f"{text}\n{t.message or ''}".strip()})
        marked += 1
    return marked


def _untold(p: Plugin, t: TestResult) -> bool:
    """A failure whose message a run that died never printed: run again for it."""
    return p.failures_at_end and t.status == Status.FAILED and not t.message and not t.details


def dead_scopes(framework: str, report: TestReport, ex: ExecResult, root: Path | None = None) -> list[str | None]:
    """The units of the run that died inside a test and are to be resumed: the test
    binaries (by label) of a framework that resumes per suite, ``None`` for the whole
    run; empty when nothing is to be resumed."""
    p = plugin(framework)
    if p.resume_per_suite:  # a test binary died; the others ran on
        return list(dict.fromkeys(t.suite for t in report.tests if p.unfinished(t)))
    if p.serial and any(p.unfinished(t) for t in report.tests):
        return [None]
    output = ex.stderr_tail + ex.stderr_head + _stdout_end(ex)
    if p.resumable and p.run_died(died(ex) is not None, runner_ended(framework, ex, root), output):
        return [None]
    return []


def prepare(framework: str, workspace: Path) -> None:
    """What a framework's resumed runs need in the workspace (Jest: the reporter that names each test)."""
    plugin(framework).prepare_resume(workspace)


def _running(framework: str, ex: ExecResult, report: TestReport, root: Path | None = None) -> list[TestResult]:
    """The test a one-test-at-a-time run died in (with a subtest's parents), as far as
    the output places it; empty when it did not die."""
    return plugin(framework).running(_stdout_end(ex), report, root, runner_ended(framework, ex, root))


def _invocation(plan: SuitePlan, command: str) -> Invocation:
    """The runner's call in ``command``, or in the runner command a package script reaches (``npm test``)."""
    for c in (command, plan.runner_command):
        inv = invocation_in(plan.framework, c) if c else None
        if inv is not None:
            return inv
    raise ValueError(f"the command `{command}` does not call {plan.framework} itself")


def list_command(plan: SuitePlan, command: str, folder: str) -> str:
    """The command that lists a scope's tests (go: a package's top-level tests), with the suite's flags."""
    return plugin(plan.framework).list_command(_invocation(plan, command), folder)


def rerun_command(plan: SuitePlan, command: str, scope: str | None, skip: list[TestResult],
                  listed: tuple[str, list[str]] | None = None) -> str | None:
    """``command`` (the suite's, as it ran) for the tests of ``scope`` but ``skip``,
    one at a time, each named in the output before it runs; None when none is left.
    A runner that lists its tests names those to run instead (``listed``: the scope's
    folder and tests)."""
    return plugin(plan.framework).rerun_command(command, lambda: _invocation(plan, command), scope, skip, listed)


async def resume(plan: SuitePlan, first: TestReport, first_exec: ExecResult, run: Exec, parse: Parse,
                 out_dir: Path, memory_mb: int, root: Path | None = None) -> TestReport:
    """Resume a run whose test process died (see the module docstring); the merged report.
    ``root``: the directory the run ran in (where its output's absolute paths are made relative)."""
    fw = plan.framework
    p = plugin(fw)
    # Jest reports the death itself as a test ("● process.exit called with ..."): not a test.
    tests = [t for t in first.tests if not p.is_death_entry(t)]
    done: dict[str, TestResult] = {}
    lost = [t for t in tests if p.unfinished(t)]  # kept where no run tells more
    untold: dict[str, TestResult] = {}  # kept where no run tells more either

    def keep(t: TestResult) -> None:
        (untold if _untold(p, t) else done)[t.id] = t

    for t in tests:
        if not p.unfinished(t):
            keep(t)
    warnings = list(first.warnings) if first.tests else []  # what the dead run's parse said of nothing
    last_exec = first_exec

    def fail(test_id: str, ex: ExecResult, said: TestResult | None) -> None:
        why = died(ex) or CRASH
        text = ended(fw, ex, memory_mb, root)
        done[test_id] = died_test(test_id, why, f"{text}\n{said.message}" if said and said.message else text, said)
        warnings.append(f"{test_id} died ({why}); the tests after it were run again")

    if p.serial:  # one test at a time already: the dead run names it
        for t in lost:
            fail(t.id, first_exec, t)
    n = 0
    for k, scope in enumerate(dead_scopes(fw, first, first_exec, root)):
        listed = None
        if p.lists_tests:  # a runner that cannot leave tests out by name (go): the scope's are listed
            folder = p.scope_folder(next(t for t in lost if t.suite == scope))
            try:
                command = list_command(plan, first_exec.command, folder)
            except ValueError as exc:
                warnings.append(f"the tests after the dead one cannot be run again: {exc}")
                break
            listing = await run(command, out_dir / f"list-{k + 1}")
            listed = (folder, p.listed(Path(listing.stdout_path).read_text(errors="replace")))
        while True:
            if n == MAX_RESUMES:
                warnings.append(f"the test run died {MAX_RESUMES} times; the tests not yet run are missing")
                break
            skip = [t for t in done.values() if scope is None or t.suite == scope]
            try:
                command = rerun_command(plan, first_exec.command, scope, skip, listed)
            except ValueError as exc:
                warnings.append(f"the tests after the dead one cannot be run again: {exc}")
                break
            if command is None:
                break
            n += 1
            ex = await run(command, out_dir / f"resume-{n}")
            report = parse(ex)
            # Only what was not known: a name filter may report the tests it left out as skipped (jest -t).
            for t in report.tests:
                if not p.unfinished(t) and t.id not in done and not p.is_death_entry(t):
                    keep(t)
            warnings += [w for w in report.warnings if w not in warnings]
            last_exec = ex
            running = _running(fw, ex, report, root)
            if not running:
                if (why := died(ex)) is not None and not runner_died(ex):
                    mark_victims_in(done, why, explain(why, ex, memory_mb))
                break
            if any(r.id in done for r in running):
                warnings.append(f"the test run died again ({died(ex) or CRASH}) and no test could be named; "
                                "results may be missing")
                break
            for r in running:
                fail(r.id, ex, r)
    for t in [*lost, *untold.values()]:
        done.setdefault(t.id, t)
    tests = list(done.values())
    problems = any(t.status in (Status.FAILED, Status.ERRORED) for t in tests)
    exit_code = last_exec.exit_code if last_exec.exit_code not in (0, None) else (1 if problems else 0)
    return first.model_copy(update={"tests": tests, "per_test": bool(tests), "exit_code": exit_code,
                                    "warnings": warnings})


def _stdout_end(ex: ExecResult) -> str:
    """The last lines of a command's stdout (the sandbox keeps a tail only past its head)."""
    return ex.stdout_tail or ex.stdout_head


def mark_victims_in(done: dict[str, TestResult], reason: str, message: str) -> None:
    probe = TestReport(framework="generic", tests=list(done.values()))
    if mark_victims(probe, reason, message):
        done.update({t.id: t for t in probe.tests})
