"""Activities that plan and run tests in the sandbox and parse the results.

Reports and per-test statuses are written to the run directory; only ids,
counts and paths travel back. Activities heartbeat while tests run, so a
lost worker is noticed and the run retried elsewhere, and a cancelled
activity kills its sandboxed process tree.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel
from temporalio import activity

from .. import project_config, telemetry
from ..analysis.localize import Spectrum
from ..domain.errors import ErrorKind, GreenloopError
from ..domain.workspace import Workspace
from ..parsers.containers import Outcome, outcome
from ..parsers.locate import SourceIndex
from ..parsers.models import Status, TestReport
from ..run_request import ProjectRequest
from ..runner import go_coverage, impact, v8_coverage
from ..runner.execute import run_command, run_tests
from ..runner.plan import SuitePlan
from ..runner.plan import plan_tests as make_plan
from ..runner.readable import caveats, unreadable_reason
from ..runner.runs import SingleRun, SuiteRun
from ..runner.select import tests_command
from ..sandbox.models import SandboxSettings
from ..workspace.events import log_event
from ..workspace.worktree import content_tree
from .errors import typed_errors
from .host import on_host, require_file


class PlanInput(BaseModel):
    workspace: Workspace
    request: ProjectRequest


class SuiteInput(BaseModel):
    workspace: Workspace
    plan: SuitePlan
    label: str  # names the artifacts: "initial", "flaky-check", "validate-<test>-<n>", "final"
    sandbox: SandboxSettings
    compare_to: SuiteRun | None = None
    focus: str | None = None  # a test whose own status the result should carry
    # Record which tests run which files (per-test coverage, where the framework gives it: runner/impact.py).
    impact: bool = False
    # An earlier run that may have been of the same files (the last accepted batch's suite run): it
    # stands for this one (compared with ``compare_to``) when the workspace's content digest is its ``tree``.
    reuse: SuiteRun | None = None


class SingleInput(BaseModel):
    workspace: Workspace
    plan: SuitePlan
    test_id: str
    failure_run: SuiteRun
    sandbox: SandboxSettings
    label: str


def heartbeat_message(message: str) -> None:
    activity.heartbeat(message)


def out_dir(ws: Workspace, label: str) -> Path:
    n = 1
    base = Path(ws.run_dir) / "runs"
    while (base / f"{label}-{n}").exists():
        n += 1  # a retried activity keeps the earlier attempt's artifacts
    return base / f"{label}-{n}"


# A suite that could not even run: a result that says why (the run's outcome, or a failed attempt), not an error.
SUITE_COULD_NOT_RUN = {ErrorKind.BUILD_FAILURE, ErrorKind.COMMAND_NOT_FOUND, ErrorKind.TIMEOUT}


def could_not_run(plan: SuitePlan, exc: GreenloopError) -> TestReport:
    """The report of a suite run that never got to its tests (the build failed, no command)."""
    hint = exc.context.get("suggestion")
    return TestReport(framework=plan.framework, command=str(exc.context.get("command") or plan.test_command),
                      exit_code=exc.context.get("exit_code"), build_error=exc.kind == ErrorKind.BUILD_FAILURE,
                      timed_out=exc.kind == ErrorKind.TIMEOUT, per_test=False,
                      warnings=[exc.message + (f" ({hint})" if hint else "")],
                      output_tail=str(exc.context.get("stderr") or "") or None)


def load_report(path: str) -> TestReport:
    """The suite report at ``path`` (its list of tests the caller's own; the tests are shared:
    read them, copy to change). A report is written once and read by every child of the
    run (its analysis, its fixer, the batch checks): it is parsed once per worker while
    its file stays the same."""
    stat = require_file(path, "the suite report").stat()
    parsed = _parsed_report(path, stat.st_mtime_ns, stat.st_size)
    return parsed.model_copy(update={"tests": list(parsed.tests)})


@lru_cache(maxsize=8)
def _parsed_report(path: str, mtime_ns: int, size: int) -> TestReport:
    return TestReport.model_validate_json(Path(path).read_text())


def load_statuses(path: str) -> dict[str, Status]:
    return {k: Status(v) for k, v in json.loads(require_file(path, "the per-test statuses").read_text()).items()}


@activity.defn
@typed_errors
@on_host
async def plan_tests(inp: PlanInput) -> SuitePlan:
    """Language, framework, build and test commands for the workspace (and its greenloop.toml)."""
    r = project_config.fill(inp.request, Path(inp.workspace.path))
    plan = await asyncio.to_thread(make_plan, Path(inp.workspace.path), language=r.language, framework=r.framework,
                                   test_command=r.test_command, build_command=r.build_command)
    plan.single_test_command = r.single_test_command
    log_event(inp.workspace.run_dir, "plan", **plan.model_dump())
    return plan


def _impact_map(ws: Workspace, report: TestReport) -> str | None:
    """Collect the per-test coverage the run recorded into the run's map (``runner/impact.py``);
    its path, or None when nothing was recorded."""
    known = {t.id for t in report.tests}
    found = impact.collect(Path(ws.path), known)
    lines = impact.collect_lines(Path(ws.path), known)
    impact.clear(Path(ws.path))
    if lines:  # the spectrum fault localization reads (analysis/localize.py)
        Spectrum(files=lines).save(Path(ws.run_dir))
    log_event(ws.run_dir, "impact_mapped", files=len(found.files), tests=len(found.tests))
    if not found.files:
        return None
    target = Path(ws.run_dir) / "impact.json"
    target.write_text(found.model_dump_json())
    return str(target)


def _v8_spectrum(ws: Workspace, report: TestReport) -> None:
    """Turn the V8 coverage the run recorded (``runner/v8_coverage.py``) into the run's spectrum:
    a process that ran one test file ran its functions for each test of that file."""
    by_file: dict[str, list[str]] = {}
    for t in report.tests:
        if t.file:
            by_file.setdefault(t.file, []).append(t.id)
    runs = v8_coverage.attributed(v8_coverage.collect(Path(ws.path)), by_file)
    v8_coverage.clear(Path(ws.path))
    spectrum = Spectrum.from_functions(SourceIndex(Path(ws.path)), runs)
    if spectrum.files:
        spectrum.save(Path(ws.run_dir))
    log_event(ws.run_dir, "spectrum_recorded", source="v8", processes=len(runs), files=len(spectrum.files))


async def _go_spectrum(inp: SuiteInput, report: TestReport, out: Path) -> None:
    """Go's per-test coverage (``runner/go_coverage.py``): after the suite, each failing test and a
    sample of passing ones run alone with a coverage profile, into the run's spectrum."""
    ws = inp.workspace
    command = await asyncio.to_thread(go_coverage.script, Path(ws.path), report)
    if command is None:
        return
    await run_command(inp.plan, command, Path(ws.path), out / "go-coverage", inp.sandbox, heartbeat_message)
    lines = await asyncio.to_thread(go_coverage.collect, Path(ws.path), {t.id for t in report.tests})
    await asyncio.to_thread(shutil.rmtree, Path(ws.path) / go_coverage.FOLDER, True)
    if lines:
        Spectrum(files=lines).save(Path(ws.run_dir))
    log_event(ws.run_dir, "go_coverage", files=len(lines), tests=len({t for by in lines.values() for t in by}))


@activity.defn
@typed_errors
@on_host
async def run_suite(inp: SuiteInput) -> SuiteRun:
    """Run the whole suite; compare with ``compare_to`` when given. An earlier run of exactly
    the workspace's files (``inp.reuse``) stands for it instead of running again."""
    reused = await asyncio.to_thread(_reused, inp)
    return reused if reused is not None else await execute_suite(inp)


async def execute_suite(inp: SuiteInput) -> SuiteRun:
    """``run_suite``'s work (a rebuild runs the suite too)."""
    ws = inp.workspace
    out = out_dir(ws, inp.label)
    try:
        with telemetry.span("greenloop.sandbox.run", label=inp.label, test_id=inp.focus,
                            attempt=telemetry.attempt_of(inp.label), backend=inp.sandbox.backend):
            mapping = inp.impact and impact.supported(inp.plan.framework)
            v8 = inp.impact and v8_coverage.supported(inp.plan.framework)
            if mapping:
                await asyncio.to_thread(impact.prepare, Path(ws.path))
            if v8:
                await asyncio.to_thread(v8_coverage.prepare, Path(ws.path))
            wrap = impact.command if mapping else v8_coverage.command if v8 else None
            run = await run_tests(inp.plan, Path(ws.path), out, inp.sandbox, heartbeat_message, wrap=wrap)
            impact_path = await asyncio.to_thread(_impact_map, ws, run.report) if mapping else None
            if v8:
                await asyncio.to_thread(_v8_spectrum, ws, run.report)
            if inp.impact and inp.plan.framework == "go":
                await _go_spectrum(inp, run.report, out)
        report, duration_s = run.report, run.test.duration_s if run.test else 0.0
        telemetry.record_suite_run(inp.label, duration_s)
        unreadable = unreadable_reason(report)
    except GreenloopError as exc:
        if exc.kind not in SUITE_COULD_NOT_RUN:
            raise
        impact_path = None
        report, duration_s = could_not_run(inp.plan, exc), 0.0  # a result: the suite's state is unknown
        unreadable = report.warnings[0] + (f"; the output ends with:\n{report.output_tail[-800:]}"
                                           if report.output_tail else "")
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(report.model_dump_json(indent=1))
    statuses = {t.id: t.status.value for t in report.tests}
    (out / "statuses.json").write_text(json.dumps(statuses))
    focus = _focus(inp, report)
    result = SuiteRun(
        label=inp.label, report_path=str(out / "report.json"), statuses_path=str(out / "statuses.json"),
        totals=report.totals, build_error=report.build_error,
        timed_out=report.timed_out, exit_code=report.exit_code, per_test=report.per_test,
        warnings=report.warnings[:20], duration_s=duration_s, unreadable=unreadable, caveats=caveats(report),
        output_cut=report.output_cut_bytes is not None,
        focus=inp.focus, focus_status=focus.status if focus else None, impact=impact_path,
    )
    _compare(result, inp.compare_to)
    log_event(ws.run_dir, "suite_run", label=inp.label, totals=report.totals.model_dump(),
              regressions=result.regressions, artifacts=str(out))
    return result


def _compare(result: SuiteRun, compare_to: SuiteRun | None) -> None:
    """``result``'s changes against ``compare_to`` (its regressions, newly passing tests, counts)."""
    if compare_to is None:
        return
    before, now = load_statuses(compare_to.statuses_path), load_statuses(result.statuses_path)
    regressions = [t for t, s in before.items() if s == Status.PASSED and now.get(t) != Status.PASSED]
    result.regressions, result.regression_count = regressions[:20], len(regressions)
    result.newly_passing = [t for t, s in now.items() if s == Status.PASSED and before.get(t) != Status.PASSED]
    result.passed_before = sum(1 for s in before.values() if s == Status.PASSED)
    result.passed_now = sum(1 for s in now.values() if s == Status.PASSED)


def _reused(inp: SuiteInput) -> SuiteRun | None:
    """``inp.reuse`` standing for this run, when it ran on exactly the workspace's files (the same
    content digest) and its reports are here; None when anything differs (the suite runs)."""
    earlier = inp.reuse
    if earlier is None or earlier.tree is None or inp.focus or inp.impact:
        return None
    if not (Path(earlier.report_path).is_file() and Path(earlier.statuses_path).is_file()):
        return None
    tree = content_tree(Path(inp.workspace.path))
    if tree != earlier.tree:
        log_event(inp.workspace.run_dir, "suite_run_not_reused", label=inp.label, earlier=earlier.label,
                  tree=tree, earlier_tree=earlier.tree)
        return None
    result = earlier.as_baseline().model_copy(update={"reused_as": inp.label})
    _compare(result, inp.compare_to)
    log_event(inp.workspace.run_dir, "suite_run_reused", label=inp.label, earlier=earlier.label, tree=tree,
              artifacts=str(Path(earlier.report_path).parent))
    return result


def _focus(inp: SuiteInput, report: TestReport) -> Outcome | None:
    """The validated test's outcome in ``report``: a file or package that failed to load in the
    run it is compared with (the baseline) is judged by the tests it holds once it loads."""
    if not inp.focus:
        return None
    entry = report.find(inp.focus)
    if entry is None and inp.compare_to is not None:
        entry = load_report(inp.compare_to.report_path).find(inp.focus)
    return None if entry is None else outcome(entry, report.tests)


@activity.defn
@typed_errors
@on_host
async def run_single_test(inp: SingleInput) -> SingleRun:
    """Run one test alone, in its framework's selector syntax."""
    ws = inp.workspace
    failure = load_report(inp.failure_run.report_path).find(inp.test_id)
    if failure is None:
        raise GreenloopError(f"test {inp.test_id} is not in {inp.failure_run.report_path}",
                             kind=ErrorKind.VALIDATION_ERROR)
    out = out_dir(ws, inp.label)
    plan = inp.plan
    command = tests_command(plan, [failure])  # no precise selector: the whole suite decides
    with telemetry.span("greenloop.sandbox.run", label=inp.label, test_id=inp.test_id,
                        attempt=telemetry.attempt_of(inp.label), backend=inp.sandbox.backend):
        run = await run_tests(plan, Path(ws.path), out, inp.sandbox, heartbeat_message, command=command)
    telemetry.record_suite_run(inp.label, run.test.duration_s if run.test else 0.0)
    # A file or package that failed to load is judged by the tests it holds once it loads.
    now = outcome(failure, run.report.tests)
    log_event(ws.run_dir, "single_run", test=inp.test_id, command=command,
              status=now.status.value if now.status else None, artifacts=str(out))
    # Not found because the build broke: the compiler's complaint is why (the next attempt's prompt shows it).
    message = now.message if now.status else next(
        (f"the build failed: {t.message}" for t in run.report.tests if run.report.build_error and t.message), None)
    return SingleRun(test_id=inp.test_id, status=now.status, passed=now.passed, message=message,
                     details=now.details, output_path=str(out), duration_s=run.test.duration_s if run.test else 0.0)
