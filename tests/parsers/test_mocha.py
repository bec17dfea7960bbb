"""The Mocha parser on synthetic outputs written from Mocha's reporter
formats (spec, list, dot, min, tap, json, json-stream, xunit), with a small
spec project in tmp_path for file/line lookup and for the reporters that
name only failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.parsers import mocha, parse
from greenloop.parsers.models import Status
from greenloop.parsers.run_output import RunOutput
from greenloop.parsers.source import js_tests
from tests.parsers.helpers import statuses

SPEC = """\
const assert = require('assert');

describe('Invoice', function () {
  before(function () { this.db = connect(); });

  it('totals lines', function () {
    assert.equal(1, 1);
  });

  it('applies tax', function () {
    assert.equal(total(), 12);
  });

  it.skip('prints pdf', function () {});

  describe('rounding', function () {
    [
      ['half up', 0.5, 1],
      ['half down', 0.4, 0],
    ].forEach(([label, input, want]) => {
      it(`rounds ${label}`, function () {
        assert.equal(round(input), want);
      });
    });
  });

  it('waits for the ledger', async function () {
    this.timeout(50);
    await ledger();
  });
});

describe('Refunds', function () {
  beforeEach(function () {
    throw new Error('no refunds api');
  });

  it('refunds fully', function () {});
  it('refunds partly', function () {});
});

describe('Currency', function () {
  before(function () {
    throw new Error('rates service down');
  });
  it('converts EUR', function () {});
});
"""

SPEC_OUTPUT = """

  Invoice
    ✔ totals lines
    1) applies tax
    - prints pdf
    2) waits for the ledger
debug: ledger call
    rounding
      ✔ rounds half up (61ms)
      3) rounds half down

  Refunds
    4) "before each" hook for "refunds fully"

  Currency
    5) "before all" hook for "converts EUR"


  2 passing (80ms)
  1 pending
  5 failing

  1) Invoice
       applies tax:

      AssertionError [ERR_ASSERTION]: 11 == 12
      + expected - actual

      -11
      +12
      
      at Context.<anonymous> (test/invoice.spec.js:11:12)

  2) Invoice
       waits for the ledger:
     Error: Timeout of 50ms exceeded. For async tests and hooks, ensure "done()" is called; if returning a Promise, ensure it resolves. (/abs/test/invoice.spec.js)
      at listOnTimeout (node:internal/timers:581:17)

  3) Invoice
       rounding
         rounds half down:
     AssertionError [ERR_ASSERTION]: 1 == 0
      at Context.<anonymous> (test/invoice.spec.js:22:16)

  4) Refunds
       "before each" hook for "refunds fully":
     Error: no refunds api
      at Context.<anonymous> (test/invoice.spec.js:36:11)

  5) Currency
       "before all" hook for "converts EUR":
     Error: rates service down
      at Context.<anonymous> (test/invoice.spec.js:45:11)
"""

EXPECTED = {
    "Invoice totals lines": (Status.PASSED, 6),
    "Invoice applies tax": (Status.FAILED, 10),
    "Invoice prints pdf": (Status.SKIPPED, 14),
    "Invoice rounding rounds half up": (Status.PASSED, 21),
    "Invoice rounding rounds half down": (Status.FAILED, 21),
    "Invoice waits for the ledger": (Status.FAILED, 27),
    'Refunds "before each" hook for "refunds fully"': (Status.ERRORED, 34),
    'Currency "before all" hook for "converts EUR"': (Status.ERRORED, 43),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "invoice.spec.js").write_text(SPEC, encoding="utf-8")
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "mocha --reporter dot"}}))
    return tmp_path


def run(project: Path, command: str, stdout: str = "", stderr: str = "", exit_code: int = 5) -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=project)


def test_spec_reporter_nested_suites_hooks_and_timeout(project: Path) -> None:
    report = mocha.parse(run(project, "npx mocha", SPEC_OUTPUT))
    assert statuses(report) == EXPECTED
    by_id = {t.id: t for t in report.tests}
    assert all(t.file == "test/invoice.spec.js" for t in report.tests)
    assert "11 == 12" in (by_id["Invoice applies tax"].message or "")
    assert "+ expected - actual" not in (by_id["Invoice applies tax"].message or "")
    ledger = by_id["Invoice waits for the ledger"]
    assert ledger.timed_out and report.timed_out
    assert by_id['Currency "before all" hook for "converts EUR"'].message == "Error: rates service down"
    assert by_id["Invoice prints pdf"].native_status == "pending"
    assert by_id["Invoice rounding rounds half up"].duration_s == pytest.approx(0.061)
    assert report.warnings == []


def test_console_lines_are_not_taken_for_suites(project: Path) -> None:
    noisy = SPEC_OUTPUT.replace("debug: ledger call", "  noise from a test")
    report = mocha.parse(run(project, "npx mocha", noisy))
    assert "Invoice rounding rounds half up" in statuses(report)


def test_dot_reporter_rebuilds_passing_and_pending_tests_from_sources(project: Path) -> None:
    dot = "\n\n  .!,!.!!!\n\n" + SPEC_OUTPUT[SPEC_OUTPUT.index("  2 passing"):]
    report = mocha.parse(run(project, "npx mocha --reporter dot", dot))
    assert statuses(report) == EXPECTED
    assert "sources" in report.sources
    assert report.warnings == []


def test_npm_test_reads_the_reporter_from_the_package_script(project: Path) -> None:
    dot = "  ..\n\n  2 passing (3ms)\n  1 pending\n"
    (project / "test" / "invoice.spec.js").write_text(
        "describe('A', () => { it('x', () => {}); it('y', () => {}); it.skip('z'); });\n")
    report = mocha.parse(run(project, "npm test", dot, exit_code=0))
    assert statuses(report) == {"A x": (Status.PASSED, 1), "A y": (Status.PASSED, 1), "A z": (Status.SKIPPED, 1)}


def test_min_reporter_with_grep_keeps_only_matching_tests(project: Path) -> None:
    out = "\n  1 passing (2ms)\n"
    report = mocha.parse(run(project, "mocha --reporter min --grep 'totals'", out, exit_code=0))
    assert statuses(report) == {"Invoice totals lines": (Status.PASSED, 6)}


def test_count_mismatch_is_a_warning(project: Path) -> None:
    out = "\n  9 passing (2ms)\n"
    report = parse(run(project, "mocha --reporter dot --grep totals", out, exit_code=0), "mocha")
    assert any("the mocha summary counted 9 passed;" in w for w in report.warnings)


def test_list_reporter_full_titles(project: Path) -> None:
    out = (
        "\n    Invoice totals lines: \r  ✔ Invoice totals lines: 1ms\n"
        "  - Invoice prints pdf\n"
        "  1) Invoice applies tax\n\n"
        "  1 passing (5ms)\n  1 pending\n  1 failing\n\n"
        "  1) Invoice\n       applies tax:\n     AssertionError: 11 == 12\n      at x (test/invoice.spec.js:11:12)\n"
    )
    report = mocha.parse(run(project, "mocha --reporter list", out, exit_code=1))
    assert statuses(report) == {
        "Invoice totals lines": (Status.PASSED, 6),
        "Invoice prints pdf": (Status.SKIPPED, 14),
        "Invoice applies tax": (Status.FAILED, 10),
    }


def test_list_reporter_pending_after_test_begin_on_one_line(project: Path) -> None:
    # this.skip() inside a test: the list reporter printed "title: " and then
    # the pending line without a carriage return.
    out = "    Invoice totals lines:   - Invoice totals lines\n\n  0 passing (1ms)\n  1 pending\n"
    report = mocha.parse(run(project, "mocha --reporter list", out, exit_code=0))
    assert statuses(report) == {"Invoice totals lines": (Status.SKIPPED, 6)}


def test_dot_reporter_runtime_skip_is_inferred_from_the_pending_count(project: Path) -> None:
    (project / "test" / "invoice.spec.js").write_text(
        "describe('S', function () {\n"
        "  it('maybe', function () { if (!process.env.DB) this.skip(); });\n"
        "  it('always', function () {});\n"
        "});\n")
    out = "  ,.\n\n  1 passing (2ms)\n  1 pending\n"
    report = mocha.parse(run(project, "mocha --reporter dot", out, exit_code=0))
    assert statuses(report) == {"S maybe": (Status.SKIPPED, 2), "S always": (Status.PASSED, 3)}
    assert report.warnings == []


def test_killed_dot_run_does_not_guess_the_hanging_test(project: Path) -> None:
    report = mocha.parse(run(project, "timeout 5 mocha --reporter dot", "  ..", exit_code=124))
    assert report.tests == [] and report.timed_out
    assert any("does not say which test" in w for w in report.warnings)


def test_tap_reporter_tap12_messages_and_hooks(project: Path) -> None:
    out = (
        "1..3\n"
        "ok 1 Invoice totals lines\n"
        "not ok 2 Invoice applies tax\n"
        "  11 == 12\n"
        "  AssertionError [ERR_ASSERTION]: 11 == 12\n"
        "      at Context.<anonymous> (test/invoice.spec.js:11:12)\n"
        "ok 3 Invoice prints pdf # SKIP -\n"
        "not ok 4 Currency \"before all\" hook for \"converts EUR\"\n"
        "  rates service down\n"
        "  Error: rates service down\n"
        "      at Context.<anonymous> (test/invoice.spec.js:45:11)\n"
        "# tests 3\n# pass 1\n# fail 2\n"
    )
    report = mocha.parse(run(project, "mocha --reporter tap", out, exit_code=2))
    got = statuses(report)
    assert got["Invoice applies tax"] == (Status.FAILED, 10)
    assert got["Invoice prints pdf"] == (Status.SKIPPED, 14)
    assert got['Currency "before all" hook for "converts EUR"'] == (Status.ERRORED, 43)
    by_id = {t.id: t for t in report.tests}
    assert by_id["Invoice applies tax"].message == "AssertionError [ERR_ASSERTION]: 11 == 12"
    assert "at Context" in (by_id["Invoice applies tax"].details or "")


def test_tap13_yaml_messages(project: Path) -> None:
    out = (
        "TAP version 13\n1..1\n"
        "not ok 1 Invoice applies tax\n"
        "  ---\n"
        "    message: |-\n"
        "      11 == 12\n"
        "    stack: |-\n"
        "      AssertionError: 11 == 12\n"
        "          at Context.<anonymous> (test/invoice.spec.js:11:12)\n"
        "  ...\n"
    )
    report = mocha.parse(run(project, "mocha --reporter tap --reporter-option tapVersion=13", out, exit_code=1))
    t = report.tests[0]
    assert (t.id, t.status, t.message, t.line) == ("Invoice applies tax", Status.FAILED, "11 == 12", 10)


def test_reporter_set_out_of_sight_is_recognised_by_its_output(project: Path) -> None:
    # e.g. reporter: 'tap' in a .mocharc.js the parser cannot read
    report = mocha.parse(run(project, "npx mocha", "ok 1 Invoice totals lines\nnot ok 2 Invoice applies tax\n"))
    assert statuses(report) == {"Invoice totals lines": (Status.PASSED, 6), "Invoice applies tax": (Status.FAILED, 10)}
    assert report.sources == ["tap"]


def test_tap_titles_get_their_hashes_back_from_the_sources(project: Path) -> None:
    (project / "test" / "invoice.spec.js").write_text("describe('Order', () => { it('handles #42', () => {}); });\n")
    report = mocha.parse(run(project, "mocha -R tap", "ok 1 Order handles 42\n", exit_code=0))
    assert report.tests[0].id == "Order handles #42"


def json_report() -> dict:
    return {
        "stats": {"passes": 1, "pending": 1, "failures": 2},
        "tests": [
            {"title": "totals lines", "fullTitle": "Invoice totals lines", "file": "/x/test/invoice.spec.js",
             "duration": 2, "err": {}},
            {"title": "applies tax", "fullTitle": "Invoice applies tax", "file": "/x/test/invoice.spec.js",
             "err": {"message": "11 == 12", "stack": "AssertionError: 11 == 12\n    at x (test/invoice.spec.js:11:1)"}},
            {"title": "prints pdf", "fullTitle": "Invoice prints pdf", "file": "/x/test/invoice.spec.js", "err": {}},
        ],
        "pending": [{"title": "prints pdf", "fullTitle": "Invoice prints pdf", "err": {}}],
        "failures": [
            {"title": "applies tax", "fullTitle": "Invoice applies tax",
             "err": {"message": "11 == 12", "stack": "AssertionError: 11 == 12"}},
            {"title": '"before all" hook for "converts EUR"',
             "fullTitle": 'Currency "before all" hook for "converts EUR"',
             "err": {"message": "rates service down", "stack": "Error: rates service down"}},
        ],
        "passes": [{"title": "totals lines", "fullTitle": "Invoice totals lines", "err": {}}],
    }


def test_json_on_stdout_after_console_output(project: Path) -> None:
    out = "debug {\nline from a test\n" + json.dumps(json_report(), indent=2) + "\n"
    report = mocha.parse(run(project, "mocha --reporter json", out, exit_code=2))
    assert statuses(report) == {
        "Invoice totals lines": (Status.PASSED, 6),
        "Invoice applies tax": (Status.FAILED, 10),
        "Invoice prints pdf": (Status.SKIPPED, 14),
        'Currency "before all" hook for "converts EUR"': (Status.ERRORED, 43),
    }
    assert report.sources == ["json:stdout"]
    assert report.tests[0].duration_s == pytest.approx(0.002)
    assert report.warnings == []


def test_truncated_json_falls_back_with_a_warning(project: Path) -> None:
    out = json.dumps(json_report(), indent=2)[:300]
    report = mocha.parse(run(project, "mocha --reporter json", out, exit_code=2))
    assert any("JSON" in w for w in report.warnings)


def test_json_report_file_via_reporter_option(project: Path) -> None:
    (project / "out").mkdir()
    (project / "out" / "mocha.json").write_text(json.dumps(json_report(), indent=2))
    report = mocha.parse(run(project, "mocha --reporter json --reporter-option output=out/mocha.json"))
    assert len(report.tests) == 4 and report.sources == ["json:out/mocha.json"]


def test_json_stream_reporter(project: Path) -> None:
    out = (
        '["start",{"total":2}]\n'
        '["pass",{"title":"totals lines","fullTitle":"Invoice totals lines","duration":1}]\n'
        '["fail",{"title":"applies tax","fullTitle":"Invoice applies tax","err":"11 == 12",'
        '"stack":"AssertionError: 11 == 12"}]\n'
        '["end",{"passes":1,"failures":1}]\n'
    )
    report = mocha.parse(run(project, "mocha --reporter json-stream", out, exit_code=1))
    assert statuses(report) == {"Invoice totals lines": (Status.PASSED, 6), "Invoice applies tax": (Status.FAILED, 10)}
    assert report.tests[1].message == "11 == 12"


XUNIT = """<testsuite name="Mocha Tests" tests="3" failures="0" errors="2" skipped="0" time="0.1">
<testcase classname="Invoice" name="totals lines" file="/x/test/invoice.spec.js" time="0"/>
<testcase classname="Invoice rounding" name="rounds half down" file="/x/test/invoice.spec.js" time="0.002"><failure>1 == 0

      + expected - actual

      -1
      +0
AssertionError [ERR_ASSERTION]: 1 == 0
    at Context.&lt;anonymous&gt; (test/invoice.spec.js:22:16)</failure></testcase>
<testcase classname="Invoice" name="prints pdf" file="/x/test/invoice.spec.js" time="0"><skipped/></testcase>
<testcase classname="Currency" name="&quot;before all&quot; hook for &quot;converts EUR&quot;" time="0"><failure>rates service down
Error: rates service down</failure></testcase>
</testsuite>
"""


def test_xunit_report_file(project: Path) -> None:
    (project / "reports").mkdir()
    (project / "reports" / "x.xml").write_text(XUNIT)
    report = mocha.parse(run(project, "mocha --reporter xunit --reporter-option output=reports/x.xml"))
    assert statuses(report) == {
        "Invoice totals lines": (Status.PASSED, 6),
        "Invoice rounding rounds half down": (Status.FAILED, 21),
        "Invoice prints pdf": (Status.SKIPPED, 14),
        'Currency "before all" hook for "converts EUR"': (Status.ERRORED, 43),
    }
    by_id = {t.id: t for t in report.tests}
    assert by_id["Invoice rounding rounds half down"].message == "AssertionError [ERR_ASSERTION]: 1 == 0"
    assert report.sources == ["xunit:reports/x.xml"]


def test_xunit_to_stdout_after_console_output(project: Path) -> None:
    report = mocha.parse(run(project, "mocha --reporter xunit", "a log line\n" + XUNIT))
    assert len(report.tests) == 4 and report.sources == ["xunit:stdout"]


def test_missing_xunit_file_falls_back_to_the_console(project: Path) -> None:
    report = mocha.parse(run(project, "mocha -R xunit -O output=reports/none.xml", ""))
    assert any("does not exist" in w for w in report.warnings)
    assert report.tests == []


def test_truncated_xunit_file_keeps_what_was_read(project: Path) -> None:
    (project / "r.xml").write_text(XUNIT[:XUNIT.index("<testcase classname=\"Invoice\" name=\"prints")])
    report = mocha.parse(run(project, "mocha --reporter xunit --reporter-option output=r.xml"))
    assert {t.id for t in report.tests} == {"Invoice totals lines", "Invoice rounding rounds half down"}
    assert any("truncated" in w for w in report.warnings)


def test_syntax_error_while_loading_a_spec(project: Path) -> None:
    err = (
        "\n Exception during run: /abs/proj/test/broken.spec.js:7\n\n\n\n"
        "SyntaxError: Unexpected end of input\n"
        "    at wrapSafe (node:internal/modules/cjs/loader:1464:18)\n"
    )
    (project / "test" / "broken.spec.js").write_text("describe('x', () => {\n")
    r = RunOutput(command="npx mocha", exit_code=1, stdout_text="", stderr_text=err, cwd=project,
                  project_root=project)
    report = mocha.parse(r)
    t = report.tests[0]
    # The absolute path is outside this tmp project: the id keeps it as printed.
    assert t.status == Status.ERRORED and t.message == "SyntaxError: Unexpected end of input"
    assert t.line == 7 and report.build_error
    err2 = err.replace("/abs/proj", str(project))
    report = mocha.parse(RunOutput(command="npx mocha", exit_code=1, stderr_text=err2, cwd=project))
    assert (report.tests[0].id, report.tests[0].file, report.tests[0].line) == (
        "test/broken.spec.js", "test/broken.spec.js", 7)


def test_missing_module_load_error_uses_the_require_stack(project: Path) -> None:
    err = (
        " Exception during run: Error: Cannot find module '../lib/gone'\n"
        "Require stack:\n"
        f"- {project}/test/invoice.spec.js\n"
        f"- {project}/node_modules/mocha/lib/nodejs/esm-utils.js\n"
        "    at Module._resolveFilename (node:internal/modules/cjs/loader:1145:15)\n"
        f"    at Object.<anonymous> ({project}/test/invoice.spec.js:1:15)\n"
    )
    report = mocha.parse(run(project, "mocha", "", err, exit_code=1))
    t = report.tests[0]
    assert (t.id, t.status, t.message, t.line) == (
        "test/invoice.spec.js", Status.ERRORED, "Error: Cannot find module '../lib/gone'", 1)
    assert report.build_error


def test_esm_syntax_error_names_the_file(project: Path) -> None:
    err = (f"\n Exception during run: SyntaxError[ @{project}/test/mod.spec.mjs ]: Unexpected reserved word\n"
           "    at ModuleLoader.moduleStrategy (node:internal/modules/esm/translators:152:18)\n")
    report = mocha.parse(run(project, "mocha", "", err, exit_code=1))
    t = report.tests[0]
    assert (t.id, t.status, t.message) == ("test/mod.spec.mjs", Status.ERRORED, "SyntaxError: Unexpected reserved word")
    assert report.build_error


def test_killed_run_marks_the_next_test_as_hanging(project: Path) -> None:
    out = "\n\n  Invoice\n    ✔ totals lines\n    1) applies tax\n    - prints pdf\n"
    report = mocha.parse(run(project, "timeout 10 npx mocha", out, exit_code=124))
    hanging = [t for t in report.tests if t.timed_out]
    # Mocha runs a suite's own tests before its nested suites.
    assert [t.id for t in hanging] == ["Invoice waits for the ledger"]
    assert hanging[0].status == Status.FAILED and report.timed_out


def test_empty_and_garbage_output(project: Path) -> None:
    report = mocha.parse(run(project, "mocha", "", exit_code=0))
    assert report.tests == [] and report.warnings and report.output_tail == ""
    report = mocha.parse(run(project, "mocha", "\x00\xff\ufffd garbage\n  1) \n", exit_code=1))
    assert all(t.id for t in report.tests)


@pytest.mark.parametrize("command,hit", [
    ("mocha", True), ("npx mocha --reporter dot", True), ("./node_modules/.bin/mocha test/", True),
    ("node node_modules/mocha/bin/mocha.js", True), ("nyc mocha", True), ("timeout 30 npx mocha", True),
    ("pytest -k mocha_tests", False), ("echo mocha", False), ("npx mochawesome", False),
])
def test_command_patterns(command: str, hit: bool) -> None:
    assert any(p.search(command) for p in mocha.COMMAND_RE) is hit


def test_scanner_expands_tables_and_knows_pending_calls() -> None:
    src = (
        "const rows = [{ n: 'a' }, { n: 'b' }];\n"
        "describe('T', () => {\n"
        "  for (const { n } of rows) it('row ' + n, () => {});\n"
        "  for (let i = 1; i <= 2; i++) { it(`num ${i}`, () => {}); }\n"
        "  it(`dynamic ${Date.now()}`, () => {});\n"
        "  describe.skip('off', () => { it('inside', () => {}); });\n"
        "  it('no body');\n"
        "});\n"
    )
    nodes = list(js_tests.iter_nodes(js_tests.scan_spec("t.js", src, "mocha")))
    tests = [n for n in nodes if n.kind == "test"]
    assert [n.title for n in tests] == ["row a", "row b", "num 1", "num 2", None, "inside", "no body"]
    assert tests[4].pattern is not None and tests[4].matches("dynamic 1700000000")
    assert [n.skipped for n in tests] == [False, False, False, False, False, True, True]
    assert [n.line for n in tests[:4]] == [3, 3, 4, 4]
