"""The options of a run, defined once: ``greenloop run`` and ``greenloop schedule
create`` both take every one of them (``@with_run_options``), and both turn
them into a ``FixRequest`` the same way (``request_options``, then ``cli.runs.build_request``,
which also reads the repository's configuration file for options not given).

(No ``from __future__ import annotations`` here: Typer reads these
annotations as objects through the commands' signatures.)"""

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, get_type_hints

import typer

from ..domain.answers import AnswerChoice
from ..domain.errors import ErrorKind, GreenloopError
from ..domain.llm import LLMSettings


def _options(
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
    validation: Annotated[str, typer.Option(help="How fixes are validated: queue (in batches like a merge queue, "
                                                 "one full-suite run per batch, a failing batch bisected) or each "
                                                 "(every attempt runs the full suite itself).")] = "queue",
    max_batch: Annotated[int, typer.Option(help="Most fixes one validation batch holds (queue).")] = 32,
    test_impact: Annotated[bool, typer.Option("--test-impact/--no-test-impact",
                                              help="Queue: map which tests run which files (per-test coverage, "
                                                   "pytest) to check and bisect batches sooner.")] = True,
    escalation_deadline: Annotated[int, typer.Option(help="Seconds an escalation waits for a person.")] = 86400,
    escalation_default: Annotated[AnswerChoice, typer.Option(help="Answer when the deadline passes.")] = AnswerChoice.SKIP,
    model: Annotated[str, typer.Option(help="Claude model.")] = LLMSettings().model,
    budget_usd: Annotated[float | None, typer.Option("--budget-usd", help="LLM cost ceiling for the run.")] = None,
    tests_only: Annotated[bool, typer.Option("--tests-only", help="Never edit production code.")] = False,
    analysis_only: Annotated[bool, typer.Option("--analysis-only", help="Analyse, do not fix (no API key needed).")] = False,
    sandbox: Annotated[str, typer.Option(help="auto, docker, bwrap or local.")] = "auto",
    network: Annotated[bool, typer.Option("--network", help="Allow network inside the sandbox.")] = False,
    sandbox_image: Annotated[str | None, typer.Option("--sandbox-image", help="Image the docker sandbox runs in "
                                                      "(default: Greenloop's own, with the host's toolchains).")] = None,
    timeout: Annotated[int, typer.Option(help="Time limit of one test run, seconds.")] = 600,
    push: Annotated[str | None, typer.Option("--push", metavar="REMOTE",
                                             help="Push the greenloop/<run> branch to this remote of the repository "
                                                  "(or URL) when tests were fixed.")] = None,
    pr: Annotated[bool, typer.Option("--pr", help="Write pr.md and open a pull request with gh (needs --push).")] = False,
    setup_command: Annotated[str | None, typer.Option(help="Extra setup command, run in the project's environment "
                                                           "with network.")] = None,
    single_test_command: Annotated[str | None, typer.Option(help="Command that runs one test ({id}, {file}, "
                                                                 "{name}).")] = None,
) -> None:
    """The options every run takes (a template: never called)."""


RUN_OPTIONS = inspect.signature(_options).parameters


def with_run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` takes every run option too, collected in its ``options`` argument (a dict)."""
    hints = get_type_hints(command, include_extras=True)
    own = [p.replace(annotation=hints.get(p.name, p.annotation))
           for p in inspect.signature(command).parameters.values() if p.name != "options"]
    shared = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in RUN_OPTIONS.values()]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        options = {name: kwargs.pop(name, p.default) for name, p in RUN_OPTIONS.items()}
        return command(*args, **kwargs, options=options)

    wrapper.__signature__ = inspect.Signature([*own, *shared])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {**{p.name: p.annotation for p in own}, **{p.name: p.annotation for p in shared}}
    del wrapper.__wrapped__  # Typer must read the signature above, not the command's own
    return wrapper


# Run options whose request field is named differently.
FIELD = {"run_budget": "run_budget_s", "per_test_budget": "per_test_budget_s",
         "escalation_deadline": "escalation_deadline_s", "pr": "pull_request"}


def request_options(options: dict[str, Any], given: set[str]) -> tuple[dict[str, Any], set[str]]:
    """The run options as ``build_request`` takes them (request field names), and which
    of them were ``given`` on the command line, under the same names."""
    if options.get("pr") and not options.get("push"):
        raise GreenloopError("--pr needs --push REMOTE: a pull request is opened from a pushed branch",
                             kind=ErrorKind.VALIDATION_ERROR,
                             suggestion="add --push origin (or the remote the pull request goes to)")
    opts = {FIELD.get(k, k): (list(v) if isinstance(v, (list, tuple)) else v) for k, v in options.items()}
    return opts, {FIELD.get(k, k) for k in given}
