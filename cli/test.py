"""``greenloop test``: the phase-testing protocol as a command."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from ..domain.errors import GreenloopError
from ..runner.phase_test import execute
from ..runner.protocol import PhaseTestOutput, error_output, parse_input
from ..sandbox.models import SandboxSettings
from .output import console, finish


def test_command(
    path: Annotated[Path | None, typer.Argument(help="Project directory (or give working_directory in --input).")] = None,
    input_file: Annotated[Path | None, typer.Option("--input", help="Protocol input JSON file ('-' for stdin).")] = None,
    sandbox: Annotated[str, typer.Option(help="auto, docker, bwrap or local.")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the protocol's JSON output.")] = False,
) -> None:
    """Run a project's tests with retries and print the protocol's output schema."""

    async def go() -> int:
        try:
            if input_file is not None:
                raw = typer.get_text_stream("stdin").read() if str(input_file) == "-" else input_file.read_text()
                data = json.loads(raw) if raw.strip() else {}
                if path is not None and isinstance(data, dict):
                    data.setdefault("working_directory", str(path.resolve()))
            else:
                data = {"working_directory": str((path or Path.cwd()).resolve())}
            inp = parse_input(data)
        except (GreenloopError, ValueError) as exc:
            err = exc if isinstance(exc, GreenloopError) else GreenloopError(f"input is not JSON: {exc}")
            out: PhaseTestOutput = error_output(err)
        else:
            with tempfile.TemporaryDirectory(prefix="greenloop-test-") as tmp:
                out = await execute(inp, SandboxSettings(backend=sandbox), Path(tmp))
        if as_json:
            print(out.to_json())
        else:
            style = "green" if out.status == "pass" else "red"
            console.print(f"[{style}]{out.status}[/]: {out.tests_passed}/{out.tests_run} passed, "
                          f"{out.tests_failed} failed, {out.retry_count} retries, {out.execution_time_ms} ms "
                          f"({out.language}: {out.test_command})")
            for t in out.failing_tests:
                console.print(f"  [red]✗[/] {t.name}" + (f" ({t.file})" if t.file else "") + f": {t.error.splitlines()[0] if t.error else ''}")
            for e in out.errors or []:
                console.print(f"  [bold]{e.type.value}[/]: {e.message}")
        return 0 if out.status == "pass" else 1

    finish(go())
