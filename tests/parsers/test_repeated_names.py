"""Distinct tests that print one name are each counted (``merge.repeats``).

A real unittest run (the Python running these tests) of generated tests that
all print ``test_value (test_gen.Case.test_value)``: every one is a test of
its own, numbered apart in order, the failing ones keep their own failure
block; the runner's total agrees, so nothing is said to disagree. A test read
twice (the runner's total counts it once) is still merged.
"""

from __future__ import annotations

import subprocess
import sys

from greenloop.parsers import RunOutput, parse
from greenloop.parsers.merge import numbered, repeats
from greenloop.parsers.models import Status, TestResult
from tests.parsers.helpers import write_files

GENERATED = '''import unittest


class Case(unittest.TestCase):
    def __init__(self, n):
        super().__init__("test_value")
        self.n = n

    def test_value(self):
        self.assertNotEqual(self.n % 7, 0, f"n={self.n}")


def load_tests(loader, tests, pattern):
    return unittest.TestSuite(Case(n) for n in range(1, 50))
'''
NAME = "test_gen.Case.test_value"


def test_generated_tests_printing_one_name_are_all_counted(tmp_path):
    write_files(tmp_path, {"test_gen.py": GENERATED})
    command = f"{sys.executable} -m unittest -v test_gen"
    done = subprocess.run(command.split(), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "Ran 49 tests" in done.stderr and "failures=7" in done.stderr
    report = parse(RunOutput(command=command, exit_code=done.returncode, stdout_text=done.stdout,
                             stderr_text=done.stderr, cwd=tmp_path), "unittest")
    assert len(report.tests) == 49
    assert report.totals.failed == 7 and report.totals.passed == 42
    assert report.miscount is None
    assert len({t.id for t in report.tests}) == 49
    assert report.tests[0].id == NAME and report.tests[0].printed == NAME
    seventh = report.tests[6]  # n=7, the first failure
    assert (seventh.id, seventh.printed, seventh.status) == (numbered(NAME, 7), NAME, Status.FAILED)
    # each failing test has its own failure block, in order
    assert [t.message.rsplit("n=", 1)[-1] for t in report.failing] == [str(n) for n in range(7, 50, 7)]
    assert all(t.file == "test_gen.py" for t in report.tests)
    assert any("counted apart" in w for w in report.warnings)


def test_a_test_read_twice_is_merged_when_the_runner_counts_it_once():
    twice = [TestResult(id="a", status=Status.PASSED), TestResult(id="a", status=Status.FAILED, message="boom"),
             TestResult(id="b", status=Status.PASSED)]
    tests, said = repeats(twice, runner_total=2)
    assert [(t.id, t.status) for t in tests] == [("a", Status.FAILED), ("b", Status.PASSED)]
    assert said and "merged" in said
    tests, said = repeats(twice, runner_total=None)
    assert [(t.id, t.printed) for t in tests] == [("a", "a"), (numbered("a", 2), "a"), ("b", None)]


def test_a_count_that_disagrees_with_the_runner_is_said(tmp_path):
    stderr = ("test_a (m.C.test_a) ... ok\n\n" + "-" * 70 + "\nRan 3 tests in 0.001s\n\nOK\n")
    report = parse(RunOutput(command="python -m unittest -v", exit_code=0, stderr_text=stderr, cwd=tmp_path),
                   "unittest")
    assert report.miscount == "the unittest summary counted 3 total; the per-test results have 1 total"
