"""pytest parser: console output at every verbosity (progress letters mapped
onto the tests rebuilt from the sources, -v lines, -r short summary, failure
sections, --tb=line/native), collection errors, JUnit XML (xunit1/xunit2),
pytest-json-report, pytest-xdist, killed runs and bad input. Outputs follow
pytest's documented formats for a small 'ledger' project, not the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.parsers import parse
from greenloop.parsers import pytest as pt
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.models import Status
from greenloop.parsers.run_output import RunOutput

ACCOUNTS = '''import pytest


@pytest.fixture
def book():
    return {}


def test_open(book):
    assert book == {}


class TestPosting:
    def test_debit(self):
        assert 1

    @pytest.mark.parametrize("amount,ok", [(5, True), (-1, False), ("x", None)])
    def test_amount(self, amount, ok):
        assert ok

    class TestNested:
        def test_deep(self):
            assert False


@pytest.mark.skip(reason="needs bank api")
def test_sync():
    pass


@pytest.mark.xfail(reason="rounding bug")
def test_rounding():
    assert 0.1 + 0.2 == 0.3


@pytest.mark.xfail(strict=True, reason="not final")
def test_strict():
    pass
'''

RATES = '''import unittest

import pytest


@pytest.mark.parametrize("code", ["eur", "eur", "z\\u00fcr", "x" * 101, b"\\xc3"])
def test_codes(code):
    pass


@pytest.mark.parametrize("a", [1, 2])
@pytest.mark.parametrize("b", ["p", "q"])
def test_grid(a, b):
    pass


@pytest.mark.parametrize("n", [pytest.param(1, id="one"), 2, object()], ids=[None, "two", None])
def test_ids(n):
    pass


class LegacyRates(unittest.TestCase):
    def test_zeta(self):
        pass

    def test_alpha(self):
        pass
'''

CONFTEST = '''import pytest


@pytest.fixture(params=["sqlite", "pg"])
def db(request):
    return request.param
'''

STORE = '''def test_save(db):
    assert db


def test_load():
    pass
'''


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """A project: pytest.ini with testpaths, tests in two folders."""
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (tmp_path / "tests" / "db").mkdir(parents=True)
    (tmp_path / "tests" / "test_accounts.py").write_text(ACCOUNTS)
    (tmp_path / "tests" / "test_rates.py").write_text(RATES)
    (tmp_path / "tests" / "db" / "conftest.py").write_text(CONFTEST)
    (tmp_path / "tests" / "db" / "test_store.py").write_text(STORE)
    return tmp_path


def run(root: Path | None, command: str, stdout: str = "", stderr: str = "", exit_code: int = 1):
    """The whole parse: pytest's parser, then the normalizer (lines through ``pytest.locate``)."""
    out = RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=root)
    return parse(out, "pytest")


def statuses(report) -> dict[str, str]:
    return {t.id: t.status.value for t in report.tests}


A = "tests/test_accounts.py"
ACCOUNT_IDS = [
    f"{A}::test_open", f"{A}::TestPosting::test_debit", f"{A}::TestPosting::test_amount[5-True]",
    f"{A}::TestPosting::test_amount[-1-False]", f"{A}::TestPosting::test_amount[x-None]",
    f"{A}::TestPosting::TestNested::test_deep", f"{A}::test_sync", f"{A}::test_rounding", f"{A}::test_strict",
]
ACCOUNT_LETTERS = "....FFsxF"
ACCOUNT_STATUSES = ["passed"] * 4 + ["failed", "failed", "skipped", "xfailed", "failed"]


# ---------------------------------------------------------------- sources

def test_collection_order_and_parametrize_ids(ledger: Path) -> None:
    src = pt._Sources(pt.SourceIndex(ledger), pt._config(pt.SourceIndex(ledger)))
    tests, bad = src.selected(pt._Options(), {})
    assert not bad
    ids = [t.id for t in tests]
    # tests/db/ sorts before tests/test_*.py; fixture params become ids
    assert ids[:3] == ["tests/db/test_store.py::test_save[sqlite]", "tests/db/test_store.py::test_save[pg]",
                       "tests/db/test_store.py::test_load"]
    assert ids[3:12] == ACCOUNT_IDS
    rates = [i.split("::", 1)[1] for i in ids[12:]]
    assert rates == [
        "test_codes[eur0]", "test_codes[eur1]", "test_codes[z\\xfcr]", "test_codes[code3]", "test_codes[\\xc3]",
        # the decorator nearest the def varies slowest and comes first in the id
        "test_grid[p-1]", "test_grid[p-2]", "test_grid[q-1]", "test_grid[q-2]",
        "test_ids[one]", "test_ids[two]", "test_ids[n2]",
        # unittest classes: methods sorted by name
        "LegacyRates::test_alpha", "LegacyRates::test_zeta",
    ]


def test_markers_and_lines(ledger: Path) -> None:
    src = pt._Sources(pt.SourceIndex(ledger), {})
    sync = src.find(f"{A}::test_sync")
    assert sync is not None and sync.skip == "needs bank api" and sync.line == 27 and sync.start == 26
    strict = src.find(f"{A}::test_strict")
    assert strict is not None and strict.xfail == "not final" and strict.xfail_strict
    # an id with unknown parameters still finds its definition
    found = src.find(f"{A}::TestPosting::test_amount[zzz]")
    assert found is not None and found.line == 18
    assert [t.id for t in src.at(A, 17)] == ACCOUNT_IDS[2:5]


def test_keyword_expression(ledger: Path) -> None:
    src = pt._Sources(pt.SourceIndex(ledger), {})
    tests, _ = src.selected(pt._Options(args=[A], keyword="Posting and not amount"), {})
    assert [t.id for t in tests] == [ACCOUNT_IDS[1], ACCOUNT_IDS[5]]
    tests, _ = src.selected(pt._Options(args=[A], markexpr="xfail"), {})
    assert [t.id for t in tests] == [f"{A}::test_rounding", f"{A}::test_strict"]


# ---------------------------------------------------------------- console

def test_default_progress_maps_letters_onto_sources(ledger: Path) -> None:
    out = (
        "============================= test session starts ==============================\n"
        "collected 9 items\n\n"
        f"{A} {ACCOUNT_LETTERS}                                          [100%]\n\n"
        "=================================== FAILURES ===================================\n"
        "_________________________ TestPosting.test_amount[x-None] _________________________\n\n"
        ">       assert ok\nE       assert None\n\ntests/test_accounts.py:19: AssertionError\n"
        "_________________________ TestPosting.TestNested.test_deep ________________________\n\n"
        ">       assert False\nE       assert False\n\ntests/test_accounts.py:23: AssertionError\n"
        "__________________________________ test_strict ___________________________________\n"
        "[XPASS(strict)] not final\n"
        "=========================== short test summary info ============================\n"
        f"FAILED {A}::TestPosting::test_amount[x-None] - assert None\n"
        f"FAILED {A}::TestPosting::TestNested::test_deep - assert False\n"
        f"FAILED {A}::test_strict - [XPASS(strict)] not final\n"
        "=================== 3 failed, 4 passed, 1 skipped, 1 xfailed in 0.12s ===================\n"
    )
    report = run(ledger, f"python -m pytest {A}", out)
    assert statuses(report) == dict(zip(ACCOUNT_IDS, ACCOUNT_STATUSES))
    strict = report.find(f"{A}::test_strict")
    assert strict.message == "[XPASS(strict)] not final" and strict.line == 37
    assert report.find(ACCOUNT_IDS[4]).message == "assert None"
    assert report.find(f"{A}::test_sync").message == "needs bank api"  # from the marker
    assert report.sources == ["console"] and not report.warnings


def test_wrapped_progress_and_teardown_error(tmp_path: Path) -> None:
    (tmp_path / "test_many.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef res():\n    yield 1\n    raise OSError('close')\n\n"
        "@pytest.mark.parametrize('i', range(100))\ndef test_i(i):\n    pass\n\n"
        "def test_last(res):\n    pass\n")
    out = (
        "collected 101 items\n\n"
        "test_many.py " + "." * 59 + " [ 58%]\n" + "." * 41 + ".E" + " " * 30 + "[100%]\n\n"
        "==================================== ERRORS ====================================\n"
        "_____________________________ ERROR at teardown of test_last _____________________________\n"
        "E       OSError: close\n"
        "=========================== short test summary info ============================\n"
        "ERROR test_many.py::test_last - OSError: close\n"
        "========================= 101 passed, 1 error in 0.30s =========================\n"
    )
    report = run(tmp_path, "pytest", out)
    assert len(report.tests) == 101
    assert report.find("test_many.py::test_i[99]").status == Status.PASSED
    last = report.find("test_many.py::test_last")
    assert last.status == Status.ERRORED and last.message == "OSError: close"
    assert not report.warnings


def test_quiet_progress_uses_testpaths_and_tb_line(ledger: Path) -> None:
    letters = "..." + ACCOUNT_LETTERS + "." * 14
    out = (
        f"{letters}                                                [100%]\n"
        "=================================== FAILURES ===================================\n"
        "E   assert None\n"
        "<ROOT>/tests/test_accounts.py:19: assert None\n"
        "E   AssertionError: assert False\n"
        "      extra detail line\n"
        "<ROOT>/tests/test_accounts.py:23: AssertionError: assert False\n"
        "[XPASS(strict)] not final\n"
        "[XPASS(strict)] not final\n"
        "=========================== short test summary info ============================\n"
        f"FAILED {A}::TestPosting::test_amount[x-None] - assert None\n"
        f"FAILED {A}::TestPosting::TestNested::test_deep - AssertionError: asse...\n"
        f"FAILED {A}::test_strict - [XPASS(strict)] not final\n"
        "3 failed, 20 passed, 1 skipped, 1 xfailed in 0.20s\n"
    )
    report = run(ledger, "pytest -q --tb=line", out)
    assert len(report.tests) == 26
    assert report.find("tests/db/test_store.py::test_save[pg]").status == Status.PASSED
    assert report.find("tests/test_rates.py::LegacyRates::test_zeta").status == Status.PASSED
    deep = report.find(ACCOUNT_IDS[5])
    assert deep.status == Status.FAILED and "extra detail line" in deep.message
    assert report.find(f"{A}::test_strict").message == "[XPASS(strict)] not final"


def test_quiet_letters_that_disagree_are_not_mapped(ledger: Path) -> None:
    # one letter too few for the collected tests: nothing is guessed
    out = "....F\n=========================== short test summary info ============================\n" \
          f"FAILED {A}::test_open - boom\n1 failed, 4 passed in 0.01s\n"
    report = run(ledger, f"pytest -q {A}", out)
    assert statuses(report) == {f"{A}::test_open": "failed"}
    assert report.warnings


def test_verbose_lines_summary_and_sections(ledger: Path) -> None:
    out = (
        "collecting ... collected 4 items\n\n"
        f"{A}::test_open PASSED                                  [ 25%]\n"
        f"{A}::test_sync SKIPPED (needs ba...)                   [ 50%]\n"
        f"{A}::test_rounding XFAIL (rounding bug)                [ 75%]\n"
        f"{A}::TestPosting::test_debit <- tests/base.py XPASS    [ 90%]\n"
        f"{A}::test_strict FAILED                                [100%]\n\n"
        "==================================== ERRORS ====================================\n"
        "=========================== short test summary info ============================\n"
        f"PASSED {A}::test_open\n"
        f"SKIPPED [1] {A}:26: needs bank api\n"
        f"XFAIL {A}::test_rounding - rounding bug\n"
        f"XPASS {A}::TestPosting::test_debit - surprise\n"
        f"FAILED {A}::test_strict - [XPASS(strict)] not final\n"
        "======= 1 failed, 1 passed, 1 skipped, 1 xfailed, 1 xpassed in 0.05s =======\n"
    )
    report = run(ledger, "pytest -rA -v", out)
    assert statuses(report) == {
        f"{A}::test_open": "passed", f"{A}::test_sync": "skipped", f"{A}::test_rounding": "xfailed",
        f"{A}::TestPosting::test_debit": "xpassed", f"{A}::test_strict": "failed"}
    assert report.find(f"{A}::test_sync").message == "needs bank api"
    assert report.find(f"{A}::test_rounding").message == "rounding bug"
    assert report.find(f"{A}::TestPosting::test_debit").line == 14


def test_output_between_verbose_id_and_status(ledger: Path) -> None:
    out = f"{A}::test_open hello from the test\nPASSED                                   [100%]\n" \
          "1 passed in 0.01s\n"
    assert statuses(run(ledger, "pytest -v -s", out, exit_code=0)) == {f"{A}::test_open": "passed"}


def test_same_headline_in_two_files_matched_in_order(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text("def test_x():\n    assert 0\n")
    out = (
        "=================================== FAILURES ===================================\n"
        "____________________________________ test_x ____________________________________\n"
        "E       assert 1 == 2\n"
        "____________________________________ test_x ____________________________________\n"
        "E       assert 3 == 4\n"
        "=========================== short test summary info ============================\n"
        "FAILED test_a.py::test_x - assert 1 == 2\nFAILED test_b.py::test_x - assert 3 == 4\n"
        "2 failed in 0.01s\n"
    )
    report = run(tmp_path, "pytest -q", out)
    assert report.find("test_a.py::test_x").message == "assert 1 == 2"
    assert report.find("test_b.py::test_x").message == "assert 3 == 4"


def test_native_traceback_message(tmp_path: Path) -> None:
    (tmp_path / "test_n.py").write_text("def test_n():\n    raise KeyError('k')\n")
    out = (
        "test_n.py F\n=================================== FAILURES ===================================\n"
        "____________________________________ test_n ____________________________________\n"
        "Traceback (most recent call last):\n  File \"/x/test_n.py\", line 2, in test_n\n"
        "    raise KeyError('k')\nKeyError: 'k'\n"
        "1 failed in 0.01s\n"
    )
    assert run(tmp_path, "pytest --tb=native", out).find("test_n.py::test_n").message == "KeyError: 'k'"


def test_colour_codes_are_ignored(ledger: Path) -> None:
    out = (
        f"\x1b[1m{A}::test_open \x1b[32mPASSED\x1b[0m\x1b[32m    [ 50%]\x1b[0m\n"
        "\x1b[36m\x1b[1m=========================== short test summary info ============================\x1b[0m\n"
        f"\x1b[31mFAILED\x1b[0m {A}::\x1b[1mtest_sync\x1b[0m - boom\n"
    )
    assert statuses(run(ledger, "pytest --color=yes -v", out)) == {f"{A}::test_open": "passed",
                                                                   f"{A}::test_sync": "failed"}


def test_solves_unnamed_results_from_counts_and_markers(ledger: Path) -> None:
    # -q without -rA: only failures are named; skip/xfail markers and the
    # final counts settle the rest
    out = (
        "...........\n=========================== short test summary info ============================\n"
        f"FAILED {A}::TestPosting::test_amount[x-None] - assert None\n"
        f"FAILED {A}::TestPosting::TestNested::test_deep - assert False\n"
        f"FAILED {A}::test_strict - [XPASS(strict)] not final\n"
        "3 failed, 4 passed, 1 skipped, 1 xfailed in 0.20s\n"
    )
    report = run(ledger, f"pytest -q -n 2 {A}", out)
    assert statuses(report) == dict(zip(ACCOUNT_IDS, ACCOUNT_STATUSES))


# ---------------------------------------------------------------- xdist

def test_xdist_verbose_lines_and_skip_summary(ledger: Path) -> None:
    out = (
        "created: 2/2 workers\n2 workers [4 items]\n\n"
        f"[gw1] [ 25%] PASSED {A}::test_open \n"
        f"[gw0] [ 50%] FAILED {A}::test_strict \n"
        f"[gw0] [ 75%] XFAIL {A}::test_rounding \n"
        "=========================== short test summary info ============================\n"
        f"SKIPPED [1] {A}:26: needs bank api\n"
        "1 failed, 1 passed, 1 skipped, 1 xfailed in 0.40s\n"
    )
    report = run(ledger, f"pytest -n 2 -v {A}::test_open {A}::test_strict {A}::test_rounding {A}::test_sync", out)
    assert statuses(report) == {f"{A}::test_open": "passed", f"{A}::test_strict": "failed",
                                f"{A}::test_rounding": "xfailed", f"{A}::test_sync": "skipped"}
    assert report.find(f"{A}::test_sync").message == "needs bank api"


# ---------------------------------------------------------------- collection errors

def test_collection_errors(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_bad.py").write_text("def test_x(:\n")
    out = (
        "collected 3 items / 2 errors\n\n"
        "==================================== ERRORS ====================================\n"
        "___________________ ERROR collecting tests/test_bad.py ___________________\n"
        "<PYTHON_HOME>/lib/python3.11/ast.py:50: in parse\n"
        "E     File \"<ROOT>/tests/test_bad.py\", line 1\n"
        "E       def test_x(:\nE                  ^\nE   SyntaxError: invalid syntax\n"
        "___________________ ERROR collecting tests/test_imp.py ___________________\n"
        "E   ModuleNotFoundError: No module named 'ghost'\n"
        "=========================== short test summary info ============================\n"
        "ERROR tests/test_bad.py\nERROR tests/test_imp.py\n"
        "!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!\n"
        "============================== 2 errors in 0.10s ===============================\n"
    )
    report = run(tmp_path, "pytest", out, exit_code=2)
    assert report.build_error
    bad, imp = report.find("tests/test_bad.py"), report.find("tests/test_imp.py")
    assert bad.status == imp.status == Status.ERRORED
    assert bad.line == 1 and "SyntaxError: invalid syntax" in bad.message
    assert imp.line is None and imp.message == "ModuleNotFoundError: No module named 'ghost'"
    assert len(report.tests) == 2


def test_conftest_import_error(tmp_path: Path) -> None:
    err = ("ImportError while loading conftest '<ROOT>/tests/conftest.py'.\n"
           "tests/conftest.py:1: in <module>\n    import ghost\n"
           "E   ModuleNotFoundError: No module named 'ghost'\n")
    report = run(tmp_path, "pytest", stderr=err, exit_code=4)
    assert statuses(report) == {"tests/conftest.py": "errored"}
    assert report.build_error and "No module named 'ghost'" in report.tests[0].message


# ---------------------------------------------------------------- reports

JUNIT = '''<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest"
 errors="1" failures="1" skipped="2" tests="6">
<testcase classname="tests.test_accounts" name="test_open" time="0.001" />
<testcase classname="tests.test_accounts.TestPosting" name="test_amount[-1-False]" time="0.001">
<failure message="assert False">&gt;  assert ok
E       assert False

tests/test_accounts.py:19: AssertionError</failure></testcase>
<testcase classname="tests.test_accounts" name="test_sync" time="0.000">
<skipped type="pytest.skip" message="needs bank api">tests/test_accounts.py:26: needs bank api</skipped></testcase>
<testcase classname="tests.test_accounts" name="test_rounding" time="0.000">
<skipped type="pytest.xfail" message="rounding bug" /></testcase>
<testcase classname="tests.test_accounts" name="test_strict" time="0.000" />
<testcase classname="" name="tests.test_broken" time="0.000">
<error message="collection failure">E   ImportError: cannot import name 'x'</error></testcase>
</testsuite></testsuites>'''


def test_junit_xml_with_console_cross_check(ledger: Path) -> None:
    (ledger / "reports").mkdir()
    (ledger / "reports" / "junit.xml").write_text(JUNIT)
    out = "5 passed, 1 failed, 1 skipped, 1 xfailed, 1 error in 0.1s\n"
    report = run(ledger, "python -m pytest --junitxml=reports/junit.xml -q", out)
    assert statuses(report) == {
        f"{A}::test_open": "passed", f"{A}::TestPosting::test_amount[-1-False]": "failed",
        f"{A}::test_sync": "skipped", f"{A}::test_rounding": "xfailed", f"{A}::test_strict": "passed",
        "tests/test_broken.py": "errored"}
    assert report.build_error
    assert report.find(f"{A}::TestPosting::test_amount[-1-False]").line == 18
    assert report.find(f"{A}::test_sync").message == "needs bank api"
    assert "junit-xml:reports/junit.xml" in report.sources


def test_junit_non_strict_xpass_recovered(ledger: Path) -> None:
    xml = JUNIT.replace('<skipped type="pytest.xfail" message="rounding bug" />', "")
    (ledger / "j.xml").write_text(xml)
    report = run(ledger, "pytest --junitxml j.xml", "1 failed, 2 passed, 1 skipped, 1 xpassed, 1 error in 0.1s\n")
    assert report.find(f"{A}::test_rounding").status == Status.XPASSED
    assert report.find(f"{A}::test_open").status == Status.PASSED


def test_missing_and_truncated_junit(ledger: Path) -> None:
    report = run(ledger, "pytest --junitxml=nope.xml -v", f"{A}::test_open PASSED  [100%]\n")
    assert statuses(report) == {f"{A}::test_open": "passed"}
    assert any("nope.xml" in w for w in report.warnings)
    (ledger / "cut.xml").write_text(JUNIT[:JUNIT.index("<testcase classname=\"tests.test_accounts\" name=\"test_sync\"")])
    report = run(ledger, "pytest --junitxml=cut.xml", "")
    assert f"{A}::test_open" in statuses(report) and report.warnings


JSON_REPORT = {
    "summary": {"passed": 1, "failed": 1, "skipped": 1, "error": 1, "total": 4},
    "collectors": [{"nodeid": "tests/test_broken.py", "outcome": "failed",
                    "longrepr": "E   ImportError: cannot import name 'x'"}],
    "tests": [
        {"nodeid": f"{A}::test_open", "lineno": 8, "outcome": "passed",
         "setup": {"outcome": "passed"}, "call": {"outcome": "passed", "duration": 0.5}},
        {"nodeid": f"{A}::test_strict", "lineno": 35, "outcome": "failed",
         "call": {"outcome": "failed", "longrepr": "[XPASS(strict)] not final"}},
        {"nodeid": f"{A}::test_sync", "lineno": 25, "outcome": "skipped",
         "setup": {"outcome": "skipped", "longrepr": "('<ROOT>/tests/test_accounts.py', 26, 'Skipped: needs bank api')"}},
        {"nodeid": f"{A}::TestPosting::test_debit", "lineno": 13, "outcome": "error",
         "setup": {"outcome": "failed", "crash": {"path": "x", "lineno": 1, "message": "OSError: no db"}}},
    ],
}


def test_json_report_default_path(ledger: Path) -> None:
    (ledger / ".report.json").write_text(json.dumps(JSON_REPORT))
    report = run(ledger, "pytest -q --json-report", "")
    assert statuses(report) == {"tests/test_broken.py": "errored", f"{A}::test_open": "passed",
                                f"{A}::test_strict": "failed", f"{A}::test_sync": "skipped",
                                f"{A}::TestPosting::test_debit": "errored"}
    assert report.find(f"{A}::test_strict").message == "[XPASS(strict)] not final"
    assert report.find(f"{A}::test_sync").message == "needs bank api"
    assert report.find(f"{A}::TestPosting::test_debit").message == "OSError: no db"
    assert report.find(f"{A}::test_open").line == 9 and report.build_error


def test_truncated_json_report_falls_back_to_console(ledger: Path) -> None:
    (ledger / "r.json").write_text(json.dumps(JSON_REPORT)[:200])
    report = run(ledger, "pytest --json-report --json-report-file=r.json -v", f"{A}::test_open FAILED [100%]\n")
    assert statuses(report) == {f"{A}::test_open": "failed"}
    assert any("r.json" in w for w in report.warnings)


# ---------------------------------------------------------------- timeouts

def test_killed_run_verbose_pending_test(ledger: Path) -> None:
    out = f"{A}::test_open PASSED                    [ 11%]\n{A}::TestPosting::test_debit "
    report = run(ledger, "timeout 5 pytest -v", out, exit_code=124)
    assert report.timed_out
    hung = report.find(f"{A}::TestPosting::test_debit")
    assert hung.status == Status.FAILED and hung.timed_out
    assert len(report.tests) == 2


def test_killed_run_progress_next_test(ledger: Path) -> None:
    report = run(ledger, f"timeout 5 pytest {A}", f"collected 9 items\n\n{A} ..", exit_code=124)
    assert statuses(report) == {ACCOUNT_IDS[0]: "passed", ACCOUNT_IDS[1]: "passed", ACCOUNT_IDS[2]: "failed"}
    assert report.find(ACCOUNT_IDS[2]).timed_out


def test_pytest_timeout_thread_banner_and_signal_message(ledger: Path) -> None:
    out = f"{A}::test_open +++++++++++++++++++ Timeout +++++++++++++++++++\n~~~ Stack of MainThread ~~~\n"
    report = run(ledger, "pytest -v --timeout=1", out)
    assert report.find(f"{A}::test_open").timed_out and report.timed_out
    out = (f"{A}::test_open FAILED  [100%]\n=================================== FAILURES ===================================\n"
           "___________________________________ test_open ___________________________________\n"
           "E       Failed: Timeout (>1.0s) from pytest-timeout.\n")
    report = run(ledger, "pytest -v", out)
    assert report.find(f"{A}::test_open").timed_out and report.timed_out


# ---------------------------------------------------------------- bad input & detection

@pytest.mark.parametrize("stdout", ["", "\x00\xff garbage \x1b[31m\n" * 50, "=" * 5000])
def test_bad_input_never_raises(tmp_path: Path, stdout: str) -> None:
    report = run(tmp_path, "pytest", stdout, exit_code=1)
    assert report.tests == [] and not report.per_test and report.warnings


def test_unparsable_test_module_is_not_guessed(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_a(:\n")
    report = run(tmp_path, "pytest -q", "..\n2 passed in 0.01s\n", exit_code=0)
    assert report.tests == []


def test_command_and_output_detection() -> None:
    for cmd in ("pytest -q", "python -m pytest tests/", "py.test", "timeout 60 .venv/bin/pytest -x",
                "coverage run -m pytest"):
        assert from_command(cmd).framework == "pytest", cmd
    for cmd in ("pip install pytest", "python -m unittest -k pytest_x"):
        found = from_command(cmd)
        assert found is None or found.framework != "pytest", cmd
    head = ("============================= test session starts ==============================\n"
            "platform linux -- Python 3.12.1, pytest-8.3.2, pluggy-1.5.0\ncollected 3 items\n")
    assert from_output(RunOutput(stdout_text=head)).framework == "pytest"


def test_options_parsing() -> None:
    opts = pt._options(pt._pytest_words(
        "cd x && python -m pytest -rA -n2 -k 'a or b' --junitxml out.xml --json-report tests/x.py::T -p no:cacheprovider"))
    assert opts.junit == "out.xml" and opts.json_report == ".report.json" and opts.xdist
    assert opts.keyword == "a or b" and opts.args == ["tests/x.py::T"]
    assert pt._options(["--json-report", "--json-report-file=none"]).json_report is None
