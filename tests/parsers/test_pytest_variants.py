"""pytest: command variants whose console interleaves other text with the results.

The outputs come from running the real pytest on a small project: a test that prints,
failing, erroring, skipped and xfail tests, parameters with spaces, unicode and ``::``, and a
unittest test whose ``subTest`` fails (pytest 9 reports subtests itself).

- ``-s`` (capture off): a test's own output lands among the progress letters
  (``tests/test_a.py hello``, then ``.F`` on the next line); pytest writes a test's letter after
  its output, so each line's leading letters are results and the rest is the tests' output.
- ``-rN`` / ``-rs`` (no SUBFAILED line in the short summary): the failing subtest's section
  (``TestUni.test_sub (i=1)``) is what says its test failed; pytest 9 prints PASSED for the test itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import parse
from greenloop.parsers.models import Status
from tests.parsers.helpers import run_pytest, write_files

TESTS = '''import unittest

import pytest


def test_pass():
    print("hello from the test")


def test_fail():
    assert 1 + 1 == 3


@pytest.fixture
def broken():
    raise RuntimeError("fixture boom")


def test_error(broken):
    pass


@pytest.mark.skip(reason="not now")
def test_skip():
    pass


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False


@pytest.mark.parametrize("v", [1, 2, "a b", "x::y"])
def test_param(v):
    print("value", v)
    assert v != 2


class TestGroup:
    def test_in_class(self):
        print("Found it")

    def test_fail_in_class(self):
        raise ValueError("bad")


class TestUni(unittest.TestCase):
    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    def test_ok(self):
        pass
'''
EXPECTED = {
    "tests/test_a.py::test_pass": Status.PASSED,
    "tests/test_a.py::test_fail": Status.FAILED,
    "tests/test_a.py::test_error": Status.ERRORED,
    "tests/test_a.py::test_skip": Status.SKIPPED,
    "tests/test_a.py::test_xfail": Status.XFAILED,
    "tests/test_a.py::test_param[1]": Status.PASSED,
    "tests/test_a.py::test_param[2]": Status.FAILED,
    "tests/test_a.py::test_param[a b]": Status.PASSED,
    "tests/test_a.py::test_param[x::y]": Status.PASSED,
    "tests/test_a.py::TestGroup::test_in_class": Status.PASSED,
    "tests/test_a.py::TestGroup::test_fail_in_class": Status.FAILED,
    "tests/test_a.py::TestUni::test_sub": Status.FAILED,
    "tests/test_a.py::TestUni::test_ok": Status.PASSED,
    "tests/test_b.py::test_b": Status.PASSED,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("variants"), {
        "tests/test_a.py": TESTS,
        "tests/test_b.py": "def test_b():\n    print('b says hi')\n",
    })


@pytest.mark.parametrize("args", ["-s", "-s -q", "--capture=no -rA", "-s -v", "-s -rN",
                                  "-rN", "-q -rN", "-v -rN", "-rs"])
@pytest.mark.parametrize("detect", [False, True])
def test_every_result_is_read_whatever_the_variant(project: Path, args: str, detect: bool) -> None:
    run = run_pytest(project, args)
    assert run.exit_code == 1, run.stdout_text
    report = parse(run, None if detect else "pytest")
    assert report.framework == "pytest"
    assert {t.id: t.status for t in report.tests} == EXPECTED, (args, report.warnings, run.stdout_text)



def test_a_word_after_the_letters_is_settled_by_the_counts(project: Path) -> None:
    """``.Found it``: the letter of one passing test, then the next test's output; read as
    ``.F`` the letters would count one failure too many."""
    run = run_pytest(project, "-s")
    assert ".Found it" in (run.stdout_text or "")
    assert parse(run, "pytest").find("tests/test_a.py::TestGroup::test_in_class").status == Status.PASSED
