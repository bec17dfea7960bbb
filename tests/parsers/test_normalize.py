"""The normalizer every parse ends with."""

from __future__ import annotations

from pathlib import Path

from greenloop.parsers import RunOutput
from greenloop.parsers.merge import add
from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.parsers.normalize import finish
from tests.parsers.helpers import write_files


def test_a_repeated_id_the_runner_counts_once_is_merged_and_the_worse_status_wins(tmp_path: Path) -> None:
    report = TestReport(framework="x", summary_counts={"total": 2}, tests=[
        TestResult(id="a", status=Status.PASSED, file="t.py", line=3),
        TestResult(id="b", status=Status.PASSED),
        TestResult(id="a", status=Status.ERRORED, message="teardown failed", timed_out=True),
    ])
    finish(report, RunOutput(exit_code=1, cwd=tmp_path))
    assert [(t.id, t.status, t.line, t.message, t.timed_out) for t in report.tests] == [
        ("a", Status.ERRORED, 3, "teardown failed", True), ("b", Status.PASSED, None, None, False)]
    assert report.timed_out and "counts them once: a" in report.warnings[0]


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


def test_add_merges_a_console_reading_into_the_report_reading() -> None:
    results: dict[str, TestResult] = {}
    report_reading = TestResult(id="t::a", status=Status.PASSED, file="t.py", line=4, duration_s=0.5)
    assert add(results, report_reading) is report_reading
    # The console says the same test errored in teardown: the worse status wins with its
    # message; what the report knew (file, line, duration) stays.
    kept = add(results, TestResult(id="t::a", status=Status.ERRORED, message="teardown failed"))
    assert kept is report_reading and list(results) == ["t::a"]
    assert (kept.status, kept.message, kept.file, kept.line, kept.duration_s) == (
        Status.ERRORED, "teardown failed", "t.py", 4, 0.5)
    # A milder second reading changes nothing but fills what is missing.
    add(results, TestResult(id="t::a", status=Status.PASSED, message="ok", native_status="PASSED"))
    assert (kept.status, kept.message, kept.native_status) == (Status.ERRORED, "teardown failed", "PASSED")
    # Keys other than the id (a file and an id) work the same way.
    by_file: dict[tuple[str, str], TestResult] = {}
    add(by_file, TestResult(id="x", status=Status.SKIPPED), ("a.js", "x"))
    add(by_file, TestResult(id="x", status=Status.FAILED, timed_out=True), ("a.js", "x"))
    assert by_file[("a.js", "x")].status == Status.FAILED and by_file[("a.js", "x")].timed_out


def _counted(tmp_path: Path, counts: dict[str, int], *statuses: Status) -> TestReport:
    report = TestReport(framework="fw", summary_counts=counts,
                        tests=[TestResult(id=str(i), status=s) for i, s in enumerate(statuses)])
    return finish(report, RunOutput(exit_code=1, cwd=tmp_path))


def test_summary_counts_that_the_tests_do_not_add_up_to_are_a_warning(tmp_path: Path) -> None:
    report = _counted(tmp_path, {"passed": 3, "failed": 1, "total": 5}, Status.PASSED, Status.PASSED, Status.FAILED)
    assert report.warnings == ["the fw summary counted 3 passed, 5 total; the per-test results have 2 passed, 3 total"]


def test_summary_counts_that_agree_say_nothing(tmp_path: Path) -> None:
    # "failed+errored": a framework that counts hook errors among its failures.
    report = _counted(tmp_path, {"passed": 1, "failed+errored": 2, "skipped": 0, "total": 3},
                      Status.PASSED, Status.FAILED, Status.ERRORED)
    assert report.warnings == []
    # Statuses the framework does not count are not checked; unknown keys are ignored.
    assert _counted(tmp_path, {"failed": 1, "flaky": 9}, Status.FAILED, Status.XPASSED).warnings == []


def test_the_check_runs_after_repeated_ids_are_merged(tmp_path: Path) -> None:
    report = _counted(tmp_path, {"total": 1, "errored": 1}, Status.PASSED, Status.ERRORED)
    assert report.warnings == ["the fw summary counted 1 total; the per-test results have 2 total"]
    same = TestReport(framework="fw", summary_counts={"total": 1, "errored": 1}, tests=[
        TestResult(id="a", status=Status.PASSED), TestResult(id="a", status=Status.ERRORED)])
    finish(same, RunOutput(exit_code=1, cwd=tmp_path))
    assert len(same.warnings) == 1 and "merged" in same.warnings[0]
