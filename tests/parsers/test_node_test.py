"""The node:test parser on synthetic outputs of node's tap, spec, dot and
junit reporters (Node 18-22 shapes), with a small test project in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import node_test, parse
from greenloop.parsers.models import Status
from greenloop.parsers.run_output import RunOutput
from tests.parsers.helpers import statuses

CART = """\
const test = require('node:test');
const assert = require('node:assert');

test('empty cart totals zero', () => {
  assert.equal(total([]), 0);
});

test('discounts', async (t) => {
  await t.test('ten percent', () => {});
  await t.test('stacked', () => {
    assert.equal(1, 2);
  });
});

test('slow checkout', { timeout: 100 }, async () => {
  await new Promise(() => {});
});

test('gift wrap', { skip: 'no wrapping paper' }, () => {});
test('loyalty points', { todo: true }, () => { throw new Error('later'); });
"""

API = """\
const { describe, it, before } = require('node:test');

describe('api', () => {
  describe('orders', () => {
    before(() => { throw new Error('db down'); });
    it('lists orders', () => {});
  });
  for (const code of [200, 404]) {
    it(`returns ${code}`, () => {});
  }
});
"""

EXPECTED = {
    "empty cart totals zero": (Status.PASSED, 4),
    "discounts": (Status.FAILED, 8),
    "discounts > ten percent": (Status.PASSED, 9),
    "discounts > stacked": (Status.FAILED, 10),
    "slow checkout": (Status.FAILED, 15),
    "gift wrap": (Status.SKIPPED, 19),
    "loyalty points": (Status.SKIPPED, 20),
    "api > orders > lists orders": (Status.ERRORED, 6),
    "api > returns 200": (Status.PASSED, 9),
    "api > returns 404": (Status.PASSED, 9),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "cart.test.js").write_text(CART, encoding="utf-8")
    (tmp_path / "test" / "api.test.js").write_text(API, encoding="utf-8")
    return tmp_path


def run(project: Path, command: str, stdout: str = "", stderr: str = "", exit_code: int = 1) -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=project)


TAP = """TAP version 13
# Subtest: api
    # Subtest: orders
        # Subtest: lists orders
        not ok 1 - lists orders
          ---
          duration_ms: 0
          location: '/abs/test/api.test.js:6:5'
          failureType: 'cancelledByParent'
          error: 'test did not finish before its parent and was cancelled'
          code: 'ERR_TEST_FAILURE'
          ...
        1..1
    not ok 1 - orders
      ---
      duration_ms: 1.2
      type: 'suite'
      failureType: 'hookFailed'
      error: 'db down'
      ...
    # Subtest: returns 200
    ok 2 - returns 200
      ---
      duration_ms: 0.3
      ...
    # Subtest: returns 404
    ok 3 - returns 404
      ---
      duration_ms: 0.3
      ...
    1..3
not ok 1 - api
  ---
  duration_ms: 2.5
  type: 'suite'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  ...
# Subtest: empty cart totals zero
ok 2 - empty cart totals zero
  ---
  duration_ms: 0.5
  ...
# Subtest: discounts
    # Subtest: ten percent
    ok 1 - ten percent
      ---
      duration_ms: 0.1
      ...
    # Subtest: stacked
    not ok 2 - stacked
      ---
      duration_ms: 0.4
      location: '/abs/test/cart.test.js:10:11'
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be loosely equal:

        1 != 2
      code: 'ERR_ASSERTION'
      name: 'AssertionError'
      stack: |-
        TestContext.<anonymous> (/abs/test/cart.test.js:11:12)
      ...
    1..2
not ok 3 - discounts
  ---
  duration_ms: 1.0
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
# Subtest: slow checkout
not ok 4 - slow checkout
  ---
  duration_ms: 101.2
  failureType: 'testTimeoutFailure'
  error: 'test timed out after 100ms'
  code: 'ERR_TEST_FAILURE'
  ...
# Subtest: gift wrap
ok 5 - gift wrap # SKIP no wrapping paper
  ---
  duration_ms: 0.1
  ...
# Subtest: loyalty points
not ok 6 - loyalty points # TODO
  ---
  duration_ms: 0.2
  failureType: 'testCodeFailure'
  error: 'later'
  ...
1..6
# tests 10
# suites 2
# pass 4
# fail 2
# cancelled 2
# skipped 1
# todo 1
# duration_ms 150.2
"""


def test_tap_reporter(project: Path) -> None:
    tap = TAP.replace("/abs", str(project))
    report = node_test.parse(run(project, "node --test", tap))
    assert statuses(report) == EXPECTED
    by_id = {t.id: t for t in report.tests}
    slow = by_id["slow checkout"]
    assert slow.timed_out and slow.native_status == "cancelled" and report.timed_out
    assert by_id["api > orders > lists orders"].native_status == "cancelled"
    assert by_id["discounts > stacked"].message == "AssertionError: Expected values to be loosely equal:\n\n1 != 2"
    assert by_id["discounts > stacked"].file == "test/cart.test.js"
    assert by_id["gift wrap"].message == "no wrapping paper" and by_id["gift wrap"].native_status == "skip"
    assert by_id["loyalty points"].native_status == "todo"
    assert not report.build_error and report.warnings == []


def test_tap_without_suite_types_uses_the_sources(project: Path) -> None:
    # Node 18 did not print type: 'suite': describe() blocks come from the sources.
    tap = TAP.replace("      type: 'suite'\n", "").replace("  type: 'suite'\n", "")
    report = node_test.parse(run(project, "node --test", tap))
    assert set(statuses(report)) == set(EXPECTED)


SPEC = """▶ api
  ▶ orders
    ✖ lists orders
      'test did not finish before its parent and was cancelled'

  ✖ orders (1.2ms)
    Error: db down
        at SuiteContext.<anonymous> (/abs/test/api.test.js:5:26)

  ✔ returns 200 (0.3ms)
  ✔ returns 404 (0.3ms)
✖ api (2.5ms)
✔ empty cart totals zero (0.5ms)
▶ discounts
  ✔ ten percent (0.1ms)
  ✖ stacked (0.4ms)
    AssertionError [ERR_ASSERTION]: Expected values to be loosely equal:

    1 != 2

        at TestContext.<anonymous> (/abs/test/cart.test.js:11:12) {
      generatedMessage: true,
      code: 'ERR_ASSERTION'
    }

✖ discounts (1.0ms)
✖ slow checkout (101.2ms)
  'test timed out after 100ms'

﹣ gift wrap (0.1ms) # no wrapping paper
✖ loyalty points (0.2ms) # TODO
  Error: later
      at TestContext.<anonymous> (/abs/test/cart.test.js:20:55)

ℹ tests 10
ℹ suites 2
ℹ pass 4
ℹ fail 2
ℹ cancelled 2
ℹ skipped 1
ℹ todo 1
ℹ duration_ms 150.2

✖ failing tests:

test at test/api.test.js:6:5
✖ lists orders
  'test did not finish before its parent and was cancelled'

test at test/cart.test.js:10:11
✖ stacked (0.4ms)
  AssertionError [ERR_ASSERTION]: Expected values to be loosely equal:
"""


def test_spec_reporter(project: Path) -> None:
    report = node_test.parse(run(project, "node --test --test-reporter=spec", SPEC))
    assert statuses(report) == EXPECTED
    by_id = {t.id: t for t in report.tests}
    assert by_id["slow checkout"].message == "test timed out after 100ms"
    assert by_id["slow checkout"].timed_out
    assert by_id["discounts > stacked"].message.startswith("AssertionError [ERR_ASSERTION]: Expected values")
    assert "at TestContext" in by_id["discounts > stacked"].details
    assert by_id["gift wrap"].message == "no wrapping paper"
    assert by_id["loyalty points"].native_status == "todo"
    assert report.warnings == []


def test_spec_errors_printed_only_in_the_failing_tests_recap(project: Path) -> None:
    spec = (
        "✔ empty cart totals zero (0.5ms)\n"
        "✖ slow checkout (101.2ms)\n"
        "ℹ tests 2\n\n"
        "✖ failing tests:\n\n"
        "test at test/cart.test.js:15:1\n"
        "✖ slow checkout (101.2ms)\n"
        "  'test timed out after 100ms'\n"
    )
    report = node_test.parse(run(project, "node --test --test-reporter=spec", spec))
    slow = report.find("slow checkout")
    assert (slow.status, slow.timed_out, slow.message, slow.line) == (
        Status.FAILED, True, "test timed out after 100ms", 15)


def test_spec_file_that_fails_to_load(project: Path) -> None:
    (project / "test" / "broken.test.js").write_text("test('x', () => {\n  const a = {;\n});\n")
    spec = SPEC.replace("ℹ tests 10", (
        f"{project}/test/broken.test.js:2\n"
        "  const a = {;\n"
        "             ^\n\n"
        "SyntaxError: Unexpected token ';'\n"
        "    at wrapSafe (node:internal/modules/cjs/loader:1464:18)\n\n"
        "Node.js v20.20.2\n"
        f"✖ {project}/test/broken.test.js (30.1ms)\n"
        "  'test failed'\n\n"
        "ℹ tests 11"))
    report = node_test.parse(run(project, "node --test --test-reporter=spec", spec))
    broken = report.find(f"{project}/test/broken.test.js")
    assert broken is not None
    assert (broken.status, broken.file, broken.line) == (Status.ERRORED, "test/broken.test.js", 2)
    assert broken.message == "SyntaxError: Unexpected token ';'"
    assert report.build_error and report.warnings == []


def test_tap_file_failure_reads_the_stderr_comments(project: Path) -> None:
    tap = (
        "TAP version 13\n"
        "# <ROOT>/test/broken.test.js:3\n"
        "# SyntaxError: missing ) after argument list\n"
        "# Subtest: <ROOT>/test/broken.test.js\n"
        "not ok 1 - <ROOT>/test/broken.test.js\n"
        "  ---\n  duration_ms: 20\n  location: '<ROOT>/test/broken.test.js:1:1'\n"
        "  failureType: 'testCodeFailure'\n  exitCode: 1\n  error: 'test failed'\n  ...\n1..1\n# tests 1\n"
    )
    report = node_test.parse(run(project, "node --test", tap))
    t = report.tests[0]
    assert (t.id, t.status, t.file, t.line) == ("<ROOT>/test/broken.test.js", Status.ERRORED, "test/broken.test.js", 3)
    assert t.message == "SyntaxError: missing ) after argument list"
    assert report.build_error


def test_dot_reporter_rebuilds_the_tests_from_sources(project: Path) -> None:
    dot = (
        "XX..X..XXX.X\n\n"
        "Failed tests:\n\n"
        "✖ lists orders\n  'test did not finish before its parent and was cancelled'\n"
        "✖ orders (1.2ms)\n  Error: db down\n"
        "✖ api (2.5ms)\n  '1 subtest failed'\n"
        "✖ stacked (0.4ms)\n  AssertionError [ERR_ASSERTION]: Expected values to be loosely equal:\n\n  1 != 2\n"
        "      at TestContext.<anonymous> (/abs/test/cart.test.js:11:12)\n"
        "✖ discounts (1.0ms)\n  '1 subtest failed'\n"
        "✖ slow checkout (101.2ms)\n  'test timed out after 100ms'\n"
        "✖ loyalty points (0.2ms) # TODO\n  Error: later\n"
    )
    report = node_test.parse(run(project, "node --test --test-reporter=dot", dot))
    assert statuses(report) == EXPECTED
    by_id = {t.id: t for t in report.tests}
    assert by_id["discounts"].message == "1 subtest failed"
    assert by_id["slow checkout"].timed_out
    assert "sources" in report.sources
    assert report.warnings == []


def test_dot_skipped_describe_and_failed_file_are_counted_like_node(project: Path) -> None:
    (project / "test" / "legacy.test.js").write_text(
        "const { describe, it } = require('node:test');\n"
        "describe.skip('legacy', () => { it('old', () => {}); });\n"
        "it('modern', () => {});\n")
    (project / "test" / "boot.test.mjs").write_text("throw new Error('x');\nit('never', () => {});\n")
    dot = (
        "XX..XX..XXX.X..\n\n"  # api, boot (the file), cart, legacy (the suite alone), modern
        "Failed tests:\n\n"
        f"✖ {project}/test/boot.test.mjs (9ms)\n  'test failed'\n"
        "✖ lists orders\n  'test did not finish before its parent and was cancelled'\n"
        "✖ orders (1.2ms)\n  Error: db down\n"
        "✖ api (2.5ms)\n  '1 subtest failed'\n"
        "✖ stacked (0.4ms)\n  AssertionError: no\n"
        "✖ discounts (1.0ms)\n  '1 subtest failed'\n"
        "✖ slow checkout (101.2ms)\n  'test timed out after 100ms'\n"
        "✖ loyalty points (0.2ms) # TODO\n  Error: later\n"
    )
    report = node_test.parse(run(project, "node --test --test-reporter=dot", dot))
    got = statuses(report)
    assert got["modern"] == (Status.PASSED, 3)
    assert "legacy > old" not in got and "never" not in got
    assert got[f"{project}/test/boot.test.mjs"][0] == Status.ERRORED and report.build_error
    assert report.warnings == []


def test_killed_dot_run_uses_the_marks_in_completion_order(project: Path) -> None:
    (project / "test" / "api.test.js").unlink()
    report = node_test.parse(run(project, "timeout 5 node --test --test-reporter=dot", ".X", exit_code=124))
    assert [(t.id, t.status, t.timed_out) for t in report.tests] == [
        ("empty cart totals zero", Status.PASSED, False),
        ("discounts > ten percent", Status.FAILED, False),
        ("discounts > stacked", Status.FAILED, True),
    ]


def test_esm_file_url_in_a_load_error_gives_the_line(project: Path) -> None:
    spec = (
        f"file://{project}/test/boot.test.mjs:4\n"
        "throw new Error('config missing');\n"
        "      ^\n\n"
        "Error: config missing\n"
        f"    at file://{project}/test/boot.test.mjs:4:7\n\n"
        f"✖ {project}/test/boot.test.mjs (80ms)\n  'test failed'\n"
    )
    report = node_test.parse(run(project, "node --test --test-reporter=spec", spec))
    t = report.tests[0]
    assert (t.status, t.file, t.line, t.message) == (Status.ERRORED, "test/boot.test.mjs", 4, "Error: config missing")


def test_junit_hook_failure_message_names_the_cause(project: Path) -> None:
    xml = ('<testsuites><testsuite name="api"><testcase name="returns 200" classname="test">'
           '<failure type="hookFailed" message="failed running beforeEach hook">[Error [ERR_TEST_FAILURE]: '
           "failed running beforeEach hook] {\n  code: 'ERR_TEST_FAILURE',\n  failureType: 'hookFailed',\n"
           "  cause: Error: token expired\n      at x (/a.js:1:1)\n}</failure></testcase></testsuite></testsuites>")
    (project / "j.xml").write_text(xml)
    report = node_test.parse(run(project, "node --test --test-reporter=junit --test-reporter-destination=j.xml"))
    t = report.find("api > returns 200")
    assert t.status == Status.FAILED and t.message == "failed running beforeEach hook\nError: token expired"


def test_dot_marks_that_disagree_with_the_sources_warn(project: Path) -> None:
    report = node_test.parse(run(project, "node --test --test-reporter=dot", "....\n", exit_code=0))
    assert any("dot reporter printed 4 results" in w for w in report.warnings)


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites>
  <testsuite name="api" tests="3" failures="1" skipped="0">
    <testsuite name="orders" tests="1" failures="1" skipped="0">
      <testcase name="lists orders" time="0" classname="test">
        <failure type="cancelledByParent" message="test did not finish before its parent and was cancelled">x</failure>
      </testcase>
    </testsuite>
    <testcase name="returns 200" time="0.0003" classname="test"/>
    <testcase name="returns 404" time="0.0003" classname="test"/>
  </testsuite>
  <testcase name="empty cart totals zero" time="0.0005" classname="test"/>
  <testsuite name="discounts" tests="2" failures="1">
    <testcase name="ten percent" time="0.0001" classname="test"/>
    <testcase name="stacked" time="0.0004" classname="test">
      <failure type="testCodeFailure" message="Expected values to be loosely equal:1 != 2">stack</failure>
    </testcase>
  </testsuite>
  <testcase name="slow checkout" time="0.1" classname="test">
    <failure type="testTimeoutFailure" message="test timed out after 100ms">t</failure>
  </testcase>
  <testcase name="gift wrap" time="0.0001" classname="test"><skipped type="skipped" message="no wrapping paper"/></testcase>
  <testcase name="loyalty points" time="0.0002" classname="test">
    <skipped type="todo" message="true"/>
    <failure type="testCodeFailure" message="later">e</failure>
  </testcase>
  <!-- tests 10 -->
</testsuites>
"""


def test_junit_file_only(project: Path) -> None:
    (project / "junit.xml").write_text(JUNIT)
    report = node_test.parse(run(project, "node --test --test-reporter=junit --test-reporter-destination=junit.xml"))
    # The parent test 'discounts' is a <testsuite> in JUnit: the sources say it is a test.
    assert statuses(report) == EXPECTED
    assert report.find("slow checkout").timed_out
    assert report.find("loyalty points").native_status == "todo"
    assert report.sources == ["junit-xml:junit.xml"]


def test_junit_to_stdout(project: Path) -> None:
    report = node_test.parse(run(project, "node --test --test-reporter=junit", "log line\n" + JUNIT))
    assert statuses(report) == EXPECTED


def test_spec_and_junit_together_prefer_the_console(project: Path) -> None:
    (project / "out.xml").write_text(JUNIT)
    cmd = ("node --test --test-reporter=spec --test-reporter-destination=stdout "
           "--test-reporter=junit --test-reporter-destination=out.xml")
    report = node_test.parse(run(project, cmd, SPEC))
    assert statuses(report) == EXPECTED
    assert report.sources == ["spec:stdout", "junit-xml:out.xml"]


def test_missing_destination_file_warns(project: Path) -> None:
    report = node_test.parse(run(project, "node --test --test-reporter=tap --test-reporter-destination=gone.tap"))
    assert report.tests == [] and any("gone.tap" in w for w in report.warnings)


def test_killed_tap_run_reports_the_hanging_test(project: Path) -> None:
    tap = "TAP version 13\n# Subtest: empty cart totals zero\nok 1 - empty cart totals zero\n# Subtest: discounts\n" \
          "    # Subtest: ten percent\n"
    report = node_test.parse(run(project, "timeout 5 node --test", tap, exit_code=124))
    hanging = [t for t in report.tests if t.timed_out]
    assert [(t.id, t.status) for t in hanging] == [("discounts > ten percent", Status.FAILED)]
    assert report.timed_out


def test_killed_spec_run_guesses_the_next_test(project: Path) -> None:
    spec = "▶ api\n  ▶ orders\n    ✔ lists orders (1ms)\n  ✔ orders (1ms)\n  ✔ returns 200 (1ms)\n"
    report = node_test.parse(run(project, "timeout 5 node --test --test-reporter=spec", spec, exit_code=124))
    assert [t.id for t in report.tests if t.timed_out] == ["api > returns 404"]


def test_counter_mismatch_warns(project: Path) -> None:
    spec = "✔ empty cart totals zero (0.5ms)\nℹ tests 3\n"
    report = parse(run(project, "node --test --test-reporter=spec", spec, exit_code=0), "node-test")
    assert any("summary counted 3 total; the per-test results have 1 total" in w for w in report.warnings)


def test_default_reporter_is_sniffed(project: Path) -> None:
    assert node_test.parse(run(project, "npm test", SPEC)).sources == ["spec:stdout"]
    assert node_test.parse(run(project, "node --test", TAP)).sources == ["tap:stdout"]


def test_empty_and_garbage_output(project: Path) -> None:
    report = node_test.parse(run(project, "node --test", "", exit_code=0))
    assert report.tests == [] and report.warnings
    report = node_test.parse(run(project, "node --test", "\x00\xff garbage ✖\n▶\n", exit_code=1))
    assert all(t.id for t in report.tests)


@pytest.mark.parametrize("command,hit", [
    ("node --test", True), ("node --test-reporter=spec --test test/", True), ("c8 node --test", True),
    ("timeout 60 node --test", True), ("node test/cart.test.js", True), ("node server.js", False),
    ("pytest -k node_test", False), ("node --test-reporter=spec app.js", False),
])
def test_command_patterns(command: str, hit: bool) -> None:
    assert any(p.search(command) for p in node_test.COMMAND_RE) is hit
