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
    it starts (``JEST_REPORTER``);
  - Mocha (spec/list reporters): the process; a run without its summary died
    in the first test after the last one reported, in the spec files' order
    (``--grep ... --invert``);

  A failure whose message the dead run never printed (cargo and Mocha print
  them at the end) is run again for it too.

* ctest runs each test in a process of its own and outlives it: a test whose
  process died (``Subprocess aborted``, ``SegFault``, ``Subprocess killed``)
  is marked (``mark_isolated``); nothing needs running again;
* other frameworks keep whatever per-test results their output holds.
"""

from __future__ import annotations

import json
import re
import shlex
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from ..parsers import go, mocha
from ..parsers import pytest as pytest_parser
from ..parsers.command import raw_words, unquote
from ..parsers.jest import SEP as JEST_SEP
from ..parsers.models import Status, TestReport, TestResult
from . import select
from .plan import SuitePlan
from ..sandbox.models import ExecResult

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


def exited_early(framework: str, ex: ExecResult, root: Path | None) -> bool:
    """pytest exited by itself in the middle of its session (a test called ``os._exit``,
    a native library ended the process): the JUnit report it writes when a session ends,
    and that the command asks for, is missing. (Usage and internal errors write none either.)"""
    if framework != "pytest" or root is None or ex.timed_out or ex.killed_by_signal is not None \
            or ex.exit_code in (3, 4, 126, 127):
        return False
    path = pytest_parser.junit_path(ex.command)
    return path is not None and not (root / path).exists()


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


# ctest's list of failed tests at the end: "  3 - name (Subprocess killed)".
CTEST_FAILED = re.compile(r"^\s*\d+ - (?P<name>.+?) \((?P<kind>[^()]*)\)\s*$")
CTEST_DIED = re.compile(r"Subprocess aborted|Child aborted|Subprocess killed|SegFault|Exception", re.I)


def mark_isolated(framework: str, report: TestReport, ex: ExecResult, memory_mb: int) -> int:
    """ctest: the tests whose own process died become ``errored`` for ``out_of_memory``
    (killed when the sandbox saw its memory limit reached) or ``crash``; how many."""
    if framework != "ctest" or ex.timed_out:
        return 0
    kinds = {m.group("name"): m.group("kind") for line in _stdout_end(ex).splitlines()
             if (m := CTEST_FAILED.match(line))}
    marked = 0
    for i, t in enumerate(report.tests):
        kind = kinds.get(t.id) or ""
        if t.status != Status.FAILED or t.timed_out or not (CTEST_DIED.search(kind) or
                                                             (t.native_status or "").startswith("Exception")):
            continue
        why = OUT_OF_MEMORY if ex.out_of_memory and "killed" in kind.lower() else CRASH
        text = explain(why, ex, memory_mb) if why == OUT_OF_MEMORY else \
            f"crash: the test process died ({kind or t.native_status})"
        report.tests[i] = t.model_copy(update={"status": Status.ERRORED, "native_status": why,
                                               "message": f"{text}\n{t.message or ''}".strip()})
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


# What a framework's parser says of a test that was running when its process died.
DIED_NATIVE = {"cargo-test": "no result (test binary died)", "googletest": "crashed", "mocha": mocha.DIED,
               "go": go.DIED}
RESUMABLE = {"pytest", "jest", *DIED_NATIVE}
# Their first run names the test it died in already (one test at a time, each named before or as it runs).
SERIAL = {"googletest", "mocha"}


def _unfinished(framework: str, t: TestResult) -> bool:
    """A result that only says the process died while (or before) the test ran."""
    return framework in DIED_NATIVE and t.native_status == DIED_NATIVE[framework] and not t.timed_out


# Frameworks that print a failure's message at the end of the run (libtest's "failures:", Mocha's summary).
FAILURES_AT_END = {"cargo-test", "mocha"}


def _untold(framework: str, t: TestResult) -> bool:
    """A failure whose message a run that died never printed: run again for it."""
    return framework in FAILURES_AT_END and t.status == Status.FAILED and not t.message and not t.details


def dead_scopes(framework: str, report: TestReport, ex: ExecResult, root: Path | None = None) -> list[str | None]:
    """The units of the run that died inside a test and are to be resumed: cargo's test
    binaries (by label), ``None`` for the whole run; empty when nothing is to be resumed."""
    if framework in ("cargo-test", "go"):  # a test binary died; the others ran on
        return list(dict.fromkeys(t.suite for t in report.tests if _unfinished(framework, t)))
    if framework in SERIAL and any(_unfinished(framework, t) for t in report.tests):
        return [None]
    if framework == "jest" and (died(ex) or JEST_EXIT in ex.stderr_tail + ex.stderr_head + _stdout_end(ex)):
        return [None]
    if framework in RESUMABLE and runner_ended(framework, ex, root):
        return [None]
    return []


# Jest prints its results per file, at the file's end: Greenloop's reporter names each test as it starts.
JEST_EXIT = "process.exit called with"
JEST_STARTED = "greenloop-started "
JEST_REPORTER = ".greenloop/jest-started.js"
JEST_REPORTER_SOURCE = """// Greenloop (runner/crash.py): names each test as it starts, so that a run that dies says in which.
const fs = require("fs");
module.exports = class {
  onTestCaseStart(test, info) {
    fs.writeSync(1, "greenloop-started " + JSON.stringify([test.path, ...info.ancestorTitles, info.title]) + "\\n");
  }
};
"""


def prepare(framework: str, workspace: Path) -> None:
    """What a framework's resumed runs need in the workspace (Jest: the reporter that names each test)."""
    if framework == "jest":
        (workspace / JEST_REPORTER).parent.mkdir(parents=True, exist_ok=True)
        (workspace / JEST_REPORTER).write_text(JEST_REPORTER_SOURCE)


def jest_started(stdout: str, root: Path | None = None) -> TestResult | None:
    """The last test Greenloop's Jest reporter saw start (its file relative to ``root``)."""
    lines = [line for line in stdout.splitlines() if line.startswith(JEST_STARTED)]
    if not lines:
        return None
    try:
        path, *titles = json.loads(lines[-1][len(JEST_STARTED):])
    except (ValueError, TypeError):
        return None
    file = str(path)
    if root is not None and Path(file).is_relative_to(root):
        file = Path(file).relative_to(root).as_posix()
    return TestResult(id=JEST_SEP.join(titles), status=Status.ERRORED, file=file, suite=file)


def _running(framework: str, ex: ExecResult, report: TestReport, root: Path | None = None) -> list[TestResult]:
    """The test a one-test-at-a-time run died in (with a subtest's parents), as far as
    the output places it; empty when it did not die."""
    if framework == "pytest":
        name = pytest_running(_stdout_end(ex)) if runner_ended(framework, ex, root) else None
        return [TestResult(id=name, status=Status.ERRORED)] if name else []
    if framework == "jest":
        started = jest_started(_stdout_end(ex), root)
        finished = {t.id for t in report.tests if t.status != Status.SKIPPED}
        return [started] if started is not None and started.id not in finished else []
    return [t for t in report.tests if _unfinished(framework, t)]


def _go_names(text: str) -> list[str]:
    """The top-level tests ``go test -list`` printed."""
    return [line.strip() for line in text.splitlines() if re.fullmatch(r"(?:Test|Example|Fuzz)\w*", line.strip())]


def list_command(plan: SuitePlan, command: str, package_dir: str) -> str:
    """go: the command that lists a package's top-level tests (``-list``), with the suite's build flags."""
    inv = _invocation(plan, command)
    inv.options = [w for w in inv.options if unquote(w) not in ("-json", "-v")]
    return inv.render("-list", shlex.quote(".*"), shlex.quote(package_dir))


def _invocation(plan: SuitePlan, command: str) -> select.Invocation:
    """The runner's call in ``command``, or in the runner command a package script reaches (``npm test``)."""
    for c in (command, plan.runner_command):
        inv = select.invocation(plan.model_copy(update={"test_command": c})) if c else None
        if inv is not None:
            return inv
    raise ValueError(f"the command `{command}` does not call {plan.framework} itself")


def rerun_command(plan: SuitePlan, command: str, scope: str | None, skip: list[TestResult],
                  listed: tuple[str, list[str]] | None = None) -> str | None:
    """``command`` (the suite's, as it ran) for the tests of ``scope`` but ``skip``,
    one at a time, each named in the output before it runs; None when none is left.
    go names the tests to run instead (``listed``: the package's folder and top-level tests)."""
    fw = plan.framework
    if fw == "pytest":
        return f"{command} -v" + "".join(f" --deselect {shlex.quote(t.id)}" for t in skip)
    inv = _invocation(plan, command)
    if fw == "go" and listed is not None:
        folder, names = listed
        gone = {t.id.partition("::")[2].split("/", 1)[0] for t in skip}
        left = [n for n in names if n not in gone]
        if not left:
            return None
        inv.options = [w for w in inv.options if not unquote(w).startswith(("-count", "-parallel"))]
        return inv.render("-count=1", "-parallel=1", "-run", shlex.quote("^(?:" + "|".join(left) + ")$"),
                          shlex.quote(folder))
    if fw == "cargo-test":
        libtest = [w for w in inv.after_dashes or [] if not unquote(w).startswith("--test-threads")]
        skips = [w for t in skip for w in ("--skip", shlex.quote(t.id))]
        return inv.render(select.cargo_binary_flag(scope), "--", *libtest, "--exact", "--test-threads=1", *skips)
    if fw == "googletest":
        given = next((unquote(w).split("=", 1)[1] for w in raw_words(command) if unquote(w).startswith(
            "--gtest_filter=")), "*")
        positive, _, negative = given.partition("-")
        negative = ":".join(filter(None, [negative, *(t.id for t in skip)]))
        return inv.render(f"--gtest_filter={shlex.quote((positive or '*') + '-' + negative)}")
    if fw == "jest":  # in one process, each test named as it starts; -t sees the titles joined by spaces
        names = [" ".join(t.id.split(JEST_SEP)) for t in skip]
        inv.options = [w for w in inv.options if not unquote(w).startswith(("--reporters", "-i", "--runInBand"))]
        left_out = ["-t", shlex.quote("^(?!" + select.title_pattern(names)[1:] + ")")] if names else []
        return inv.render("--runInBand", "--reporters=default", f"--reporters=./{JEST_REPORTER}", *left_out,
                          *inv.positionals)
    if fw == "mocha":  # its spec files stay; Mocha matches --grep against full titles
        return inv.render(*inv.positionals, "--grep", shlex.quote(select.title_pattern([t.id for t in skip])),
                          "--invert")
    raise ValueError(f"{fw} runs are not resumed")


async def resume(plan: SuitePlan, first: TestReport, first_exec: ExecResult, run: Exec, parse: Parse,
                 out_dir: Path, memory_mb: int, root: Path | None = None) -> TestReport:
    """Resume a run whose test process died (see the module docstring); the merged report.
    ``root``: the directory the run ran in (where its output's absolute paths are made relative)."""
    fw = plan.framework
    # Jest reports the death itself as a test ("● process.exit called with ..."): not a test.
    tests = [t for t in first.tests if not (fw == "jest" and JEST_EXIT in t.id)]
    done: dict[str, TestResult] = {}
    lost = [t for t in tests if _unfinished(fw, t)]  # kept where no run tells more
    untold: dict[str, TestResult] = {}  # kept where no run tells more either

    def keep(t: TestResult) -> None:
        (untold if _untold(fw, t) else done)[t.id] = t

    for t in tests:
        if not _unfinished(fw, t):
            keep(t)
    warnings = list(first.warnings) if first.tests else []  # what the dead run's parse said of nothing
    last_exec = first_exec

    def fail(test_id: str, ex: ExecResult, said: TestResult | None) -> None:
        why = died(ex) or CRASH
        text = ended(fw, ex, memory_mb, root)
        done[test_id] = died_test(test_id, why, f"{text}\n{said.message}" if said and said.message else text, said)
        warnings.append(f"{test_id} died ({why}); the tests after it were run again")

    if fw in SERIAL:  # one test at a time already: the dead run names it
        for t in lost:
            fail(t.id, first_exec, t)
    n = 0
    for k, scope in enumerate(dead_scopes(fw, first, first_exec, root)):
        listed = None
        if fw == "go":  # go test cannot leave tests out by name (-skip is Go 1.20+): the package's are listed
            folder = select.go_package_dir(next(t for t in lost if t.suite == scope))
            try:
                command = list_command(plan, first_exec.command, folder)
            except ValueError as exc:
                warnings.append(f"the tests after the dead one cannot be run again: {exc}")
                break
            listing = await run(command, out_dir / f"list-{k + 1}")
            listed = (folder, _go_names(Path(listing.stdout_path).read_text(errors="replace")))
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
                if not _unfinished(fw, t) and t.id not in done and not (fw == "jest" and JEST_EXIT in t.id):
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
    probe = TestReport(framework="pytest", tests=list(done.values()))
    if mark_victims(probe, reason, message):
        done.update({t.id: t for t in probe.tests})
