"""Vitest parser: default reporter (v4 bare titles, v1 failure lines,
collapsed passing files, colours), verbose, JSON (stdout and --outputFile),
JUnit, TAP and flat TAP, dot, several reporters at once, -t filters,
it.fails, todo/skip, a suite's failing beforeAll, files that fail to load,
timeouts, and bad input.

Outputs are written from Vitest's documented formats for a small 'shop'
project, not copied from the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.parsers import parse
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.models import Status, TestReport
from greenloop.parsers.run_output import RunOutput
from greenloop.parsers.source.js import format_title
from tests.parsers.helpers import by_id, write_files

CART_TEST = """import { describe, it, expect, beforeAll } from 'vitest'

describe('cart', () => {
  it('adds items', () => {})
  it('removes items', () => { expect(2).toBe(1) })
  it.fails('applies coupon twice (known bug)', () => { expect(1).toBe(2) })
  it.fails('rounds totals', () => {})
  it.todo('supports gift cards')
  it.skip('syncs remotely', () => {})
  describe('checkout', () => {
    it.each([
      { qty: 1, total: 10 },
      { qty: 3, total: 30 },
    ])('charges $total for $qty', () => {})
  })
})

describe('inventory', () => {
  beforeAll(() => { throw new Error('db down') })
  it('counts stock', () => {})
  it('reserves stock', () => {})
})
"""

PRICE_TEST = """import { test, expect } from 'vitest'

test('formats price', () => {})
test('waits for rates', async () => {
  await new Promise(() => {})
}, 100)
"""

ALL_IDS = {
    "cart > adds items", "cart > removes items", "cart > applies coupon twice (known bug)", "cart > rounds totals",
    "cart > supports gift cards", "cart > syncs remotely", "cart > checkout > charges 10 for 1",
    "cart > checkout > charges 30 for 3", "inventory > counts stock", "inventory > reserves stock", "inventory",
    "formats price", "waits for rates",
}

FAILED_SUITES = """
⎯⎯⎯⎯⎯⎯ Failed Suites 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/cart.test.ts > inventory
Error: db down
 ❯ test/cart.test.ts:19:27
     18| describe('inventory', () => {
     19|   beforeAll(() => { throw new Error('db down') })
       |                           ^

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/4]⎯
"""

FAILED_TESTS = """
⎯⎯⎯⎯⎯⎯⎯ Failed Tests 3 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/cart.test.ts > cart > removes items
AssertionError: expected 2 to be 1 // Object.is equality

- Expected
+ Received

- 1
+ 2

 ❯ test/cart.test.ts:5:40
      4|   it('adds items', () => {})
      5|   it('removes items', () => { expect(2).toBe(1) })
       |                                        ^

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[2/4]⎯

 FAIL  test/cart.test.ts > cart > rounds totals
Error: Expect test to fail
⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[3/4]⎯

 FAIL  test/price.test.ts > waits for rates
Error: Test timed out in 100ms.
If this is a long-running test, pass a timeout value as the last argument or configure it globally with "testTimeout".
 ❯ test/price.test.ts:4:1
      3| test('formats price', () => {})
      4| test('waits for rates', async () => {
       | ^

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[4/4]⎯

"""

SUMMARY = """ Test Files  2 failed (2)
      Tests  3 failed | 4 passed | 1 expected fail | 3 skipped | 1 todo (12)
   Start at  10:00:00
   Duration  420ms (transform 20ms, setup 0ms, import 30ms, tests 130ms, environment 0ms)
"""

DEFAULT_V4 = """
 RUN  v4.0.3 /home/dev/shop

 ❯ test/cart.test.ts (10 tests | 1 failed | 3 skipped | 1 todo) 12ms
     ✓ adds items 1ms
     × removes items 2ms
     ✓ applies coupon twice (known bug) 0ms
     × rounds totals 0ms
     □ supports gift cards
     ↓ syncs remotely
     ✓ charges 10 for 1 0ms
     ✓ charges 30 for 3 0ms
     ↓ counts stock
     ↓ reserves stock
stdout | test/price.test.ts > formats price
 ✓ looks like a test line but is console.log output

 ❯ test/price.test.ts (2 tests | 1 failed) 104ms
     ✓ formats price 1ms
     × waits for rates 101ms
       → Test timed out in 100ms.
"""


def _project(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    root = tmp_path / "shop"
    files = {"test/cart.test.ts": CART_TEST, "test/price.test.ts": PRICE_TEST, **(extra or {})}
    return write_files(root, files)


def parse_vitest(run: RunOutput) -> TestReport:
    """The whole parse: vitest's parser, then the normalizer (lines through ``vitest.locate``)."""
    return parse(run, "vitest")


def _run(root: Path, command: str = "npx vitest run", stdout: str = "", stderr: str = "", code: int = 1) -> RunOutput:
    return RunOutput(command=command, exit_code=code, stdout_text=stdout, stderr_text=stderr, cwd=root)


def _assert_full_run(report) -> None:
    tests = by_id(report)
    assert set(tests) == ALL_IDS
    assert report.totals.model_dump() == {"passed": 4, "failed": 3, "errored": 1, "skipped": 4, "xfailed": 1,
                                          "xpassed": 0}
    assert tests["cart > applies coupon twice (known bug)"].status == Status.XFAILED
    assert tests["cart > rounds totals"].status == Status.FAILED
    assert tests["cart > supports gift cards"].native_status == "todo"
    assert tests["cart > checkout > charges 30 for 3"].line == 14
    inventory = tests["inventory"]
    assert (inventory.status, inventory.file, inventory.line) == (Status.ERRORED, "test/cart.test.ts", 18)
    assert tests["inventory > counts stock"].status == Status.SKIPPED
    timeout = tests["waits for rates"]
    assert timeout.timed_out and timeout.line == 4
    assert report.timed_out and not report.build_error
    assert report.warnings == []


# --------------------------------------------------------------------------- console


def test_default_reporter_bare_titles(tmp_path: Path) -> None:
    run = _run(_project(tmp_path), stdout=DEFAULT_V4 + "\n" + SUMMARY, stderr=FAILED_SUITES + FAILED_TESTS)
    report = parse_vitest(run)
    _assert_full_run(report)
    tests = by_id(report)
    removed = tests["cart > removes items"]
    assert removed.message.startswith("AssertionError: expected 2 to be 1")
    assert "+ 2" in removed.message and "❯" not in removed.message
    assert "Test timed out in 100ms" in tests["waits for rates"].message
    assert tests["inventory"].message == "Error: db down"
    assert report.sources == ["console"]


def test_default_reporter_coloured(tmp_path: Path) -> None:
    coloured = DEFAULT_V4.replace(" ✓ ", " \x1b[32m✓\x1b[39m ").replace(" × ", " \x1b[31m×\x1b[31m ")
    coloured = coloured.replace("test/cart.test.ts", "\x1b[2mtest/\x1b[22mcart.test.ts")
    stderr = (FAILED_SUITES + FAILED_TESTS).replace(" FAIL ", "\x1b[41m\x1b[1m FAIL \x1b[22m\x1b[49m")
    report = parse_vitest(_run(_project(tmp_path), stdout=coloured + SUMMARY, stderr=stderr))
    _assert_full_run(report)


def test_collapsed_passing_file_and_name_filter(tmp_path: Path) -> None:
    stdout = """
 RUN  v4.0.3 /home/dev/shop

 ✓ test/cart.test.ts (10 tests | 9 skipped) 3ms

 Test Files  1 passed (1)
      Tests  1 passed | 9 skipped (10)
"""
    report = parse_vitest(_run(_project(tmp_path), "NO_COLOR=1 npx vitest run test/cart -t 'charges \\d+ for 3'",
                               stdout=stdout, code=0))
    tests = by_id(report)
    assert len(tests) == 10
    assert tests["cart > checkout > charges 30 for 3"].status == Status.PASSED
    assert tests["cart > checkout > charges 10 for 1"].status == Status.SKIPPED
    # not selected: skipped, even the it.fails and todo ones
    assert tests["cart > rounds totals"].status == Status.SKIPPED
    assert tests["cart > supports gift cards"].status == Status.SKIPPED
    assert report.warnings == [] and not report.timed_out


def test_verbose_reporter_full_names(tmp_path: Path) -> None:
    stdout = """
 RUN  v4.0.3 /home/dev/shop

 ✓ test/cart.test.ts > cart > adds items 1ms
 × test/cart.test.ts > cart > removes items 2ms
   → expected 2 to be 1 // Object.is equality
 ✓ test/cart.test.ts > cart > applies coupon twice (known bug) 0ms
 × test/cart.test.ts > cart > rounds totals 0ms
   → Expect test to fail
 □ test/cart.test.ts > cart > supports gift cards
 ↓ test/cart.test.ts > cart > syncs remotely
 ✓ test/cart.test.ts > cart > checkout > charges 10 for 1 0ms
 ✓ test/cart.test.ts > cart > checkout > charges 30 for 3 0ms
 ↓ test/cart.test.ts > inventory > counts stock
 ↓ test/cart.test.ts > inventory > reserves stock
 ✓ test/price.test.ts > formats price 1ms
 × test/price.test.ts > waits for rates 101ms
   → Test timed out in 100ms.
If this is a long-running test, pass a timeout value as the last argument or configure it globally with "testTimeout".

"""
    report = parse_vitest(_run(_project(tmp_path), "npx vitest run --reporter=verbose", stdout=stdout + SUMMARY,
                               stderr=FAILED_SUITES + FAILED_TESTS))
    _assert_full_run(report)


def test_v1_failure_lines_and_unlisted_passes(tmp_path: Path) -> None:
    stdout = """
 RUN  v1.6.0 /home/dev/shop

 ❯ test/cart.test.ts  (10 tests | 2 failed | 4 skipped) 12ms
   ❯ test/cart.test.ts > cart > removes items
     → expected 2 to be 1 // Object.is equality
   ❯ test/cart.test.ts > cart > rounds totals
     → Expect test to fail
 ❯ test/price.test.ts  (2 tests | 1 failed) 104ms
   ❯ test/price.test.ts > waits for rates
     → Test timed out in 100ms.

"""
    report = parse_vitest(_run(_project(tmp_path), stdout=stdout + SUMMARY, stderr=FAILED_SUITES + FAILED_TESTS))
    # unlisted tests come from the sources: the failed suite's tests as skipped
    _assert_full_run(report)
    assert by_id(report)["cart > rounds totals"].message == "Error: Expect test to fail"


def test_dot_reporter_names_only_failures(tmp_path: Path) -> None:
    root = _project(tmp_path, {"test/util.test.ts": "import { it } from 'vitest'\nit('trims', () => {})\n"})
    stdout = "\n RUN  v4.0.3 /home/dev/shop\n\n·x·\n\n"
    stderr = """
⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/price.test.ts > waits for rates
Error: Test timed out in 100ms.
 ❯ test/price.test.ts:4:1

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯
"""
    summary = " Test Files  1 failed | 1 passed (2)\n      Tests  1 failed | 2 passed (3)\n"
    report = parse_vitest(_run(root, "npx vitest run --reporter=dot test/price test/util",
                               stdout=stdout + summary, stderr=stderr))
    assert {t.id: t.status for t in report.tests} == {
        "waits for rates": Status.FAILED, "formats price": Status.PASSED, "trims": Status.PASSED}
    assert report.warnings == []


def test_file_that_fails_to_load(tmp_path: Path) -> None:
    root = _project(tmp_path, {"test/solver.test.ts": "import { it } from 'vitest'\nit('solves', () => {\n"})
    stdout = """
 RUN  v4.0.3 /home/dev/shop

 ❯ test/solver.test.ts (0 test)
 ✓ test/price.test.ts (2 tests) 3ms

 Test Files  1 failed | 1 passed (2)
      Tests  2 passed (2)
"""
    stderr = """
⎯⎯⎯⎯⎯⎯ Failed Suites 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/solver.test.ts [ test/solver.test.ts ]
Error: Transform failed with 1 error:
/home/dev/shop/test/solver.test.ts:3:0: ERROR: Unexpected end of file
 ❯ failureErrorWithLog node_modules/esbuild/lib/main.js:1472:15

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯
"""
    report = parse_vitest(_run(root, stdout=stdout, stderr=stderr))
    tests = by_id(report)
    solver = tests["test/solver.test.ts"]
    assert (solver.status, solver.line) == (Status.ERRORED, 3)
    assert "Transform failed" in solver.message
    assert report.build_error
    assert tests["waits for rates"].status == Status.PASSED


def test_killed_run(tmp_path: Path) -> None:
    stdout = "\n RUN  v4.0.3 /home/dev/shop\n\n ✓ test/price.test.ts > formats price 1ms\n"
    report = parse_vitest(_run(_project(tmp_path), "timeout -s KILL 10 npx vitest run --reporter=verbose",
                               stdout=stdout, code=137))
    assert report.timed_out and by_id(report)["formats price"].status == Status.PASSED


# --------------------------------------------------------------------------- JSON


def _assertion(ancestors, title, status, messages=()):
    return {"ancestorTitles": list(ancestors), "fullName": " ".join([*ancestors, title]), "status": status,
            "title": title, "failureMessages": list(messages), "meta": {}}


JSON_REPORT = {
    "numTotalTests": 12, "success": False,
    "testResults": [
        {"name": "<ROOT>/test/cart.test.ts", "status": "failed", "message": "", "assertionResults": [
            _assertion(["cart"], "adds items", "passed"),
            _assertion(["cart"], "removes items", "failed", [
                "AssertionError: expected 2 to be 1 // Object.is equality\n    at <ROOT>/test/cart.test.ts:5:40"]),
            _assertion(["cart"], "applies coupon twice (known bug)", "passed"),
            _assertion(["cart"], "rounds totals", "failed", ["Error: Expect test to fail\n    at runTest (x.js:1:1)"]),
            _assertion(["cart"], "supports gift cards", "todo"),
            _assertion(["cart"], "syncs remotely", "skipped"),
            _assertion(["cart", "checkout"], "charges 10 for 1", "passed"),
            _assertion(["cart", "checkout"], "charges 30 for 3", "passed"),
            _assertion(["inventory"], "counts stock", "skipped"),
            _assertion(["inventory"], "reserves stock", "skipped"),
        ]},
        {"name": "<ROOT>/test/price.test.ts", "status": "failed", "message": "", "assertionResults": [
            _assertion([], "formats price", "passed"),
            _assertion([], "waits for rates", "failed",
                       ["Error: STACK_TRACE_ERROR\n    at task (file://<ROOT>/node_modules/@vitest/runner/x.js:1:1)"]),
        ]},
    ],
}


def test_json_report_file_and_its_gaps(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "out").mkdir()
    (root / "out/v.json").write_text(json.dumps(JSON_REPORT))
    report = parse_vitest(_run(root, "npx vitest run --reporter=json --outputFile=out/v.json",
                               stdout="JSON report written to /home/dev/shop/out/v.json\n"))
    _assert_full_run(report)
    assert report.sources == ["json:out/v.json"]
    # the JSON reporter drops the beforeAll error: inferred from the skipped suite
    assert "beforeAll" in by_id(report)["inventory"].message


def test_json_on_stdout_and_announced_path(tmp_path: Path) -> None:
    root = _project(tmp_path)
    stdout = "stdout | test/price.test.ts > formats price\nhello\n\n" + json.dumps(JSON_REPORT) + "\n"
    report = parse_vitest(_run(root, "npx vitest run --reporter=json", stdout=stdout))
    assert report.sources == ["json:stdout"] and len(report.tests) == 13
    (root / "elsewhere.json").write_text(json.dumps(JSON_REPORT))
    report = parse_vitest(_run(root, "npx vitest run", stdout="JSON report written to <ROOT>/elsewhere.json\n"))
    assert report.sources == ["json:<ROOT>/elsewhere.json"] and len(report.tests) == 13


def test_json_with_console_takes_suite_errors_from_console(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "v.json").write_text(json.dumps(JSON_REPORT))
    report = parse_vitest(_run(root, "npx vitest run --reporter=default --reporter=json --outputFile.json=v.json",
                               stdout=DEFAULT_V4 + SUMMARY, stderr=FAILED_SUITES + FAILED_TESTS))
    _assert_full_run(report)
    assert by_id(report)["inventory"].message == "Error: db down"


def test_json_file_load_error(tmp_path: Path) -> None:
    root = _project(tmp_path, {"test/solver.test.ts": "it('x'"})
    data = {"testResults": [{"name": "<ROOT>/test/solver.test.ts", "status": "failed", "assertionResults": [],
                             "message": "Failed to parse source for import analysis\n"
                                        "  File: <ROOT>/test/solver.test.ts:1:6"}]}
    (root / "v.json").write_text(json.dumps(data))
    report = parse_vitest(_run(root, "npx vitest --run --reporter json --outputFile v.json"))
    assert [(t.id, t.status, t.line) for t in report.tests] == [("test/solver.test.ts", Status.ERRORED, 1)]
    assert report.build_error


@pytest.mark.parametrize("content", [None, '{"testResults": [{"name": "<ROOT>/test/cart.test.ts", "assert'])
def test_json_missing_or_truncated_falls_back(tmp_path: Path, content: str | None) -> None:
    root = _project(tmp_path)
    if content is not None:
        (root / "v.json").write_text(content)
    report = parse_vitest(_run(root, "npx vitest run --reporter=json --reporter=default --outputFile.json=v.json",
                               stdout=DEFAULT_V4 + SUMMARY, stderr=FAILED_SUITES + FAILED_TESTS))
    assert report.sources == ["console"] and any("v.json" in w for w in report.warnings)
    assert report.totals.failed == 3


# --------------------------------------------------------------------------- JUnit


JUNIT = """<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="14" failures="5" errors="0" time="0.2">
    <testsuite name="test/cart.test.ts" tests="11" failures="3" errors="0" skipped="4" time="0.01">
        <testcase classname="test/cart.test.ts" name="cart &gt; adds items" time="0.001"></testcase>
        <testcase classname="test/cart.test.ts" name="cart &gt; removes items" time="0.002">
            <failure message="expected 2 to be 1 // Object.is equality" type="AssertionError">
AssertionError: expected 2 to be 1 // Object.is equality
 ❯ test/cart.test.ts:5:40
            </failure>
        </testcase>
        <testcase classname="test/cart.test.ts" name="cart &gt; applies coupon twice (known bug)" time="0"></testcase>
        <testcase classname="test/cart.test.ts" name="cart &gt; rounds totals" time="0">
            <failure message="Expect test to fail" type="Error">Error: Expect test to fail</failure>
        </testcase>
        <testcase classname="test/cart.test.ts" name="cart &gt; supports gift cards" time="0"><skipped/></testcase>
        <testcase classname="test/cart.test.ts" name="cart &gt; syncs remotely" time="0"><skipped/></testcase>
        <testcase classname="test/cart.test.ts" name="cart &gt; checkout &gt; charges 10 for 1" time="0"></testcase>
        <testcase classname="test/cart.test.ts" name="cart &gt; checkout &gt; charges 30 for 3" time="0"></testcase>
        <testcase classname="test/cart.test.ts" name="inventory &gt; counts stock" time="0"><skipped/></testcase>
        <testcase classname="test/cart.test.ts" name="inventory &gt; reserves stock" time="0"><skipped/></testcase>
        <testcase classname="test/cart.test.ts" name="inventory" time="0.001">
            <failure message="db down" type="Error">Error: db down
 ❯ test/cart.test.ts:19:27</failure>
        </testcase>
    </testsuite>
    <testsuite name="test/price.test.ts" tests="2" failures="1" errors="0" skipped="0" time="0.1">
        <testcase classname="test/price.test.ts" name="formats price" time="0.001"></testcase>
        <testcase classname="test/price.test.ts" name="waits for rates" time="0.1">
            <failure message="Test timed out in 100ms." type="Error">Error: Test timed out in 100ms.
 ❯ test/price.test.ts:4:1</failure>
        </testcase>
    </testsuite>
    <testsuite name="test/solver.test.ts" tests="1" failures="1" errors="0" skipped="0" time="0">
        <testcase classname="test/solver.test.ts" name="test/solver.test.ts" time="0">
            <failure message="Unexpected end of file" type="SyntaxError">SyntaxError: Unexpected end of file
 ❯ test/solver.test.ts:2:21</failure>
        </testcase>
    </testsuite>
</testsuites>
"""


def test_junit_report(tmp_path: Path) -> None:
    root = _project(tmp_path, {"test/solver.test.ts": "import { it } from 'vitest'\nit('solves', () => {\n"})
    (root / "reports").mkdir()
    (root / "reports/junit.xml").write_text(JUNIT)
    report = parse_vitest(_run(root, "npx vitest run --reporter=junit --outputFile=reports/junit.xml",
                               stdout="JUNIT report written to /home/dev/shop/reports/junit.xml\n"))
    tests = by_id(report)
    assert set(tests) == ALL_IDS | {"test/solver.test.ts"}
    assert tests["inventory"].status == Status.ERRORED and tests["inventory"].line == 18
    assert tests["cart > applies coupon twice (known bug)"].status == Status.XFAILED
    assert tests["cart > supports gift cards"].native_status == "todo"
    assert tests["waits for rates"].timed_out
    assert (tests["test/solver.test.ts"].status, tests["test/solver.test.ts"].line) == (Status.ERRORED, 2)
    assert report.build_error and report.sources == ["junit-xml:reports/junit.xml"]


# `vitest run --reporter=junit` without --outputFile (vitest 4.1): the document is printed on stdout
JUNIT_STDOUT = """<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="3" failures="1" errors="0" time="0.023349519">
    <testsuite name="test/cart.test.js" timestamp="2026-11-27T05:14:43.227Z" hostname="vm" tests="3" failures="1" errors="0" skipped="1" time="0.023349519">
        <testcase classname="test/cart.test.js" name="cart &gt; adds" time="0.004606926">
        </testcase>
        <testcase classname="test/cart.test.js" name="cart &gt; totals" time="0.01347759">
            <failure message="expected 2 to be 3 // Object.is equality" type="AssertionError">
AssertionError: expected 2 to be 3 // Object.is equality

- Expected
+ Received

- 3
+ 2

 ❯ test/cart.test.js:4:36
            </failure>
        </testcase>
        <testcase classname="test/cart.test.js" name="cart &gt; later" time="0">
            <skipped/>
        </testcase>
    </testsuite>
</testsuites>
"""


@pytest.mark.parametrize("framework", ["vitest", None])
def test_junit_printed_on_stdout(tmp_path: Path, framework: str | None) -> None:
    root = write_files(tmp_path / "cart", {"test/cart.test.js": (
        "import { describe, test, expect } from 'vitest';\ndescribe('cart', () => {\n"
        "  test('adds', () => { expect(1).toBe(1); });\n  test('totals', () => { expect(2).toBe(3); });\n"
        "  test.skip('later', () => {});\n});\n")})
    report = parse(_run(root, "npx vitest run --reporter=junit", stdout=JUNIT_STDOUT), framework)
    assert report.framework == "vitest"
    assert {t.id: t.status for t in report.tests} == {
        "cart > adds": Status.PASSED, "cart > totals": Status.FAILED, "cart > later": Status.SKIPPED}
    assert by_id(report)["cart > totals"].line == 4
    assert report.sources == ["junit-xml:stdout"] and not report.warnings


def test_junit_truncated_keeps_cases_read(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "j.xml").write_text(JUNIT[:1200])
    report = parse_vitest(_run(root, "npx vitest run --reporter=junit --outputFile j.xml"))
    assert "cart > removes items" in by_id(report)
    assert any("truncated" in w for w in report.warnings)


# --------------------------------------------------------------------------- TAP


TAP = """TAP version 13
1..2
not ok 1 - test/cart.test.ts # time=12.00ms {
    1..2
    not ok 1 - cart # time=5.00ms {
        1..7
        ok 1 - adds items # time=1.00ms
        not ok 2 - removes items # time=2.00ms
            ---
            error:
                name: "AssertionError"
                message: "expected 2 to be 1 // Object.is equality"
            at: "test/cart.test.ts:5:40"
            actual: "2"
            expected: "1"
            ...
        ok 3 - applies coupon twice (known bug) # time=0.00ms
        not ok 4 - rounds totals # time=0.00ms
            ---
            error:
                name: "Error"
                message: "Expect test to fail"
            ...
        ok 5 - supports gift cards # TODO
        ok 6 - syncs remotely # SKIP
        ok 7 - checkout # time=0.50ms {
            1..2
            ok 1 - charges 10 for 1 # time=0.10ms
            ok 2 - charges 30 for 3 # time=0.10ms
        }
    }
    not ok 2 - inventory # time=1.00ms {
        1..2
        ok 1 - counts stock # SKIP
        ok 2 - reserves stock # SKIP
    }
}
not ok 2 - test/price.test.ts # time=104.00ms {
    1..2
    ok 1 - formats price # time=1.00ms
    not ok 2 - waits for rates # time=101.00ms
        ---
        error:
            name: "Error"
            message: "Test timed out in 100ms. If this is a long-running test, pass a timeout value."
        at: "test/price.test.ts:4:1"
        ...
}
"""


def test_tap_reporter(tmp_path: Path) -> None:
    report = parse_vitest(_run(_project(tmp_path), "npx vitest run --reporter=tap", stdout=TAP))
    _assert_full_run(report)
    tests = by_id(report)
    assert tests["cart > removes items"].message == "AssertionError: expected 2 to be 1 // Object.is equality"
    assert report.sources == ["tap"]


def test_tap_flat_reporter(tmp_path: Path) -> None:
    flat = """TAP version 13
1..4
ok 1 - test/cart.test.ts > cart > adds items # time=1.00ms
not ok 2 - test/cart.test.ts > cart > removes items # time=2.00ms
    ---
    error:
        name: "AssertionError"
        message: "expected 2 to be 1"
    at: "test/cart.test.ts:5:40"
    ...
ok 3 - test/cart.test.ts > cart > checkout > charges 10 for 1 # time=0.10ms
ok 4 - test/cart.test.ts > cart > applies coupon twice (known bug) # time=0.10ms
"""
    report = parse_vitest(_run(_project(tmp_path), "npx vitest run --reporter=tap-flat", stdout=flat))
    assert {t.id: t.status for t in report.tests} == {
        "cart > adds items": Status.PASSED, "cart > removes items": Status.FAILED,
        "cart > checkout > charges 10 for 1": Status.PASSED,
        "cart > applies coupon twice (known bug)": Status.XFAILED}
    assert by_id(report)["cart > removes items"].line == 5


# --------------------------------------------------------------------------- bad input, detection, titles


@pytest.mark.parametrize("stdout", ["", "\x00\xff" * 100, " ❯ \n ✓ \n⎯⎯ Failed Tests 1 ⎯⎯\n FAIL  \n"])
def test_bad_input_does_not_crash(tmp_path: Path, stdout: str) -> None:
    report = parse_vitest(_run(tmp_path, stdout=stdout))
    assert report.warnings


@pytest.mark.parametrize("command", [
    "npx vitest run", "NO_COLOR=1 npx vitest run -t x", "yarn vitest --run", "pnpm vitest run src",
    "node_modules/.bin/vitest run --reporter=junit", "vitest",
])
def test_command_detection(command: str) -> None:
    found = from_command(command)
    assert found is not None and found.framework == "vitest"


def test_output_detection() -> None:
    found = from_output(RunOutput(stdout_text=DEFAULT_V4 + SUMMARY, stderr_text=FAILED_TESTS))
    assert found is not None and found.framework == "vitest"


@pytest.mark.parametrize(("template", "row", "expected"), [
    ("trace(%j) = %i", [[[1, 2], [3, 4]], 5], "trace([[1,2],[3,4]]) = 5"),
    ("%s + %s", [[1, 2], "x"], "[ 1, 2 ] + x"),
    ("$name has $items.length items", [{"name": "box", "items": [1, 2]}], "'box' has 2 items"),
    ("case %# (%$) $0", ["a", "b"], "case 1 (2) 'a'"),
    ("%d%%", [12], "12%"),
    ("%p stays", [1], "%p stays"),
])
def test_vitest_each_titles(template: str, row: list, expected: str) -> None:
    assert format_title(template, row, 1, "vitest") == expected


def test_default_reporter_indents_by_depth_and_tree_names_suites(tmp_path: Path) -> None:
    root = _project(tmp_path, {"test/zones.test.ts": """import { describe, it } from 'vitest'
describe('eu', () => {
  it('rounds', () => {})
  describe('vat', () => { it('rounds', () => {}) })
})
it('rounds', () => {})
"""})
    default = """
 ❯ test/zones.test.ts (3 tests | 1 failed) 4ms
     ✓ rounds 1ms
       × rounds 1ms
   ✓ rounds 0ms
"""
    tree = """
 ❯ test/zones.test.ts (3 tests | 1 failed) 4ms
   ❯ eu (2)
     ✓ rounds 1ms
     ❯ vat (1)
       × rounds 1ms
   ✓ rounds 0ms
"""
    for stdout in (default, tree):
        report = parse_vitest(_run(root, stdout=stdout))
        assert {t.id: (t.status, t.line) for t in report.tests} == {
            "eu > rounds": (Status.PASSED, 3), "eu > vat > rounds": (Status.FAILED, 4), "rounds": (Status.PASSED, 6)}


def test_tap_message_broken_by_a_raw_newline(tmp_path: Path) -> None:
    tap = """TAP version 13
1..1
not ok 1 - test/price.test.ts # time=104.00ms {
    1..2
    ok 1 - formats price # time=1.00ms
    not ok 2 - waits for rates # time=101.00ms
        ---
        error:
            name: "Error"
            message: "Test timed out in 100ms.
If this is a long-running test, pass a timeout value as the last argument."
        at: "/home/dev/shop/test/price.test.ts:4:1"
        ...
}
"""
    report = parse_vitest(_run(_project(tmp_path), "npx vitest run --reporter=tap", stdout=tap))
    slow = by_id(report)["waits for rates"]
    assert slow.status == Status.FAILED and slow.timed_out
    assert slow.message.startswith("Error: Test timed out in 100ms.")


def test_junit_names_a_nested_failed_suite_by_its_own_title(tmp_path: Path) -> None:
    root = _project(tmp_path, {"test/nest.test.ts": """import { describe, it, beforeAll } from 'vitest'
describe('outer', () => {
  describe('inner', () => {
    beforeAll(() => { throw new Error('no db') })
    it('a', () => {})
  })
})
"""})
    xml = """<testsuites><testsuite name="test/nest.test.ts">
<testcase classname="test/nest.test.ts" name="outer &gt; inner &gt; a" time="0"><skipped/></testcase>
<testcase classname="test/nest.test.ts" name="inner" time="0"><failure message="no db" type="Error">Error: no db
 ❯ test/nest.test.ts:4:29</failure></testcase>
</testsuite></testsuites>"""
    (root / "j.xml").write_text(xml)
    report = parse_vitest(_run(root, "npx vitest run --reporter=junit --outputFile=j.xml"))
    tests = by_id(report)
    assert (tests["outer > inner"].status, tests["outer > inner"].line) == (Status.ERRORED, 3)
    assert tests["outer > inner > a"].status == Status.SKIPPED


def test_options_written_in_the_package_script(tmp_path: Path) -> None:
    root = _project(tmp_path, {"package.json": json.dumps(
        {"scripts": {"test": "vitest run --reporter=json --outputFile=out/v.json"}})})
    (root / "out").mkdir()
    (root / "out/v.json").write_text(json.dumps(JSON_REPORT))
    report = parse_vitest(_run(root, "npm test"))
    assert report.sources == ["json:out/v.json"] and len(report.tests) == 13
