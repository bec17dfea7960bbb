"""Jest parser: console (default and --verbose, coloured or not), --json (to
stdout or --outputFile, with and without locations), jest-junit (paths from
env vars and package.json), suites that fail to run, -t filters, todo,
test.failing, hook errors, timeouts, test.each, and bad input. Also the JS
source scanner every JavaScript parser shares (parsers/source/js_tests.py).

Outputs are written from Jest's documented formats for a small 'ledger'
project, not copied from the corpus."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from greenloop.parsers import parse
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.models import Status, TestReport
from greenloop.parsers.run_output import RunOutput
from greenloop.parsers.source.js import format_title, tokenize
from greenloop.parsers.source.js_tests import collect_tests
from tests.parsers.helpers import by_id, write_files

LEDGER_TEST = """const { Ledger } = require('../src/ledger');

describe('Ledger', () => {
  describe('balance', () => {
    it('starts at zero', () => {
      expect(new Ledger().balance).toBe(0);
    });
    it('adds credits', () => {
      expect(new Ledger().credit(4).balance).toBe(5);
    });
    it.skip('handles overdraft', () => {});
  });

  test.todo('exports to csv');

  test.failing('rounds half even (bug #7)', () => {
    expect(round(2.5)).toBe(2);
  });

  test.each([
    [1, 2, 3],
    [2, 2, 4],
  ])('add(%i, %i) = %i', (a, b, c) => {
    expect(a + b).toBe(c);
  });
});

test('top level works', () => {});
"""

SYNC_TEST = """// it('commented out', () => {})
const re = /it\\('not a test'/;
describe('sync', () => {
  beforeAll(() => { connect(); });

  it('pulls entries', async () => {
    await pull();
  }, 200);

  it("pushes entries", () => {});
});
"""

CONSOLE_DEFAULT = """FAIL __tests__/ledger.test.js
  ● Ledger › balance › adds credits

    expect(received).toBe(expected) // Object.is equality

    Expected: 5
    Received: 4

       7 |     it('adds credits', () => {
    >  8 |       expect(new Ledger().credit(4).balance).toBe(5);
         |                                              ^
       9 |     });

      at Object.toBe (__tests__/ledger.test.js:8:46)

  ● Ledger › add(2, 2) = 4

    expect(received).toBe(expected) // Object.is equality

    Expected: 4
    Received: 5

      at toBe (__tests__/ledger.test.js:23:19)

FAIL __tests__/sync.test.js
  ● sync › pulls entries

    thrown: "Exceeded timeout of 200 ms for a test.
    Add a timeout value to this test to increase the timeout, if this is a long-running test. See https://jestjs.io/docs/api#testname-fn-timeout."

      at test (__tests__/sync.test.js:6:3)

  ● sync › pushes entries

    ReferenceError: connect is not defined

      2 | describe('sync', () => {
    > 3 |   beforeAll(() => { connect(); });
        |                     ^

      at Object.connect (__tests__/sync.test.js:4:21)

Test Suites: 2 failed, 2 total
Tests:       4 failed, 1 skipped, 1 todo, 4 passed, 10 total
Snapshots:   0 total
Time:        1.2 s
Ran all test suites.
"""


def _project(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    root = tmp_path / "proj"
    files = files if files is not None else {"__tests__/ledger.test.js": LEDGER_TEST,
                                             "__tests__/sync.test.js": SYNC_TEST}
    return write_files(root, files)


def parse_jest(run: RunOutput) -> TestReport:
    """The whole parse: jest's parser, then the normalizer (lines through ``jest.locate``)."""
    return parse(run, "jest")


def _run(root: Path, command: str = "npx jest", stderr: str = "", stdout: str = "", code: int = 1) -> RunOutput:
    return RunOutput(command=command, exit_code=code, stdout_text=stdout, stderr_text=stderr, cwd=root)


# --------------------------------------------------------------------------- console


def test_default_console_lists_failures_and_completes_from_sources(tmp_path: Path) -> None:
    report = parse_jest(_run(_project(tmp_path), stderr=CONSOLE_DEFAULT))
    tests = by_id(report)
    assert report.totals.model_dump() == {"passed": 4, "failed": 4, "errored": 0, "skipped": 2,
                                          "xfailed": 0, "xpassed": 0}
    assert report.warnings == []
    failed = tests["Ledger › balance › adds credits"]
    assert failed.status == Status.FAILED
    assert (failed.file, failed.line) == ("__tests__/ledger.test.js", 8)
    assert "Received: 4" in failed.message and "at Object.toBe" not in failed.message
    assert "at Object.toBe" in failed.details
    # test.each rows: the line of the call that carries the title template
    assert tests["Ledger › add(1, 2) = 3"].status == Status.PASSED
    assert tests["Ledger › add(1, 2) = 3"].line == 23
    assert tests["Ledger › add(2, 2) = 4"].line == 23
    # test.failing whose body fails is a pass for Jest
    assert tests["Ledger › rounds half even (bug #7)"].status == Status.PASSED
    assert tests["Ledger › exports to csv"].native_status == "todo"
    assert tests["Ledger › balance › handles overdraft"].native_status == "pending"
    assert tests["top level works"].line == 28
    timeout = tests["sync › pulls entries"]
    assert timeout.timed_out and "Exceeded timeout of 200 ms" in timeout.message
    # a beforeAll error fails the tests of the block, Jest reports them as failures
    assert tests["sync › pushes entries"].status == Status.FAILED
    assert tests["sync › pushes entries"].line == 10
    assert report.timed_out and not report.build_error
    assert report.sources == ["console"]


VERBOSE = """\x1b[0m\x1b[7m\x1b[1m\x1b[31m FAIL \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2m__tests__/\x1b[22m\
\x1b[1mledger.test.js\x1b[22m
  \x1b[32m✓\x1b[39m \x1b[2mtop level works (1 ms)\x1b[22m
  Ledger
    \x1b[32m✓\x1b[39m \x1b[2mrounds half even (bug #7) (2 ms)\x1b[22m
    \x1b[32m✓\x1b[39m \x1b[2madd(1, 2) = 3\x1b[22m
    \x1b[31m✕\x1b[39m \x1b[2madd(2, 2) = 4 (1 ms)\x1b[22m
    \x1b[35m✎\x1b[39m \x1b[2mtodo exports to csv\x1b[22m
    balance
      \x1b[32m✓\x1b[39m \x1b[2mstarts at zero (3 ms)\x1b[22m
      \x1b[31m✕\x1b[39m \x1b[2madds credits\x1b[22m
      \x1b[33m○\x1b[39m \x1b[2mskipped handles overdraft\x1b[22m

\x1b[1m\x1b[31m  \x1b[1m● \x1b[22m\x1b[1mLedger › add(2, 2) = 4\x1b[39m\x1b[22m

    Expected: \x1b[32m4\x1b[39m
    Received: \x1b[31m5\x1b[39m

\x1b[1m\x1b[31m  \x1b[1m● \x1b[22m\x1b[1mLedger › balance › adds credits\x1b[39m\x1b[22m

    Expected: \x1b[32m5\x1b[39m
    Received: \x1b[31m4\x1b[39m

Test Suites: 1 failed, 1 total
Tests:       2 failed, 1 skipped, 1 todo, 4 passed, 8 total
"""


def test_verbose_coloured_tree_gives_nested_ids(tmp_path: Path) -> None:
    root = _project(tmp_path, {"__tests__/ledger.test.js": LEDGER_TEST})
    report = parse_jest(_run(root, "npx jest --verbose --colors __tests__/ledger.test.js", stderr=VERBOSE))
    tests = by_id(report)
    assert set(tests) == {
        "top level works", "Ledger › rounds half even (bug #7)", "Ledger › add(1, 2) = 3", "Ledger › add(2, 2) = 4",
        "Ledger › exports to csv", "Ledger › balance › starts at zero", "Ledger › balance › adds credits",
        "Ledger › balance › handles overdraft"}
    assert tests["Ledger › balance › adds credits"].message.endswith("Received: 4")
    assert tests["Ledger › balance › starts at zero"].line == 5
    assert tests["Ledger › exports to csv"].status == Status.SKIPPED
    assert tests["Ledger › balance › handles overdraft"].status == Status.SKIPPED
    assert report.warnings == []


def test_name_pattern_skips_unselected_tests_and_silent_files(tmp_path: Path) -> None:
    root = _project(tmp_path)
    stderr = """PASS __tests__/ledger.test.js

Test Suites: 1 skipped, 1 passed, 1 of 2 total
Tests:       8 skipped, 2 passed, 10 total
"""
    report = parse_jest(_run(root, "npx jest -t 'add\\('", stderr=stderr, code=0))
    tests = by_id(report)
    assert tests["Ledger › add(1, 2) = 3"].status == Status.PASSED
    assert tests["Ledger › add(2, 2) = 4"].status == Status.PASSED
    assert tests["Ledger › balance › starts at zero"].status == Status.SKIPPED
    # sync.test.js was not printed at all (every test filtered out); the summary vouches for it
    assert tests["sync › pulls entries"].status == Status.SKIPPED
    assert report.totals.skipped == 8 and report.warnings == []


def test_summary_mismatch_is_a_warning(tmp_path: Path) -> None:
    stderr = CONSOLE_DEFAULT.replace("4 passed, 10 total", "5 passed, 11 total")
    report = parse(_run(_project(tmp_path), stderr=stderr), "jest")
    assert any("the jest summary counted 5 passed; the per-test results have 4 passed" in w for w in report.warnings)


def test_suite_that_fails_to_run_is_one_errored_entry(tmp_path: Path) -> None:
    root = _project(tmp_path, {"__tests__/broken.test.js": "describe('x', () => {\n  it('y', () => {\n  };\n});\n"})
    stderr = """FAIL __tests__/broken.test.js
  ● Test suite failed to run

    SyntaxError: <ROOT>/__tests__/broken.test.js: Unexpected token, expected "," (3:3)

      2 |   it('y', () => {
    > 3 |   };
        |   ^

      at constructor (node_modules/@babel/parser/src/parse-error.ts:96:45)

Test Suites: 1 failed, 1 total
Tests:       0 total
"""
    report = parse_jest(_run(root, stderr=stderr))
    assert [(t.id, t.status, t.line) for t in report.tests] == [
        ("__tests__/broken.test.js", Status.ERRORED, 3)]
    assert "Test suite failed to run" in report.tests[0].message
    assert "Unexpected token" in report.tests[0].message
    assert report.build_error


def test_missing_module_suite_error_takes_line_from_stack(tmp_path: Path) -> None:
    root = _project(tmp_path, {"__tests__/a.test.js": "const x = require('nope');\n"})
    stderr = """FAIL __tests__/a.test.js
  ● Test suite failed to run

    Cannot find module 'nope' from '__tests__/a.test.js'

      at Resolver._throwModNotFoundError (node_modules/jest-resolve/build/resolver.js:427:11)
      at Object.<anonymous> (__tests__/a.test.js:1:11)
"""
    report = parse_jest(_run(root, stderr=stderr))
    assert report.tests[0].line == 1 and report.build_error


def test_killed_run_keeps_partial_results(tmp_path: Path) -> None:
    stderr = CONSOLE_DEFAULT.split("FAIL __tests__/sync.test.js")[0]
    report = parse_jest(_run(_project(tmp_path), "timeout 5 npx jest", stderr=stderr, code=124))
    assert report.timed_out
    assert by_id(report)["Ledger › balance › adds credits"].status == Status.FAILED


# --------------------------------------------------------------------------- --json


def _assertion(ancestors, title, status, messages=(), location=None):
    a = {"ancestorTitles": list(ancestors), "title": title, "status": status, "fullName": " ".join([*ancestors, title]),
         "failureMessages": list(messages), "duration": 3, "failing": False}
    if location is not False:
        a["location"] = location
    return a


def _json_report(root_marker: str = "<ROOT>") -> dict:
    return {
        "numTotalTests": 4, "success": False,
        "testResults": [
            {"name": f"{root_marker}/__tests__/sync.test.js", "status": "failed", "message": "",
             "assertionResults": [
                 _assertion(["sync"], "pulls entries", "failed", [
                     'Error: thrown: "Exceeded timeout of 200 ms for a test.\nAdd a timeout value to this test."\n'
                     "    at test (<ROOT>/__tests__/sync.test.js:6:3)"], None),
                 _assertion(["sync"], "pushes entries", "failed", [
                     "ReferenceError: connect is not defined\n"
                     "    at Object.connect (<ROOT>/__tests__/sync.test.js:4:21)"], {"line": 10, "column": 3}),
             ]},
            {"name": f"{root_marker}/__tests__/broken.test.js", "status": "failed", "assertionResults": [],
             "message": "  ● Test suite failed to run\n\n    SyntaxError: <ROOT>/__tests__/broken.test.js: "
                        "Unexpected token (2:5)\n\n      at constructor (node_modules/x.js:1:1)"},
        ],
    }


def test_json_to_stdout_after_npm_banner(tmp_path: Path) -> None:
    root = _project(tmp_path)
    stdout = "\n> ledger@1.0.0 test\n> jest --json\n\n" + json.dumps(_json_report()) + "\n"
    report = parse_jest(_run(root, "npm test -- --json", stdout=stdout, stderr="FAIL __tests__/sync.test.js\n"))
    tests = by_id(report)
    assert report.sources == ["json:stdout"]
    timeout = tests["sync › pulls entries"]
    # no location in the report for a timed-out test: the source gives the line
    assert (timeout.line, timeout.timed_out) == (6, True)
    assert timeout.message.startswith('Error: thrown: "Exceeded timeout of 200 ms')
    assert "at test" not in timeout.message
    assert tests["sync › pushes entries"].line == 10
    broken = tests["__tests__/broken.test.js"]
    assert (broken.status, broken.line) == (Status.ERRORED, 2)
    assert broken.message.startswith("Test suite failed to run")
    assert report.build_error and report.timed_out


def test_json_output_file_with_locations(tmp_path: Path) -> None:
    root = _project(tmp_path)
    data = {"testResults": [{"name": str(root / "__tests__/ledger.test.js"), "status": "passed", "message": "",
                             "assertionResults": [
                                 _assertion(["Ledger"], "exports to csv", "todo", [], {"line": 14, "column": 8}),
                                 _assertion(["Ledger", "balance"], "handles overdraft", "pending", [],
                                            {"line": 11, "column": 8}),
                                 _assertion(["Ledger"], "add(1, 2) = 3", "passed", [], {"line": 23, "column": 5}),
                             ]}]}
    (root / "out").mkdir()
    (root / "out/results.json").write_text(json.dumps(data))
    report = parse_jest(_run(root, "npx jest --json --outputFile=out/results.json --testLocationInResults", code=0))
    tests = by_id(report)
    assert tests["Ledger › exports to csv"].native_status == "todo"
    assert tests["Ledger › balance › handles overdraft"].native_status == "pending"
    assert tests["Ledger › add(1, 2) = 3"].file == "__tests__/ledger.test.js"
    assert report.sources == ["json:out/results.json"]


@pytest.mark.parametrize("content", [None, '{"testResults": [{"name": "x", "assertionRes'])
def test_missing_or_truncated_json_falls_back_to_console(tmp_path: Path, content: str | None) -> None:
    root = _project(tmp_path)
    if content is not None:
        (root / "r.json").write_text(content)
    report = parse_jest(_run(root, "npx jest --json --outputFile r.json", stderr=CONSOLE_DEFAULT))
    assert report.sources == ["console"]
    assert any("r.json" in w for w in report.warnings)
    assert report.totals.failed == 4


# --------------------------------------------------------------------------- jest-junit


def _junit_xml(cases: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="jest tests">\n{cases}\n</testsuites>\n'


JUNIT_CASES = """  <testsuite name="Ledger" tests="8">
    <testcase classname="Ledger balance starts at zero" name="Ledger balance starts at zero" time="0.001"/>
    <testcase classname="Ledger balance adds credits" name="Ledger balance adds credits" time="0.002">
      <failure>Error: expect(received).toBe(expected)

Expected: 5
Received: 4
    at Object.toBe (/work/__tests__/ledger.test.js:8:46)</failure>
    </testcase>
    <testcase classname="Ledger balance handles overdraft" name="Ledger balance handles overdraft" time="0">
      <skipped/>
    </testcase>
    <testcase classname="Ledger exports to csv" name="Ledger exports to csv" time="0">
    </testcase>
    <testcase classname="Ledger rounds half even (bug #7)" name="Ledger rounds half even (bug #7)" time="0"/>
    <testcase classname="Ledger add(1, 2) = 3" name="Ledger add(1, 2) = 3" time="0"/>
    <testcase classname="Ledger add(2, 2) = 4" name="Ledger add(2, 2) = 4" time="0"/>
    <testcase classname=" top level works" name=" top level works" time="0"/>
  </testsuite>"""


def test_jest_junit_only_reporter_ids_come_from_sources(tmp_path: Path) -> None:
    root = _project(tmp_path, {"__tests__/ledger.test.js": LEDGER_TEST})
    (root / "ci").mkdir()
    (root / "ci/ledger.xml").write_text(_junit_xml(JUNIT_CASES))
    report = parse_jest(_run(root, "JEST_JUNIT_OUTPUT_FILE=ci/ledger.xml npx jest --ci --reporters=jest-junit"))
    tests = by_id(report)
    assert report.sources == ["junit-xml:ci/ledger.xml"]
    assert tests["Ledger › balance › adds credits"].status == Status.FAILED
    assert tests["Ledger › balance › adds credits"].message.endswith("Received: 4")
    assert tests["Ledger › balance › adds credits"].line == 8
    # jest-junit writes a todo test as a bare testcase: the source says todo
    assert (tests["Ledger › exports to csv"].status, tests["Ledger › exports to csv"].native_status) == (
        Status.SKIPPED, "todo")
    assert tests["top level works"].file == "__tests__/ledger.test.js"
    assert report.totals.passed == 5 and report.warnings == []


def test_jest_junit_paths_from_env_and_package_json(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "__tests__/ledger.test.js": LEDGER_TEST,
        "package.json": json.dumps({"jest": {"reporters": ["default", "jest-junit"]},
                                    "jest-junit": {"outputDirectory": "<rootDir>/reports", "outputName": "j.xml"}}),
    })
    (root / "reports").mkdir()
    (root / "reports/j.xml").write_text(_junit_xml(JUNIT_CASES))
    report = parse_jest(_run(root, "npx jest"))
    assert report.sources == ["junit-xml:reports/j.xml"]
    (root / "other").mkdir()
    (root / "other/n.xml").write_text(_junit_xml(JUNIT_CASES))
    report = parse_jest(_run(root, "JEST_JUNIT_OUTPUT_DIR=other JEST_JUNIT_OUTPUT_NAME=n.xml npx jest"))
    assert report.sources == ["junit-xml:other/n.xml"]


def test_jest_junit_missing_or_truncated(tmp_path: Path) -> None:
    root = _project(tmp_path)
    report = parse_jest(_run(root, "npx jest --reporters=default --reporters=jest-junit", stderr=CONSOLE_DEFAULT))
    assert report.sources == ["console"] and any("junit.xml" in w for w in report.warnings)
    (root / "junit.xml").write_text(_junit_xml(JUNIT_CASES)[:700])
    report = parse_jest(_run(root, "npx jest --reporters=default --reporters=jest-junit", stderr=CONSOLE_DEFAULT))
    assert any("truncated" in w for w in report.warnings)
    assert by_id(report)["Ledger › balance › starts at zero"].status == Status.PASSED


# --------------------------------------------------------------------------- bad input, detection


@pytest.mark.parametrize("stderr", ["", "\x00\x01garbage\xff" * 50, "FAIL\n  ●\nTests:"])
def test_bad_input_does_not_crash(tmp_path: Path, stderr: str) -> None:
    report = parse_jest(_run(tmp_path, stderr=stderr))
    assert report.tests == [] or all(t.id for t in report.tests)
    assert report.warnings


@pytest.mark.parametrize("command", [
    "npx jest", "yarn jest --ci", "node_modules/.bin/jest __tests__/a.test.js", "pnpm exec jest -t x",
    "JEST_JUNIT_OUTPUT_DIR=r npx jest --reporters=jest-junit", "node --expose-gc node_modules/jest/bin/jest.js",
    "timeout 60 npx jest", "jest",
])
def test_command_detection(command: str) -> None:
    found = from_command(command)
    assert found is not None and found.framework == "jest"


@pytest.mark.parametrize("command", ["npx vitest run", "npx mocha test/jest.test.js", "npm run jest-lint"])
def test_command_not_jest(command: str) -> None:
    found = from_command(command)
    assert found is None or found.framework != "jest"


def test_output_detection() -> None:
    found = from_output(RunOutput(stderr_text=CONSOLE_DEFAULT))
    assert found is not None and found.framework == "jest"


# --------------------------------------------------------------------------- parsers.source.js_tests


def test_scanner_ignores_comments_strings_and_regexes() -> None:
    ft = collect_tests("s.test.js", SYNC_TEST, "jest")
    assert [(t.path, t.title, t.line) for t in ft.tests] == [
        (("sync",), "pulls entries", 6), (("sync",), "pushes entries", 10)]
    assert ft.suites[0].hooks == frozenset({"before all"})


def test_scanner_handles_templates_and_dynamic_titles() -> None:
    src = """describe(`money`, () => {
  for (const c of currencies) {
    it(`formats ${c.code} amounts`, () => {});
  }
  test.each`
    a    | b    | sum
    ${1} | ${2} | ${3}
    ${'x'} | ${'y'} | ${'xy'}
  `('$a + $b = $sum', () => {});
  describe.each([['EUR'], ['USD']])('in %s', (cur) => {
    it('rounds', () => {});
  });
  function test(a, b) { return a; }
});
"""
    ft = collect_tests("m.test.js", src, "jest")
    listable = [(t.path, t.title) for t in ft.tests if t.patterns is None]
    assert listable == [(("money",), "1 + 2 = 3"), (("money",), "x + y = xy"),
                        (("money", "in EUR"), "rounds"), (("money", "in USD"), "rounds")]
    dynamic = [t for t in ft.tests if t.patterns is not None]
    assert len(dynamic) == 1 and dynamic[0].matches(("money",), "formats EUR amounts")
    assert not ft.complete


def test_scanner_survives_garbage() -> None:
    for text in ["it('a', () => {", "describe(((((", "`${`${`", "/[/", "it(" * 1000, "\x00\xff" * 100]:
        collect_tests("g.test.js", text, "jest")
    assert tokenize("a /= 2 / b") and tokenize("x = /re/g.test(y)")[2].kind == "regex"


@pytest.mark.parametrize(("template", "row", "expected"), [
    ("add(%i, %i) = %i", [1.7, 2, 3], "add(1, 2) = 3"),
    ("%s and %s", ["a", [1, [2]]], "a and [ 1, [Array] ]"),
    ("%p is %p", ["x", {"b": 1, "a": [1, [2]]}], '"x" is {"a": [1, [Array]], "b": 1}'),
    ("%d%% of %j", [50, {"k": [1, "v"]}], '50% of {"k":[1,"v"]}'),
    ("row %# (%$): %s", ["z"], "row 3 (4): z"),
    ("$name is $age.years", [{"name": "Ann", "age": {"years": 3}}], "Ann is 3"),
    ("%s", [-0.0], "-0"),
    ("%f", ["1.50abc"], "1.5"),
])
def test_jest_each_titles(template: str, row: list, expected: str) -> None:
    assert format_title(template, row, 3, "jest") == expected


def test_json_after_all_failure_keeps_tests_and_adds_suite_error(tmp_path: Path) -> None:
    root = _project(tmp_path)
    data = {"testResults": [{
        "name": "<ROOT>/__tests__/sync.test.js", "status": "failed",
        "message": "  ● sync › pulls entries\n\n    boom\n\n\n  ● Test suite failed to run\n\n    cleanup failed\n\n"
                   "      at Object.<anonymous> (__tests__/sync.test.js:4:21)",
        "assertionResults": [_assertion(["sync"], "pulls entries", "passed", [], {"line": 6, "column": 3}),
                             _assertion(["sync"], "pushes entries", "passed", [], {"line": 10, "column": 3})]}]}
    (root / "r.json").write_text(json.dumps(data))
    report = parse_jest(_run(root, "npx jest --json --outputFile=r.json"))
    tests = by_id(report)
    assert tests["__tests__/sync.test.js"].status == Status.ERRORED
    assert tests["__tests__/sync.test.js"].message == "Test suite failed to run\ncleanup failed"
    assert tests["sync › pulls entries"].status == Status.PASSED
    assert not report.build_error  # its tests ran: not a load failure


def test_jest_junit_hook_failure_pseudo_case(tmp_path: Path) -> None:
    root = _project(tmp_path)
    stack = html.escape(json.dumps({"message": "", "stack": "Error: cleanup failed\n    at Object.<anonymous> "
                                                          "(/ci/proj/__tests__/sync.test.js:4:21)"}))
    cases = f"""  <testsuite name="sync" tests="3">
    <testcase classname="sync pulls entries" name="sync pulls entries" time="0"/>
    <testcase classname="sync pushes entries" name="sync pushes entries" time="0"/>
    <testcase classname=" Test execution failure: could be caused by test hooks like &apos;afterAll&apos;."
              name=" Test execution failure: could be caused by test hooks like &apos;afterAll&apos;." time="0">
      <failure>{stack}</failure>
    </testcase>
  </testsuite>"""
    (root / "junit.xml").write_text(_junit_xml(cases))
    report = parse_jest(_run(root, "npx jest --reporters=jest-junit"))
    tests = by_id(report)
    assert set(tests) == {"sync › pulls entries", "sync › pushes entries", "__tests__/sync.test.js"}
    errored = tests["__tests__/sync.test.js"]
    assert errored.status == Status.ERRORED and "cleanup failed" in errored.message


def test_scanner_evaluates_each_parameters_loops_and_constants() -> None:
    src = """const CASES = [
  { name: 'pen', cents: 150 },
  { name: 'ink', cents: 90 },
];
describe.each([['EUR', 1], ['USD', 2]])('in %s', (cur, n) => {
  it(`applies rate ${n}`, () => {});
});
for (const [a, b] of [[1, 2], [3, 4]]) {
  test('adds ' + a + ' and ' + b, () => {});
}
['x', 'y'].forEach((letter) => {
  it(`knows ${letter}`, () => {});
});
test.each(CASES)('prices $name', () => {});
CASES.forEach(({ name }) => test(`stocks ${name}`, () => {}));
test.skipIf(true)('skipped literally', () => {});
test.runIf(process.env.CI)('only on CI', () => {});
"""
    ft = collect_tests("c.test.js", src, "jest")
    assert [(t.path, t.title) for t in ft.tests if t.patterns is None] == [
        (("in EUR",), "applies rate 1"), (("in USD",), "applies rate 2"),
        ((), "adds 1 and 2"), ((), "adds 3 and 4"), ((), "knows x"), ((), "knows y"),
        ((), "prices pen"), ((), "prices ink"), ((), "stocks pen"), ((), "stocks ink"),
        ((), "skipped literally"), ((), "only on CI")]
    assert ft.complete
    by_title = {t.title: t for t in ft.tests}
    assert by_title["skipped literally"].skip and not by_title["skipped literally"].conditional
    assert by_title["only on CI"].conditional
    assert by_title["applies rate 2"].line == 6


def test_options_written_in_the_package_script(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "__tests__/ledger.test.js": LEDGER_TEST,
        "package.json": json.dumps({"scripts": {
            "test:ci": "JEST_JUNIT_OUTPUT_DIR=out jest --ci --reporters=default --reporters=jest-junit"}}),
    })
    (root / "out").mkdir()
    (root / "out/junit.xml").write_text(_junit_xml(JUNIT_CASES))
    report = parse_jest(_run(root, "npm run test:ci"))
    assert report.sources == ["junit-xml:out/junit.xml"] and len(report.tests) == 8
