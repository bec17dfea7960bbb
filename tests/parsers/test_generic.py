"""The generic fallback parser: JUnit/xUnit XML and TAP become per-test
reports; anything else stays an exit-code-only report."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import detect, generic
from greenloop.parsers import parse as parse_any
from greenloop.parsers.models import Status
from greenloop.parsers.run_output import RunOutput

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5">
  <testsuite name="billing" tests="5" file="src/billing_test.rb">
    <testcase classname="billing.Invoice" name="test_total" time="0.01" file="src/billing_test.rb" line="4"/>
    <testcase classname="billing.Invoice" name="test_tax" time="0.02">
      <failure message="expected 12, got 11" type="AssertionError">trace line 1
trace line 2</failure>
    </testcase>
    <testcase classname="billing.Invoice" name="test_db">
      <error message="connection refused">boom</error>
    </testcase>
    <testcase classname="billing.Invoice" name="test_pdf"><skipped message="no renderer"/></testcase>
    <testcase name="free standing"><failure>first line of text
second</failure></testcase>
  </testsuite>
</testsuites>
"""


def run(tmp_path: Path, command: str, stdout: str = "", stderr: str = "", exit_code: int = 1) -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=tmp_path)


def test_no_results_keeps_the_exit_code_only_report(tmp_path: Path) -> None:
    report = generic.parse(run(tmp_path, "make check", "compiling...\nall good\n", exit_code=0))
    assert report.per_test is False and report.tests == []
    assert report.sources == ["exit-code"]
    assert report.output_tail == "compiling...\nall good"
    assert report.warnings == ["no per-test results could be read from this output; only the exit code is known"]
    assert report.timed_out is False


def test_exit_code_only_report_knows_a_timeout_kill(tmp_path: Path) -> None:
    report = generic.parse(run(tmp_path, "timeout 5 ./run.sh", "", exit_code=124))
    assert report.per_test is False and report.timed_out


def test_junit_report_named_by_the_command(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.xml").write_text(JUNIT)
    (tmp_path / "src").mkdir()
    report = generic.parse(run(tmp_path, "./run-tests --junit-xml=out/results.xml"))
    got = {t.id: (t.status, t.message) for t in report.tests}
    assert got == {
        "billing.Invoice.test_total": (Status.PASSED, None),
        "billing.Invoice.test_tax": (Status.FAILED, "expected 12, got 11"),
        "billing.Invoice.test_db": (Status.ERRORED, "connection refused"),
        "billing.Invoice.test_pdf": (Status.SKIPPED, "no renderer"),
        "billing > free standing": (Status.FAILED, "first line of text"),
    }
    total = report.find("billing.Invoice.test_total")
    assert (total.file, total.line, total.duration_s) == ("src/billing_test.rb", 4, 0.01)
    assert report.find("billing.Invoice.test_tax").details == "trace line 1\ntrace line 2"
    assert report.per_test and report.sources == ["junit-xml:out/results.xml"]


@pytest.mark.parametrize("command", [
    "ctest --output-junit out/results.xml", "phpunit --log-junit out/results.xml",
    "./t --gtest_output=xml:out/results.xml", "./t --gtest_output=xml:out/",
    "mocha --reporter xunit --reporter-option output=out/results.xml",
])
def test_report_option_spellings(tmp_path: Path, command: str) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.xml").write_text(JUNIT)
    assert len(generic.parse(run(tmp_path, command)).tests) == 5


def test_jest_junit_output_dir(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "junit.xml").write_text(JUNIT)
    report = generic.parse(run(tmp_path, "JEST_JUNIT_OUTPUT_DIR=reports npx jest --reporters=jest-junit"))
    assert len(report.tests) == 5


def test_missing_named_report_warns_and_falls_back(tmp_path: Path) -> None:
    report = generic.parse(run(tmp_path, "./t --junitxml=out/none.xml", "nothing useful\n"))
    assert report.per_test is False
    assert any("out/none.xml" in w and "does not exist" in w for w in report.warnings)


def test_truncated_report_keeps_the_cases_read(tmp_path: Path) -> None:
    (tmp_path / "r.xml").write_text(JUNIT[: JUNIT.index('<testcase classname="billing.Invoice" name="test_db">')])
    report = generic.parse(run(tmp_path, "./t --junitxml=r.xml"))
    assert [t.id for t in report.tests] == ["billing.Invoice.test_total", "billing.Invoice.test_tax"]
    assert any("truncated" in w for w in report.warnings)


def test_duplicate_ids_are_made_unique(tmp_path: Path) -> None:
    xml = '<testsuite name="s"><testcase classname="c" name="t"/><testcase classname="c" name="t"/></testsuite>'
    (tmp_path / "r.xml").write_text(xml)
    assert [t.id for t in generic.parse(run(tmp_path, "x --out=r.xml")).tests] == ["c.t", "c.t [2]"]


def test_conventional_path_is_read_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "test-results").mkdir()
    (tmp_path / "test-results" / "unit.xml").write_text(JUNIT)
    (tmp_path / "test-results" / "notes.xml").write_text("<notes/>")
    report = generic.parse(run(tmp_path, "./gradlew-like test"))
    assert len(report.tests) == 5
    assert report.sources == ["junit-xml:test-results/unit.xml"]
    assert any("conventional path" in w for w in report.warnings)


def test_junit_document_on_stdout(tmp_path: Path) -> None:
    report = generic.parse(run(tmp_path, "./t", "Running 5 tests\n" + JUNIT))
    assert len(report.tests) == 5 and report.sources == ["junit-xml:stdout"]


TAP = """TAP version 14
# Subtest: parser
    ok 1 - reads numbers
    not ok 2 - reads dates
      ---
      message: 'bad month'
      at:
        file: lib/parse.js
        line: 12
      ...
    1..2
not ok 1 - parser
ok 2 - cache # SKIP no redis
not ok 3 - unicode # TODO later
1..3
"""


def test_tap_stream_on_stdout(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    report = generic.parse(run(tmp_path, "./run-tap", TAP))
    got = {t.id: (t.status, t.native_status, t.message) for t in report.tests}
    assert got == {
        "parser > reads numbers": (Status.PASSED, None, None),
        "parser > reads dates": (Status.FAILED, None, "bad month"),
        "parser": (Status.FAILED, None, None),
        "cache": (Status.SKIPPED, "skip", "no redis"),
        "unicode": (Status.SKIPPED, "todo", "later"),
    }
    dates = report.find("parser > reads dates")
    assert (dates.file, dates.line) == ("lib/parse.js", 12)
    assert report.sources == ["tap:stdout"] and report.warnings == []


def test_tap12_message_from_following_lines_and_plan_check(tmp_path: Path) -> None:
    out = "1..3\nok 1 first\nnot ok 2 second\n  boom happened\n  at x.js:1\n"
    report = generic.parse(run(tmp_path, "./t", out))
    assert report.find("second").message == "boom happened"
    assert any("plan announced 3" in w for w in report.warnings)


def test_tap_on_stderr_and_bail_out(tmp_path: Path) -> None:
    report = generic.parse(run(tmp_path, "./t", "", "ok 1 - a\nBail out! no db\n"))
    assert report.sources == ["tap:stderr"] and any("no db" in w for w in report.warnings)


def test_killed_tap_run_lists_the_hanging_test(tmp_path: Path) -> None:
    report = generic.parse(run(tmp_path, "timeout 5 ./t", "# Subtest: slow\n", exit_code=124))
    assert [(t.id, t.timed_out) for t in report.tests] == [("slow", True)]
    assert report.timed_out


def test_binary_garbage_is_exit_code_only(tmp_path: Path) -> None:
    report = generic.parse(run(tmp_path, "./t", "\x00\x01\xff\ufffd<testsuite\n---\n...\n"))
    assert report.per_test is False and report.tests == []


def test_detection_is_unaffected(tmp_path: Path) -> None:
    assert generic.COMMAND_RE == [] and generic.OUTPUT_RE == []
    plain_tap = "TAP version 13\nok 1 - a\nnot ok 2 - b\n1..2\n"
    found = detect.detect(run(tmp_path, "./custom-runner", plain_tap))
    assert found.framework == "generic"
    report = parse_any(run(tmp_path, "./custom-runner", plain_tap))
    assert report.framework == "generic" and [t.status for t in report.tests] == [Status.PASSED, Status.FAILED]
