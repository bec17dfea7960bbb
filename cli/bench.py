"""``greenloop bench mutants PATH``: fix quality on the user's own repository.

Makes single-point mutants of the project's last commit (each a one-commit repository), then
drives them with the bench's workflow (``workflows/bench.py``: one ordinary run per mutant, a few
at a time, each in the Web UI) on the embedded dev server or the configured cluster, with a worker
in this process (the mutants' repositories are on this machine). Without ``--fix`` the runs only analyse (no
model is asked): the figures are the fixer's first message's. ``--fix`` asks Claude (the run
options: model, budget, attempts); ``--scripted-oracle`` answers every fixer with the reverse
mutation from the scripted LLM, so the whole path runs without a key. Prints a table (or
``--json``), and writes ``bench.json`` and ``bench.html``. ``greenloop bench resume ID`` goes on with a
bench whose command stopped."""

from __future__ import annotations

import asyncio
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from temporalio.client import WorkflowFailureError
from temporalio.service import RPCError

from ..activities.bench import BenchInput, BenchResult, oracle_scenario, prepare, write_scenario
from ..activities.workspace import runs_root
from ..domain.errors import ErrorKind, GreenloopError
from ..workflows.bench import BenchMutantsWorkflow
from .exit_codes import ExitCode
from .output import console, err_console, fail, finish, quiet_worker_logs
from .run_options import with_run_options
from .runs import (
    AddressOpt,
    JsonOpt,
    NamespaceOpt,
    _client,
    build_request,
    check_sandbox,
    given_options,
    new_run_id,
    private_queue,
    run_link,
)

app = typer.Typer(help="Measure Greenloop on your own repository.", no_args_is_help=True)

POLL_S = 2.0
INPUT_FILE = "bench-input.json"


@app.command("mutants")
@with_run_options
def mutants_command(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="The git repository whose source is mutated (its last commit).")],
    count: Annotated[int, typer.Option("--count", min=1, max=500, help="Mutants to make.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Which mutants (the same seed makes the same ones).")] = 1,
    fix: Annotated[bool, typer.Option("--fix", help="Drive the fixer on each kept mutant (Claude: "
                                                    "ANTHROPIC_API_KEY, --model, --budget-usd).")] = False,
    scripted_oracle: Annotated[bool, typer.Option("--scripted-oracle", help="Fix with the scripted LLM answering "
                                                  "the reverse mutation (no key; implies --fix).")] = False,
    parallel: Annotated[int, typer.Option("--parallel", min=1, max=16, help="Mutants' runs at a time.")] = 2,
    out: Annotated[Path | None, typer.Option("--out", help="Where the mutants, runs, bench.json and bench.html "
                                             "go (default: under Greenloop's data directory).")] = None,
    address: AddressOpt = None,
    namespace: NamespaceOpt = None,
    as_json: JsonOpt = False,
    options: dict[str, Any] | None = None,
) -> None:
    """Make COUNT single-point mutants of PATH's source, keep those its tests notice, and report for
    each whether the fixer's first message shows the mutated line, its function's rank and the
    message's size; with --fix, whether the run fixed it, its attempts, tokens, cost and time."""
    fix = fix or scripted_oracle
    try:
        request = build_request(str(path), given_options(ctx), **(options or {}))
        request = request.model_copy(update={"llm": request.llm.model_copy(update={"analysis_only": not fix})})
        if fix and not scripted_oracle and not os.environ.get("ANTHROPIC_API_KEY"):
            raise GreenloopError("--fix asks Claude, and no ANTHROPIC_API_KEY is set", kind=ErrorKind.VALIDATION_ERROR,
                                 suggestion="set ANTHROPIC_API_KEY, or use --scripted-oracle, or leave out --fix "
                                            "(the first-message figures need no model)")
        bench_id = new_run_id(request.repo).replace("greenloop-", "greenloop-bench-", 1)
        out_dir = (out or runs_root() / bench_id).resolve()
        err_console.print(f"making {count} mutants of {escape(request.repo)} in {escape(str(out_dir))}")
        clean, cases = prepare(Path(request.repo), out_dir, count, seed, ref=request.ref or "HEAD")
        request = request.model_copy(update={"ref": None})  # each mutant's repository has its one commit
        scenario = write_scenario(out_dir / "oracle.yaml", oracle_scenario(cases, bench_id)) \
            if scripted_oracle else None
    except GreenloopError as exc:
        raise fail(exc) from None
    inp = BenchInput(bench_id=bench_id, source=request.repo, out_dir=str(out_dir), clean_repo=str(clean), cases=cases,
                     request=request, concurrency=parallel, fix=fix)
    (out_dir / INPUT_FILE).write_text(inp.model_dump_json(indent=1))  # what `greenloop bench resume` reads
    finish(_bench(inp, scenario, address, namespace, as_json, resume=False))


@app.command("resume")
def resume_command(
    bench_id: Annotated[str, typer.Argument(help="The bench id `greenloop bench mutants` printed.")],
    out: Annotated[Path | None, typer.Option("--out", help="The bench's directory, when --out placed it.")] = None,
    address: AddressOpt = None,
    namespace: NamespaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Go on with a bench whose command stopped (Ctrl-C, a closed terminal, a crash): its workflow
    and the mutants' runs pick up where they were, with a worker in this command again."""
    out_dir = (out or runs_root() / bench_id).resolve()
    try:
        inp = BenchInput.model_validate_json((out_dir / INPUT_FILE).read_text())
    except (OSError, ValueError):
        raise fail(GreenloopError(f"no bench {bench_id} in {out_dir}", kind=ErrorKind.VALIDATION_ERROR,
                                  suggestion="give the bench's directory with --out (where its bench-input.json "
                                             "is)")) from None
    scenario = out_dir / "oracle.yaml"
    finish(_bench(inp, scenario if scenario.is_file() else None, address, namespace, as_json, resume=True))


async def _bench(inp: BenchInput, scenario: Path | None, address: str | None, namespace: str | None,
                 as_json: bool, resume: bool) -> int:
    from ..worker import build_worker

    check_sandbox(inp.request.sandbox.backend, quiet=as_json)  # the mutants' runs run here
    client, embedded = await _client(address, namespace)
    async with AsyncExitStack() as stack:
        # The mutants' repositories are on this machine: their runs go to a queue only this process's
        # worker polls (with the oracle's LLM, when there is one).
        queue = private_queue(inp.bench_id)
        if scenario is not None:
            from ..llm.scripted_server import scripted_llm

            stack.enter_context(scripted_llm(scenario))
        quiet_worker_logs()
        await stack.enter_async_context(build_worker(client, task_queue=queue))
        if resume:
            handle = client.get_workflow_handle_for(BenchMutantsWorkflow.run, inp.bench_id)
            try:
                await handle.describe()
            except RPCError as exc:
                raise GreenloopError(f"no bench {inp.bench_id} on the server ({exc.message})",
                                     kind=ErrorKind.VALIDATION_ERROR) from None
        else:
            handle = await client.start_workflow(BenchMutantsWorkflow.run, inp, id=inp.bench_id, task_queue=queue,
                                                 static_summary=f"mutants of {inp.source}")
        err_console.print(f"bench {inp.bench_id}")
        if link := run_link(inp.bench_id, client.namespace, embedded):
            err_console.print(f"Web UI: {link}")
        result_task = asyncio.ensure_future(handle.result())
        said = -1
        while not result_task.done():
            await asyncio.wait({result_task}, timeout=POLL_S)
            try:
                done = await handle.query(BenchMutantsWorkflow.progress)
            except Exception:  # noqa: BLE001 - progress is a courtesy; the result says what happened
                continue
            if done != said and not as_json:
                said = done
                err_console.print(f"  {done}/{len(inp.cases)} mutants run")
        try:
            result = result_task.result()
        except WorkflowFailureError as exc:
            raise bench_failed(inp.bench_id, exc) from None
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        show(result)
    if not result.totals["kept"]:
        raise GreenloopError(f"no mutant kept: the tests of {inp.source} noticed none of the {len(result.results)} "
                             "mutants", kind=ErrorKind.VALIDATION_ERROR, exit=int(ExitCode.TESTS_LEFT),
                             suggestion="make more (--count) or others (--seed); each row of "
                                        f"{result.html_path} says why a mutant was not kept")
    return 0


def bench_failed(bench_id: str, exc: WorkflowFailureError) -> GreenloopError:
    """A bench that failed, as its innermost typed cause (a suite failing before mutation...)."""
    cause: BaseException | None = exc.cause
    while getattr(cause, "cause", None) is not None and getattr(cause, "type", None) is None:
        cause = getattr(cause, "cause", None)
    what = getattr(cause, "message", None) or str(cause or exc)
    return GreenloopError(f"bench {bench_id}: {what}", kind=ErrorKind.VALIDATION_ERROR, exit=int(ExitCode.STOPPED),
                          suggestion=f"its history is in the Web UI; the runs are `greenloop status {bench_id}-clean`, "
                                     f"`{bench_id}-m01`...")


def show(result: BenchResult) -> None:
    """The per-mutant table and the totals."""
    table = Table(title=escape(f"mutants of {result.source}"))
    head = ["#", "mutant", "failing", "in message", "rank", "chars"]
    if result.fix:
        head += ["fixed", "attempts", "tokens", "cost", "time"]
    for col in head:
        table.add_column(col, overflow="fold")
    for r in result.results:
        where = f"{r.file}:{r.line} {r.operator}"
        if not r.kept:
            table.add_row(str(r.number), escape(where), f"not kept: {escape(r.why_not)}")
            continue
        row = [str(r.number), escape(where), str(r.failing), "yes" if r.in_message else "no", str(r.rank or "-"),
               f"{r.chars:,}" if r.chars else ""]
        if result.fix:
            row += ["yes" if r.fixed else "no", str(r.attempts), f"{r.usage.input_tokens + r.usage.output_tokens:,}",
                    f"${r.usage.cost_usd:.4f}", f"{r.seconds:.0f} s"]
        table.add_row(*row)
    console.print(table)
    t = result.totals
    console.print(f"{t['kept']} of {t['mutants']} mutants kept ({t['failing_tests']} failing tests measured): "
                  f"recall {t['recall']}, top 1 {t['top1']}, top 5 {t['top5']}, median {t['median_chars']:,} chars")
    if result.fix:
        console.print(f"fixed {t['fixed']} of {t['kept']}: {t['attempts']} attempts, "
                      f"{t['input_tokens'] + t['output_tokens']:,} tokens, ${t['cost_usd']:.4f}, {t['seconds']} s of runs")
    console.print(f"json: {escape(result.json_path)}\nhtml: {escape(result.html_path)}")
