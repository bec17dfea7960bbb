"""The tools that run things mid-conversation, in the run's sandbox: ``run_tests``
(the failing test, or other tests of the suite by id) and Anthropic's bash tool
(``bash_20250124``, named ``bash``: one command).

Each call runs on a scratch copy of the workspace: a git worktree of its
current files (``workspace/worktree.py``) with the conversation's pending
edits written in, removed when the call ends. So the model sees its edits
at work while the workspace itself is never touched, and whatever a command
changes is discarded (the analyzer, which may not edit, uses both tools
read-only that way). Tests run as validation runs them (``runner/select.py``'s
command, ``runner/execute.py``'s run and parse, with the run's limits); the
model gets Greenloop's parsed result, each requested test's status and
message and the end of the output, not raw logs. A command runs with the
sandbox's isolation (no network whatever the run allows, no secrets in its
environment) and tighter bounds (``COMMAND_TIMEOUT_S``, ``COMMAND_OUTPUT_BYTES``),
on the docker backend as on bwrap (the scratch copy is the container's workspace);
under the ``local`` backend, which does not isolate, it is refused.

A conversation may run at most ``max_test_runs`` test runs and ``max_commands``
commands (the settings ``budgets.test_runs`` and ``budgets.commands``); a call
beyond is answered with a tool error and the conversation goes on. Each call
that ran is an event of the run (``model_test_run``, ``model_command``), which
the timeline shows.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..domain.errors import ErrorKind, GreenloopError
from ..parsers.models import Status, TestReport, TestResult
from ..runner.execute import run_command, run_tests
from ..runner.plan import SuitePlan
from ..runner.select import tests_command
from ..sandbox.models import ExecResult, SandboxSettings
from ..workspace import worktree
from ..workspace.backups import slug
from ..workspace.events import log_event
from .tools import ToolError
from .trim import trim, trim_file

RUN_TESTS = "run_tests"
BASH = "bash"
NAMES = frozenset({RUN_TESTS, BASH})

RUN_TESTS_TOOL: dict[str, Any] = {
    "name": RUN_TESTS,
    "description": "Run tests in the sandbox on the repository with your pending edits applied (the "
    "repository itself is not changed): the failing test when `tests` is not given, else the tests named, by "
    "their ids as this test framework names them. Answers each test's status and message and the end of the "
    "output. The number of runs per conversation is limited: run when an edit is ready to be checked.",
    "input_schema": {"type": "object", "properties": {
        "tests": {"type": "array", "items": {"type": "string"},
                  "description": "test ids (default: the failing test)"}}}}
# Anthropic's bash tool, declared by type (its input: {command} or {restart: true}).
BASH_TOOL: dict[str, Any] = {"type": "bash_20250124", "name": BASH}

COMMAND_TIMEOUT_S = 120  # a command's time limit (the run's, when shorter)
COMMAND_OUTPUT_BYTES = 1024 * 1024  # a command's output limit, in the sandbox
OUTPUT_CHARS = 6_000  # what a result shows of an output (stdout and stderr each)
MOST_TESTS = 20  # tests one run_tests call may name


class Hands(BaseModel):
    """What a conversation's sandboxed tools need: how the run's tests run, where
    its failing test comes from, its limits and its bounds."""

    plan: SuitePlan
    sandbox: SandboxSettings
    report_path: str  # the suite report the failing test comes from (ids, and files for selectors)
    test_id: str  # the failing test: what run_tests runs by default
    run_dir: str  # where the calls' artifacts and events go
    role: str
    attempt: int
    max_test_runs: int
    max_commands: int
    candidate: int = 1  # which of the attempt's candidate fixes (--candidates) it works for


class Counts(BaseModel):
    """The calls of one conversation that ran."""

    test_runs: int = 0
    commands: int = 0


def declarations(hands: Hands | None) -> list[dict[str, Any]]:
    """The tools' entries in a request's ``tools`` (none without ``hands``)."""
    return [RUN_TESTS_TOOL, BASH_TOOL] if hands is not None else []


def _tests(hands: Hands, args: dict[str, Any]) -> list[TestResult]:
    ids = args.get("tests")
    if ids is None:
        ids = [hands.test_id]
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i.strip() for i in ids):
        raise ToolError("`tests` must be a non-empty list of test ids (or left out: the failing test)")
    if len(ids) > MOST_TESTS:
        raise ToolError(f"name at most {MOST_TESTS} tests in one run")
    report = TestReport.model_validate_json(Path(hands.report_path).read_text())
    out = []
    for test_id in ids:
        known = report.find(test_id)
        # A test the suite's report does not hold (a new one): selected by its id, its file from the id.
        out.append(known or TestResult(id=test_id, status=Status.FAILED,
                                       file=test_id.split("::")[0] if "::" in test_id else None))
    return out


def _scratch(root: Path, changes: dict[str, str | None], target: Path) -> None:
    """A worktree of the workspace's current files at ``target``, with ``changes`` written in."""
    worktree.create(root, target)
    for rel, content in changes.items():
        path = target / rel
        if content is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)


def _folder(hands: Hands, name: str, n: int) -> Path:
    return Path(hands.run_dir) / "tool-runs" / slug(hands.test_id) / (
        f"{hands.role}-{hands.attempt}" + (f"-candidate-{hands.candidate}" if hands.candidate > 1 else "")
        + f"-{name}-{n}")


def _ended(ex: ExecResult, limits: SandboxSettings) -> str:
    if ex.timed_out:
        return f"killed after its time limit ({limits.timeout_s:g} s)"
    if ex.out_of_memory:
        return f"killed: out of memory ({limits.memory_mb} MB)"
    if ex.disk_exceeded:
        return f"killed: it wrote more than {limits.disk_mb} MB"
    return f"exit code {ex.exit_code}" + (f" (signal {ex.killed_by_signal})" if ex.killed_by_signal else "")


def _output(ex: ExecResult) -> str:
    parts = []
    for name, path in (("stdout", ex.stdout_path), ("stderr", ex.stderr_path)):
        text = trim_file(path, OUTPUT_CHARS, "the end of the output is kept").strip()
        if text:
            parts.append(f"<{name}>\n{text}\n</{name}>")
    return "\n".join(parts) or "(no output)"


async def _run_tests(hands: Hands, args: dict[str, Any], scratch: Path, out: Path,
                     heartbeat: Callable[[str], None]) -> tuple[str, str]:
    """The tests' result as the model reads it, and a one-word status for the event."""
    tests = _tests(hands, args)
    command = tests_command(hands.plan, tests)
    try:
        run = await run_tests(hands.plan, scratch, out, hands.sandbox, heartbeat, command=command)
    except GreenloopError as exc:
        if exc.kind == ErrorKind.WORKSPACE_LOST:
            raise
        raise ToolError(f"the tests could not run: {exc.message}") from None
    lines = [f"ran: {command}"]
    statuses = []
    for t in tests:
        found = run.report.find(t.id)
        status = found.status.value if found else "not found in the output"
        statuses.append(status)
        lines.append(f"{t.id}: {status}")
        if found and found.message and found.status not in (Status.PASSED, Status.XPASSED):
            lines.append("  " + trim(found.message, 2_000).replace("\n", "\n  "))
    totals = run.report.totals
    lines.append("totals: " + (", ".join(f"{getattr(totals, k)} {k}" for k in ("passed", "failed", "errored",
                                                                            "skipped") if getattr(totals, k))
                               or "no tests in the output"))
    if run.report.timed_out:
        lines.append(f"the run was killed after its time limit ({hands.sandbox.timeout_s:g} s)")
    if run.test is not None:
        lines.append(_output(run.test))
    return "\n".join(lines), ",".join(statuses)


async def _command(hands: Hands, args: dict[str, Any], scratch: Path, out: Path,
                   heartbeat: Callable[[str], None]) -> tuple[str, str]:
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ToolError("`command` must be a non-empty string")
    limits = hands.sandbox.model_copy(update={
        "network": False, "timeout_s": min(hands.sandbox.timeout_s, COMMAND_TIMEOUT_S),
        "output_bytes": min(hands.sandbox.output_bytes, COMMAND_OUTPUT_BYTES)})
    ex = await run_command(hands.plan, command, scratch, out, limits, heartbeat)
    ended = _ended(ex, limits)
    return f"{ended}\n{_output(ex)}", ended


async def call(hands: Hands, name: str, args: Any, root: Path, changes: dict[str, str | None], counts: Counts,
               heartbeat: Callable[[str], None] = lambda _: None) -> tuple[str, bool]:
    """Run one call of ``run_tests`` or ``bash`` on a scratch copy of ``root`` with ``changes``;
    the result's text and whether it is an error. ``counts`` counts the calls that ran."""
    if not isinstance(args, dict):
        return "error: the tool input must be a JSON object", True
    try:
        if name == BASH:
            if args.get("restart"):
                return "each command runs in a fresh sandbox on your current edits: there is nothing to restart", False
            if hands.sandbox.backend == "local":
                raise ToolError("commands are refused under the `local` sandbox backend, which does not isolate "
                                "them: read files and run tests instead")
            if counts.commands >= hands.max_commands:
                raise ToolError(f"the limit of {hands.max_commands} commands in this conversation is reached")
            n, run, event = counts.commands + 1, _command, "model_command"
        elif name == RUN_TESTS:
            if counts.test_runs >= hands.max_test_runs:
                raise ToolError(f"the limit of {hands.max_test_runs} test runs in this conversation is reached: "
                                "finish without running them again (your edits are validated after you answer)")
            n, run, event = counts.test_runs + 1, _run_tests, "model_test_run"
        else:
            raise ToolError(f"unknown tool {name!r}")
        folder = _folder(hands, name, n)
        shutil.rmtree(folder, ignore_errors=True)  # a retried call starts over
        scratch = folder / "workspace"
        await asyncio.to_thread(_scratch, root, changes, scratch)
        try:
            text, outcome = await run(hands, args, scratch, folder / "run", heartbeat)
        finally:
            await asyncio.to_thread(worktree.remove, root, scratch)
    except ToolError as exc:
        return f"error: {exc}", True
    if name == BASH:
        counts.commands = n
    else:
        counts.test_runs = n
    log_event(hands.run_dir, event, test=hands.test_id, role=hands.role, attempt=hands.attempt, n=n,
              outcome=outcome, input=args, artifacts=str(folder / "run"))
    return trim(text, hint="the end of the output is kept"), False
