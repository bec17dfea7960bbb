"""The normalizer every parse ends with."""

from __future__ import annotations

from pathlib import Path

from greenloop.parsers import RunOutput
from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.parsers.normalize import finish
from tests.parsers.helpers import write_files


def test_a_repeated_id_is_merged_and_the_worse_status_wins(tmp_path: Path) -> None:
    report = TestReport(framework="x", tests=[
        TestResult(id="a", status=Status.PASSED, file="t.py", line=3),
        TestResult(id="b", status=Status.PASSED),
        TestResult(id="a", status=Status.ERRORED, message="teardown failed", timed_out=True),
    ])
    finish(report, RunOutput(exit_code=1, cwd=tmp_path))
    assert [(t.id, t.status, t.line, t.message, t.timed_out) for t in report.tests] == [
        ("a", Status.ERRORED, 3, "teardown failed", True), ("b", Status.PASSED, None, None, False)]
    assert report.timed_out and "merged: a" in report.warnings[0]


def test_file_is_filled_when_the_id_is_a_project_file(tmp_path: Path) -> None:
    write_files(tmp_path, {"tests/test_x.py": "import nope\n"})
    report = TestReport(framework="x", tests=[
        TestResult(id=f"{tmp_path}/tests/test_x.py", status=Status.ERRORED),
        TestResult(id="tests/missing.py", status=Status.ERRORED),
    ])
    finish(report, RunOutput(exit_code=2, cwd=tmp_path))
    assert [t.file for t in report.tests] == ["tests/test_x.py", None]
    assert not report.warnings


def test_no_results_from_a_failing_run_keep_the_tail(tmp_path: Path) -> None:
    report = finish(TestReport(framework="x"), RunOutput(exit_code=3, stdout_text="boom\n", cwd=tmp_path))
    assert not report.per_test and report.output_tail == "boom" and "exited with 3" in report.warnings[0]
    passing = finish(TestReport(framework="x"), RunOutput(exit_code=0, cwd=tmp_path))
    assert passing.per_test and not passing.warnings
