"""``greenloop init`` and ``greenloop doctor``: a repository's configuration
written from what Greenloop detects, and a check that Greenloop can set the
project up and read its suite's per-test results."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Annotated, get_origin

import typer

from .. import project_config
from ..domain.errors import ErrorKind, GreenloopError
from ..projectenv.setup import recipe_for, set_up
from ..run_settings import IN_FILE, Setting
from ..runner.execute import output_end, run_tests
from ..runner.plan import SuitePlan, plan_tests
from ..runner.readable import caveats
from ..workspace import prepare as prep
from .output import console, fail, finish
from .runs import OUTPUT_CUT_STEP, build_request, plan_project


def _root(path: Path) -> Path:
    root = path.expanduser().resolve()
    if not root.is_dir():
        raise GreenloopError(f"{path} does not exist or is not a directory", kind=ErrorKind.VALIDATION_ERROR)
    return root


def _toml(value: object, setting: Setting) -> str:
    """``value`` as TOML (a JSON string, number, boolean or list is one); the setting's example for None."""
    return (setting.example or '""') if value is None else json.dumps(value)


def _sentence(setting: Setting) -> str:
    return f"{setting.description[0].upper()}{setting.description[1:]}:"


HEADER = """# Greenloop's configuration for this repository, written by `greenloop init`.
# Every key is optional; command-line flags override it. Commented-out lines show
# what Greenloop detects or does by itself.

# Detected: {reason}.
# The setup phase builds the project's environment before the first run (detected:
# {setup}); `setup` is a command to run after it.
"""


def render(plan: SuitePlan, setup: str) -> str:
    """``greenloop.toml`` for a project, a key per run setting the file may hold
    (``run_settings.IN_FILE``), each explained: what was detected is written;
    what Greenloop works out by itself stays commented out."""
    written = {"language": plan.language, "framework": plan.framework, "exclude": [],
               **({"build_command": plan.build_command} if plan.build_command else {})}
    shown = {"test_command": plan.test_command}
    tables = [s for s in IN_FILE if get_origin(s.type) is dict]  # [env]: a table of its own
    keys = [s for s in IN_FILE if not s.section and s not in tables]
    out = [HEADER.format(reason=plan.reason, setup=setup)]
    for s in keys:
        value = written.get(s.name, shown.get(s.name, s.default))
        out.append(f"# {_sentence(s)}\n{'' if s.name in written else '# '}{s.key} = {_toml(value, s)}\n")
    for s in tables:
        out.append(f"[{s.key}]\n# {_sentence(s)}\n# NAME = \"value\"\n")
    for section in dict.fromkeys(s.section for s in IN_FILE if s.section):
        entries = [s for s in IN_FILE if s.section == section]
        lines = [f"# {s.key} = {_toml(s.default, s)}" for s in entries]
        width = max(map(len, lines)) + 2
        out.append(f"[{section}]\n" + "".join(f"{line:<{width}}# {s.description}\n" for line, s in zip(lines, entries)))
    return "\n".join(out)


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
        plan = plan_project(root)
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
    request = build_request(str(root), {"sandbox"} if backend else set(), **({"sandbox": backend} if backend else {}))
    lines = [f"configuration: {request.config_file or 'none (detected defaults)'}"]
    ws = workdir / "workspace"
    await asyncio.to_thread(prep.prepare, str(root), None, "doctor", ws)  # the repository itself is never touched
    plan = plan_tests(ws, language=request.language, framework=request.framework,
                      test_command=request.test_command, build_command=request.build_command)
    lines.append(f"plan: {plan.framework} ({plan.language}) via `{plan.test_command}`: {plan.reason}")
    environment = await set_up(ws, plan.language, plan.framework, request.sandbox, workdir / "setup",
                               setup_command=request.setup_command, env=request.env)
    lines.append(f"environment ({environment.source}): {environment.reason}")
    plan.environment = environment
    run = await run_tests(plan, ws, workdir / "suite", request.sandbox)
    report, t = run.report, run.report.totals
    lines.append(f"suite: exit {report.exit_code}; {t.total} test(s): {t.passed} passed, {t.failed} failed, "
                 f"{t.errored} errored, {t.skipped} skipped (sandbox: {run.test.backend if run.test else '?'})")
    lines += [f"caution: {c}" for c in caveats(report)]
    if report.timed_out:
        return False, [*lines, "the suite timed out: raise [sandbox] timeout"]
    if not report.per_test or t.total == 0:
        tail = (report.output_tail or "").strip() or (output_end(run.test, 1500).strip() if run.test else "")
        return False, [*lines, *report.warnings[:5],
                       *(["--- the end of the suite's output ---", tail, "---"] if tail else ["(the suite printed nothing)"]),
                       OUTPUT_CUT_STEP if report.output_cut_bytes is not None else
                       "Greenloop cannot read per-test results from this suite's output: set test_command "
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
