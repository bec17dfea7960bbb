"""GoogleTest parser: console output (full, brief, coloured, repeated, crashed,
killed), XML/JSON reports, the sources-based listing of what brief mode and
old versions do not print, suite-level failures and bad input. Outputs are
written from gtest's documented formats for a small 'geo' project, not copied
from the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.parsers import googletest as gt
from greenloop.parsers import parse
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.models import Status, TestReport
from greenloop.parsers.run_output import RunOutput
from greenloop.parsers.source import cpp

SHAPES_TEST = """#include <gtest/gtest.h>
#include "geo.h"

TEST(AreaTest, Square) { EXPECT_EQ(area(square(2)), 4); }

TEST(AreaTest, Circle) {
  EXPECT_NEAR(area(circle(1)), 3.14159, 1e-5) << "pi is off";
}

TEST(AreaTest, DISABLED_Triangle) { EXPECT_EQ(area(tri(1, 1)), 0.5); }

TEST(PerimeterTest, NeedsGpu) {
  GTEST_SKIP() << "no gpu here";
}

class GridFixture : public ::testing::Test {
 protected:
  void SetUp() override { cells_ = 0; }
  int cells_;
};

TEST_F(GridFixture, Empty) { EXPECT_EQ(cells_, 0); }

class ScaleTest : public ::testing::TestWithParam<int> {};

TEST_P(ScaleTest, Doubles) {
  EXPECT_EQ(scale(GetParam(), 2), GetParam() * 2);
}

INSTANTIATE_TEST_SUITE_P(Small, ScaleTest,
                         ::testing::Values(1, 2, 3));

template <typename T>
class VecTest : public ::testing::Test {};
using VecTypes = ::testing::Types<int, float>;
TYPED_TEST_SUITE(VecTest, VecTypes);

TYPED_TEST(VecTest, ZeroLength) { EXPECT_EQ(length(TypeParam{}), 0); }
"""

CMAKE = """cmake_minimum_required(VERSION 3.16)
project(geo CXX)
add_executable(geo_tests tests/shapes_test.cpp)
add_executable(other_tests tests/other_test.cpp)
"""

OTHER_TEST = """#include <gtest/gtest.h>
TEST(OtherTest, Unrelated) { EXPECT_TRUE(true); }
"""

FULL = """Running main() from gtest_main.cc
[==========] Running 9 tests from 6 test suites.
[----------] Global test environment set-up.
[----------] 2 tests from AreaTest
[ RUN      ] AreaTest.Square
[       OK ] AreaTest.Square (0 ms)
[ RUN      ] AreaTest.Circle
<ROOT>/tests/shapes_test.cpp:7: Failure
The difference between area(circle(1)) and 3.14159 is 0.5, which exceeds 1e-5, where
area(circle(1)) evaluates to 3.64,
3.14159 evaluates to 3.14159, and
1e-5 evaluates to 1.0000000000000001e-05.
pi is off
[  FAILED  ] AreaTest.Circle (1 ms)
[ DISABLED ] AreaTest.DISABLED_Triangle
[----------] 2 tests from AreaTest (1 ms total)

[----------] 1 test from PerimeterTest
[ RUN      ] PerimeterTest.NeedsGpu
<ROOT>/tests/shapes_test.cpp:13: Skipped
no gpu here
[  SKIPPED ] PerimeterTest.NeedsGpu (0 ms)
[----------] 1 test from PerimeterTest (0 ms total)

[----------] 1 test from GridFixture
[ RUN      ] GridFixture.Empty
[       OK ] GridFixture.Empty (0 ms)
[----------] 1 test from GridFixture (0 ms total)

[----------] 3 tests from Small/ScaleTest
[ RUN      ] Small/ScaleTest.Doubles/0
[       OK ] Small/ScaleTest.Doubles/0 (0 ms)
[ RUN      ] Small/ScaleTest.Doubles/1
<ROOT>/tests/shapes_test.cpp:27: Failure
Expected equality of these values:
  scale(GetParam(), 2)
    Which is: 5
  GetParam() * 2
    Which is: 4
[  FAILED  ] Small/ScaleTest.Doubles/1, where GetParam() = 2 (0 ms)
[ RUN      ] Small/ScaleTest.Doubles/2
[       OK ] Small/ScaleTest.Doubles/2 (0 ms)
[----------] 3 tests from Small/ScaleTest (0 ms total)

[----------] 1 test from VecTest/0, where TypeParam = int
[ RUN      ] VecTest/0.ZeroLength
[       OK ] VecTest/0.ZeroLength (0 ms)
[----------] 1 test from VecTest/0 (0 ms total)

[----------] 1 test from VecTest/1, where TypeParam = float
[ RUN      ] VecTest/1.ZeroLength
<ROOT>/tests/shapes_test.cpp:38: Failure
Expected equality of these values:
  length(TypeParam{})
    Which is: 1
  0
[  FAILED  ] VecTest/1.ZeroLength, where TypeParam = float (0 ms)
[----------] 1 test from VecTest/1 (0 ms total)

[----------] Global test environment tear-down
[==========] 9 tests from 6 test suites ran. (2 ms total)
[  PASSED  ] 5 tests.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] PerimeterTest.NeedsGpu
[  FAILED  ] 3 tests, listed below:
[  FAILED  ] AreaTest.Circle
[  FAILED  ] Small/ScaleTest.Doubles/1, where GetParam() = 2
[  FAILED  ] VecTest/1.ZeroLength, where TypeParam = float

 3 FAILED TESTS
  YOU HAVE 1 DISABLED TEST

"""

BRIEF = """Running main() from gtest_main.cc
<ROOT>/tests/shapes_test.cpp:7: Failure
The difference between area(circle(1)) and 3.14159 is 0.5, which exceeds 1e-5
pi is off
[  FAILED  ] AreaTest.Circle (1 ms)
<ROOT>/tests/shapes_test.cpp:13: Skipped
no gpu here
grid ready
<ROOT>/tests/shapes_test.cpp:27: Failure
Expected equality of these values:
  scale(GetParam(), 2)
    Which is: 5
[  FAILED  ] Small/ScaleTest.Doubles/1, where GetParam() = 2 (0 ms)
<ROOT>/tests/shapes_test.cpp:38: Failure
Expected equality of these values:
  length(TypeParam{})
[  FAILED  ] VecTest/1.ZeroLength, where TypeParam = float (0 ms)
[==========] 9 tests from 6 test suites ran. (2 ms total)
[  PASSED  ] 5 tests.
[  SKIPPED ] 1 test.
  YOU HAVE 1 DISABLED TEST

"""

EXPECTED_FULL = {
    "AreaTest.Square": ("passed", 4),
    "AreaTest.Circle": ("failed", 6),
    "AreaTest.DISABLED_Triangle": ("skipped", 10),
    "PerimeterTest.NeedsGpu": ("skipped", 12),
    "GridFixture.Empty": ("passed", 22),
    "Small/ScaleTest.Doubles/0": ("passed", 26),
    "Small/ScaleTest.Doubles/1": ("failed", 26),
    "Small/ScaleTest.Doubles/2": ("passed", 26),
    "VecTest/0.ZeroLength": ("passed", 38),
    "VecTest/1.ZeroLength": ("failed", 38),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "shapes_test.cpp").write_text(SHAPES_TEST)
    (tmp_path / "tests" / "other_test.cpp").write_text(OTHER_TEST)
    (tmp_path / "CMakeLists.txt").write_text(CMAKE)
    return tmp_path


def parse_gtest(run: RunOutput) -> TestReport:
    """The whole parse: googletest's parser, then the normalizer (lines through ``googletest.locate``)."""
    return parse(run, "googletest")


def run_of(cwd: Path, command: str, stdout: str, exit_code: int = 1, stderr: str = "") -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=cwd)


def summary(report) -> dict[str, tuple[str, int | None]]:  # type: ignore[no-untyped-def]
    return {t.id: (t.status.value, t.line) for t in report.tests}


# -- console ---------------------------------------------------------------------------
def test_full_console_statuses_lines_and_messages(project: Path) -> None:
    report = parse_gtest(run_of(project, "./build/geo_tests", FULL))
    assert summary(report) == EXPECTED_FULL
    assert all(t.file == "tests/shapes_test.cpp" for t in report.tests)
    by = {t.id: t for t in report.tests}
    assert "pi is off" in by["AreaTest.Circle"].message
    assert by["AreaTest.Circle"].duration_s == 0.001
    assert "Which is: 5" in by["Small/ScaleTest.Doubles/1"].message
    assert by["PerimeterTest.NeedsGpu"].message == "no gpu here"
    assert by["PerimeterTest.NeedsGpu"].native_status == "skipped (GTEST_SKIP)"
    assert by["AreaTest.DISABLED_Triangle"].native_status == "disabled"
    assert "tests/shapes_test.cpp:7: Failure" in by["AreaTest.Circle"].details
    assert report.warnings == []
    assert report.sources == ["console"]


def test_coloured_console_is_read_like_plain(project: Path) -> None:
    coloured = "\n".join(
        ("\x1b[0;32m" + line[:13] + "\x1b[m" + line[13:]) if line.startswith("[") else line
        for line in FULL.splitlines()
    )
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_color=yes", coloured))
    assert summary(report) == EXPECTED_FULL


def test_print_time_off_and_msvc_failure_format(tmp_path: Path) -> None:
    out = """[==========] Running 2 tests from 1 test suite.
[ RUN      ] Win.Paths
C:\\src\\win_test.cc(12): error: Value of: ok
  Actual: false
Expected: true
[  FAILED  ] Win.Paths
[ RUN      ] Win.Drives
[       OK ] Win.Drives
[==========] 2 tests from 1 test suite ran.
[  PASSED  ] 1 test.
[  FAILED  ] 1 test, listed below:
[  FAILED  ] Win.Paths
"""
    report = parse_gtest(run_of(tmp_path, "win_tests.exe --gtest_print_time=0", out))
    by = {t.id: t for t in report.tests}
    assert by["Win.Paths"].status == Status.FAILED
    assert by["Win.Drives"].status == Status.PASSED
    assert "Value of: ok" in by["Win.Paths"].message
    assert "Expected: true" in by["Win.Paths"].message
    assert report.warnings == []


def test_parse_console_public_helper_names_tests_in_order() -> None:
    results = gt.parse_console(FULL.splitlines())
    assert [r.id for r in results][:3] == ["AreaTest.Square", "AreaTest.Circle", "AreaTest.DISABLED_Triangle"]
    assert all(r.file is None for r in results)
    crashed = gt.parse_console(["[ RUN      ] Io.Reads", "[       OK ] Io.Reads (0 ms)", "[ RUN      ] Io.Null"])
    assert [(r.id, r.status, r.native_status) for r in crashed] == [
        ("Io.Reads", Status.PASSED, None), ("Io.Null", Status.FAILED, "crashed")]


def test_repeat_keeps_a_failure_from_any_iteration(tmp_path: Path) -> None:
    it = """Repeating all tests (iteration {n}) . . .

[==========] Running 1 test from 1 test suite.
[ RUN      ] Flaky.Sometimes
{body}[==========] 1 test from 1 test suite ran. (0 ms total)
"""
    out = (it.format(n=1, body="a.cc:3: Failure\nboom\n[  FAILED  ] Flaky.Sometimes (0 ms)\n")
           + it.format(n=2, body="[       OK ] Flaky.Sometimes (0 ms)\n[  PASSED  ] 1 test.\n"))
    report = parse_gtest(run_of(tmp_path, "./t --gtest_repeat=2", out))
    assert summary(report) == {"Flaky.Sometimes": ("failed", None)}
    assert report.tests[0].message == "boom"


def test_two_binaries_in_one_command(project: Path) -> None:
    second = """Running main() from gtest_main.cc
[==========] Running 1 test from 1 test suite.
[ RUN      ] OtherTest.Unrelated
[       OK ] OtherTest.Unrelated (0 ms)
[==========] 1 test from 1 test suite ran. (0 ms total)
[  PASSED  ] 1 test.
"""
    report = parse_gtest(run_of(project, "./build/geo_tests; ./build/other_tests", FULL + second))
    assert summary(report)["OtherTest.Unrelated"] == ("passed", 2)
    assert len(report.tests) == len(EXPECTED_FULL) + 1
    assert report.warnings == []


# -- crashes and kills --------------------------------------------------------------------
CRASH = """[==========] Running 3 tests from 1 test suite.
[----------] 3 tests from IoTest
[ RUN      ] IoTest.Opens
[       OK ] IoTest.Opens (0 ms)
[ RUN      ] IoTest.NullRead
reading...
"""


def test_segfault_mid_run_fails_the_running_test_and_keeps_earlier_ones(tmp_path: Path) -> None:
    report = parse_gtest(run_of(tmp_path, "./build/io_tests --gtest_output=xml:r.xml", CRASH, exit_code=139,
                             stderr="Segmentation fault (core dumped)\n"))
    assert summary(report) == {"IoTest.Opens": ("passed", None), "IoTest.NullRead": ("failed", None)}
    crashed = report.tests[1]
    assert crashed.native_status == "crashed"
    assert "SIGSEGV" in crashed.message
    assert "Segmentation fault" in crashed.message
    assert not crashed.timed_out and not report.timed_out
    # the report is written when the run ends: a crashed run has none to trust
    assert any("crashed" in w for w in report.warnings)


def test_abort_with_uncaught_exception_quotes_terminate_line(tmp_path: Path) -> None:
    report = parse_gtest(run_of(tmp_path, "./build/io_tests", CRASH, exit_code=134,
                             stderr="terminate called after throwing an instance of 'std::logic_error'\n"
                                    "  what():  bad state\n"))
    msg = report.find("IoTest.NullRead").message
    assert "SIGABRT" in msg and "what():  bad state" in msg


def test_killed_by_timeout_marks_running_test_timed_out(tmp_path: Path) -> None:
    report = parse_gtest(run_of(tmp_path, "timeout 5 ./build/io_tests", CRASH, exit_code=124))
    t = report.find("IoTest.NullRead")
    assert t.status == Status.FAILED and t.timed_out
    assert report.timed_out
    assert report.find("IoTest.Opens").status == Status.PASSED


# -- brief mode and the sources -------------------------------------------------------------
def test_brief_mode_names_passed_skipped_disabled_from_sources(project: Path) -> None:
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_brief=1", BRIEF))
    assert summary(report) == EXPECTED_FULL
    by = {t.id: t for t in report.tests}
    # the skip reason is tied to the test whose definition encloses its line
    assert by["PerimeterTest.NeedsGpu"].message == "no gpu here"
    assert by["AreaTest.DISABLED_Triangle"].native_status == "disabled"
    assert "sources" in report.sources
    assert report.warnings == []


def test_brief_mode_with_filter_and_env_variable(project: Path) -> None:
    out = """[==========] 3 tests from 1 test suite ran. (0 ms total)
[  PASSED  ] 3 tests.
"""
    report = parse_gtest(run_of(project, "GTEST_BRIEF=1 ./build/geo_tests --gtest_filter='Small/*'", out, 0))
    assert summary(report) == {f"Small/ScaleTest.Doubles/{i}": ("passed", 26) for i in range(3)}


def test_brief_mode_counts_disagreeing_with_sources_adds_nothing_invented(project: Path) -> None:
    out = BRIEF.replace("[  PASSED  ] 5 tests.", "[  PASSED  ] 7 tests.").replace("9 tests from", "11 tests from")
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_brief=1", out))
    # the disabled test still agrees with 'YOU HAVE 1 DISABLED TEST'; no passed test is invented
    assert {t.id for t in report.tests} == {"AreaTest.Circle", "Small/ScaleTest.Doubles/1", "VecTest/1.ZeroLength",
                                            "AreaTest.DISABLED_Triangle"}
    assert any("gtest ran 11" in w for w in report.warnings)


def test_old_gtest_without_disabled_lines_lists_disabled_from_sources(project: Path) -> None:
    old = FULL.replace("[ DISABLED ] AreaTest.DISABLED_Triangle\n", "")
    report = parse_gtest(run_of(project, "./build/geo_tests", old))
    assert summary(report) == EXPECTED_FULL


def test_filter_glob_and_disabled_rules() -> None:
    m = gt.filter_matcher("Area*:Vec?est/*-*Circle")
    assert m("AreaTest.Square") and m("VecTest/1.ZeroLength")
    assert not m("AreaTest.Circle") and not m("GridFixture.Empty")
    assert gt.filter_matcher("-Slow*")("Fast.One") and not gt.filter_matcher("-Slow*")("SlowTest.X")
    assert cpp.is_disabled("S.DISABLED_x") and cpp.is_disabled("DISABLED_S.x") and cpp.is_disabled("P/DISABLED_S.x/0")
    assert not cpp.is_disabled("S.x_DISABLED_")


def test_split_id_for_param_and_typed_names() -> None:
    assert cpp.split_id("Inst/Suite.Name/3") == ("Suite", "Name")
    assert cpp.split_id("Suite/1.Name") == ("Suite", "Name")
    assert cpp.split_id("Inst/Suite/0.Name") == ("Suite", "Name")
    assert cpp.split_id("Plain.Test") == ("Plain", "Test")


def test_enumerate_generators(tmp_path: Path) -> None:
    (tmp_path / "p_test.cc").write_text("""
const int kSizes[] = {1, 2, 4, 8};
TEST_P(Combo, Works) {}
INSTANTIATE_TEST_SUITE_P(A, Combo, testing::Combine(testing::Bool(), testing::Range(0, 6, 2)));
INSTANTIATE_TEST_SUITE_P(, Combo, ::testing::ValuesIn(kSizes));
TYPED_TEST_P(Stack, Pushes) {}
REGISTER_TYPED_TEST_SUITE_P(Stack, Pushes);
INSTANTIATE_TYPED_TEST_SUITE_P(My, Stack, ::testing::Types<std::pair<int, int>, char>);
// TEST(Commented, Out) {}
""")
    from greenloop.parsers.locate import SourceIndex
    ids = [tid for tid, _ in cpp.GTestSources(SourceIndex(tmp_path)).enumerate(None)]
    assert ids == [*(f"A/Combo.Works/{i}" for i in range(6)), *(f"Combo.Works/{i}" for i in range(4)),
                   "My/Stack/0.Pushes", "My/Stack/1.Pushes"]


def test_enumerate_gives_up_on_custom_parameter_names(tmp_path: Path) -> None:
    (tmp_path / "n_test.cc").write_text("""TEST_P(Named, Case) {}
INSTANTIATE_TEST_SUITE_P(X, Named, testing::Values(1, 2), [](const auto& i) { return "v" + std::to_string(i.param); });
""")
    from greenloop.parsers.locate import SourceIndex
    assert cpp.GTestSources(SourceIndex(tmp_path)).enumerate(None) is None


# -- reports -----------------------------------------------------------------------------------
XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1" disabled="1" errors="0" time="0.001" name="AllTests">
  <testsuite name="AreaTest" tests="3" failures="1" disabled="1" skipped="0" errors="0" time="0">
    <testcase name="Square" file="{root}/tests/shapes_test.cpp" line="4" status="run" result="completed" time="0" classname="AreaTest" />
    <testcase name="Circle" file="{root}/tests/shapes_test.cpp" line="6" status="run" result="completed" time="0.002" classname="AreaTest">
      <failure message="{root}/tests/shapes_test.cpp:7&#x0A;Value differs&#x0A;pi is off" type=""><![CDATA[{root}/tests/shapes_test.cpp:7
Value differs
pi is off]]></failure>
    </testcase>
    <testcase name="DISABLED_Triangle" file="{root}/tests/shapes_test.cpp" line="10" status="notrun" result="suppressed" time="0" classname="AreaTest" />
  </testsuite>
  <testsuite name="PerimeterTest" tests="1" failures="0" disabled="0" skipped="1" errors="0" time="0">
    <testcase name="NeedsGpu" file="{root}/tests/shapes_test.cpp" line="12" status="run" result="skipped" time="0" classname="PerimeterTest">
      <skipped message="{root}/tests/shapes_test.cpp:13&#x0A;no gpu here"><![CDATA[{root}/tests/shapes_test.cpp:13
no gpu here]]></skipped>
    </testcase>
  </testsuite>
</testsuites>
"""


def test_xml_report_is_used_with_file_and_line(project: Path) -> None:
    (project / "out").mkdir()
    (project / "out" / "geo.xml").write_text(XML.format(root=project))
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_output=xml:out/geo.xml", ""))
    assert summary(report) == {"AreaTest.Square": ("passed", 4), "AreaTest.Circle": ("failed", 6),
                               "AreaTest.DISABLED_Triangle": ("skipped", 10), "PerimeterTest.NeedsGpu": ("skipped", 12)}
    by = {t.id: t for t in report.tests}
    assert by["AreaTest.Circle"].file == "tests/shapes_test.cpp"
    assert by["AreaTest.Circle"].message == "Value differs\npi is off"  # location line dropped
    assert by["AreaTest.Circle"].duration_s == 0.002
    assert by["PerimeterTest.NeedsGpu"].message == "no gpu here"
    assert by["AreaTest.DISABLED_Triangle"].native_status == "disabled"
    assert report.sources == ["console", "gtest-xml:out/geo.xml"]


def test_xml_report_in_a_directory_is_named_after_the_binary(project: Path) -> None:
    (project / "out").mkdir()
    (project / "out" / "geo_tests.xml").write_text(XML.format(root=project))
    report = parse_gtest(run_of(project, "GTEST_OUTPUT=xml:out/ ./build/geo_tests", ""))
    assert len(report.tests) == 4 and "gtest-xml:out/geo_tests.xml" in report.sources


def test_truncated_xml_falls_back_to_console_for_the_rest(project: Path) -> None:
    xml = XML.format(root=project)
    (project / "r.xml").write_text(xml[: xml.index("<testcase name=\"DISABLED")])
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_output=xml:r.xml", FULL))
    assert summary(report) == EXPECTED_FULL
    assert any("truncated" in w for w in report.warnings)
    assert any("missing from the report" in w for w in report.warnings)


def test_missing_report_warns_and_uses_console(project: Path) -> None:
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_output=json:nope/r.json", FULL))
    assert summary(report) == EXPECTED_FULL
    assert any("does not exist" in w for w in report.warnings)


def test_json_report_statuses_and_byte_escaped_unicode(project: Path) -> None:
    doc = {"tests": 3, "testsuites": [{"name": "AreaTest", "testsuite": [
        {"name": "Square", "file": f"{project}/tests/shapes_test.cpp", "line": 4, "status": "RUN",
         "result": "COMPLETED", "time": "0s", "classname": "AreaTest"},
        {"name": "Circle", "file": f"{project}/tests/shapes_test.cpp", "line": 6, "status": "RUN",
         "result": "COMPLETED", "time": "0.003s", "classname": "AreaTest",
         "failures": [{"failure": "tests/shapes_test.cpp:7\nexpected \u00e2\u0096\u0087 got #", "type": ""}]},
        {"name": "DISABLED_Triangle", "file": f"{project}/tests/shapes_test.cpp", "line": 10, "status": "NOTRUN",
         "result": "SUPPRESSED", "time": "0s", "classname": "AreaTest"}]}]}
    (project / "r.json").write_text(json.dumps(doc))
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_output=json:r.json", ""))
    assert summary(report) == {"AreaTest.Square": ("passed", 4), "AreaTest.Circle": ("failed", 6),
                               "AreaTest.DISABLED_Triangle": ("skipped", 10)}
    circle = report.find("AreaTest.Circle")
    assert circle.message == "expected \u2587 got #"
    assert circle.duration_s == 0.003


@pytest.mark.parametrize("content", ['{"testsuites": [{"name": "A", "testsuite": [', "\x00\xff garbage", ""])
def test_broken_json_report_warns(project: Path, content: str) -> None:
    (project / "r.json").write_text(content)
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_output=json:r.json", FULL))
    assert summary(report) == EXPECTED_FULL
    assert any("r.json" in w for w in report.warnings)


def test_report_suite_level_failure_becomes_errored_entry(tmp_path: Path) -> None:
    (tmp_path / "r.xml").write_text("""<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="1" disabled="0" errors="0" name="AllTests">
  <testsuite name="DbTest" tests="1" failures="1" disabled="0" skipped="0" errors="0">
    <testcase name="Reads" status="run" result="completed" time="0" classname="DbTest" />
    <testcase name="" status="run" result="completed" time="0" classname="">
      <failure message="db_test.cc:9&#x0A;no database" type=""><![CDATA[db_test.cc:9
no database]]></failure>
    </testcase>
  </testsuite>
</testsuites>
""")
    report = parse_gtest(run_of(tmp_path, "./db_tests --gtest_output=xml:r.xml", ""))
    assert summary(report) == {"DbTest.Reads": ("passed", None), "DbTest": ("errored", None)}
    assert report.find("DbTest").message == "no database"


def test_console_suite_setup_failure_becomes_errored_entry(tmp_path: Path) -> None:
    out = """[==========] Running 1 test from 1 test suite.
[----------] Global test environment set-up.
[----------] 1 test from DbTest
db_test.cc:9: Failure
Failed
no database
[ RUN      ] DbTest.Reads
[       OK ] DbTest.Reads (0 ms)
[----------] 1 test from DbTest (0 ms total)

[----------] Global test environment tear-down
[==========] 1 test from 1 test suite ran. (0 ms total)
[  PASSED  ] 1 test.
[  FAILED  ] DbTest: SetUpTestSuite or TearDownTestSuite

 1 FAILED TEST SUITE
"""
    report = parse_gtest(run_of(tmp_path, "./db_tests", out))
    assert summary(report) == {"DbTest.Reads": ("passed", None), "DbTest": ("errored", None)}
    assert "no database" in report.find("DbTest").message


# -- bad input, detection ------------------------------------------------------------------------
@pytest.mark.parametrize("stdout", ["", "\x00\x01\x02 binary \xff garbage\n" * 50, "[ RUN      ]\n[  FAILED  ]\n"])
def test_bad_input_does_not_crash(tmp_path: Path, stdout: str) -> None:
    report = parse_gtest(run_of(tmp_path, "./build/geo_tests", stdout, exit_code=1))
    assert report.tests == []
    assert report.warnings


def test_no_gtest_output_after_build_failure_reports_build_error(project: Path) -> None:
    err = ("tests/shapes_test.cpp:4:30: error: 'area' was not declared in this scope\n"
           "make[2]: *** [CMakeFiles/geo_tests.dir/build.make:76: CMakeFiles/geo_tests.dir/tests/shapes_test.cpp.o]"
           " Error 1\n")
    report = parse_gtest(run_of(project, "cmake --build build && ./build/geo_tests", "", exit_code=2, stderr=err))
    assert report.build_error
    assert [(t.id, t.status, t.line) for t in report.tests] == [("tests/shapes_test.cpp", Status.ERRORED, 4)]


def test_command_and_output_detection() -> None:
    for cmd in ("./build/geo_tests --gtest_filter=A.*", "GTEST_OUTPUT=xml:r.xml ./x", "build/bin/unit_tests",
                "cmake --build build && ./build/geo_tests"):
        found = from_command(cmd)
        assert found is not None and found.framework == "googletest", cmd
    for cmd in ("pytest -k gtest_x", "ctest --test-dir build", "go test ./...", "./gradlew test"):
        found = from_command(cmd)
        assert found is None or found.framework != "googletest", cmd
    found = from_output(RunOutput(command="", stdout_text=FULL))
    assert found is not None and found.framework == "googletest"


def test_brief_mode_crash_cannot_name_the_test_and_says_so(project: Path) -> None:
    out = BRIEF[: BRIEF.index("<ROOT>/tests/shapes_test.cpp:38")] + "<ROOT>/tests/shapes_test.cpp:38: Failure\nboom\n"
    report = parse_gtest(run_of(project, "./build/geo_tests --gtest_brief=1", out, exit_code=134))
    assert {t.id for t in report.tests} == {"AreaTest.Circle", "Small/ScaleTest.Doubles/1"}
    assert any("SIGABRT" in w for w in report.warnings)


def test_where_clause_is_kept_in_details(project: Path) -> None:
    report = parse_gtest(run_of(project, "./build/geo_tests", FULL))
    assert report.find("VecTest/1.ZeroLength").details.startswith("where TypeParam = float")
