"""Helpers shared by the parser tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from greenloop.parsers import RunOutput
from greenloop.parsers.models import Status, TestReport, TestResult


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: text}`` under ``root`` (parents created); returns ``root``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def by_id(report: TestReport) -> dict[str, TestResult]:
    """The report's tests by id."""
    return {t.id: t for t in report.tests}


def statuses(report: TestReport) -> dict[str, tuple[Status, int | None]]:
    """id -> (status, line) of every test of the report."""
    return {t.id: (t.status, t.line) for t in report.tests}


def run_pytest(root: Path, args: str) -> RunOutput:
    """Run the real pytest (the one running these tests) in ``root``; the parser sees what a user would."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GREENLOOP_"))}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:asyncio", *args.split()]
    proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    return RunOutput(command=f"python -m pytest {args}".strip(), exit_code=proc.returncode,
                     stdout_text=proc.stdout, stderr_text=proc.stderr, cwd=root)
