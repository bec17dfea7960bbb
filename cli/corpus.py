"""``greenloop corpus``: run the parsers over a corpus of saved runs laid out
like ``shared/corpus`` and write one result file per case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..domain.errors import GreenloopError, UnknownFrameworkError
from ..parsers import RunOutput, parse
from ..parsers.registry import canonical
from .output import console, fail

RESULT_FIELDS = {
    "framework": True, "command": True, "exit_code": True, "totals": True, "build_error": True,
    "timed_out": True, "warnings": True, "detection": True, "per_test": True, "sources": True,
    "tests": {"__all__": {"id", "status", "file", "line", "message", "timed_out", "native_status", "suite"}},
}


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8", errors="replace").strip() if path.is_file() else None


def case_run(case_dir: Path) -> RunOutput:
    """The saved run of one corpus case."""
    code = _read(case_dir / "exit_code.txt")
    project = case_dir / "project"
    return RunOutput(
        command=_read(case_dir / "cmd.txt") or "",
        exit_code=int(code) if code and code.lstrip("-").isdigit() else None,
        stdout_path=case_dir / "stdout.txt",
        stderr_path=case_dir / "stderr.txt",
        cwd=case_dir,
        project_root=project if project.is_dir() else case_dir,
    )


def corpus_command(
    corpus_dir: Annotated[Path, typer.Argument(help="Corpus root: <framework>/<case>/cmd.txt ...")],
    out: Annotated[Path, typer.Option("--out", help="Results directory to write.")],
    detect: Annotated[bool, typer.Option("--detect", help="Withhold the framework name; detect it.")] = False,
) -> None:
    """Parse every case of a corpus into RESULTS/<framework>/<case>.json."""
    if not corpus_dir.is_dir():
        raise fail(GreenloopError(f"corpus directory {corpus_dir} does not exist", path=str(corpus_dir)))
    cases = sorted(p.parent for p in corpus_dir.glob("*/*/cmd.txt"))
    if not cases:
        raise fail(GreenloopError(f"no cases (<framework>/<case>/cmd.txt) under {corpus_dir}"))
    written = 0
    for case in cases:
        folder = case.parent.name
        framework: str | None = None
        if not detect:
            try:
                framework = canonical(folder)
            except UnknownFrameworkError:
                framework = None  # an unknown folder name: detect instead
        report = parse(case_run(case), framework)
        target = out / folder / f"{case.name}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(report.model_dump(mode="json", include=RESULT_FIELDS), indent=1))
        written += 1
        if detect and report.framework != canonical_or_none(folder):
            console.print(f"[yellow]{folder}/{case.name}: detected {report.framework} ({report.detection})[/]")
    console.print(f"wrote {written} results to {out}")


def canonical_or_none(name: str) -> str | None:
    try:
        return canonical(name)
    except UnknownFrameworkError:
        return None
