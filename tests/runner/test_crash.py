"""A test that dies (out of memory, a crash) fails alone: in the real sandbox with a
low memory limit, every other result is kept and the tests after it still run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from greenloop.parsers.models import Status, TestReport
from greenloop.parsers.pytest import running_test as pytest_running
from greenloop.runner.crash import OUT_OF_MEMORY
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.runner.readable import unreadable_reason
from greenloop.sandbox.models import SandboxSettings
from tests.sandbox.conftest import BACKENDS

# Every isolating backend here (bwrap always; docker when an engine answers): both bound memory with a cgroup.
ISOLATING = [b for b in BACKENDS if b != "local"]
HOG = """
def test_first():
    assert True


def test_hog():
    blocks = []
    for _ in range(600):
        blocks.append(bytearray(1 << 20))  # up to 600 MB, in the test process itself


def test_after():
    assert 1 == 2


def test_last():
    assert True
"""
CHILD_HOG = """
import subprocess
import sys


def test_child_hog():
    subprocess.run([sys.executable, "-c", "b = bytearray(600 << 20); b[::4096] = b'x' * len(b[::4096])"],
                   check=True)


def test_child_ok():
    assert True
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


async def run(root: Path, out: Path, backend: str) -> TestReport:
    plan = plan_tests(root)
    done = await run_tests(plan, root, out, SandboxSettings(backend=backend, memory_mb=160, timeout_s=120))
    return done.report


@pytest.mark.parametrize("backend", ISOLATING)
async def test_a_test_out_of_memory_fails_alone_and_the_rest_still_runs(backend, tmp_path):
    root = write(tmp_path / "p", {"pytest.ini": "[pytest]\ntestpaths = tests\n", "tests/test_a.py": HOG,
                                  "tests/test_b.py": "def test_b():\n    assert True\n"})
    report = await run(root, tmp_path / "out", backend)
    got = {t.id: t for t in report.tests}
    assert {k: v.status for k, v in got.items()} == {
        "tests/test_a.py::test_first": Status.PASSED, "tests/test_a.py::test_hog": Status.ERRORED,
        "tests/test_a.py::test_after": Status.FAILED, "tests/test_a.py::test_last": Status.PASSED,
        "tests/test_b.py::test_b": Status.PASSED}
    hog = got["tests/test_a.py::test_hog"]
    assert hog.native_status == OUT_OF_MEMORY and "out of memory" in (hog.message or "") and "160 MB" in hog.message
    assert unreadable_reason(report) is None  # the suite was read: one test failed for memory


@pytest.mark.parametrize("backend", ISOLATING)
async def test_a_child_process_out_of_memory_fails_its_test_and_keeps_every_result(backend, tmp_path):
    # The runner survives (only the test's child is killed): nothing is run again, nothing lost.
    root = write(tmp_path / "p", {"pytest.ini": "[pytest]\ntestpaths = tests\n", "tests/test_c.py": CHILD_HOG})
    report = await run(root, tmp_path / "out", backend)
    got = {t.id: t for t in report.tests}
    assert got["tests/test_c.py::test_child_ok"].status == Status.PASSED
    child = got["tests/test_c.py::test_child_hog"]
    assert child.status == Status.ERRORED and child.native_status == OUT_OF_MEMORY
    assert not (tmp_path / "out" / "resume-1").exists()


EXITS = """
import os


def test_before():
    assert True


def test_exits():
    os._exit({code})  # the whole pytest process ends here, no summary, no report


def test_after():
    assert 1 == 2
"""


@pytest.mark.parametrize("code", [0, 1])
async def test_a_test_that_ends_the_runner_process_fails_alone_and_the_rest_still_runs(code, tmp_path):
    # Exit code 0 must not read as "no tests" (nor green): the session ended in the middle.
    root = write(tmp_path / "p", {"tests/test_x.py": EXITS.format(code=code)})
    report = await run(root, tmp_path / "out", "bwrap")
    got = {t.id: t for t in report.tests}
    assert {k: v.status for k, v in got.items()} == {
        "tests/test_x.py::test_before": Status.PASSED, "tests/test_x.py::test_exits": Status.ERRORED,
        "tests/test_x.py::test_after": Status.FAILED}
    died = got["tests/test_x.py::test_exits"]
    assert died.native_status == "crash" and f"exited in the middle of the run (exit code {code})" in died.message
    assert unreadable_reason(report) is None


async def test_a_quiet_run_that_finishes_is_not_taken_for_an_early_exit(tmp_path):
    # -qq prints no summary line: the JUnit report, written when the session ends, says it finished.
    root = write(tmp_path / "p", {"pytest.ini": "[pytest]\naddopts = -qq\n",
                                  "tests/test_y.py": "def test_a():\n    assert True\n"})
    report = await run(root, tmp_path / "out", "bwrap")
    assert [(t.id, t.status) for t in report.tests] == [("tests/test_y.py::test_a", Status.PASSED)]
    assert not (tmp_path / "out" / "resume-1").exists() and not report.warnings


def test_the_test_a_verbose_pytest_run_died_in_is_its_last_line():
    assert pytest_running("tests/t.py::test_a PASSED   [ 50%]\ntests/t.py::test_x[a-b] ") == "tests/t.py::test_x[a-b]"
    assert pytest_running("tests/t.py::test_a PASSED   [ 50%]\n") is None
    assert pytest_running("collected 3 items\n") is None


def test_a_report_is_unreadable_for_each_reason_and_readable_otherwise():
    from greenloop.parsers.models import TestResult

    passed = [TestResult(id="t::a", status=Status.PASSED)]
    failed = [TestResult(id="t::b", status=Status.FAILED)]
    assert "found no tests (exit 5)" in unreadable_reason(TestReport(framework="pytest", exit_code=5, command="c"))
    assert "exited 2 before any test" in unreadable_reason(TestReport(framework="pytest", exit_code=2))
    assert "time limit" in unreadable_reason(TestReport(framework="pytest", tests=passed, timed_out=True))
    assert "no per-test results" in unreadable_reason(TestReport(framework="x", tests=failed, per_test=False,
                                                                 exit_code=1))
    assert "every test that reported passed" in unreadable_reason(
        TestReport(framework="pytest", tests=passed, exit_code=1))
    assert unreadable_reason(TestReport(framework="pytest", tests=passed + failed, exit_code=1)) is None
    assert unreadable_reason(TestReport(framework="pytest", tests=passed, exit_code=0)) is None


def test_each_framework_resumes_with_its_own_command_keeping_the_suites_flags(tmp_path):
    from greenloop.parsers.models import TestResult
    from greenloop.runner.crash import list_command, rerun_command
    from greenloop.runner.plan import SuitePlan

    def plan(fw: str, command: str) -> SuitePlan:
        return SuitePlan(language="x", framework=fw, test_command=command)

    done = [TestResult(id="tests::a", status=Status.PASSED, suite="unittests src/lib.rs")]
    # cargo: the dead binary only, one test at a time (the suite's own thread count replaced), done ones skipped.
    assert rerun_command(plan("cargo-test", "cargo test --no-fail-fast -- --test-threads=4 --nocapture"),
                         "cargo test --no-fail-fast -- --test-threads=4 --nocapture", "unittests src/lib.rs",
                         done) == ("cargo test --no-fail-fast --lib -- --nocapture --exact --test-threads=1 "
                                   "--skip tests::a")
    # googletest: the command's own filter stays positive, the done tests join its negative part.
    gdone = [TestResult(id="A.b", status=Status.PASSED), TestResult(id="A.c", status=Status.ERRORED)]
    assert rerun_command(plan("googletest", "./build/t --gtest_filter=A.*-A.slow --gtest_color=no"),
                         "./build/t --gtest_filter=A.*-A.slow --gtest_color=no", None, gdone) == \
        "./build/t --gtest_color=no --gtest_filter='A.*-A.slow:A.b:A.c'"
    # mocha: its spec files stay; the done tests are left out by their full titles.
    mdone = [TestResult(id="suite a (1)", status=Status.PASSED), TestResult(id="suite b", status=Status.ERRORED)]
    assert rerun_command(plan("mocha", "npx mocha --timeout 5000 'test/**/*.spec.js'"),
                         "npx mocha --timeout 5000 'test/**/*.spec.js'", None, mdone) == \
        "npx mocha --timeout 5000 'test/**/*.spec.js' --grep '^(?:suite\\ a\\ \\(1\\)|suite\\ b)$' --invert"
    # jest: in one process with Greenloop's reporter, the done tests left out by a negative -t.
    jdone = [TestResult(id="math › adds", status=Status.PASSED), TestResult(id="top", status=Status.ERRORED)]
    jest = "npx jest --ci -i --json --outputFile=.greenloop/reports/jest.json --reporters=jest-junit test/unit"
    assert rerun_command(plan("jest", jest), jest, None, jdone) == (
        "npx jest --ci --json --outputFile=.greenloop/reports/jest.json --runInBand --reporters=default "
        "--reporters=./.greenloop/jest-started.js -t '^(?!(?:math\\ adds|top)$)' test/unit")
    # go: the package's listed tests but the done ones, one at a time; nothing left: nothing to run.
    gplan = plan("go", "go test -json -count=3 ./...")
    godone = [TestResult(id="ex.com/p::TestA", status=Status.PASSED, suite="ex.com/p"),
              TestResult(id="ex.com/p::TestB/sub", status=Status.ERRORED, suite="ex.com/p")]
    assert rerun_command(gplan, gplan.test_command, "ex.com/p", godone, ("./p", ["TestA", "TestB", "TestC"])) == \
        "go test -json -count=1 -parallel=1 -run '^(?:TestC)$' ./p"
    assert rerun_command(gplan, gplan.test_command, "ex.com/p", godone, ("./p", ["TestA", "TestB"])) is None
    assert list_command(gplan, gplan.test_command, "./p") == "go test -count=3 -list '.*' ./p"


async def test_a_command_that_does_not_call_the_runner_keeps_its_results_and_says_why_it_is_not_resumed(tmp_path):
    from greenloop.parsers.models import TestResult
    from greenloop.runner.crash import resume
    from greenloop.runner.plan import SuitePlan
    from greenloop.sandbox.models import ExecResult

    first = TestReport(framework="cargo-test", tests=[
        TestResult(id="a", status=Status.PASSED, suite="unittests src/lib.rs"),
        TestResult(id="b", status=Status.FAILED, suite="unittests src/lib.rs",
                   native_status="no result (test binary died)")])
    ex = ExecResult(command="make check", backend="bwrap", backend_reason="", exit_code=2, stdout_path="o",
                    stderr_path="e")

    async def never(command, folder):
        raise AssertionError(f"nothing is run again: {command}")

    plan = SuitePlan(language="rust", framework="cargo-test", test_command="make check")
    report = await resume(plan, first, ex, never, lambda _: first, tmp_path, 400)
    assert {t.id: t.status for t in report.tests} == {"a": Status.PASSED, "b": Status.FAILED}
    assert any("cannot be run again" in w and "make check" in w for w in report.warnings)
