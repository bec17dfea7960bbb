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


# A table-driven test (``TestFormat/<row>``) whose one failing row runs a helper the others do not,
# after more passing tests than the sample takes (the sample once took the report's first ones).
TABLE_FILES = {
    "go.mod": "module example.com/money\n\ngo 1.19\n",
    # Every row runs every line of Format, abs, plain and pad; only a negative amount enters sign's branch.
    "money/format.go": "package money\n\nimport \"strconv\"\n\n// Format writes an amount of cents as euros.\n"
                       "func Format(cents int) string {\n\treturn sign(cents) + plain(abs(cents))\n}\n\n"
                       "func sign(cents int) string {\n\tif cents < 0 {\n\t\treturn \"\" // the bug: \"-\"\n\t}\n"
                       "\treturn \"\"\n}\n\nfunc abs(n int) int {\n\tm := n >> 63\n\treturn (n ^ m) - m\n}\n\n"
                       "func plain(cents int) string {\n\treturn strconv.Itoa(cents/100) + \".\" + pad(cents%100)\n}\n\n"
                       "func pad(n int) string {\n\treturn strconv.Itoa(n/10) + strconv.Itoa(n%10)\n}\n\n"
                       "// Twice doubles n.\nfunc Twice(n int) int {\n\treturn 2 * n\n}\n",
    "money/a_test.go": "package money\n\nimport \"testing\"\n\n" + "".join(
        f"func TestTwice{i:02d}(t *testing.T) {{\n\tif Twice({i}) != {2 * i} {{\n\t\tt.Fatal(\"twice\")\n\t}}\n}}\n\n"
        for i in range(25)),
    "money/format_test.go": "package money\n\nimport \"testing\"\n\nfunc TestFormat(t *testing.T) {\n"
                            "\tfor _, tt := range []struct{ name string; in int; want string }{\n"
                            "\t\t{\"whole\", 300, \"3.00\"},\n\t\t{\"cents\", 305, \"3.05\"},\n"
                            "\t\t{\"negative\", -250, \"-2.50\"},\n\t\t{\"small\", 7, \"0.07\"},\n\t} {\n"
                            "\t\tt.Run(tt.name, func(t *testing.T) {\n"
                            "\t\t\tif got := Format(tt.in); got != tt.want {\n"
                            "\t\t\t\tt.Errorf(\"Format(%d) = %q, want %q\", tt.in, got, tt.want)\n"
                            "\t\t\t}\n\t\t})\n\t}\n}\n",
}
ROW = "example.com/money/money::TestFormat/negative"
PARENT = "example.com/money/money::TestFormat"


def test_a_failing_rows_parent_is_left_to_it_and_its_table_siblings_are_measured_first():
    ids = [f"p::TestTwice{i:02d}" for i in range(30)] + ["p::TestFormat", "p::TestFormat/whole", "p::TestFormat/negative",
                                                          "q::TestFormat/whole", "p::TestFormat/small"]
    failing = {"p::TestFormat", "p::TestFormat/negative"}
    report = TestReport(framework="go", command="go test ./...", tests=[
        TestResult(id=i, status=Status.FAILED if i in failing else Status.PASSED) for i in ids])
    chosen = go_coverage.chosen(report)
    assert chosen[:3] == ["p::TestFormat/negative", "p::TestFormat/whole", "p::TestFormat/small"]
    assert "p::TestFormat" not in chosen  # it would run every row of the table
    assert chosen.index("p::TestTwice00") < chosen.index("q::TestFormat/whole")  # its package next


def test_a_parent_not_measured_gets_what_its_failing_subtests_ran():
    spectrum = Spectrum(files={"a.go": {"P::T/x": [1, 2], "P::T/y": [2, 5], "P::T/ok": [9]}})
    assert spectrum.covered("P::T", {"P::T", "P::T/x", "P::T/y"}) == {"a.go": [1, 2, 5]}
    assert spectrum.covered("P::T") == {}  # no failing subtest named: nothing
    assert spectrum.covered("P::T/x", {"P::T/y"}) == {"a.go": [1, 2]}  # measured itself: its own


async def test_a_failing_table_row_ranks_the_helper_only_it_ran_first(tmp_path):
    root = tmp_path / "money"
    for name, text in TABLE_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    ws = Workspace(path=str(root), run_dir=str(run_dir), repo=str(root))
    plan = plan_tests(root, framework="go")
    plan.environment = ProjectEnvironment(ecosystem="go", caches={"GOCACHE": "go-build"}, root=str(tmp_path / "env"))
    run = await ActivityEnvironment().run(execute_suite, SuiteInput(workspace=ws, plan=plan, label="flaky-check", impact=True,
                                         sandbox=SandboxSettings(backend="bwrap", timeout_s=300)))
    report = load_report(run.report_path)
    assert {t.id for t in report.failing} == {ROW, PARENT}
    spectrum = Spectrum.load(run_dir)
    assert spectrum is not None
    # The failing row's siblings were measured (they come after 25 other passing tests in the report).
    assert "example.com/money/money::TestFormat/whole" in spectrum.files["money/format.go"]
    assert PARENT not in spectrum.files["money/format.go"]
    for test_id in (ROW, PARENT):
        test = report.find(test_id)
        assert test is not None
        message = first_message(root, report, test, spectrum)
        # sign's branch is run by the failing row alone; every line of Format (which the test calls) and the
        # other helpers by the passing rows too.
        assert message.rank("money/format.go", "sign") == 1, message.context.suspects
        assert message.shows("money/format.go", 12)


def test_the_nearest_passing_tests_always_run_and_further_ones_within_the_budget(tmp_path):
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.19\n")
    tests = [TestResult(id="example.com/m::TestFormat/negative", status=Status.FAILED)]
    tests += [TestResult(id=f"example.com/m::TestP{i:02d}", status=Status.PASSED) for i in range(30)]
    command = go_coverage.script(tmp_path, TestReport(framework="go", command="go test ./...", tests=tests))
    assert command is not None
    runs = [line for line in command.splitlines() if "index.txt" in line]
    assert len(runs) == 31
    budget = f"-lt {go_coverage.PASSING_BUDGET_S} ]"
    # The failing test and the MIN_PASSING nearest passing ones run whatever the time; the rest within the budget.
    assert not any(budget in line for line in runs[:1 + go_coverage.MIN_PASSING])
    assert all(budget in line for line in runs[1 + go_coverage.MIN_PASSING:])
    # The budget's clock starts when the first test binary is built, not before the compile.
    assert command.index('start="${start:-$(date +%s)}"') > command.index("go test -c")
