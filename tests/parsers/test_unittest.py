"""unittest parser: verbose output (3.11+ and <=3.10 descriptions,
docstrings, subtests), dots mapped onto the suite rebuilt from the sources,
failure blocks (setUpClass/setUpModule pseudo-tests, import failures),
buffered output, killed runs and bad input. Outputs follow the
TextTestRunner format for a small 'shop' project, not the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import parse as parse_run
from greenloop.parsers import unittest as ut
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.models import Status
from greenloop.parsers.run_output import RunOutput

CART_TESTS = '''import unittest

from shop.cart import total


class CartTests(unittest.TestCase):
    def test_empty(self):
        self.assertEqual(total([]), 0)

    def test_sum(self):
        """Sums two prices."""
        self.assertEqual(total([1, 2]), 4)

    def test_rows(self):
        for n in (1, 2, 3):
            with self.subTest(n=n):
                self.assertNotEqual(n, 2)

    @unittest.skip("later")
    def test_later(self):
        pass

    @unittest.expectedFailure
    def test_known_bug(self):
        self.assertEqual(1, 2)

    def test_crash(self):
        {}["missing"]


class DbTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise ConnectionError("db down")

    def test_query(self):
        pass
'''
MIXIN_TESTS = '''import unittest

from tests.helpers import PriceChecks


def setUpModule():
    pass


class PriceTests(PriceChecks, unittest.TestCase):
    def test_round(self):
        pass
'''
HELPERS = '''class PriceChecks:
    def test_positive(self):
        pass
'''

SEP2 = "-" * 70
BLOCKS = """
======================================================================
ERROR: tests.test_broken (unittest.loader._FailedTest.tests.test_broken)
----------------------------------------------------------------------
ImportError: Failed to import test module: tests.test_broken
Traceback (most recent call last):
  File "<PYTHON_HOME>/lib/python3.11/unittest/loader.py", line 362, in _get_module_from_name
    __import__(name)
  File "<ROOT>/tests/test_broken.py", line 1, in <module>
    import shop.nothing
ModuleNotFoundError: No module named 'shop.nothing'


======================================================================
ERROR: test_crash (tests.test_cart.CartTests.test_crash)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "<ROOT>/tests/test_cart.py", line 28, in test_crash
    {}["missing"]
    ~~^^^^^^^^^^^
KeyError: 'missing'

======================================================================
ERROR: setUpClass (tests.test_cart.DbTests)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "<ROOT>/tests/test_cart.py", line 34, in setUpClass
    raise ConnectionError("db down")
ConnectionError: db down

======================================================================
FAIL: test_rows (tests.test_cart.CartTests.test_rows) (n=2)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "<ROOT>/tests/test_cart.py", line 17, in test_rows
    self.assertNotEqual(n, 2)
AssertionError: 2 == 2

======================================================================
FAIL: test_sum (tests.test_cart.CartTests.test_sum)
Sums two prices.
----------------------------------------------------------------------
Traceback (most recent call last):
  File "<ROOT>/tests/test_cart.py", line 12, in test_sum
    self.assertEqual(total([1, 2]), 4)
AssertionError: 3 != 4

----------------------------------------------------------------------
Ran 7 tests in 0.002s

FAILED (failures=2, errors=3, skipped=1, expected failures=1)
"""
VERBOSE = """tests.test_broken (unittest.loader._FailedTest.tests.test_broken) ... ERROR
test_crash (tests.test_cart.CartTests.test_crash) ... ERROR
test_empty (tests.test_cart.CartTests.test_empty) ... ok
test_known_bug (tests.test_cart.CartTests.test_known_bug) ... expected failure
test_later (tests.test_cart.CartTests.test_later) ... skipped 'later'
test_rows (tests.test_cart.CartTests.test_rows) ... 
  test_rows (tests.test_cart.CartTests.test_rows) (n=2) ... FAIL
test_sum (tests.test_cart.CartTests.test_sum)
Sums two prices. ... FAIL
setUpClass (tests.test_cart.DbTests) ... ERROR
""" + BLOCKS
EXPECTED = {
    "unittest.loader._FailedTest.tests.test_broken": ("errored", "tests/test_broken.py", 1),
    "tests.test_cart.CartTests.test_crash": ("errored", "tests/test_cart.py", 27),
    "tests.test_cart.CartTests.test_empty": ("passed", "tests/test_cart.py", 7),
    "tests.test_cart.CartTests.test_known_bug": ("xfailed", "tests/test_cart.py", 24),
    "tests.test_cart.CartTests.test_later": ("skipped", "tests/test_cart.py", 20),
    "tests.test_cart.CartTests.test_rows (n=2)": ("failed", "tests/test_cart.py", 14),
    "tests.test_cart.CartTests.test_sum": ("failed", "tests/test_cart.py", 10),
    "setUpClass (tests.test_cart.DbTests)": ("errored", "tests/test_cart.py", 33),
}


@pytest.fixture()
def shop(tmp_path: Path) -> Path:
    for rel, text in {
        "shop/__init__.py": "", "shop/cart.py": "def total(items):\n    return sum(items)\n",
        "tests/__init__.py": "", "tests/test_cart.py": CART_TESTS, "tests/test_broken.py": "import shop.nothing\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def parse(root: Path, command: str, stderr: str, stdout: str = "", exit_code: int = 1) -> ut.TestReport:
    """The whole parse: unittest's parser, then the normalizer (lines through ``unittest.locate``)."""
    return parse_run(RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr,
                               cwd=root), "unittest")


def summary(report: ut.TestReport) -> dict[str, tuple[str, str | None, int | None]]:
    return {t.id: (t.status.value, t.file, t.line) for t in report.tests}


def test_verbose_311(shop: Path) -> None:
    report = parse(shop, "python -m unittest -v", VERBOSE)
    assert summary(report) == EXPECTED
    tests = {t.id: t for t in report.tests}
    assert tests["tests.test_cart.CartTests.test_sum"].message == "AssertionError: 3 != 4"
    assert tests["tests.test_cart.CartTests.test_later"].message == "later"
    assert tests["tests.test_cart.CartTests.test_later"].native_status == "skipped"
    assert tests["tests.test_cart.CartTests.test_known_bug"].native_status == "expected failure"
    assert tests["unittest.loader._FailedTest.tests.test_broken"].message == \
        "ModuleNotFoundError: No module named 'shop.nothing'"
    assert "Traceback" in tests["tests.test_cart.CartTests.test_crash"].details
    assert report.build_error is True and report.timed_out is False and not report.warnings


def test_dots_are_mapped_onto_the_suite_from_the_sources(shop: Path) -> None:
    report = parse(shop, "python -m unittest", "EE.xsFFE\n" + BLOCKS)
    assert summary(report) == EXPECTED
    assert not report.warnings


def test_dots_with_a_tests_own_stderr_on_the_same_line(shop: Path) -> None:
    report = parse(shop, "python -m unittest", "EE.xsnoise from a test\nFFE\n" + BLOCKS)
    assert summary(report) == EXPECTED


def test_dots_that_do_not_match_the_sources_fall_back_to_the_blocks(shop: Path) -> None:
    report = parse(shop, "python -m unittest", "EE..xsFFE\n" + BLOCKS.replace("Ran 7", "Ran 8"))
    assert set(summary(report)) == {k for k, v in EXPECTED.items() if v[0] in ("errored", "failed")}
    assert any("could not map" in w for w in report.warnings)


def test_python310_descriptions_and_unprinted_subtests(shop: Path) -> None:
    err = """tests.test_broken (unittest.loader._FailedTest) ... ERROR
test_crash (tests.test_cart.CartTests) ... ERROR
test_empty (tests.test_cart.CartTests) ... ok
test_known_bug (tests.test_cart.CartTests) ... expected failure
test_later (tests.test_cart.CartTests) ... skipped 'later'
test_rows (tests.test_cart.CartTests) ... test_sum (tests.test_cart.CartTests)
Sums two prices. ... FAIL
setUpClass (tests.test_cart.DbTests) ... ERROR
""" + BLOCKS.replace("(unittest.loader._FailedTest.tests.test_broken)", "(unittest.loader._FailedTest)") \
        .replace("(tests.test_cart.CartTests.test_rows)", "(tests.test_cart.CartTests)") \
        .replace("(tests.test_cart.CartTests.test_sum)", "(tests.test_cart.CartTests)") \
        .replace("(tests.test_cart.CartTests.test_crash)", "(tests.test_cart.CartTests)")
    assert summary(parse(shop, "python -m unittest -v", err)) == EXPECTED


def test_buffered_output_is_not_part_of_the_message(shop: Path) -> None:
    err = """test_sum (tests.test_cart.CartTests.test_sum) ... FAIL

======================================================================
FAIL: test_sum (tests.test_cart.CartTests.test_sum)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "<ROOT>/tests/test_cart.py", line 12, in test_sum
    self.assertEqual(total([1, 2]), 4)
AssertionError: 3 != 4

Stdout:
debug: computing total

----------------------------------------------------------------------
Ran 1 test in 0.001s

FAILED (failures=1)
"""
    report = parse(shop, "python -m unittest -b -v tests.test_cart.CartTests.test_sum", err)
    (t,) = report.tests
    assert t.message == "AssertionError: 3 != 4"
    assert "debug: computing total" in t.details


def test_multiline_assertion_message_and_chained_exception(shop: Path) -> None:
    err = """test_crash (tests.test_cart.CartTests.test_crash) ... ERROR

======================================================================
ERROR: test_crash (tests.test_cart.CartTests.test_crash)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "<ROOT>/tests/test_cart.py", line 28, in test_crash
    {}["missing"]
KeyError: 'missing'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "<ROOT>/tests/test_cart.py", line 30, in test_crash
    raise ValueError("lookup failed")
ValueError: lookup failed
second line of the message
----------------------------------------------------------------------
Ran 1 test in 0.001s

FAILED (errors=1)
"""
    (t,) = parse(shop, "python -m unittest -v", err).tests
    assert t.message == "ValueError: lookup failed\nsecond line of the message"


def test_killed_verbose_run_marks_the_running_test(shop: Path) -> None:
    err = ("test_crash (tests.test_cart.CartTests.test_crash) ... ok\n"
           "test_empty (tests.test_cart.CartTests.test_empty) ... ")
    report = parse(shop, "timeout 5 python -m unittest -v tests.test_cart", err, exit_code=124)
    got = {t.id: (t.status.value, t.timed_out) for t in report.tests}
    assert got == {"tests.test_cart.CartTests.test_crash": ("passed", False),
                   "tests.test_cart.CartTests.test_empty": ("failed", True)}
    assert report.timed_out is True


def test_killed_dots_run_finds_the_next_test_in_the_suite(shop: Path) -> None:
    report = parse(shop, "timeout 5 python -m unittest tests.test_cart", "E.", exit_code=124)
    got = {t.id: (t.status.value, t.timed_out) for t in report.tests}
    assert got == {"tests.test_cart.CartTests.test_crash": ("errored", False),
                   "tests.test_cart.CartTests.test_empty": ("passed", False),
                   "tests.test_cart.CartTests.test_known_bug": ("failed", True)}


def test_crash_without_summary_is_not_a_timeout(shop: Path) -> None:
    err = "test_empty (tests.test_cart.CartTests.test_empty) ... "
    report = parse(shop, "python -m unittest -v", err, exit_code=139)
    (t,) = report.tests
    assert (t.status, t.timed_out) == (Status.FAILED, False)
    assert "ended" in t.message and report.timed_out is False


def test_k_filters_and_failfast(shop: Path) -> None:
    err = f".x\n{SEP2}\nRan 2 tests in 0.001s\n\nOK (expected failures=1)\n"
    k = parse(shop, "python -m unittest -k empty -k known", err)
    assert summary(k) == {i: v for i, v in EXPECTED.items() if "empty" in i or "known" in i}
    crash = f"""E
======================================================================
ERROR: test_crash (tests.test_cart.CartTests.test_crash)
{SEP2}
Traceback (most recent call last):
  File "<ROOT>/tests/test_cart.py", line 28, in test_crash
    {{}}["missing"]
KeyError: 'missing'

{SEP2}
Ran 1 test in 0.001s

FAILED (errors=1)
"""
    ff = parse(shop, "python -m unittest -f tests.test_cart.CartTests", crash)
    assert [t.id for t in ff.tests] == ["tests.test_cart.CartTests.test_crash"]
    assert not ff.warnings


def test_quiet_run_without_skips_lists_everything_as_passed(shop: Path) -> None:
    err = "\n----------------------------------------------------------------------\nRan 1 test in 0.000s\n\nOK\n"
    report = parse(shop, "python -m unittest -q tests.test_cart.CartTests.test_empty", err, exit_code=0)
    assert summary(report) == {"tests.test_cart.CartTests.test_empty": EXPECTED["tests.test_cart.CartTests.test_empty"]}


def test_script_running_unittest_main_has_main_ids(shop: Path) -> None:
    (shop / "tests" / "run_me.py").write_text(
        "import unittest\n\n\nclass Smoke(unittest.TestCase):\n    def test_up(self):\n        pass\n\n\n"
        "if __name__ == '__main__':\n    unittest.main()\n")
    report = parse(shop, "python tests/run_me.py", f".\n{SEP2}\nRan 1 test in 0.000s\n\nOK\n", exit_code=0)
    assert summary(report) == {"__main__.Smoke.test_up": ("passed", "tests/run_me.py", 5)}


def test_inherited_tests_setupmodule_and_discover_options(shop: Path) -> None:
    (shop / "tests" / "helpers.py").write_text(HELPERS)
    (shop / "tests" / "check_prices.py").write_text(MIXIN_TESTS)
    err = """..
----------------------------------------------------------------------
Ran 2 tests in 0.000s

OK
"""
    report = parse(shop, "python -m unittest discover -s tests -p 'check_*.py' -t .", err, exit_code=0)
    assert summary(report) == {
        "tests.check_prices.PriceTests.test_positive": ("passed", "tests/helpers.py", 2),
        "tests.check_prices.PriceTests.test_round": ("passed", "tests/check_prices.py", 11),
    }
    err = "E\n" + """======================================================================
ERROR: setUpModule (tests.check_prices)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "<ROOT>/tests/check_prices.py", line 7, in setUpModule
    raise OSError("no fixtures")
OSError: no fixtures

----------------------------------------------------------------------
Ran 0 tests in 0.000s

FAILED (errors=1)
"""
    report = parse(shop, "python -m unittest discover -s tests -p 'check_*.py' -t .", err)
    assert summary(report) == {"setUpModule (tests.check_prices)": ("errored", "tests/check_prices.py", 6)}


def test_verbose_status_after_a_tests_own_stderr(shop: Path) -> None:
    err = ("test_empty (tests.test_cart.CartTests.test_empty) ... warning: slow disk\nok\n"
           "----------------------------------------------------------------------\nRan 1 test in 0.0s\n\nOK\n")
    assert summary(parse(shop, "python -m unittest -v", err, exit_code=0)) == \
        {"tests.test_cart.CartTests.test_empty": EXPECTED["tests.test_cart.CartTests.test_empty"]}


def test_subtest_message_part_and_unexpected_success(shop: Path) -> None:
    err = """  test_rows (tests.test_cart.CartTests.test_rows) [checking] (n=2, m='a ... b') ... ERROR
test_known_bug (tests.test_cart.CartTests.test_known_bug) ... unexpected success

======================================================================
UNEXPECTED SUCCESS: test_known_bug (tests.test_cart.CartTests.test_known_bug)
----------------------------------------------------------------------
Ran 2 tests in 0.001s

FAILED (unexpected successes=1)
"""
    report = parse(shop, "python -m unittest -v", err)
    got = {t.id: t.status.value for t in report.tests}
    assert got == {"tests.test_cart.CartTests.test_rows [checking] (n=2, m='a ... b')": "errored",
                   "tests.test_cart.CartTests.test_known_bug": "xpassed"}
    assert all(t.message is None for t in report.tests)


def test_results_merged_into_stdout(shop: Path) -> None:
    report = parse(shop, "python -m unittest -v 2>&1", "", stdout=VERBOSE)
    assert summary(report) == EXPECTED


@pytest.mark.parametrize(("desc", "tid"), [
    ("test_x (pkg.mod.Case.test_x)", "pkg.mod.Case.test_x"),
    ("test_x (pkg.mod.Case)", "pkg.mod.Case.test_x"),
    ("test_x (pkg.mod.Case.test_x) (k='v')", "pkg.mod.Case.test_x (k='v')"),
    ("tearDownClass (pkg.mod.Case)", "tearDownClass (pkg.mod.Case)"),
    ("pkg.mod (unittest.loader._FailedTest.pkg.mod)", "unittest.loader._FailedTest.pkg.mod"),
    ("not a description", None),
])
def test_case_id(desc: str, tid: str | None) -> None:
    assert ut.case_id(desc) == tid


@pytest.mark.parametrize(("stderr", "stdout"), [("", ""), ("\x00\xff garbage ... \n=====\n", "....\n"),
                                                ("Traceback (most recent call last):\nSyntaxError: bad\n", "")])
def test_bad_input_does_not_crash(tmp_path: Path, stderr: str, stdout: str) -> None:
    report = parse(tmp_path, "python -m unittest", stderr, stdout)
    assert report.tests == []
    assert report.warnings


@pytest.mark.parametrize(("command", "hit"), [
    ("python -m unittest", True), ("python3 -m unittest discover -s tests -v", True),
    ("coverage run -m unittest", True), ("python manage.py test shop", True),
    ("python tests/run.py", True), ("python3 -u test_cart.py -v", True),
    ("pytest -k unittest_x", False), ("python -m pytest tests/test_unittest_compat.py", False),
    ("python manage.py runserver", False), ("python scripts/build.py", False),
])
def test_command_detection(command: str, hit: bool) -> None:
    found = from_command(command)
    assert (found is not None and found.framework == "unittest") == hit


def test_output_detection() -> None:
    found = from_output(RunOutput(stderr_text=VERBOSE))
    assert found is not None and found.framework == "unittest"
