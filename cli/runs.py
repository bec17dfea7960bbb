"""``greenloop run / status / answer / rollback / abort``: start a fix run and
steer it. Tests are named by their id or a unique prefix of it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from .. import project_config, run_settings, sandbox
from ..domain.answers import Answer, AnswerChoice
from ..domain.errors import ErrorKind, GreenloopError
from ..domain.states import FixState, RunOutcome
from ..llm.scenario import Scenario
from ..parsers.language import LANGUAGE_ALIASES
from ..reports.record import FixStatusView, RunSummary, headline
from ..run_request import FixRequest
from ..runner.plan import SuitePlan, plan_tests
from ..runner.select import selected
from ..server import dev
from ..server.client import (
    configured_address,
    connect,
    ensure_search_attributes,
    private_prefix,
    private_queue,
    shared_queue,
)
from ..settings import settings
from ..workflows.fix_one_test import FixOneTestWorkflow
from ..workflows.fix_suite import FixSuiteWorkflow
from . import follow, live, watch
from .exit_codes import ExitCode, for_summary
from .output import JsonOpt, console, err_console, fail, finish, invalid_options, quiet_worker_logs
from .run_options import with_run_options

AddressOpt = Annotated[str | None, typer.Option("--address", help="Temporal address (default: configured cluster, else the embedded server).")]
NamespaceOpt = Annotated[str | None, typer.Option("--namespace", help="Temporal namespace.")]


def new_run_id(repo: str) -> str:
    name = Path(repo.rstrip("/")).name.removesuffix(".git") or "repo"
    return f"greenloop-{name}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"


def given_options(ctx: typer.Context) -> set[str]:
    """The options of a command that were given on its command line (not defaults)."""
    sources = {name: ctx.get_parameter_source(name) for name in ctx.params}
    return {name for name, src in sources.items() if src is not None and src.name not in ("DEFAULT", "DEFAULT_MAP")}


def build_request(repo: str, given: set[str] | None = None, **options: Any) -> FixRequest:
    """A validated ``FixRequest`` from run settings by name (the CLI options, shared by run
    and schedule) and the repository's ``greenloop.toml``/``[tool.greenloop]``, which
    fills every setting not ``given`` on the command line (None: none was)."""
    if options.get("pull_request") and not options.get("push"):
        raise GreenloopError("--pr needs --push REMOTE: a pull request is opened from a pushed branch",
                             kind=ErrorKind.VALIDATION_ERROR,
                             suggestion="add --push origin (or the remote the pull request goes to)")
    config_file = None
    if "://" not in repo and "@" not in repo:
        path = Path(repo).expanduser()
        if not path.is_dir():
            raise GreenloopError(f"repository {repo} does not exist or is not a directory",
                                 kind=ErrorKind.VALIDATION_ERROR, repo=repo)
        repo = str(path.resolve())
        config, found = project_config.load(path)
        options = run_settings.merged(options, given or set(), config.settings())
        config_file = str(found) if found else None
    try:
        request = FixRequest.model_validate({**run_settings.request_data(options), "repo": repo,
                                             "config_file": config_file})
    except ValidationError as exc:
        raise invalid_options(exc) from None
    return request


def refuse_unplannable(request: FixRequest) -> None:
    """A local project (its working tree is what the run checks out) whose language cannot be
    told is refused before a run starts; a run would only stop at planning."""
    if "://" not in request.repo and "@" not in request.repo and request.ref is None:
        plan_project(Path(request.repo), request.language, request.framework, request.test_command)


LANGUAGES = sorted(set(LANGUAGE_ALIASES.values()))


def plan_project(root: Path, language: str | None = None, framework: str | None = None,
                 test_command: str | None = None) -> SuitePlan:
    """How the project at ``root`` is tested; one whose language cannot be told is bad input
    that says which setting to give."""
    try:
        return plan_tests(root, language=language, framework=framework, test_command=test_command)
    except GreenloopError as exc:
        if exc.kind != ErrorKind.LANGUAGE_DETECTION_FAILED:
            raise
        found = exc.context.get("found") or []
        why = (f"indicators of several languages are equally strong ({', '.join(found)})" if found
               else "none of the files that tell it is there (package.json, pyproject.toml, go.mod, Cargo.toml...)")
        raise GreenloopError(f"cannot tell the language of {root}: {why}", kind=ErrorKind.LANGUAGE_DETECTION_FAILED,
                             suggestion=f"give --language ({', '.join(LANGUAGES)}), or `language = \"...\"` in "
                                        "greenloop.toml; --test-command and --framework when they are not the "
                                        "language's usual ones") from None


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


def ended(summary: RunSummary, as_json: bool) -> int:
    """Say how a followed run ended (its summary as JSON, or the summary's lines); its exit code."""
    if as_json:
        print(summary.model_dump_json(indent=2))
    else:
        _print_summary(summary)
    return int(for_summary(summary))


def _print_summary(summary: RunSummary) -> None:
    state, rest = headline(summary).split(": ", 1)
    queue = (f"; {summary.rebased} fix(es) rebased, {summary.reasked} re-asked after a conflict"
             if summary.rebased or summary.reasked else "")
    console.print(f"\n[bold]{state}[/]: {escape(rest)}; {summary.attempts} attempt(s), "
                  f"${summary.usage.cost_usd:.4f}{queue}")
    if summary.reason and summary.state != "completed":
        console.print(f"  why: {escape(summary.reason)}")
    for caveat in summary.caveats:
        console.print(f"  [yellow]caution[/]: {escape(caveat)}")
    if next_step := OUTPUT_CUT_STEP if summary.output_cut else NEXT_STEPS.get(summary.state):
        console.print(f"  next: {next_step}")
    for label, value in (("report", summary.report_html), ("markdown", summary.report_markdown),
                         ("junit", summary.junit_after), ("patch", summary.patch),
                         ("base commit", summary.base_commit), ("rebased onto", summary.rebased_onto),
                         ("branch", summary.branch),
                         ("pushed", summary.pushed), ("pr", summary.pr_url or summary.pr_markdown)):
        if value:
            console.print(f"  {label}: {escape(value)}")
    for note in summary.notes:
        console.print(f"  note: {escape(note)}")


# What to do about a run that could not read its suite.
NEXT_STEPS = {
    "suite_unreadable": "run the test command by hand in the project and check that it finds and reports the tests; "
                        "give --test-command (and --framework) if Greenloop chose the wrong one",
    "suite_timed_out": "raise --timeout (seconds per suite run), or --select fewer tests",
    "setup_failed": "fix the project's setup (the end of its log is above), or give its setup command in "
                    "greenloop.toml, then run again",
}


# What to do about a suite whose output passed the cap (whatever the run's outcome).
OUTPUT_CUT_STEP = ("raise the output cap (--output-bytes, or output_bytes in greenloop.toml's [sandbox]), "
                   "or make the suite print less (a quieter reporter, less logging)")


def _answer_hint(run_id: str, test_id: str) -> live.ShellCommand:
    """The command that answers an escalated test (the person keeps one of the answers)."""
    return live.ShellCommand(["greenloop", "answer", run_id, test_id], tail="retry|skip|abort", style="bold yellow")


STALL_CHECK_S = 3.0
QUERY_TIMEOUT = timedelta(seconds=5)  # a run whose worker is gone must not hold the CLI up


def run_failed(run_id: str, exc: WorkflowFailureError) -> GreenloopError:
    """A run that failed (or was cancelled or terminated) as a typed error that says what next."""
    chain = [exc.cause]
    while getattr(chain[-1], "cause", None) is not None:
        chain.append(chain[-1].cause)
    # The first failure typed with one of Greenloop's kinds says the most, else the innermost.
    kinds = {k.value for k in ErrorKind}
    cause = next((c for c in chain if getattr(c, "type", None) in kinds), chain[-1])
    what = getattr(cause, "message", None) or str(cause or exc)
    if getattr(cause, "type", None) == ErrorKind.SETUP_FAILED.value:  # the suite never ran: the outcome says so
        context = next((d for d in getattr(cause, "details", ()) if isinstance(d, dict)), {})
        if tail := str(context.get("log_tail") or "").strip():
            what += f"\nthe end of its log:\n{tail[-1500:]}"
        return GreenloopError(f"run {run_id}: {RunOutcome.SETUP_FAILED.value}: {what}", kind=ErrorKind.SETUP_FAILED,
                              exit=ExitCode.SUITE_NOT_READ, suggestion=NEXT_STEPS[RunOutcome.SETUP_FAILED])
    return GreenloopError(f"run {run_id} failed: {what}", kind=ErrorKind.VALIDATION_ERROR, exit=ExitCode.STOPPED,
                          suggestion=f"its history is in the Web UI; `greenloop status {run_id}` shows each test")


REPOLL_S = 10.0  # after the server came back, its workers poll again within this: no stall is said meanwhile


async def _follow(client: Client, run_id: str, as_json: bool, own_worker: bool = False,
                  address: str | None = None, namespace: str | None = None) -> RunSummary:
    """Show the run's progress until it ends (a live table on a terminal, else a line per
    state change; nothing with --json); its summary. The server may be unreachable for a
    while meanwhile (it restarts): this reconnects and goes on. Ctrl-C says what becomes of
    the run (``own_worker``: its worker is this command, so it is paused) and how to pick it
    up again (``address``, ``namespace``: as the commands that do it need them)."""
    handle = client.get_workflow_handle_for(FixSuiteWorkflow.run, run_id)
    server = follow.Reconnecting(client.service_client.config.target_host)
    try:
        return await _show(client, handle, server, as_json)
    except asyncio.CancelledError:  # Ctrl-C
        paused = own_worker or not await follow.served(client, handle)
        follow.interrupted(run_id, paused, address, namespace)
        raise


async def _show(client: Client, handle: WorkflowHandle[Any, RunSummary], server: follow.Reconnecting,
                as_json: bool) -> RunSummary:
    run_id = handle.id
    queue = (await server.call(handle.describe)).task_queue  # the shared one, or a --scripted run's own
    said: set[str] = set()
    next_look = time.monotonic() + STALL_CHECK_S
    with live.Board(console, run_id, lambda test_id: _answer_hint(run_id, test_id), quiet=as_json) as board:
        tracker = live.Tracker(client, handle, board, QUERY_TIMEOUT)
        result_task = asyncio.ensure_future(server.call(handle.result))
        no_worker = False
        try:
            while not result_task.done():
                settled = server.reachable and time.monotonic() - server.back_at >= REPOLL_S
                if settled and time.monotonic() >= next_look:  # nothing waits silently: say what holds it up
                    next_look = time.monotonic() + STALL_CHECK_S
                    stalls = await watch.stalls(client, handle, queue)
                    no_worker = watch.no_worker(queue, run_id) in stalls
                    for line in stalls:
                        if line not in said:
                            said.add(line)
                            err_console.print(f"[yellow]waiting:[/] {escape(line)}")
                if not no_worker and server.reachable:  # else nobody would answer a query
                    await tracker.look()
                await asyncio.wait({result_task}, timeout=1.5)
        finally:
            result_task.cancel()
        try:
            summary = result_task.result()
        except WorkflowFailureError as exc:
            raise run_failed(run_id, exc) from None
        await tracker.finished(summary)  # states reached since the last look (no longer answerable)
    return summary


def run_request(repo: str, given: set[str], options: dict[str, Any], scripted: Path | None,
                wait: bool = True, address: str | None = None) -> FixRequest:
    """The request of a run about to start (``greenloop run``, ``greenloop ci``), every check that
    can be made before it starts made: a bad one is said and exits (typer.Exit). The API key is
    asked for only when this command runs the run's worker: a configured cluster's workers
    (``address``) hold their own."""
    try:
        request = build_request(repo, given, **options)
        local = "://" not in repo and "@" not in repo
        if local and not any(p.name != ".git" for p in Path(request.repo).iterdir()):
            raise GreenloopError(f"repository {repo} is empty: there is no project or test to run",
                                 kind=ErrorKind.VALIDATION_ERROR, repo=repo,
                                 suggestion="point greenloop run at the project's folder (the one with its tests)")
        refuse_unplannable(request)
        if scripted is not None:
            Scenario.load(scripted)  # a file that is not a scenario is said now, before any run starts
        if scripted is not None and not wait:
            raise GreenloopError(
                "--scripted runs the scripted LLM and the run's worker in this command, so the run cannot "
                "outlive it (--no-wait)", kind=ErrorKind.VALIDATION_ERROR,
                suggestion="for runs that outlive the command, start `greenloop worker --scripted SCENARIO` "
                           "and `greenloop run` without --scripted")
        worker_here = scripted is not None or not (address or configured_address())
        if (worker_here and scripted is None and not request.llm.analysis_only
                and not os.environ.get("ANTHROPIC_API_KEY")):
            raise GreenloopError("no ANTHROPIC_API_KEY set", kind=ErrorKind.VALIDATION_ERROR)
    except GreenloopError as exc:
        raise fail(exc, "set ANTHROPIC_API_KEY, or pass --scripted SCENARIO or --analysis-only"
                   if "API" in exc.message else exc.context.get("suggestion")) from None
    if scripted is not None:  # the scripted model has no request limit
        request = request.model_copy(update={"llm": request.llm.model_copy(update={"requests_per_minute": None})})
    return request


@with_run_options
def run_command(
    ctx: typer.Context,
    repo: Annotated[str, typer.Argument(help="Local path or git URL of the repository.")] = ".",
    scripted: Annotated[Path | None, typer.Option(help="Scripted LLM scenario (YAML) instead of Claude.")] = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the run to its end.")] = True,
    address: AddressOpt = None,
    namespace: NamespaceOpt = None,
    as_json: JsonOpt = False,
    options: dict | None = None,
) -> None:
    """Start a fix run: prints the run id and the Web UI link, then follows it."""
    request = run_request(repo, given_options(ctx), options or {}, scripted, wait, address)
    finish(_run(request, scripted, wait, address, namespace, as_json))


SANDBOX_HINTS = {
    "docker": "start the Docker engine (`sudo systemctl start docker`, or Docker Desktop) and check that "
              "`docker info` answers, or use --sandbox bwrap (bubblewrap: `sudo apt-get install bubblewrap`)",
    "bwrap": "install bubblewrap (`sudo apt-get install bubblewrap`) and allow unprivileged user namespaces, "
             "or use --sandbox docker with a running Docker engine",
    "auto": "start a Docker engine or install bubblewrap (`sudo apt-get install bubblewrap`); "
            "--sandbox local runs the tests without isolation, on trusted code only",
}


def check_sandbox(backend: str, quiet: bool = False) -> None:
    """Refuse a run whose sandbox does not work on this machine (exit 2, with what to do), before
    it starts; say out loud that ``local`` does not isolate."""
    try:
        _, name, _ = sandbox.choose_backend(backend)
    except GreenloopError as exc:
        raise GreenloopError(exc.message, kind=exc.kind, suggestion=SANDBOX_HINTS.get(backend, SANDBOX_HINTS["auto"]),
                             exit=int(ExitCode.USAGE)) from None
    if name == "local" and not quiet:
        err_console.print("[bold yellow]warning[/]: --sandbox local runs the tests on this machine without "
                          "isolation (no network, file or secret protection): use it on trusted code only")


def run_link(run_id: str, namespace: str, embedded: bool) -> str | None:
    """The run's page in the Web UI: the embedded server's, or ``GREENLOOP_UI_URL``'s for a
    configured cluster (its UI address is not something Temporal's client config knows)."""
    if base := settings().ui_url:
        return f"{base.rstrip('/')}/namespaces/{namespace}/workflows/{run_id}"
    if embedded:
        return f"{dev.ui_url(namespace=namespace)}/{run_id}"
    return None


async def _run(request: FixRequest, scripted: Path | None, wait: bool, address: str | None,
               namespace: str | None, as_json: bool) -> int:
    summary = await start_run(request, scripted, wait, address, namespace, as_json)
    return 0 if summary is None else ended(summary, as_json)


async def start_run(request: FixRequest, scripted: Path | None, wait: bool, address: str | None,
                    namespace: str | None, as_json: bool) -> RunSummary | None:
    """Start a run (its worker in this process when the server is the embedded one or the LLM
    the scripted one) and, with ``wait``, follow it to its end: its summary (None: not waited for)."""
    from ..worker import build_worker

    if scripted is not None or not (address or configured_address()):
        # This machine runs the tests: its sandbox must work before anything starts.
        check_sandbox(request.sandbox.backend, quiet=as_json)
    client, embedded = await _client(address, namespace)
    if not embedded:  # a cluster namespace without them would fail the run at its first step
        await ensure_search_attributes(client)
    run_id = new_run_id(request.repo)
    in_process = embedded or scripted is not None
    if in_process and not as_json:  # an earlier run of this repository interrupted here (make demo): say so
        follow.name_paused(await follow.paused_runs(client, request.repo), address, namespace)
    async with AsyncExitStack() as stack:
        queue = shared_queue()
        if scripted is not None:
            from ..llm.scripted_server import scripted_llm

            # The scripted LLM lives in this process: its run goes to a queue only this process polls,
            # so no other worker (without the scripted LLM) ever takes one of its activities.
            queue = private_queue(run_id)
            stack.enter_context(scripted_llm(scripted))
        if in_process and (wait or scripted is not None):
            quiet_worker_logs()
            await stack.enter_async_context(build_worker(client, task_queue=queue))
        elif in_process:
            subprocess.Popen([sys.executable, "-m", "greenloop.cli.main", "worker"], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # What `greenloop resume` needs to serve the run again: its scripted LLM, if it has one.
        memo = {"repo": request.repo, **({"scripted": str(scripted.resolve())} if scripted is not None else {})}
        await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue, memo=memo,
                                    static_summary=f"fix failing tests of {request.repo}")
        link = run_link(run_id, client.namespace, embedded)
        if as_json and not wait:
            print(json.dumps({"run_id": run_id, "ui": link}))
            return None
        if not as_json:
            console.print(f"run [bold]{run_id}[/]\nWeb UI: " + (link or "set GREENLOOP_UI_URL to your cluster's "
                                                                  "Web UI (e.g. http://temporal-ui:8080) for a link"))
        if not wait:
            return None
        return await _follow(client, run_id, as_json, own_worker=in_process, address=address, namespace=namespace)


# --- steering -------------------------------------------------------------------------


def no_such_run(run_id: str, exc: RPCError) -> GreenloopError:
    """A run id the server does not know (mistyped, or another namespace's)."""
    if exc.status == RPCStatusCode.NOT_FOUND:
        return GreenloopError(f"no run {run_id!r} in this namespace", kind=ErrorKind.VALIDATION_ERROR,
                              suggestion="`greenloop runs` lists the recent runs and their ids")
    return GreenloopError(f"cannot look run {run_id!r} up: {exc.message}", kind=ErrorKind.VALIDATION_ERROR,
                          suggestion="`greenloop runs` lists the recent runs and their ids")


class RunViews(NamedTuple):
    """What ``status`` shows of a run: its phase, the commit its fixes apply to, its tests."""

    phase: str
    base_commit: str | None
    views: list[FixStatusView]


async def _views(client: Client, run_id: str) -> RunViews:
    """A run's phase, base commit and per-test views: live from its workflows while it runs,
    from its summary once it ended (that needs no worker)."""
    handle = client.get_workflow_handle_for(FixSuiteWorkflow.run, run_id)
    try:
        desc = await handle.describe()
    except RPCError as exc:
        raise no_such_run(run_id, exc) from None
    if desc.status != WorkflowExecutionStatus.RUNNING:
        try:
            summary = await handle.result()
        except WorkflowFailureError as exc:
            raise run_failed(run_id, exc) from None
        why = summary.reason.strip().splitlines()[0] if summary.reason.strip() else ""
        return RunViews(f"finished: {summary.state.value}" + (f" ({why})" if why else ""), summary.base_commit,
                        summary.tests)
    try:
        phase = await handle.query(FixSuiteWorkflow.phase, rpc_timeout=QUERY_TIMEOUT)
        views = await handle.query(FixSuiteWorkflow.status, rpc_timeout=QUERY_TIMEOUT)
        base = await live.base_commit(handle, QUERY_TIMEOUT)
    except RPCError as exc:
        resume = f"greenloop resume {shlex.quote(run_id)}"
        raise GreenloopError(f"run {run_id} is in progress but did not answer ({exc.message}): no worker serves it",
                             kind=ErrorKind.VALIDATION_ERROR,
                             suggestion=f"resume it from this machine: {resume} (serves it and follows it to its end)"
                             if desc.task_queue.startswith(private_prefix()) else
                             f"start a worker for it: greenloop worker, or {resume} (serves it from a command and "
                             "follows it to its end)") from None
    out = []
    for v in views:
        if v.state not in (FixState.FIXED, FixState.SKIPPED, FixState.ABORTED) and v.workflow_id:
            try:
                v = await client.get_workflow_handle_for(FixOneTestWorkflow.run, v.workflow_id).query(
                    FixOneTestWorkflow.status, rpc_timeout=QUERY_TIMEOUT)
            except RPCError:
                pass  # not started yet: the parent's view stands
        out.append(v)
    return RunViews(phase, base, out)


def resolve_test(views: list[FixStatusView], name: str) -> FixStatusView:
    """A test by its id, a unique prefix of it, or a pattern matching only it
    (a glob or a substring, the way ``--select`` matches)."""
    exact = [v for v in views if v.test_id == name]
    if exact:
        return exact[0]
    matches = [v for v in views if v.test_id.startswith(name)] or [v for v in views if selected(v.test_id, [name], [])]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise GreenloopError(f"no test {name!r} in this run; `greenloop status RUN` lists them",
                             kind=ErrorKind.VALIDATION_ERROR)
    raise GreenloopError(f"{name!r} matches {len(matches)} tests: " + ", ".join(v.test_id for v in matches[:5])
                         + "; give more of the id", kind=ErrorKind.VALIDATION_ERROR)


def status_command(run_id: Annotated[str, typer.Argument(help="The run id.")],
                   address: AddressOpt = None, namespace: NamespaceOpt = None, as_json: JsonOpt = False) -> None:
    """Per-test states of a run."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        phase, base, views = await _views(client, run_id)
        if as_json:
            print(json.dumps({"run_id": run_id, "phase": phase, "base_commit": base,
                              "tests": [v.model_dump(mode="json") for v in views]}, indent=2))
            return 0
        table = Table(title=escape(f"{run_id}: {phase}"), caption=escape(f"base commit: {base}") if base else None)
        for col in ("test", "state", "attempt", "last verdict", "last event"):
            table.add_column(col, overflow="fold")
        for v in views:
            table.add_row(escape(v.test_id), v.state.value, str(v.attempt),
                          v.last_verdict.value if v.last_verdict else "", escape(v.history[-1]) if v.history else "")
        console.print(table)
        return 0

    finish(go())


def watch_command(run_id: Annotated[str, typer.Argument(help="The run id.")],
                  address: AddressOpt = None, namespace: NamespaceOpt = None, as_json: JsonOpt = False) -> None:
    """Follow a run to its end (a live table on a terminal), then its outcome, like `greenloop run`."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        try:
            await client.get_workflow_handle(run_id).describe()
        except RPCError as exc:
            raise no_such_run(run_id, exc) from None
        summary = await _follow(client, run_id, as_json, address=address, namespace=namespace)
        return ended(summary, as_json)

    finish(go())


async def _serve(stack: AsyncExitStack, client: Client, run_id: str, desc: WorkflowExecutionDescription,
                 quiet: bool, ending: bool = False) -> str | None:
    """Serve a running run's task queue from this command (its worker was a command that is
    gone), with its scripted LLM if it had one: the scenario's path, else None. A run being
    ended (``ending``: abort) asks no model, so it needs neither its scenario nor a key."""
    from ..worker import build_worker

    handle = client.get_workflow_handle_for(FixSuiteWorkflow.run, run_id)
    request = await live.run_request(client, handle)
    if request is None:
        raise GreenloopError(f"run {run_id}'s request cannot be read", kind=ErrorKind.VALIDATION_ERROR)
    scripted = (await desc.memo()).get("scripted")
    if scripted and ending and not Path(scripted).is_file():
        scripted = None
    elif scripted:
        from ..llm.scripted_server import scripted_llm

        if not Path(scripted).is_file():
            raise GreenloopError(f"run {run_id} was started with the scripted LLM of {scripted}, "
                                 "which no longer exists", kind=ErrorKind.VALIDATION_ERROR,
                                 suggestion=f"put the scenario back, or abort the run: "
                                            f"greenloop abort {shlex.quote(run_id)}")
        stack.enter_context(scripted_llm(Path(scripted)))
    elif not ending and not request.llm.analysis_only and not os.environ.get("ANTHROPIC_API_KEY"):
        raise GreenloopError("no ANTHROPIC_API_KEY set: the run asks Claude for its fixes",
                             kind=ErrorKind.VALIDATION_ERROR, suggestion="set ANTHROPIC_API_KEY")
    check_sandbox(request.sandbox.backend, quiet=quiet)
    quiet_worker_logs()
    await stack.enter_async_context(build_worker(client, task_queue=desc.task_queue))
    return scripted


def resume_command(run_id: Annotated[str, typer.Argument(help="The run id.")],
                   address: AddressOpt = None, namespace: NamespaceOpt = None, as_json: JsonOpt = False) -> None:
    """Resume a run whose worker was the command that started it (an interrupted `greenloop run`,
    `make demo`): serve its task queue from this command, with its scripted LLM if it had one,
    and follow it to its end."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        handle = client.get_workflow_handle_for(FixSuiteWorkflow.run, run_id)
        try:
            desc = await handle.describe()
        except RPCError as exc:
            raise no_such_run(run_id, exc) from None
        running = desc.status == WorkflowExecutionStatus.RUNNING
        async with AsyncExitStack() as stack:
            if running:
                scripted = await _serve(stack, client, run_id, desc, quiet=as_json)
                if not as_json:
                    console.print(f"resuming run [bold]{run_id}[/]: this command serves its task queue "
                                  f"{escape(desc.task_queue)}" + (f" with the scripted LLM of {escape(scripted)}"
                                                                  if scripted else ""))
            summary = await _follow(client, run_id, as_json, own_worker=running, address=address,
                                    namespace=namespace)
        return ended(summary, as_json)

    finish(go())


def answer_command(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    test: Annotated[str, typer.Argument(help="Test id, a unique prefix, or a glob/substring matching only it.")],
    choice: Annotated[AnswerChoice, typer.Argument(help="retry, skip or abort.")],
    attempts: Annotated[int, typer.Option(help="For retry: how many more attempts.")] = 3,
    note: Annotated[str, typer.Option(help="Why (kept in the report).")] = "",
    address: AddressOpt = None, namespace: NamespaceOpt = None, as_json: JsonOpt = False,
) -> None:
    """Answer an escalated test: retry N more attempts, skip it, or abort it."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        view = resolve_test((await _views(client, run_id)).views, test)
        handle = client.get_workflow_handle_for(FixOneTestWorkflow.run, view.workflow_id or "")
        answer = Answer(choice=choice, attempts=attempts, by=os.environ.get("USER", "cli"), note=note)
        try:
            state = await handle.execute_update(FixOneTestWorkflow.answer, answer)
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
        view = resolve_test((await _views(client, run_id)).views, test)
        try:
            msg = await client.get_workflow_handle_for(FixSuiteWorkflow.run, run_id).execute_update(
                FixSuiteWorkflow.rollback, view.test_id)
        except WorkflowUpdateFailedError as exc:
            raise GreenloopError(getattr(exc.cause, "message", str(exc)), kind=ErrorKind.VALIDATION_ERROR) from None
        console.print(escape(msg))
        return 0

    finish(go())


def abort_command(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    reason: Annotated[str, typer.Option(help="Why (kept in the report).")] = "aborted from the CLI",
    address: AddressOpt = None, namespace: NamespaceOpt = None,
) -> None:
    """Abort a run: running sandbox processes are killed, in-flight edits rolled back. A run whose
    worker was a command that is gone (an interrupted `greenloop run`) is served from this one
    until it has ended."""

    async def go() -> int:
        client, _ = await _client(address, namespace)
        handle = client.get_workflow_handle_for(FixSuiteWorkflow.run, run_id)
        try:
            desc = await handle.describe()
        except RPCError as exc:
            raise no_such_run(run_id, exc) from None
        if desc.status != WorkflowExecutionStatus.RUNNING:
            raise GreenloopError(f"run {run_id} has already ended ({desc.status.name.lower()})",
                                 kind=ErrorKind.VALIDATION_ERROR,
                                 suggestion=f"greenloop status {shlex.quote(run_id)} shows how it ended")
        async with AsyncExitStack() as stack:
            try:
                await handle.query(FixSuiteWorkflow.phase, rpc_timeout=QUERY_TIMEOUT)
                served = False
            except RPCError:
                if not desc.task_queue.startswith(private_prefix()):
                    raise GreenloopError(f"run {run_id} is in progress but no worker serves it",
                                         kind=ErrorKind.VALIDATION_ERROR,
                                         suggestion="start a worker (greenloop worker), then abort it again") from None
                await _serve(stack, client, run_id, desc, quiet=False, ending=True)
                console.print(f"no worker serves run [bold]{run_id}[/]: this command serves it until it has ended")
                served = True
            try:
                phase = await handle.execute_update(FixSuiteWorkflow.abort, reason)
            except WorkflowUpdateFailedError as exc:
                raise GreenloopError(getattr(exc.cause, "message", str(exc)), kind=ErrorKind.VALIDATION_ERROR) from None
            except RPCError as exc:
                raise no_such_run(run_id, exc) from None
            console.print(escape(f"{run_id}: {phase}"))
            if served:  # the rollback and the report need this command's worker until the run ends
                with contextlib.suppress(WorkflowFailureError):
                    await handle.result()
        return 0

    finish(go())

