"""``greenloop init`` and ``greenloop doctor``: a repository's configuration
written from what Greenloop detects, and a check that Greenloop can set the
project up and read its suite's per-test results."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from .output import console, fail, finish
from ..domain.errors import ErrorKind, GreenloopError
from ..projectenv.setup import recipe_for, set_up
from ..runner import config as project_config
from ..runner.execute import run_tests
from ..runner.plan import SuitePlan, plan_tests
from ..sandbox.models import SandboxSettings
from ..workspace import prepare as prep


def _root(path: Path) -> Path:
    root = path.expanduser().resolve()
    if not root.is_dir():
        raise GreenloopError(f"{path} does not exist or is not a directory", kind=ErrorKind.VALIDATION_ERROR)
    return root


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def render(plan: SuitePlan, setup: str) -> str:
    """``greenloop.toml`` for a project: what was detected, each key explained;
    what Greenloop works out by itself stays commented out."""
    build = f"build_command = {_toml(plan.build_command)}" if plan.build_command else '# build_command = ""'
    return f"""# Greenloop's configuration for this repository, written by `greenloop init`.
# Every key is optional; command-line flags override it. Commented-out lines show
# what Greenloop detects by itself.

# Detected: {plan.reason}.
language = {_toml(plan.language)}
framework = {_toml(plan.framework)}

# The command that runs the whole suite (detected):
# test_command = {_toml(plan.test_command)}
# The command that runs one test; {{id}}, {{file}} and {{name}} are filled in:
# single_test_command = ""
# Run before the tests (detected):
# {build}

# The setup phase builds the project's environment before the first run (detected:
# {setup}). An extra command to run after it, in that environment, with network:
# setup = ""

# Tests never to fix (globs over test ids).
exclude = []

[env]
# Variables the setup and every test run get (names that look like secrets are dropped):
# NAME = "value"

[sandbox]
# backend = "auto"        # auto (docker, else bubblewrap), docker, bwrap, or local (no isolation)
# timeout = 600           # one test run's time limit, seconds
# setup_network = true    # the setup may reach package registries; test runs never do
# setup_timeout = 1800    # the setup's time limit, seconds
# memory_mb = 4096
# image = "my-ci-image:1"  # docker backend: run in this local image (it brings the toolchains and bash)

[budgets]
# run = 3600              # the whole run, seconds
# per_test = 3600         # one test, seconds
# max_attempts = 3        # fix attempts per test before a person is asked
# llm_usd = 5.0           # LLM money for the run
"""


def init_command(
    path: Annotated[Path, typer.Argument(help="The repository.")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing greenloop.toml.")] = False,
) -> None:
    """Detect how the project is set up and tested; write greenloop.toml with comments."""
    try:
        root = _root(path)
        target = root / project_config.FILE
        if target.exists() and not force:
            raise GreenloopError(f"{target} exists", kind=ErrorKind.VALIDATION_ERROR)
        plan = plan_tests(root)
        try:
            recipe = recipe_for(root, plan.language, plan.framework)
            setup = f"{recipe.reason}, from {', '.join(recipe.manifests)}" if recipe else "nothing to install"
        except GreenloopError as exc:
            setup = f"cannot be built here: {exc.message}"
        target.write_text(render(plan, setup))
        project_config.load(root)  # what was written reads back
    except GreenloopError as exc:
        raise fail(exc, "give --force to overwrite it" if "exists" in exc.message else None) from None
    console.print(f"wrote [bold]{target}[/]")
    for label, value in (("language", plan.language), ("framework", plan.framework), ("because", plan.reason),
                         ("tests", plan.test_command), ("build", plan.build_command or "none"), ("setup", setup)):
        console.print(f"  {label}: {value}", markup=False)


async def diagnose(root: Path, backend: str | None, workdir: Path) -> tuple[bool, list[str]]:
    """Set the project up and run its suite once, in a copy of it under
    ``workdir``; (whether per-test results could be read, what was found)."""
    config, config_file = project_config.load(root)
    lines = [f"configuration: {config_file or 'none (detected defaults)'}"]
    sb = config.sandbox
    settings = SandboxSettings(backend=backend or sb.backend or "auto", timeout_s=sb.timeout or 600,
                               **project_config.sandbox_settings(sb, {}))
    ws = workdir / "workspace"
    await asyncio.to_thread(prep.prepare, str(root), None, "doctor", ws)  # the repository itself is never touched
    plan = plan_tests(ws, language=config.language, framework=config.framework, test_command=config.test_command,
                      build_command=config.build_command)
    lines.append(f"plan: {plan.framework} ({plan.language}) via `{plan.test_command}`: {plan.reason}")
    environment = await set_up(ws, plan.language, plan.framework, settings, workdir / "setup",
                               setup_command=config.setup, env=config.env)
    lines.append(f"environment ({environment.source}): {environment.reason}")
    plan.environment = environment
    run = await run_tests(plan, ws, workdir / "suite", settings)
    report, t = run.report, run.report.totals
    lines.append(f"suite: exit {report.exit_code}; {t.total} test(s): {t.passed} passed, {t.failed} failed, "
                 f"{t.errored} errored, {t.skipped} skipped (sandbox: {run.test.backend if run.test else '?'})")
    if report.timed_out:
        return False, [*lines, "the suite timed out: raise [sandbox] timeout"]
    if not report.per_test or t.total == 0:
        return False, [*lines, "Greenloop cannot read per-test results from this suite's output: set test_command "
                               "and framework in greenloop.toml"]
    return True, [*lines, "Greenloop can read this suite's per-test results"]


def doctor_command(
    path: Annotated[Path, typer.Argument(help="The repository.")] = Path("."),
    sandbox: Annotated[str | None, typer.Option(
        help="auto, docker, bwrap or local (default: the file's, else auto).")] = None,
) -> None:
    """Set the project up and run its suite once: can Greenloop read per-test results? (exit 1 when not)"""

    async def go() -> int:
        with tempfile.TemporaryDirectory(prefix="greenloop-doctor-") as tmp:
            try:
                ok, lines = await diagnose(_root(path), sandbox, Path(tmp))
            except GreenloopError as exc:
                console.print(f"[bold red]not ready[/] ({exc.kind.value}): {exc.message}")
                if tail := exc.context.get("log_tail"):
                    console.print("--- the end of the setup's log ---", markup=False)
                    console.print(tail, markup=False)
                if hint := exc.context.get("suggestion"):
                    console.print(f"  hint: {hint}", markup=False)
                return 1
        for line in lines:
            console.print(line, markup=False)
        console.print("[bold green]ready[/]" if ok else "[bold red]not ready[/]")
        return 0 if ok else 1

    finish(go())
