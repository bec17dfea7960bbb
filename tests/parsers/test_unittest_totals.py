"""unittest's own counts (``Ran N tests``, ``FAILED (failures=a, errors=b,
skipped=c, expected failures=d, unexpected successes=e)``) checked against the
per-test results by the normalizer. The output comes from running unittest
itself (this interpreter's) on small projects."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from greenloop.parsers import RunOutput, parse
from greenloop.parsers.models import TestReport
from tests.parsers.helpers import write_files

# Every kind of outcome unittest counts: a failing and a skipped subtest (each
# counted in failures/skipped, neither a test of its own in "Ran N"), a
# setUpClass error (counted in errors, its class's tests not run at all).
MIXED = '''\
import unittest


class Plain(unittest.TestCase):
    def test_ok(self):
        pass

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise KeyError("k")

    @unittest.skip("not today")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_xpass(self):
        pass

    def test_subs(self):
        for i in range(4):
            with self.subTest(i=i):
                if i == 3:
                    self.skipTest("three")
                self.assertLess(i, 2)


class Broken(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no db")

    def test_never_runs(self):
        pass
'''
# The same without subtests: every entry is one of the "Ran N" tests or a pseudo-test.
FLAT = MIXED.split("    def test_subs")[0] + MIXED[MIXED.index("class Broken"):]
COMMAND = "python -m unittest -v test_mix"


def unittest_output(root: Path, module: str) -> str:
    write_files(root, {"test_mix.py": module})
    done = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_mix"], cwd=root, capture_output=True,
                          text=True, timeout=60)
    assert "Ran " in done.stderr, done.stderr
    return done.stderr


def parsed(root: Path, stderr: str) -> TestReport:
    return parse(RunOutput(command=COMMAND, exit_code=1, stderr_text=stderr, cwd=root), "unittest")


def summary_warnings(report: TestReport) -> list[str]:
    return [w for w in report.warnings if "summary counted" in w]


def test_counts_with_subtests_compare_per_status_and_agree(tmp_path: Path) -> None:
    stderr = unittest_output(tmp_path, MIXED)
    assert "Ran 7 tests" in stderr  # test_subs once, Broken's test not at all
    report = parsed(tmp_path, stderr)
    # Entries: 9 (two subtests instead of test_subs, plus setUpClass); "Ran 7"
    # does not compare with that, so no total is handed over.
    assert len(report.tests) == 9
    assert report.summary_counts == {"failed": 2, "errored": 2, "skipped": 2, "xfailed": 1, "xpassed": 1}
    assert summary_warnings(report) == []


def test_counts_without_subtests_compare_the_total_too(tmp_path: Path) -> None:
    report = parsed(tmp_path, unittest_output(tmp_path, FLAT))
    # Ran 6 plus the setUpClass error, which unittest counts in errors but not in Ran.
    assert report.summary_counts == {"failed": 1, "errored": 2, "skipped": 1, "xfailed": 1, "xpassed": 1,
                                     "total": 7}
    assert len(report.tests) == 7 and summary_warnings(report) == []


def test_a_result_the_parser_missed_is_a_warning(tmp_path: Path) -> None:
    stderr = unittest_output(tmp_path, FLAT)
    # A test's result line lost (e.g. overwritten by the test's own output):
    # unittest's counts still have it, the entries do not.
    lost = "\n".join(ln for ln in stderr.splitlines() if not ln.startswith("test_xfail "))
    report = parsed(tmp_path, lost)
    assert "test_mix.Plain.test_xfail" not in {t.id for t in report.tests}
    assert summary_warnings(report) == [
        "the unittest summary counted 1 xfailed, 7 total; the per-test results have 0 xfailed, 6 total"]


def test_a_run_without_its_summary_hands_over_no_counts(tmp_path: Path) -> None:
    stderr = unittest_output(tmp_path, FLAT)
    killed = stderr.split("\n======")[0]  # killed before the failure blocks and "Ran N tests"
    report = parse(RunOutput(command=f"timeout 5 {COMMAND}", exit_code=124, stderr_text=killed, cwd=tmp_path),
                   "unittest")
    assert report.tests and report.summary_counts == {} and summary_warnings(report) == []
