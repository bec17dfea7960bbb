"""Go's per-test coverage (runner/go_coverage.py) through the suite activity, with the real
go toolchain in the bwrap sandbox: the failing test's own run says which helper it ran, so the
helper, two calls below the function the test calls, is in the fixer's first message."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import ActivityEnvironment

from greenloop.activities.testing import SuiteInput, execute_suite, load_report
from greenloop.analysis.localize import Spectrum
from greenloop.domain.workspace import Workspace
from greenloop.llm.first_message import first_message
from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.projectenv.models import ProjectEnvironment
from greenloop.runner import go_coverage
from greenloop.runner.plan import plan_tests
from greenloop.sandbox.models import SandboxSettings

TOTAL = "example.com/shop/calc::TestTotal"
COUNT = "example.com/shop/calc::TestCount"
TABLE = "example.com/shop/calc::TestTable/two_items"
FILES = {
    "go.mod": "module example.com/shop\n\ngo 1.19\n",
    "util/round.go": "package util\n\n// Cents rounds an amount to whole cents.\nfunc Cents(x float64) int {\n"
                     "\treturn int(x * 10)\n}\n\n// Unused is run by no test.\nfunc Unused() int {\n\treturn 1\n}\n",
    # Scale reaches Cents through a table: no call a reading of the code can follow.
    "util/scale.go": "package util\n\nvar rounders = map[string]func(float64) int{\"cents\": Cents}\n\n"
                     "// Scale is the amount of n items, in cents.\nfunc Scale(x float64, n int) int {\n"
                     "\treturn rounders[\"cents\"](x) * n\n}\n",
    "calc/price.go": "package calc\n\nimport \"example.com/shop/util\"\n\n// Total is the price of n items.\n"
                     "func Total(price float64, n int) int {\n\treturn util.Scale(price, n)\n}\n\n"
                     "// Count is n.\nfunc Count(n int) int {\n\treturn n\n}\n",
    "calc/price_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n"
                          "\tif got := Total(1.5, 2); got != 300 {\n\t\tt.Fatalf(\"Total(1.5, 2) = %d, want 300\", got)\n"
                          "\t}\n}\n\nfunc TestCount(t *testing.T) {\n\tif Count(3) != 3 {\n\t\tt.Fatal(\"count\")\n\t}\n}\n\n"
                          "func TestTable(t *testing.T) {\n\tt.Run(\"two items\", func(t *testing.T) {\n"
                          "\t\tif Count(2) != 2 {\n\t\t\tt.Fatal(\"two\")\n\t\t}\n\t})\n}\n",
}


def project(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_run_pattern_selects_one_test_or_subtest():
    assert go_coverage.run_pattern("TestX") == "^TestX$"
    assert go_coverage.run_pattern("TestX/two_items") == "^TestX$/^two_items$"


def test_failing_tests_come_first_then_passing_ones_of_their_packages():
    tests = [TestResult(id=f"example.com/other::TestP{i}", status=Status.PASSED) for i in range(3)]
    tests += [TestResult(id=COUNT, status=Status.PASSED), TestResult(id=TOTAL, status=Status.FAILED)]
    chosen = go_coverage.chosen(TestReport(framework="go", command="go test ./...", tests=tests))
    assert chosen[:2] == [TOTAL, COUNT]
    # A suite with no failing test is not measured at all.
    report = TestReport(framework="go", command="go test ./...", tests=[TestResult(id=COUNT, status=Status.PASSED)])
    assert go_coverage.script(Path("."), report) is None


async def test_the_flaky_check_run_records_each_tests_lines_and_the_helper_reaches_the_first_message(tmp_path):
    root = project(tmp_path / "shop")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    ws = Workspace(path=str(root), run_dir=str(run_dir), repo=str(root))
    plan = plan_tests(root, framework="go")
    # The build cache a setup phase gives Go runs (projectenv/toolchains.py): the coverage build reuses the suite's.
    plan.environment = ProjectEnvironment(ecosystem="go", caches={"GOCACHE": "go-build"}, root=str(tmp_path / "env"))
    run = await ActivityEnvironment().run(execute_suite, SuiteInput(workspace=ws, plan=plan, label="flaky-check", impact=True,
                                         sandbox=SandboxSettings(backend="bwrap", timeout_s=300)))
    assert run.totals.failed == 1
    spectrum = Spectrum.load(run_dir)
    assert spectrum is not None
    # The failing test ran the helpers in another package; the passing ones (a subtest too) did not.
    assert spectrum.covered(TOTAL)["util/round.go"] == [4, 5, 6]
    assert 7 in spectrum.covered(TOTAL)["util/scale.go"]
    assert set(spectrum.covered(COUNT)) == {"calc/price.go"} and spectrum.covered(TABLE)
    assert not (root / go_coverage.FOLDER).exists()  # nothing left in the workspace
    report = load_report(run.report_path)
    test = report.find(TOTAL)
    assert test is not None
    with_coverage = first_message(root, report, test, spectrum)
    without = first_message(root, report, test, None)
    # The helper's code is shown with the coverage, as a suspect the failing test ran; the calls
    # alone do not lead to it.
    assert with_coverage.shows("util/round.go", 5) and "int(x * 10)" in with_coverage.text
    assert "run by 1 failing test and no passing test" in with_coverage.text
    assert "int(x * 10)" not in without.text
    assert with_coverage.rank("calc/price.go", "Count") is None  # run by passing tests only
