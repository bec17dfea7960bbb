"""ctest parser: console result lines of every kind, -j ordering,
--output-on-failure blocks (gtest and plain programs), -V prefixed output,
--progress, --output-junit, gtest_discover_tests names, summary lists,
CMake/make/ninja/compiler build errors and bad input. Outputs are written
from ctest's and the compilers' documented formats for a small 'geometry'
project, not copied from the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import ctest, parse
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.models import Status
from greenloop.parsers.run_output import RunOutput
from tests.parsers.helpers import by_id

SHAPES_TEST = """#include <gtest/gtest.h>
#include "shapes.h"

TEST(AreaTest, Square) { EXPECT_EQ(area(square(2)), 4); }

TEST(AreaTest, DISABLED_Triangle) { EXPECT_EQ(area(tri(2, 2)), 2); }

TEST(PerimeterTest,
     Circle) { EXPECT_NEAR(perimeter(circle(1)), 6.28, 0.01); }

class GridFixture : public ::testing::Test {};

TEST_F(GridFixture, Neighbours) { EXPECT_EQ(1, 2); }

class ScaleTest : public ::testing::TestWithParam<int> {};

TEST_P(ScaleTest, Doubles) { EXPECT_EQ(GetParam() * 2, 4); }

INSTANTIATE_TEST_SUITE_P(Small, ScaleTest, ::testing::Values(1, 2));

TEST(IoTest, Crash) { int* p = nullptr; *p = 1; }

TEST(IoTest, Hangs) { for (;;) {} }
"""

CMAKE = """cmake_minimum_required(VERSION 3.16)
project(geometry CXX)
enable_testing()
add_executable(shape_tests tests/shapes_test.cpp)
gtest_discover_tests(shape_tests)
add_executable(smoke tests/smoke.cpp)
add_test(NAME smoke_run COMMAND smoke --fast)
"""

SMOKE = """#include <cassert>

int main() {
    assert(1 + 1 == 3);
    return 0;
}
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "shapes_test.cpp").write_text(SHAPES_TEST)
    (tmp_path / "tests" / "smoke.cpp").write_text(SMOKE)
    (tmp_path / "CMakeLists.txt").write_text(CMAKE)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "shapes.cpp").write_text("#include \"shapes.h\"\nint area(Shape s) {\n  return s.w * s.h;\n}\n")
    (tmp_path / "src" / "shapes.h").write_text("struct Shape { int w, h; };\nint area(Shape s);\n")
    return tmp_path


def run(cwd: Path | None, stdout: str = "", stderr: str = "", command: str = "ctest --test-dir build",
        exit_code: int = 8) -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=cwd)


GTEST_FAIL_BLOCK = """Running main() from gtest_main.cc
Note: Google Test filter = GridFixture.Neighbours
[==========] Running 1 test from 1 test suite.
[ RUN      ] GridFixture.Neighbours
printing some noise first
/home/ci/geometry/tests/shapes_test.cpp:13: Failure
Expected equality of these values:
  1
  2
grid cells need neighbours
[  FAILED  ] GridFixture.Neighbours (0 ms)
[==========] 1 test from 1 test suite ran. (0 ms total)
[  FAILED  ] 1 test, listed below:
[  FAILED  ] GridFixture.Neighbours

 1 FAILED TEST
"""

PARALLEL = f"""Test project /home/ci/geometry/build
      Start  1: AreaTest.Square
      Start  2: AreaTest.Triangle
 1/9 Test  #2: AreaTest.Triangle ..................***Not Run (Disabled)   0.00 sec
      Start  3: PerimeterTest.Circle
 2/9 Test  #1: AreaTest.Square ....................   Passed    0.01 sec
      Start  4: GridFixture.Neighbours
 3/9 Test  #4: GridFixture.Neighbours .............***Failed    0.02 sec
{GTEST_FAIL_BLOCK}
      Start  5: Small/ScaleTest.Doubles/1
 4/9 Test  #3: PerimeterTest.Circle ...............***Skipped   0.00 sec
      Start  6: Small/ScaleTest.Doubles/2
 5/9 Test  #5: Small/ScaleTest.Doubles/1 ..........***Failed    0.01 sec
Running main() from gtest_main.cc
[ RUN      ] Small/ScaleTest.Doubles/0
/home/ci/geometry/tests/shapes_test.cpp:17: Failure
Expected equality of these values:
  GetParam() * 2
    Which is: 2
  4
[  FAILED  ] Small/ScaleTest.Doubles/0, where GetParam() = 1 (0 ms)

      Start  7: IoTest.Crash
 6/9 Test  #6: Small/ScaleTest.Doubles/2 ..........   Passed    0.01 sec
      Start  8: IoTest.Hangs
 7/9 Test  #7: IoTest.Crash .......................***Exception: SegFault  0.01 sec
Running main() from gtest_main.cc
[ RUN      ] IoTest.Crash

      Start  9: smoke_run
 8/9 Test  #9: smoke_run ..........................***Exception: Subprocess aborted  0.00 sec
smoke: /home/ci/geometry/tests/smoke.cpp:4: int main(): Assertion `1 + 1 == 3' failed.

 9/9 Test  #8: IoTest.Hangs .......................***Timeout   5.01 sec
Running main() from gtest_main.cc
[ RUN      ] IoTest.Hangs


38% tests passed, 5 tests failed out of 8

Total Test time (real) =   5.05 sec

The following tests did not run:
\t  2 - AreaTest.Triangle (Disabled)
\t  3 - PerimeterTest.Circle (Skipped)

The following tests FAILED:
\t  4 - GridFixture.Neighbours (Failed)
\t  5 - Small/ScaleTest.Doubles/1 (Failed)
\t  7 - IoTest.Crash (SEGFAULT)
\t  8 - IoTest.Hangs (Timeout)
\t  9 - smoke_run (Subprocess aborted)
"""


def test_parallel_output_on_failure_statuses(project: Path) -> None:
    report = ctest.parse(run(project, PARALLEL, "Errors while running CTest\n",
                             "ctest --test-dir build -j4 --output-on-failure"))
    t = by_id(report)
    assert list(t) == ["AreaTest.Square", "AreaTest.Triangle", "PerimeterTest.Circle", "GridFixture.Neighbours",
                       "Small/ScaleTest.Doubles/1", "Small/ScaleTest.Doubles/2", "IoTest.Crash", "IoTest.Hangs",
                       "smoke_run"]
    assert t["AreaTest.Square"].status == Status.PASSED and t["AreaTest.Square"].duration_s == 0.01
    assert t["AreaTest.Triangle"].status == Status.SKIPPED
    assert t["AreaTest.Triangle"].native_status == "Not Run (Disabled)"
    assert t["PerimeterTest.Circle"].status == Status.SKIPPED and t["PerimeterTest.Circle"].native_status == "Skipped"
    assert t["GridFixture.Neighbours"].status == Status.FAILED
    assert t["IoTest.Crash"].native_status == "Exception: SegFault" and not t["IoTest.Crash"].timed_out
    assert t["IoTest.Hangs"].timed_out and t["IoTest.Hangs"].native_status == "Timeout"
    assert t["smoke_run"].native_status == "Exception: Subprocess aborted"
    assert report.timed_out and not report.build_error
    assert report.totals.passed == 2 and report.totals.failed == 5 and report.totals.skipped == 2
    assert report.warnings == []  # summary and lists agree


def test_gtest_failure_block_is_the_message(project: Path) -> None:
    t = by_id(ctest.parse(run(project, PARALLEL)))
    msg = t["GridFixture.Neighbours"].message
    assert msg.startswith("Expected equality of these values:") and msg.endswith("grid cells need neighbours")
    assert "printing some noise first" not in msg
    assert "printing some noise first" in t["GridFixture.Neighbours"].details
    assert "Which is: 2" in t["Small/ScaleTest.Doubles/1"].message
    assert "Assertion `1 + 1 == 3' failed." in t["smoke_run"].message
    assert "SegFault" in t["IoTest.Crash"].message and "IoTest.Crash" in t["IoTest.Crash"].message
    assert "Timeout" in t["IoTest.Hangs"].message


def test_gtest_discover_names_locate_definitions(project: Path) -> None:
    t = by_id(ctest.parse(run(project, PARALLEL)))
    assert (t["AreaTest.Square"].file, t["AreaTest.Square"].line) == ("tests/shapes_test.cpp", 4)
    # DISABLED_ stripped by gtest_discover_tests
    assert (t["AreaTest.Triangle"].file, t["AreaTest.Triangle"].line) == ("tests/shapes_test.cpp", 6)
    # macro split over two lines
    assert t["PerimeterTest.Circle"].line == 8
    assert t["GridFixture.Neighbours"].line == 13
    # TEST_P instance named by its parameter: the TEST_P line
    assert t["Small/ScaleTest.Doubles/1"].line == t["Small/ScaleTest.Doubles/2"].line == 17
    # plain add_test: the executable's source, at main
    assert (t["smoke_run"].file, t["smoke_run"].line) == ("tests/smoke.cpp", 3)


def test_test_prefix_and_typed_names(project: Path) -> None:
    out = """Test project /p/build
    Start 1: geo.AreaTest.Square
1/2 Test #1: geo.AreaTest.Square ...............   Passed    0.00 sec
    Start 2: unit_GridFixture.Neighbours
2/2 Test #2: unit_GridFixture.Neighbours .......   Passed    0.00 sec

100% tests passed, 0 tests failed out of 2
"""
    t = by_id(ctest.parse(run(project, out, exit_code=0)))
    assert t["geo.AreaTest.Square"].line == 4
    assert t["unit_GridFixture.Neighbours"].line == 13


def test_result_name_truncated_uses_start_line(project: Path) -> None:
    out = """Test project /p/build
    Start 1: Small/ScaleTest.Doubles/a_really_long_parameter_name
1/1 Test #1: Small/ScaleTest.Doubles/a_really_...***Failed    0.00 sec

0% tests passed, 1 tests failed out of 1
"""
    report = ctest.parse(run(project, out))
    assert [t.id for t in report.tests] == ["Small/ScaleTest.Doubles/a_really_long_parameter_name"]


def test_skip_message_from_junit_system_out(project: Path) -> None:
    (project / "build").mkdir()
    (project / "build" / "results.xml").write_text("""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="3" failures="1" disabled="0" skipped="1" hostname="" time="0">
  <testcase name="PerimeterTest.Circle" classname="PerimeterTest.Circle" time="0.01" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>[ RUN      ] PerimeterTest.Circle
/p/tests/shapes_test.cpp:9: Skipped
circles need a GPU
[  SKIPPED ] PerimeterTest.Circle (0 ms)
</system-out>
  </testcase>
  <testcase name="GridFixture.Neighbours" classname="GridFixture.Neighbours" time="0.01" status="fail">
    <failure message=""/>
    <system-out>[ RUN      ] GridFixture.Neighbours
/p/tests/shapes_test.cpp:13: Failure
Value of: ok
  Actual: false
Expected: true
[  FAILED  ] GridFixture.Neighbours (0 ms)
</system-out>
  </testcase>
  <testcase name="AreaTest.Square" classname="AreaTest.Square" time="0.01" status="run">
    <system-out>[       OK ] AreaTest.Square (0 ms)</system-out>
  </testcase>
</testsuite>
""")
    out = """Test project /p/build
    Start 1: AreaTest.Square
1/3 Test #1: AreaTest.Square ..................   Passed    0.01 sec
    Start 2: PerimeterTest.Circle
2/3 Test #2: PerimeterTest.Circle .............***Skipped   0.01 sec
    Start 3: GridFixture.Neighbours
3/3 Test #3: GridFixture.Neighbours ...........***Failed    0.01 sec

67% tests passed, 1 tests failed out of 3
"""
    report = ctest.parse(run(project, out, command="ctest --test-dir build --output-junit results.xml"))
    t = by_id(report)
    assert report.sources == ["console", "junit-xml:results.xml"]
    assert t["PerimeterTest.Circle"].message == "circles need a GPU"
    # no --output-on-failure: the failure message comes from the report's system-out
    assert "Expected: true" in t["GridFixture.Neighbours"].message
    assert report.warnings == []


def test_junit_alone_when_console_is_empty(project: Path) -> None:
    (project / "out.xml").write_text("""<?xml version="1.0"?>
<testsuite tests="3">
  <testcase name="a" classname="a" time="0.1" status="run"/>
  <testcase name="b" classname="b" time="0.1" status="fail"><failure message=""/></testcase>
  <testcase name="c" classname="c" time="0" status="disabled"><system-out>Disabled</system-out></testcase>
</testsuite>""")
    report = ctest.parse(run(project, "", command="cd . && ctest --output-junit out.xml"))
    assert {t.id: t.status for t in report.tests} == {"a": Status.PASSED, "b": Status.FAILED, "c": Status.SKIPPED}


def test_junit_relative_to_cd_directory(project: Path) -> None:
    (project / "build").mkdir()
    (project / "build" / "j.xml").write_text('<testsuite><testcase name="a" status="run"/></testsuite>')
    report = ctest.parse(run(project, "", command="cd build && ctest --output-junit j.xml"))
    assert [t.id for t in report.tests] == ["a"] and report.sources[-1] == "junit-xml:j.xml"


def test_missing_and_truncated_junit_fall_back_to_console(project: Path) -> None:
    out = """    Start 1: AreaTest.Square
1/1 Test #1: AreaTest.Square ....   Passed    0.00 sec

100% tests passed, 0 tests failed out of 1
"""
    report = ctest.parse(run(project, out, command="ctest --output-junit nope.xml", exit_code=0))
    assert [t.status for t in report.tests] == [Status.PASSED]
    assert any("nope.xml" in w and "not found" in w for w in report.warnings)
    (project / "cut.xml").write_text('<testsuite><testcase name="AreaTest.Square" status="run"/><testca')
    report = ctest.parse(run(project, out, command="ctest --output-junit cut.xml", exit_code=0))
    assert [t.status for t in report.tests] == [Status.PASSED]
    assert any("truncated" in w for w in report.warnings)


def test_verbose_prefixed_output(project: Path) -> None:
    out = """UpdateCTestConfiguration  from :/p/build/DartConfiguration.tcl
Test project /p/build
Constructing a list of tests
test 1
    Start 1: GridFixture.Neighbours

1: Test command: /p/build/shape_tests "--gtest_filter=GridFixture.Neighbours"
1: Working Directory: /p/build
1: Test timeout computed to be: 1500
1: [ RUN      ] GridFixture.Neighbours
1: /p/tests/shapes_test.cpp:13: Failure
1: Value of: cells.size()
1: neighbour count
1: [  FAILED  ] GridFixture.Neighbours (0 ms)
1/1 Test #1: GridFixture.Neighbours ...........***Failed    0.00 sec

0% tests passed, 1 tests failed out of 1
"""
    t = by_id(ctest.parse(run(project, out, command="ctest -V")))
    msg = t["GridFixture.Neighbours"].message
    assert "Value of: cells.size()" in msg and "neighbour count" in msg
    assert "Test command" not in (t["GridFixture.Neighbours"].details or "")


def test_regex_reason_over_several_lines(project: Path) -> None:
    out = """    Start 1: smoke_run
1/1 Test #1: smoke_run ........***Failed  Required regular expression not found. Regex=[all good
]  0.00 sec
some output

0% tests passed, 1 tests failed out of 1
"""
    t = by_id(ctest.parse(run(project, out)))
    assert t["smoke_run"].status == Status.FAILED
    assert "Required regular expression not found" in t["smoke_run"].message


def test_not_run_missing_executable(project: Path) -> None:
    out = """    Start 1: smoke_run
Could not find executable smoke
Looked in the following places:
smoke
1/1 Test #1: smoke_run ........***Not Run   0.00 sec

0% tests passed, 1 tests failed out of 1

The following tests FAILED:
\t  1 - smoke_run (Not Run)
"""
    err = "Unable to find executable: smoke\nErrors while running CTest\n"
    t = by_id(ctest.parse(run(project, out, err)))
    assert t["smoke_run"].status == Status.FAILED and t["smoke_run"].native_status == "Not Run"
    assert "find executable" in t["smoke_run"].message


def test_progress_mode_passes_have_no_result_line(project: Path) -> None:
    out = """Test project /p/build
1/2 Test #1: AreaTest.Square
2/2 Test #2: GridFixture.Neighbours
2/2 Test #2: GridFixture.Neighbours ...***Failed    0.00 sec

50% tests passed, 1 tests failed out of 2
"""
    t = by_id(ctest.parse(run(project, out, command="ctest --progress")))
    assert t["AreaTest.Square"].status == Status.PASSED
    assert t["GridFixture.Neighbours"].status == Status.FAILED


def test_missing_result_lines_come_from_summary_lists(project: Path) -> None:
    out = """    Start 1: AreaTest.Square
1/2 Test #1: AreaTest.Square ....   Passed    0.00 sec

50% tests passed, 1 tests failed out of 2

The following tests FAILED:
\t  2 - IoTest.Crash (SEGFAULT)
"""
    report = ctest.parse(run(project, out))
    t = by_id(report)
    assert t["IoTest.Crash"].status == Status.FAILED and t["IoTest.Crash"].native_status == "Exception: SegFault"
    assert any("IoTest.Crash" in w for w in report.warnings)


def test_ctest4_summary_and_summary_mismatch_warning(project: Path) -> None:
    out = """    Start 1: a
1/1 Test #1: a ....   Passed    0.00 sec

100% tests passed out of 3
"""
    assert ctest.parse(run(project, out, exit_code=0)).summary_counts == {"failed": 0, "total": 3}
    report = parse(run(project, out, exit_code=0), "ctest")  # the normalizer checks the counts
    assert any("summary counted 3 total; the per-test results have 1 total" in w for w in report.warnings)


def test_killed_by_timeout_marks_running_tests(project: Path) -> None:
    out = """Test project /p/build
    Start 1: AreaTest.Square
    Start 2: IoTest.Hangs
1/2 Test #1: AreaTest.Square ....   Passed    0.00 sec
"""
    report = ctest.parse(run(project, out, command="timeout 10 ctest -j2", exit_code=124))
    t = by_id(report)
    assert t["IoTest.Hangs"].status == Status.FAILED and t["IoTest.Hangs"].timed_out
    assert report.timed_out


def test_make_test_target_failure_is_not_a_build_error(project: Path) -> None:
    out = """Running tests...
/usr/bin/ctest --force-new-ctest-process
Test project /p/build
    Start 1: AreaTest.Square
1/1 Test #1: AreaTest.Square ....***Failed    0.00 sec

0% tests passed, 1 tests failed out of 1
"""
    err = "Errors while running CTest\nmake: *** [Makefile:91: test] Error 8\n"
    report = ctest.parse(run(project, out, err, command="make -C build test", exit_code=2))
    assert not report.build_error and [t.id for t in report.tests] == ["AreaTest.Square"]


GCC_ERRORS = """/home/ci/geometry/src/shapes.cpp: In function 'int area(Shape)':
/home/ci/geometry/src/shapes.cpp:3:12: error: 'x' was not declared in this scope
    3 |   return x * s.h;
      |          ^
In file included from /usr/include/c++/12/vector:64,
                 from /home/ci/geometry/src/shapes.cpp:1:
/usr/include/c++/12/bits/stl_vector.h:100:3: error: something deep in the library
/home/ci/geometry/src/shapes.h:2:5: error: conflicting declaration 'int area'
gmake[2]: *** [CMakeFiles/geo.dir/build.make:76: CMakeFiles/geo.dir/src/shapes.cpp.o] Error 1
gmake[1]: *** [CMakeFiles/Makefile2:83: CMakeFiles/geo.dir/all] Error 2
gmake: *** [Makefile:91: all] Error 2
"""


def test_compiler_errors_one_entry_per_project_file(project: Path) -> None:
    # absolute paths under the project root (the sources are at tmp_path)
    err = GCC_ERRORS.replace("/home/ci/geometry", str(project))
    report = ctest.parse(run(project, "[ 25%] Building CXX object CMakeFiles/geo.dir/src/shapes.cpp.o\n", err,
                             command="cmake --build build", exit_code=2))
    assert report.build_error
    t = by_id(report)
    assert list(t) == ["src/shapes.cpp", "src/shapes.h"]  # the library header error is not a project file
    e = t["src/shapes.cpp"]
    assert e.status == Status.ERRORED and (e.file, e.line) == ("src/shapes.cpp", 3)
    assert "error: 'x' was not declared in this scope" in e.message
    assert "return x * s.h" in e.details


def test_error_only_in_system_header_goes_to_translation_unit(project: Path) -> None:
    err = """In file included from /usr/include/c++/12/vector:64,
                 from <ROOT>/src/shapes.cpp:1:
/usr/include/c++/12/bits/stl_vector.h:100:3: error: static assertion failed
"""
    report = ctest.parse(run(project, "", err, command="cmake --build build", exit_code=2))
    assert [t.id for t in report.tests] == ["src/shapes.cpp"] and report.build_error


def test_ninja_and_linker_errors(project: Path) -> None:
    out = """[1/4] Building CXX object CMakeFiles/geo.dir/src/shapes.cpp.o
[2/4] Linking CXX executable shape_tests
FAILED: shape_tests
: && /usr/bin/c++ -g CMakeFiles/shape_tests.dir/tests/shapes_test.cpp.o -o shape_tests && :
/usr/bin/ld: CMakeFiles/shape_tests.dir/tests/shapes_test.cpp.o: in function `AreaTest_Square_Test::TestBody()':
shapes_test.cpp:(.text+0x1f): undefined reference to `square(int)'
collect2: error: ld returned 1 exit status
ninja: build stopped: subcommand failed.
"""
    report = ctest.parse(run(project, out, command="cmake --build build", exit_code=1))
    assert report.build_error
    assert [t.id for t in report.tests] == ["tests/shapes_test.cpp"]
    assert "undefined reference to `square(int)'" in report.tests[0].message


def test_cmake_configure_error(project: Path) -> None:
    err = """CMake Error at CMakeLists.txt:5 (find_package):
  By not providing "FindGTest.cmake" in CMAKE_MODULE_PATH this project has
  asked CMake to find a package configuration file provided by "GTest".

-- Configuring incomplete, errors occurred!
"""
    report = ctest.parse(run(project, "", err, command="cmake -S . -B build && cmake --build build", exit_code=1))
    t = by_id(report)
    assert report.build_error and (t["CMakeLists.txt"].file, t["CMakeLists.txt"].line) == ("CMakeLists.txt", 5)
    assert "FindGTest.cmake" in t["CMakeLists.txt"].message


def test_make_failure_without_diagnostics_names_the_source(project: Path) -> None:
    err = "gmake[2]: *** [CMakeFiles/geo.dir/build.make:76: CMakeFiles/geo.dir/src/shapes.cpp.o] Error 1\n"
    report = ctest.parse(run(project, "", err, command="cmake --build build", exit_code=2))
    assert [t.id for t in report.tests] == ["src/shapes.cpp"] and report.build_error


@pytest.mark.parametrize("stdout", ["", "\x00\x01garbage\xff\n" * 50,
                                    "Test project /p/build\nNo tests were found!!!\n"])
def test_bad_input_does_not_crash(stdout: str, tmp_path: Path) -> None:
    report = ctest.parse(run(tmp_path, stdout, exit_code=1))
    assert report.tests == [] and report.warnings


def test_no_cwd_at_all() -> None:
    report = ctest.parse(run(None, PARALLEL, command="ctest --output-junit x.xml"))
    assert len(report.tests) == 9 and report.tests[0].file is None


@pytest.mark.parametrize("command", [
    "ctest --test-dir build -j4",
    "cd build && ctest --output-on-failure",
    "cmake --build build && ctest --test-dir build",
    "cmake --build build -j 4",
    "make -C build test",
])
def test_command_detection(command: str) -> None:
    found = from_command(command)
    assert found is not None and found.framework == "ctest"


def test_command_pattern_allows_env_and_path() -> None:
    assert any(p.search("CTEST_OUTPUT_ON_FAILURE=1 /usr/bin/ctest -j2") for p in ctest.COMMAND_RE)


@pytest.mark.parametrize("command", ["pytest -k ctest_x", "python ctest.py", "echo cmake"])
def test_command_detection_is_specific(command: str) -> None:
    assert not any(p.search(command) for p in ctest.COMMAND_RE)


def test_output_detection() -> None:
    # a ctest log full of gtest output (--output-on-failure) is still ctest's
    found = from_output(run(None, PARALLEL, "Errors while running CTest\n", command=""))
    assert found is not None and found.framework == "ctest"


def test_last_test_log_gives_output_without_output_on_failure(project: Path) -> None:
    log = project / "build" / "Testing" / "Temporary"
    log.mkdir(parents=True)
    (log / "LastTest.log").write_text("""Start testing: Mar 03 10:00 UTC
----------------------------------------------------------
1/2 Testing: AreaTest.Square
1/2 Test: AreaTest.Square
Command: "/p/build/shape_tests" "--gtest_filter=AreaTest.Square"
Directory: /p/build
"AreaTest.Square" start time: Mar 03 10:00 UTC
Output:
----------------------------------------------------------
[ RUN      ] AreaTest.Square
[       OK ] AreaTest.Square (0 ms)
<end of output>
Test time =   0.00 sec
----------------------------------------------------------
Test Passed.
2/2 Testing: GridFixture.Neighbours
2/2 Test: GridFixture.Neighbours
Output:
----------------------------------------------------------
[ RUN      ] GridFixture.Neighbours
/p/tests/shapes_test.cpp:13: Failure
neighbours are missing
[  FAILED  ] GridFixture.Neighbours (0 ms)
<end of output>
Test time =   0.00 sec
----------------------------------------------------------
Test Failed.
""")
    out = """Test project /p/build
    Start 1: AreaTest.Square
1/2 Test #1: AreaTest.Square ..........   Passed    0.00 sec
    Start 2: GridFixture.Neighbours
2/2 Test #2: GridFixture.Neighbours ...***Failed    0.00 sec

50% tests passed, 1 tests failed out of 2
"""
    report = ctest.parse(run(project, out, command="ctest --test-dir build"))
    assert by_id(report)["GridFixture.Neighbours"].message == "neighbours are missing"
    assert "ctest-log:build/Testing/Temporary/LastTest.log" in report.sources


def test_whole_gtest_binary_as_one_ctest_test_points_at_failing_gtest_test(project: Path) -> None:
    (project / "CMakeLists.txt").write_text(CMAKE + "add_test(NAME shapes COMMAND shape_tests)\n")
    out = f"""    Start 1: shapes
1/1 Test #1: shapes ....***Failed    0.02 sec
{GTEST_FAIL_BLOCK}
0% tests passed, 1 tests failed out of 1
"""
    t = by_id(ctest.parse(run(project, out, command="ctest --output-on-failure")))["shapes"]
    assert (t.file, t.line) == ("tests/shapes_test.cpp", 13)
    assert "grid cells need neighbours" in t.message


def test_make_no_rule_to_make_target(project: Path) -> None:
    err = ("make[2]: *** No rule to make target 'src/missing.cpp', "
           "needed by 'CMakeFiles/geo.dir/src/missing.cpp.o'.  Stop.\n")
    report = ctest.parse(run(project, "", err, command="cmake --build build", exit_code=2))
    assert [t.id for t in report.tests] == ["src/missing.cpp"] and report.build_error
    assert report.tests[0].file is None  # the file does not exist in the project


def test_result_line_without_time_loses_no_following_lines(project: Path) -> None:
    out = """    Start 1: a
1/2 Test #1: a ........***Failed
    Start 2: b
2/2 Test #2: b ........   Passed    0.00 sec

50% tests passed, 1 tests failed out of 2
"""
    report = ctest.parse(run(project, out))
    assert {t.id: t.status for t in report.tests} == {"a": Status.FAILED, "b": Status.PASSED}
    assert report.warnings == []


def test_test_output_that_looks_like_a_compiler_error_is_not_a_build_error(project: Path) -> None:
    out = """[100%] Built target smoke
Test project /p/build
    Start 1: smoke_run
1/1 Test #1: smoke_run ........***Failed    0.00 sec
tests/smoke.cpp:4: error: expected 3 got 2

0% tests passed, 1 tests failed out of 1
"""
    report = ctest.parse(run(project, out, command="cmake --build build && ctest --test-dir build --output-on-failure"))
    assert not report.build_error and [t.id for t in report.tests] == ["smoke_run"]
    assert "expected 3 got 2" in report.tests[0].message


def test_stale_junit_report_ignored_when_the_build_failed(project: Path) -> None:
    (project / "build").mkdir()
    (project / "build" / "j.xml").write_text('<testsuite><testcase name="old" status="run"/></testsuite>')
    err = str(project) + "/src/shapes.cpp:3:12: error: 'x' was not declared in this scope\n"
    report = ctest.parse(run(project, "", err, exit_code=2,
                             command="cmake --build build && ctest --test-dir build --output-junit j.xml"))
    assert [t.id for t in report.tests] == ["src/shapes.cpp"]
    assert any("ctest did not run" in w and "j.xml" in w for w in report.warnings)
