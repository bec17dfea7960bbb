"""Run a project's build and tests in the sandbox and parse the result.

Outputs are streamed by the sandbox to files in an artifact folder; the
parsed ``TestReport`` is written beside them. The fallbacks apply: a
default command the shell did not find (exit 127) is replaced by the next
fallback. What a command printed never decides that it was not found: a
runner that reported its tests and then failed to write its cache
(``ENOENT`` in stderr) was found, and a suite that dies before any test
(an INTERNALERROR, a runner's own exit) is that suite's state, not a reason
to try another runner.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from ..domain.errors import ErrorKind, GreenloopError
from ..parsers import RunOutput, parse
from ..parsers.models import Status, TestReport
from ..projectenv import attach, generated
from ..projectenv.models import ProjectEnvironment
from ..sandbox.models import ExecResult, SandboxSettings
from . import crash
from .plan import REPORT_DIR, SuitePlan

# The shell's exit status for a command it could not find.
NOT_FOUND_EXIT = 127


class CompletedRun(BaseModel):
    """A finished test run: the report and where its artifacts are."""

    report: TestReport
    build: ExecResult | None = None
    test: ExecResult | None = None
    artifacts: str




async def _exec(command: str, workspace: Path, out_dir: Path, settings: SandboxSettings,
                heartbeat: Callable[[str], None], environment: ProjectEnvironment | None = None) -> ExecResult:
    from .. import sandbox  # the sandbox owns isolation and limits

    if environment is None:
        return await sandbox.run(command, workspace, None, settings, backend=settings.backend,
                                 out_dir=out_dir, heartbeat=heartbeat, mounts=[])
    backend = sandbox.choose_backend(settings.backend)[1] if environment.caches else ""
    with attach.caches(environment, backend, workspace) as (kept, writable):
        return await sandbox.run(command, workspace, {**attach.test_env(environment, workspace), **kept}, settings,
                                 backend=settings.backend, out_dir=out_dir, heartbeat=heartbeat,
                                 mounts=[*attach.mounts(environment), *writable])


def _stderr_end(ex: ExecResult, chars: int) -> str:
    """The last ``chars`` of a command's stderr, from the excerpts the sandbox kept
    (the file itself may be tens of MB)."""
    return (ex.stderr_head + ex.stderr_tail)[-chars:]


def output_end(ex: ExecResult, chars: int) -> str:
    """The end of a command's stdout, then of its stderr (where crashes are told)."""
    out = (ex.stdout_tail or ex.stdout_head).strip()[-chars // 2:]
    return "\n".join(part for part in (out, _stderr_end(ex, chars // 2).strip()) if part)


def _not_found(ex: ExecResult) -> bool:
    """Whether the shell did not find the command (its exit status says it)."""
    return ex.exit_code == NOT_FOUND_EXIT


def _read(test: ExecResult, workspace: Path, out_dir: Path, framework: str) -> TestReport:
    """Parse a finished command's output, keeping the reports it wrote beside it."""
    reports = workspace / REPORT_DIR
    if reports.is_dir():
        shutil.copytree(reports, out_dir / "reports", dirs_exist_ok=True)
    run = RunOutput(command=test.command, exit_code=test.exit_code, stdout_path=Path(test.stdout_path),
                    stderr_path=Path(test.stderr_path), cwd=workspace, project_root=workspace)
    return parse(run, framework)


async def _one_test_died(plan: SuitePlan, test: ExecResult, report: TestReport, why: str | None,
                         scopes: list[str | None], workspace: Path, out_dir: Path, settings: SandboxSettings,
                         heartbeat: Callable[[str], None]) -> TestReport:
    """A process died inside the run (out of memory, a crash): fail the test it died in,
    keep the other results, run the tests that never ran (see ``runner.crash``)."""
    message = crash.ended(plan.framework, test, settings.memory_mb, workspace)
    if not scopes:
        if why is not None and not crash.runner_died(test):  # a child process died; the runner reported every test
            crash.mark_victims(report, why, message)
            report.warnings.insert(0, f"{message} ({test.command})")
        else:  # keeps what the output holds; the test it died in cannot be named
            report.warnings.insert(0, f"{message} ({test.command}); the test it died in cannot be named")
        return report

    crash.prepare(plan.framework, workspace)

    async def again(command: str, folder: Path) -> ExecResult:
        reports = workspace / REPORT_DIR
        shutil.rmtree(reports, ignore_errors=True)
        reports.mkdir(parents=True, exist_ok=True)
        return await _exec(command, workspace, folder, settings, heartbeat, plan.environment)

    report = await crash.resume(plan, report, test, again, lambda ex: _read(ex, workspace, out_dir, plan.framework),
                                out_dir, settings.memory_mb, workspace.resolve())
    report.warnings.insert(0, f"{message} ({test.command})")
    return report


async def run_command(plan: SuitePlan, command: str, workspace: Path, out_dir: Path, settings: SandboxSettings,
                      heartbeat: Callable[[str], None] = lambda _: None) -> ExecResult:
    """Run one command in the sandbox, in ``workspace`` with the project's environment,
    as the tests run (no parsing: a command the model asked for)."""
    if plan.environment is not None:
        attach.link(plan.environment, workspace)
    return await _exec(command, workspace, out_dir, settings, heartbeat, plan.environment)


async def run_tests(plan: SuitePlan, workspace: Path, out_dir: Path, settings: SandboxSettings,
              heartbeat: Callable[[str], None] = lambda _: None, *, command: str | None = None,
              wrap: Callable[[str], str] | None = None) -> CompletedRun:
    """Build (when the plan has a build step), test, parse; typed errors for
    what no retry can fix (build failure, command not found). A missing
    workspace is never created (an empty folder would "pass"): it is lost.
    ``wrap`` changes each test command before it runs (test impact loads its plugin)."""
    if not workspace.is_dir():
        raise GreenloopError(f"the workspace {workspace} does not exist on this worker",
                             kind=ErrorKind.WORKSPACE_LOST, path=str(workspace))
    out_dir.mkdir(parents=True, exist_ok=True)
    reports = workspace / REPORT_DIR
    if plan.environment is not None:
        attach.link(plan.environment, workspace)  # this workspace or worktree sees the cached environment
    build = None
    if plan.build_command and command is None:
        build = await _exec(plan.build_command, workspace, out_dir / "build", settings, heartbeat, plan.environment)
        if build.exit_code != 0:
            kind = ErrorKind.COMMAND_NOT_FOUND if _not_found(build) else ErrorKind.BUILD_FAILURE
            if build.timed_out:
                kind = ErrorKind.TIMEOUT
            raise GreenloopError(
                f"build failed: {plan.build_command} exited {build.exit_code}", kind=kind,
                exit_code=build.exit_code, stderr=_stderr_end(build, 2000),
            )
    candidates = [command] if command else [plan.test_command, *plan.fallback_commands]
    test = None
    for i, cmd in enumerate(candidates):
        shutil.rmtree(reports, ignore_errors=True)
        reports.mkdir(parents=True, exist_ok=True)
        test = await _exec(wrap(cmd) if wrap else cmd, workspace, out_dir / f"test-{i}", settings, heartbeat,
                           plan.environment)
        if not _not_found(test):
            break
    assert test is not None
    if _not_found(test):
        raise GreenloopError(
            f"Test command not found: {test.command}", kind=ErrorKind.COMMAND_NOT_FOUND,
            command=test.command, exit_code=test.exit_code,
            stderr=_stderr_end(test, 2000),
            suggestion="install the project's dependencies, or give --test-command",
        )
    report = _read(test, workspace, out_dir, plan.framework)
    crash.mark_isolated(plan.framework, report, test, settings.memory_mb)
    why, scopes = crash.died(test), crash.dead_scopes(plan.framework, report, test, workspace)
    if why or scopes:
        report = await _one_test_died(plan, test, report, why, scopes, workspace, out_dir, settings, heartbeat)
    if not report.output_tail and not (report.tests and report.per_test):  # what a person reads instead
        report.output_tail = output_end(test, 1500) or None
    if test.timed_out:
        report.timed_out = True
        report.warnings.append(f"the run was killed after its time limit ({test.command})")
    report.warnings.extend(test.warnings)
    if plan.language == "python":
        errors = [f"{t.message or ''}\n{t.details or ''}" for t in report.tests if t.status == Status.ERRORED]
        roots = plan.environment.import_roots if plan.environment and plan.environment.import_roots else ["."]
        report.setup_explains = generated.explain(errors or [report.output_tail or ""], workspace, roots)
    if test.truncated:
        report.output_cut_bytes = settings.output_bytes
    (out_dir / "report.json").write_text(report.model_dump_json(indent=1))
    return CompletedRun(report=report, build=build, test=test, artifacts=str(out_dir))
