"""tape's TAP (parsers/tape.py): one result per test, named by the ``# name``
line tape prints before the test's assertions. The streams below are tape
5.10's output for the sample tests quoted with them (stacks shortened)."""

from __future__ import annotations

from greenloop.parsers import RunOutput, parse
from greenloop.parsers.models import Status
from tests.parsers.helpers import by_id, write_files

SOURCES = {
    "package.json": '{"devDependencies": {"tape": "^5"}}',
    "test/a.js": (
        "var test = require('tape');\n"
        "test('adds numbers', function (t) { t.equal(1+1, 2); t.equal(2+2, 5, 'four'); t.end(); });\n"
        "test('nested parent', function (t) { t.ok(true, 'outer'); "
        "t.test('child one', function (st) { st.ok(false); st.end(); }); t.end(); });\n"
        "test('skipped one', { skip: true }, function (t) { t.end(); });\n"
        "test('todo one', { todo: true }, function (t) { t.ok(false, 'not yet'); t.end(); });\n"
        "test('empty', function (t) { t.end(); });\n"
    ),
}
COMPLETE = """TAP version 13
# adds numbers
ok 1 should be strictly equal
not ok 2 four
  ---
    operator: equal
    expected: 5
    actual:   4
    at: Test.<anonymous> (<ROOT>/test/a.js:2:56)
    stack: |-
      Error: four
          at Test.assert [as _assert] (<ROOT>/node_modules/tape/lib/test.js:548:48)
  ...
# nested parent
ok 3 outer
# child one
not ok 4 should be truthy
  ---
    operator: ok
    expected: true
    actual:   false
    at: Test.<anonymous> (<ROOT>/test/a.js:3:98)
  ...
# SKIP skipped one
# TODO todo one
not ok 5 not yet # TODO
  ---
    operator: ok
    expected: true
    actual:   false
    at: Test.<anonymous> (<ROOT>/test/a.js:5:51)
  ...
# empty

1..5
# tests 5
# pass  3
# fail  2
"""


def run(tmp_path, stdout: str, exit_code: int = 1, stderr: str = "", command: str = "npx tape test/a.js"):
    root = write_files(tmp_path, SOURCES)
    return parse(RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr,
                           cwd=root, project_root=root))


def test_tests_are_named_by_their_comment_lines_not_their_assertions(tmp_path):
    report = run(tmp_path, COMPLETE)
    assert report.framework == "tape"
    assert [(t.id, t.status) for t in report.tests] == [
        ("adds numbers", Status.FAILED), ("nested parent", Status.PASSED), ("child one", Status.FAILED),
        ("skipped one", Status.SKIPPED), ("todo one", Status.SKIPPED), ("empty", Status.PASSED)]
    tests = by_id(report)
    # tape's counters after the plan are not tests.
    assert not {"tests 5", "pass  3", "fail  2"} & set(tests)
    assert tests["skipped one"].native_status == "skip" and tests["todo one"].native_status == "todo"


def test_a_failed_test_says_which_assertion_and_where_the_test_is(tmp_path):
    tests = by_id(run(tmp_path, COMPLETE))
    adds = tests["adds numbers"]
    assert adds.message == "four: expected 5, actual 4"
    assert "operator: equal" in (adds.details or "")
    # The definition of the test (found once in the sources), in the file of the failing assertion.
    assert (adds.file, adds.line) == ("test/a.js", 2)
    assert tests["child one"].message == "should be truthy: expected true, actual false"


def test_a_stream_cut_before_its_plan_fails_the_test_that_was_running(tmp_path):
    cut = COMPLETE.split("# empty")[0] + "# empty\n"
    stderr = "<ROOT>/test/a.js:6\nError: boom\n    at Test.<anonymous> (<ROOT>/test/a.js:6:37)\n"
    report = run(tmp_path, cut, exit_code=1, stderr=stderr)
    empty = by_id(report)["empty"]
    assert empty.status == Status.FAILED and not empty.timed_out
    assert empty.message == "the test run ended before this test finished"
    assert "Error: boom" in (empty.details or "")
    assert any("ended before its plan" in w for w in report.warnings)
    # The same stream from a run that exited 0 has nothing unfinished.
    assert by_id(run(tmp_path, cut, exit_code=0))["empty"].status == Status.PASSED


def test_two_files_run_one_after_the_other_and_repeated_names(tmp_path):
    one = "TAP version 13\n# sums\nok 1 should be equal\n\n1..1\n# tests 1\n# pass  1\n\n# ok\n"
    two = "TAP version 13\n# sums\nnot ok 1 should be equal\n  ---\n    operator: equal\n  ...\n\n1..1\n"
    report = run(tmp_path, one + two, command="node test/a.js && node test/b.js")
    assert [(t.id, t.status) for t in report.tests] == [("sums", Status.PASSED), ("sums [2]", Status.FAILED)]


def test_assertions_outside_any_named_test_are_tests_of_their_own(tmp_path):
    report = run(tmp_path, "TAP version 13\nok 1 loose one\nnot ok 2 loose two\n1..2\n")
    assert [(t.id, t.status) for t in report.tests] == [("loose one", Status.PASSED), ("loose two", Status.FAILED)]


def test_no_tap_at_all_is_exit_code_only(tmp_path):
    report = run(tmp_path, "", stderr="sh: 1: tape: not found\n", exit_code=127)
    assert report.tests == [] and not report.per_test


def test_detected_from_its_output_alone(tmp_path):
    report = parse(RunOutput(command="make check", exit_code=1, stdout_text=COMPLETE))
    assert report.framework == "tape", report.detection
