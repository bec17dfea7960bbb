"""``greenloop run / status / answer / rollback / abort``: start a fix run and
steer it. Tests are named by their id or a unique prefix of it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.service import RPCError

from greenloop.cli.output import console, fail, finish
from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.server import dev
from greenloop.server.client import TASK_QUEUE, configured_address, connect, ensure_search_attributes
from greenloop.workflows.models import (
    Answer,
    AnswerChoice,
    FixRequest,
    FixState,
    FixStatusView,
    LLMSettings,
    RunSummary,
    SandboxSettings,
)

AddressOpt = Annotated[str | None, typer.Option("--address", help="Temporal address (default: configured cluster, else the embedded server).")]
NamespaceOpt = Annotated[str | None, typer.Option("--namespace", help="Temporal namespace.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def new_run_id(repo: str) -> str:
    name = Path(repo.rstrip("/")).name.removesuffix(".git") or "repo"
    return f"greenloop-{name}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"


def build_request(repo: str, **opts) -> FixRequest:
    """A validated ``FixRequest`` from CLI options (shared by run and schedule)."""
    if "://" not in repo and "@" not in repo:
        path = Path(repo).expanduser()
        if not path.is_dir():
            raise GreenloopError(f"repository {repo} does not exist or is not a directory",
                                 kind=ErrorKind.VALIDATION_ERROR, repo=repo)
        repo = str(path.resolve())
    llm = LLMSettings(model=opts.pop("model"), budget_usd=opts.pop("budget_usd"),
                      allow_production_edits=not opts.pop("tests_only"),
                      analysis_only=opts.pop("analysis_only"))
    sandbox = SandboxSettings(backend=opts.pop("sandbox"), timeout_s=opts.pop("timeout"), network=opts.pop("network"))
    return FixRequest(repo=repo, llm=llm, sandbox=sandbox, **opts)


async def _client(address: str | None, namespace: str | None) -> tuple[Client, bool]:
    """A client, starting the embedded dev server when no cluster is configured.
    Returns (client, embedded)."""
    target = address or configured_address()
    if target:
        return await connect(target, namespace), False
    await asyncio.to_thread(dev.start_background)
    client = await connect(f"localhost:{dev.DEFAULT_PORT}", namespace)
    await ensure_search_attributes(client)
    return client, True


def _print_summary(summary: RunSummary) -> None:
    console.print(f"\n[bold]{summary.state}[/]: fixed {len(summary.fixed)}, skipped {len(summary.skipped)}, "
                  f"escalated {len(summary.escalated)}, flaky {len(summary.flaky)}, "
                  f"still failing {len(summary.still_failing)}; {summary.attempts} attempt(s), "
                  f"${summary.usage.cost_usd:.4f}")
    for label, value in (("report", summary.report_markdown), ("patch", summary.patch), ("branch", summary.branch)):
        if value:
            console.print(f"  {label}: {value}")


async def _follow(client: Client, run_id: str, as_json: bool) -> RunSummary:
    """Print state changes until the run ends; its summary."""
    handle = client.get_workflow_handle(run_id, result_type=RunSummary)
    seen: dict[str, str] = {}
    phase = ""

    def show(test_id: str, state: str, live: bool = True) -> None:
        if seen.get(test_id) != state:
            seen[test_id] = state
            if not as_json:
                console.print(f"  {test_id}: [bold]{state}[/]")
                if live and state == FixState.ESCALATED.value:
                    console.print(f"    answer with: greenloop answer {run_id} '{test_id}' retry|skip|abort")

    result_task = asyncio.ensure_future(handle.result())
    while not result_task.done():
        try:
            now_phase = await handle.query("phase", result_type=str)
            views = await handle.query("status", result_type=list[FixStatusView])
        except RPCError:
            now_phase, views = phase, []
        if not as_json and now_phase != phase:
            console.print(f"[dim]{now_phase}[/]")
            phase = now_phase
        for v in views:
            state = v.state.value
            if v.state not in (FixState.FIXED, FixState.SKIPPED, FixState.ABORTED) and v.workflow_id:
                try:
                    child = await client.get_workflow_handle(v.workflow_id).query("status", result_type=FixStatusView)
                    state = child.state.value
                except RPCError:
                    pass
            show(v.test_id, state)
        await asyncio.wait({result_task}, timeout=1.5)
    summary = result_task.result()
    for v in summary.tests:  # states reached since the last look (no longer answerable)
        show(v.test_id, v.state.value, live=False)
    return summary


def run_command(
    repo: Annotated[str, typer.Argument(help="Local path or git URL of the repository.")] = ".",
    ref: Annotated[str | None, typer.Option(help="Git ref to check out.")] = None,
    test_command: Annotated[str | None, typer.Option(help="Test command (default: detected).")] = None,
    build_command: Annotated[str | None, typer.Option(help="Build command (default: detected).")] = None,
    framework: Annotated[str | None, typer.Option(help="Test framework (default: detected).")] = None,
    language: Annotated[str | None, typer.Option(help="Language (default: detected).")] = None,
    select: Annotated[list[str], typer.Option("--select", help="Only tests matching this glob/substring.")] = [],  # noqa: B006
    exclude: Annotated[list[str], typer.Option("--exclude", help="Skip tests matching this glob.")] = [],  # noqa: B006
    max_attempts: Annotated[int, typer.Option(help="Fix attempts per test before escalating.")] = 3,
    run_budget: Annotated[int, typer.Option("--run-budget", help="Whole-run time budget, seconds.")] = 3600,
    per_test_budget: Annotated[int, typer.Option("--per-test-budget", help="Per-test time budget, seconds.")] = 3600,
    concurrency: Annotated[int, typer.Option(help="Tests fixed at once.")] = 1,
    escalation_deadline: Annotated[int, typer.Option(help="Seconds an escalation waits for a person.")] = 86400,
    escalation_default: Annotated[AnswerChoice, typer.Option(help="Answer when the deadline passes.")] = AnswerChoice.SKIP,
    model: Annotated[str, typer.Option(help="Claude model.")] = LLMSettings().model,
    budget_usd: Annotated[float | None, typer.Option("--budget-usd", help="LLM cost ceiling for the run.")] = None,
    tests_only: Annotated[bool, typer.Option("--tests-only", help="Never edit production code.")] = False,
    analysis_only: Annotated[bool, typer.Option("--analysis-only", help="Analyse, do not fix (no API key needed).")] = False,
    scripted: Annotated[Path | None, typer.Option(help="Scripted LLM scenario (YAML) instead of Claude.")] = None,
    sandbox: Annotated[str, typer.Option(help="auto, docker, bwrap or local.")] = "auto",
    network: Annotated[bool, typer.Option("--network", help="Allow network inside the sandbox.")] = False,
    timeout: Annotated[int, typer.Option(help="Time limit of one test run, seconds.")] = 600,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the run to its end.")] = True,
    address: AddressOpt = None,
    namespace: NamespaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Start a fix run: prints the run id and the Web UI link, then follows it."""
    try:
        request = build_request(
            repo, ref=ref, test_command=test_command, build_command=build_command, framework=framework,
            language=language, select=select, exclude=exclude, max_attempts=max_attempts, run_budget_s=run_budget,
            per_test_budget_s=per_test_budget, concurrency=concurrency, escalation_deadline_s=escalation_deadline,
            escalation_default=escalation_default, model=model, budget_usd=budget_usd, tests_only=tests_only,
            analysis_only=analysis_only, sandbox=sandbox, network=network, timeout=timeout,
        )
        if scripted is not None and not scripted.is_file():
            raise GreenloopError(f"scenario {scripted} does not exist", kind=ErrorKind.VALIDATION_ERROR)
        if scripted is not None and not wait:
            raise GreenloopError(
                "--scripted runs the scripted LLM and the run's worker in this command, so the run cannot "
                "outlive it (--no-wait)", kind=ErrorKind.VALIDATION_ERROR,
                suggestion="for runs that outlive the command, start `greenloop worker --scripted SCENARIO` "
                           "and `greenloop run` without --scripted")
        if scripted is None and not analysis_only and not os.environ.get("ANTHROPIC_API_KEY"):
            raise GreenloopError("no ANTHROPIC_API_KEY set", kind=ErrorKind.VALIDATION_ERROR)
    except GreenloopError as exc:
        raise fail(exc, "set ANTHROPIC_API_KEY, or pass --scripted SCENARIO or --analysis-only"
                   if "API" in exc.message else exc.context.get("suggestion")) from None
    finish(_run(request, scripted, wait, address, namespace, as_json))


def private_queue(run_id: str) -> str:
    """The task queue of a run whose worker lives in this command (``--scripted``)."""
    return f"{TASK_QUEUE}-private-{run_id}"


def run_link(run_id: str, namespace: str, embedded: bool) -> str | None:
    """The run's page in the Web UI: the embedded server's, or ``GREENLOOP_UI_URL``'s for a
    configured cluster (its UI address is not something Temporal's client config knows)."""
    if base := os.environ.get("GREENLOOP_UI_URL"):
        return f"{base.rstrip('/')}/namespaces/{namespace}/workflows/{run_id}"
    if embedded:
        return f"{dev.ui_url(namespace=namespace)}/{run_id}"
    return None


async def _run(request: FixRequest, scripted: Path | None, wait: bool, address: str | None,
               namespace: str | None, as_json: bool) -> int:
    from greenloop.worker import build_worker

    client, embedded = await _client(address, namespace)
    run_id = new_run_id(request.repo)
    in_process = embedded or scripted is not None
    async with AsyncExitStack() as stack:
        queue = TASK_QUEUE
        if scripted is not None:
            from greenloop.llm.scripted_server import scripted_llm

            # The scripted LLM lives in this process: its run goes to a queue only this process polls,
            # so no other worker (without the scripted LLM) ever takes one of its activities.
            queue = private_queue(run_id)
            stack.enter_context(scripted_llm(scripted))
        if in_process and (wait or scripted is not None):
            await stack.enter_async_context(build_worker(client, task_queue=queue))
        elif in_process:
            subprocess.Popen([sys.executable, "-m", "greenloop.cli.main", "worker"], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await client.start_workflow("FixSuiteWorkflow", request, id=run_id, task_queue=queue,
                                    static_summary=f"fix failing tests of {request.repo}")
        link = run_link(run_id, client.namespace, embedded)
        if as_json and not wait:
            print(json.dumps({"run_id": run_id, "ui": link}))
            return 0
        if not as_json:
            console.print(f"run [bold]{run_id}[/]\nWeb UI: " + (link or "set GREENLOOP_UI_URL to your cluster's "
                                                                  "Web UI (e.g. http://temporal-ui:8080) for a link"))
        if not wait:
            return 0
        summary = await _follow(client, run_id, as_json)
        if as_json:
            print(summary.model_dump_json(indent=2))
        else:
            _print_summary(summary)
        return 0 if summary.state == "completed" and not summary.still_failing else 1


# --- steering -------------------------------------------------------------------------


async def _views(client: Client, run_id: str) -> tuple[str, list[FixStatusView]]:
    """(phase, per-test views) of a run: live from its workflows while it runs,
    from its summary once it ended (that needs no worker)."""
    handle = client.get_workflow_handle(run_id, result_type=RunSummary)
    try:
        desc = await handle.describe()
    except RPCError as exc:
        raise GreenloopError(f"no such run {run_id!r} ({exc.message})", kind=ErrorKind.VALIDATION_ERROR) from None
    if desc.status != WorkflowExecutionStatus.RUNNING:
        try:
            summary = await handle.result()
        except WorkflowFailureError as exc:
            raise GreenloopError(f"run {run_id} ended {desc.status.name.lower()}: {exc.cause}",
                                 kind=ErrorKind.VALIDATION_ERROR) from None
        return f"finished: {summary.state}", summary.tests
    try:
        phase = await handle.query("phase", result_type=str)
        views = await handle.query("status", result_type=list[FixStatusView])
    except RPCError as exc:
        raise GreenloopError(f"run {run_id} is in progress but did not answer ({exc.message})",
                             kind=ErrorKind.VALIDATION_ERROR,
                             suggestion="start a worker for it: greenloop worker") from None
    out = []
    for v in views:
        if v.state not in (FixState.FIXED, FixState.SKIPPED, FixState.ABORTED) and v.workflow_id:
            try:
                v = await client.get_workflow_handle(v.workflow_id).query("status", result_type=FixStatusView)
            except RPCError:
                pass  # not started yet: the parent's view stands
        out.append(v)
    return phase, out


def resolve_test(views: list[FixStatusView], name: str) -> FixStatusView:
    """A test by its id or a unique prefix of it."""
    exact = [v for v in views if v.test_id == name]
    if exact:
        return exact[0]
    matches = [v for v in views if v.test_id.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise GreenloopError(f"no test {name!r} in this run; `greenloop status RUN` lists them",
                             kind=ErrorKind.VALIDATION_ERROR)
    raise GreenloopError(f"{name!r} matches {len(matches)} tests: " + ", ".join(v.test_id for v in matches[:5]),
                         kind=ErrorKind.VALIDATION_ERROR)


def status_command(run_id: Annotated[str, typer.Argument(help="The run id.")],
                   address: AddressOpt = None, namespace: NamespaceOpt = None, as_json: JsonOpt = False) -> None:
    """Per-test states of a run."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        phase, views = await _views(client, run_id)
        if as_json:
            print(json.dumps({"run_id": run_id, "phase": phase, "tests": [v.model_dump(mode="json") for v in views]},
                             indent=2))
            return 0
        table = Table(title=f"{run_id}: {phase}")
        for col in ("test", "state", "attempt", "last verdict", "last event"):
            table.add_column(col, overflow="fold")
        for v in views:
            table.add_row(v.test_id, v.state.value, str(v.attempt),
                          v.last_verdict.value if v.last_verdict else "", v.history[-1] if v.history else "")
        console.print(table)
        return 0

    finish(go())


def answer_command(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    test: Annotated[str, typer.Argument(help="Test id or unique prefix.")],
    choice: Annotated[AnswerChoice, typer.Argument(help="retry, skip or abort.")],
    attempts: Annotated[int, typer.Option(help="For retry: how many more attempts.")] = 3,
    note: Annotated[str, typer.Option(help="Why (kept in the report).")] = "",
    address: AddressOpt = None, namespace: NamespaceOpt = None, as_json: JsonOpt = False,
) -> None:
    """Answer an escalated test: retry N more attempts, skip it, or abort it."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        view = resolve_test((await _views(client, run_id))[1], test)
        handle = client.get_workflow_handle(view.workflow_id or "")
        answer = Answer(choice=choice, attempts=attempts, by=os.environ.get("USER", "cli"), note=note)
        try:
            state = await handle.execute_update("answer", answer, result_type=str)
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause.message if exc.cause is not None and hasattr(exc.cause, "message") else str(exc)
            raise GreenloopError(cause, kind=ErrorKind.VALIDATION_ERROR) from None
        except RPCError as exc:
            raise GreenloopError(f"{view.test_id} is not running: {exc.message}",
                                 kind=ErrorKind.VALIDATION_ERROR) from None
        print(json.dumps({"test": view.test_id, "state": state}) if as_json else f"{view.test_id}: {state}")
        return 0

    finish(go())


def rollback_command(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    test: Annotated[str, typer.Argument(help="Test id or unique prefix.")],
    address: AddressOpt = None, namespace: NamespaceOpt = None,
) -> None:
    """Undo a fixed test's edits by hand."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        view = resolve_test((await _views(client, run_id))[1], test)
        try:
            msg = await client.get_workflow_handle(run_id).execute_update("rollback", view.test_id, result_type=str)
        except WorkflowUpdateFailedError as exc:
            raise GreenloopError(getattr(exc.cause, "message", str(exc)), kind=ErrorKind.VALIDATION_ERROR) from None
        console.print(msg)
        return 0

    finish(go())


def abort_command(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    reason: Annotated[str, typer.Option(help="Why (kept in the report).")] = "aborted from the CLI",
    address: AddressOpt = None, namespace: NamespaceOpt = None,
) -> None:
    """Abort a run: running sandbox processes are killed, in-flight edits rolled back."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        try:
            phase = await client.get_workflow_handle(run_id).execute_update("abort", reason, result_type=str)
        except WorkflowUpdateFailedError as exc:
            raise GreenloopError(getattr(exc.cause, "message", str(exc)), kind=ErrorKind.VALIDATION_ERROR) from None
        except RPCError as exc:
            raise GreenloopError(f"no such run {run_id!r} ({exc.message})", kind=ErrorKind.VALIDATION_ERROR) from None
        console.print(f"{run_id}: {phase}")
        return 0

    finish(go())

