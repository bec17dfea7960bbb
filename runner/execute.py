"""Run a project's build and tests in the sandbox and parse the result.

Outputs are streamed by the sandbox to files in an artifact folder; the
parsed ``TestReport`` is written beside them. Seed 004's fallbacks apply: a
default command that is not found (exit 127, "No module named pytest") is
replaced by the next fallback.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers import RunOutput, parse
from greenloop.parsers.models import TestReport
from greenloop.runner.plan import REPORT_DIR, SuitePlan
from greenloop.sandbox.models import ExecResult, Limits

NOT_FOUND = re.compile(r"command not found|No module named (pytest|unittest)\b|not found: \S+|ENOENT|"
                       r"could not determine executable to run")


class CompletedRun(BaseModel):
    """A finished test run: the report and where its artifacts are."""

    report: TestReport
    build: ExecResult | None = None
    test: ExecResult | None = None
    artifacts: str


def limits(settings) -> Limits:
    """The sandbox limits a ``SandboxSettings`` asks for."""
    return Limits(timeout_s=settings.timeout_s, memory_mb=settings.memory_mb, cpus=settings.cpus,
                  pids=settings.pids, network=settings.network, tmpfs_mb=settings.tmpfs_mb,
                  disk_mb=settings.disk_mb)


async def _exec(command: str, workspace: Path, out_dir: Path, settings,
                heartbeat: Callable[[str], None]) -> ExecResult:
    from greenloop import sandbox  # the sandbox owns isolation and limits

    return await sandbox.run(command, workspace, None, limits(settings), backend=settings.backend,
                             out_dir=out_dir, heartbeat=heartbeat)


def _stderr_end(ex: ExecResult, chars: int) -> str:
    """The last ``chars`` of a command's stderr, from the excerpts the sandbox kept
    (the file itself may be tens of MB)."""
    return (ex.stderr_head + ex.stderr_tail)[-chars:]


def _not_found(ex: ExecResult) -> bool:
    if ex.exit_code == 127:
        return True
    tail = _stderr_end(ex, 4000)
    return ex.exit_code not in (0, None) and NOT_FOUND.search(tail) is not None and "collected" not in tail


async def run_tests(plan: SuitePlan, workspace: Path, out_dir: Path, settings,
              heartbeat: Callable[[str], None] = lambda _: None, *, command: str | None = None) -> CompletedRun:
    """Build (when the plan has a build step), test, parse; typed errors for
    what no retry can fix (build failure, command not found). A missing
    workspace is never created (an empty folder would "pass"): it is lost."""
    if not workspace.is_dir():
        raise GreenloopError(f"the workspace {workspace} does not exist on this worker",
                             kind=ErrorKind.WORKSPACE_LOST, path=str(workspace))
    out_dir.mkdir(parents=True, exist_ok=True)
    reports = workspace / REPORT_DIR
    build = None
    if plan.build_command and command is None:
        build = await _exec(plan.build_command, workspace, out_dir / "build", settings, heartbeat)
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
        test = await _exec(cmd, workspace, out_dir / f"test-{i}", settings, heartbeat)
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
    if test.out_of_memory:
        raise GreenloopError(f"{test.command} ran out of memory", kind=ErrorKind.OUT_OF_MEMORY,
                             command=test.command)
    # Keep the reports the command wrote beside its output.
    if reports.is_dir():
        shutil.copytree(reports, out_dir / "reports", dirs_exist_ok=True)
    run = RunOutput(command=test.command, exit_code=test.exit_code, stdout_path=Path(test.stdout_path),
                    stderr_path=Path(test.stderr_path), cwd=workspace, project_root=workspace)
    report = parse(run, plan.framework)
    if test.timed_out:
        report.timed_out = True
        report.warnings.append(f"the run was killed after its time limit ({test.command})")
    report.warnings.extend(test.warnings)
    (out_dir / "report.json").write_text(report.model_dump_json(indent=1))
    return CompletedRun(report=report, build=build, test=test, artifacts=str(out_dir))
