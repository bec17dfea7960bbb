"""A failing entry that stands for a file, package or crate is judged, once it loads, by the
tests it holds; a test's own entry never is (a test that vanished is not a test that passes)."""

from __future__ import annotations

from greenloop.parsers.containers import is_container, outcome
from greenloop.parsers.models import Status, TestResult

P, F, E = Status.PASSED, Status.FAILED, Status.ERRORED


def t(id: str, status: Status, file: str | None = None, suite: str | None = None, message: str | None = None):
    return TestResult(id=id, status=status, file=file, suite=suite, message=message)


def test_a_pytest_module_is_judged_by_its_tests():
    entry = t("tests/test_money.py", E, file="tests/test_money.py")
    assert is_container(entry)
    now = [t("tests/test_money.py::test_a", P, "tests/test_money.py"), t("tests/test_cart.py::test_b", F, "tests/test_cart.py")]
    got = outcome(entry, now)
    assert got.passed and got.members == 1
    now.append(t("tests/test_money.py::test_c", F, "tests/test_money.py", message="assert 1 == 2"))
    got = outcome(entry, now)
    assert got.status is F and not got.passed
    assert got.message == "tests/test_money.py loads now, but its test tests/test_money.py::test_c is failed: assert 1 == 2"


def test_a_go_package_jest_file_and_unittest_module_find_their_tests():
    pkg = t("example.com/m/calc", E, suite="example.com/m/calc")
    assert outcome(pkg, [t("example.com/m/calc::TestAdd", P, suite="example.com/m/calc"),
                         t("example.com/m/calcx::TestOther", F, suite="example.com/m/calcx")]).passed
    jest = t("src/sum.test.js", E, file="src/sum.test.js")
    assert outcome(jest, [t("sum › adds", P, file="src/sum.test.js")]).passed
    module = t("unittest.loader._FailedTest.tests.test_io", E)
    assert outcome(module, [t("tests.test_io.IoTest.test_read", P)]).passed
    assert outcome(module, [t("tests.test_iox.IoTest.test_read", P)]).status is None


def test_still_there_or_nothing_ran():
    entry = t("tests/test_money.py", E, file="tests/test_money.py")
    assert outcome(entry, [t("tests/test_money.py", E, "tests/test_money.py")]).status is E
    assert outcome(entry, [t("tests/test_cart.py::test_b", P, "tests/test_cart.py")]).status is None


def test_a_test_that_vanished_is_not_judged_by_its_neighbours():
    test = t("tests/test_money.py::test_a", F, file="tests/test_money.py")
    assert not is_container(test)
    assert outcome(test, [t("tests/test_money.py::test_b", P, "tests/test_money.py")]).status is None
    # An errored test (a fixture error) is a test too, not a file.
    errored = t("tests/test_money.py::test_a", E, file="tests/test_money.py")
    assert not is_container(errored)
    assert outcome(errored, [t("tests/test_money.py::test_a[1]", P, "tests/test_money.py")]).status is None
