"""Helpers shared by the parser tests."""

from __future__ import annotations

from pathlib import Path

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
