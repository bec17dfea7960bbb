"""A test that crashes or runs out of memory in a cargo or googletest suite fails
alone: real toolchains, the real sandbox with a low memory limit; every other
test keeps its real result and the tests after the dead one still run."""

from __future__ import annotations

import shutil

import pytest

from greenloop.parsers.models import Status, TestReport
from greenloop.runner.crash import CRASH, OUT_OF_MEMORY
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.runner.readable import unreadable_reason
from greenloop.sandbox.models import SandboxSettings
from tests.runner.test_crash import ISOLATING, write

CARGO_LIB = """
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_first() {
        assert_eq!(super::add(1, 1), 2);
    }

    #[test]
    fn b_abort() {
        std::process::abort();
    }

    #[test]
    fn c_fails() {
        assert_eq!(super::add(1, 1), 3);
    }

    #[test]
    fn d_last() {
        assert_eq!(super::add(2, 2), 4);
    }
}
"""
CARGO_HOG = """
#[test]
fn hog() {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    for _ in 0..2048 {
        blocks.push(vec![1u8; 1 << 20]); // up to 2 GB, every page written
    }
    assert!(blocks.len() > 1);
}

#[test]
fn hog_neighbour() {
    assert_eq!(crashy::add(2, 3), 5);
}
"""


async def _run(root, out, backend, **plan) -> TestReport:
    done = await run_tests(plan_tests(root, **plan), root, out,
                           SandboxSettings(backend=backend, memory_mb=400, timeout_s=300))
    return done.report


@pytest.mark.parametrize("backend", ISOLATING)
async def test_a_cargo_test_that_aborts_or_runs_out_of_memory_fails_alone(backend, tmp_path):
    assert shutil.which("cargo"), "cargo is one of the toolchains this suite needs"
    root = write(tmp_path / "crashy", {
        "Cargo.toml": '[package]\nname = "crashy"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": CARGO_LIB, "tests/hog.rs": CARGO_HOG,
        "tests/other.rs": "#[test]\nfn other_ok() {\n    assert_eq!(crashy::add(1, 2), 3);\n}\n"})
    report = await _run(root, tmp_path / "out", backend)
    got = {t.id: t for t in report.tests}
    assert {k: v.status for k, v in got.items()} == {
        "tests::a_first": Status.PASSED, "tests::b_abort": Status.ERRORED, "tests::c_fails": Status.FAILED,
        "tests::d_last": Status.PASSED, "hog": Status.ERRORED, "hog_neighbour": Status.PASSED,
        "other_ok": Status.PASSED}
    assert got["tests::b_abort"].native_status == CRASH and "SIGABRT" in got["tests::b_abort"].message
    assert got["hog"].native_status == OUT_OF_MEMORY and "400 MB" in got["hog"].message
    assert "left: 2" in (got["tests::c_fails"].message or "") + (got["tests::c_fails"].details or "")
    assert unreadable_reason(report) is None
    resumed = sorted(p.name for p in (tmp_path / "out").glob("resume-*"))
    assert resumed, "the tests after the dead ones were run again"


GTEST_CMAKE = """
cmake_minimum_required(VERSION 3.14)
project(crashy CXX)
find_package(GTest REQUIRED)
add_executable(crashy_tests crashy_test.cpp)
target_link_libraries(crashy_tests GTest::gtest_main)
"""
GTEST_TESTS = """
#include <cstdlib>
#include <cstring>
#include <vector>
#include <gtest/gtest.h>

TEST(Crash, First) { EXPECT_EQ(1 + 1, 2); }
TEST(Crash, Aborts) { std::abort(); }
TEST(Crash, Fails) { EXPECT_EQ(1 + 1, 3); }
TEST(Crash, Last) { EXPECT_EQ(2 + 2, 4); }
TEST(Hog, Hog) {
  std::vector<char*> blocks;
  for (int i = 0; i < 2048; ++i) {  // up to 2 GB, every page written
    char* b = static_cast<char*>(std::malloc(1 << 20));
    std::memset(b, 1, 1 << 20);
    blocks.push_back(b);
  }
  EXPECT_GT(blocks.size(), 1u);
}
TEST(Hog, After) { EXPECT_TRUE(true); }
"""


@pytest.mark.parametrize("backend", ISOLATING)
async def test_a_googletest_that_aborts_or_runs_out_of_memory_fails_alone(backend, tmp_path):
    # GoogleTest from Debian's libgtest-dev (.ci/setup-toolchains.sh), built with cmake in the sandbox.
    root = write(tmp_path / "crashy", {"CMakeLists.txt": GTEST_CMAKE, "crashy_test.cpp": GTEST_TESTS})
    report = await _run(root, tmp_path / "out", backend, framework="googletest",
                        test_command="./build/crashy_tests --gtest_filter='Crash.*:Hog.*'")
    got = {t.id: t for t in report.tests}
    assert {k: v.status for k, v in got.items()} == {
        "Crash.First": Status.PASSED, "Crash.Aborts": Status.ERRORED, "Crash.Fails": Status.FAILED,
        "Crash.Last": Status.PASSED, "Hog.Hog": Status.ERRORED, "Hog.After": Status.PASSED}
    assert got["Crash.Aborts"].native_status == CRASH and "SIGABRT" in got["Crash.Aborts"].message
    assert got["Hog.Hog"].native_status == OUT_OF_MEMORY and "400 MB" in got["Hog.Hog"].message
    assert got["Crash.Fails"].file == "crashy_test.cpp"
    assert unreadable_reason(report) is None


MOCHA_SPEC = """
const assert = require("assert");

describe("crashy", function () {
  it("first", function () {
    assert.strictEqual(1 + 1, 2);
  });
  it("exits", function () {
    process.exit(3);
  });
  it("fails", function () {
    assert.strictEqual(1 + 1, 3);
  });
  it("hogs", function () {
    const blocks = [];
    for (let i = 0; i < 2048; i++) blocks.push(Buffer.alloc(1 << 20, 1)); // up to 2 GB, every page written
  });
  it("last", function () {
    assert.ok(true);
  });
});
"""


@pytest.mark.parametrize("backend", ISOLATING)
async def test_a_mocha_test_that_exits_or_runs_out_of_memory_fails_alone(backend, tmp_path):
    from tests.live.conftest import npm_install

    root = write(tmp_path / "crashy", {
        "package.json": '{"name": "crashy", "version": "1.0.0", "private": true, "scripts": {"test": "mocha"},'
                        ' "devDependencies": {"mocha": "10.7.3"}}',
        "test/a.spec.js": MOCHA_SPEC,
        "test/b.spec.js": 'const assert = require("assert");\n\ndescribe("other", function () {\n'
                          '  it("works", function () {\n    assert.ok(true);\n  });\n});\n'})
    npm_install(root)
    report = await _run(root, tmp_path / "out", backend)
    got = {t.id: t for t in report.tests}
    assert {k: v.status for k, v in got.items()} == {
        "crashy first": Status.PASSED, "crashy exits": Status.ERRORED, "crashy fails": Status.FAILED,
        "crashy hogs": Status.ERRORED, "crashy last": Status.PASSED, "other works": Status.PASSED}
    assert got["crashy exits"].native_status == CRASH and "exit 3" in got["crashy exits"].message
    assert got["crashy hogs"].native_status == OUT_OF_MEMORY and "400 MB" in got["crashy hogs"].message
    # Mocha prints a failure's message in its summary, which a run that dies never prints: run again for it.
    assert got["crashy fails"].file == "test/a.spec.js" and got["crashy fails"].line == 11
    assert "2 !== 3" in got["crashy fails"].message
    assert unreadable_reason(report) is None


GO_TESTS = """
package crashy

import (
	"os"
	"testing"
)

func TestFirst(t *testing.T) {}

func TestExits(t *testing.T) { os.Exit(3) }

func TestFails(t *testing.T) { t.Fatal("1 + 1 is not 3") }

func TestHogs(t *testing.T) {
	var blocks [][]byte
	for i := 0; i < 2048; i++ { // up to 2 GB, every page written
		b := make([]byte, 1<<20)
		for j := range b {
			b[j] = 1
		}
		blocks = append(blocks, b)
	}
	t.Log(len(blocks))
}

func TestLast(t *testing.T) {}
"""


@pytest.mark.parametrize("backend", ISOLATING)
async def test_a_go_test_that_exits_or_runs_out_of_memory_fails_alone(backend, tmp_path):
    assert shutil.which("go"), "go is one of the toolchains this suite needs (.ci/setup-toolchains.sh)"
    root = write(tmp_path / "crashy", {
        "go.mod": "module example.com/crashy\n\ngo 1.19\n", "crashy_test.go": GO_TESTS,
        "sub/sub_test.go": 'package sub\n\nimport "testing"\n\nfunc TestOther(t *testing.T) {}\n'})
    report = await _run(root, tmp_path / "out", backend, test_command="go test -json ./...")
    got = {t.id: t for t in report.tests}
    pkg = "example.com/crashy::"
    assert {k: v.status for k, v in got.items()} == {
        pkg + "TestFirst": Status.PASSED, pkg + "TestExits": Status.ERRORED, pkg + "TestFails": Status.FAILED,
        pkg + "TestHogs": Status.ERRORED, pkg + "TestLast": Status.PASSED,
        "example.com/crashy/sub::TestOther": Status.PASSED}
    assert got[pkg + "TestExits"].native_status == CRASH
    assert got[pkg + "TestHogs"].native_status == OUT_OF_MEMORY and "400 MB" in got[pkg + "TestHogs"].message
    assert "1 + 1 is not 3" in got[pkg + "TestFails"].message and got[pkg + "TestFails"].file == "crashy_test.go"
    assert unreadable_reason(report) is None


CTEST_CMAKE = """
cmake_minimum_required(VERSION 3.14)
project(crashy CXX)
enable_testing()
foreach(name ok aborts hogs fails)
  add_executable(${name} ${name}.cpp)
  add_test(NAME ${name} COMMAND ${name})
endforeach()
"""


@pytest.mark.parametrize("backend", ISOLATING)
async def test_a_ctest_test_whose_process_aborts_or_runs_out_of_memory_is_errored_for_it(backend, tmp_path):
    # ctest runs each test in its own process and goes on: only the reason is to be told.
    root = write(tmp_path / "crashy", {
        "CMakeLists.txt": CTEST_CMAKE, "ok.cpp": "int main() { return 0; }\n",
        "aborts.cpp": "#include <cstdlib>\nint main() { std::abort(); }\n",
        "fails.cpp": "int main() { return 1; }\n",
        "hogs.cpp": "#include <cstdlib>\n#include <cstring>\nint main() {\n  for (int i = 0; i < 2048; ++i) {\n"
                    "    char* b = static_cast<char*>(std::malloc(1 << 20));\n    std::memset(b, 1, 1 << 20);\n"
                    "  }\n}\n"})
    report = await _run(root, tmp_path / "out", backend)
    got = {t.id: t for t in report.tests}
    assert {k: v.status for k, v in got.items()} == {
        "ok": Status.PASSED, "aborts": Status.ERRORED, "hogs": Status.ERRORED, "fails": Status.FAILED}
    assert got["aborts"].native_status == CRASH and "aborted" in got["aborts"].message
    assert got["hogs"].native_status == OUT_OF_MEMORY and "400 MB" in got["hogs"].message
    assert unreadable_reason(report) is None


JEST_TESTS = """
describe("crashy", () => {
  test("first", () => {
    expect(1 + 1).toBe(2);
  });
  test("exits", () => {
    process.exit(3);
  });
  test("fails", () => {
    expect(1 + 1).toBe(3);
  });
  test("hogs", () => {
    const blocks = [];
    for (let i = 0; i < 2048; i++) blocks.push(Buffer.alloc(1 << 20, 1)); // up to 2 GB, every page written
  });
  test("last", () => {
    expect(true).toBe(true);
  });
});
"""


@pytest.mark.parametrize("backend", ISOLATING)
async def test_a_jest_test_that_exits_or_runs_out_of_memory_fails_alone(backend, tmp_path):
    from tests.live.conftest import npm_install

    root = write(tmp_path / "crashy", {
        "package.json": '{"name": "crashy", "version": "1.0.0", "private": true, "scripts": {"test": "jest"},'
                        ' "devDependencies": {"jest": "29.7.0"}}',
        "a.test.js": JEST_TESTS, "b.test.js": 'test("works", () => {\n  expect(1).toBe(1);\n});\n'})
    npm_install(root)
    report = await _run(root, tmp_path / "out", backend)
    got = {t.id: t for t in report.tests}
    assert {k: v.status for k, v in got.items()} == {
        "crashy › first": Status.PASSED, "crashy › exits": Status.ERRORED, "crashy › fails": Status.FAILED,
        "crashy › hogs": Status.ERRORED, "crashy › last": Status.PASSED, "works": Status.PASSED}
    assert got["crashy › exits"].native_status == CRASH and got["crashy › exits"].file == "a.test.js"
    assert got["crashy › hogs"].native_status == OUT_OF_MEMORY and "400 MB" in got["crashy › hogs"].message
    assert "Expected: 3" in got["crashy › fails"].message and got["crashy › fails"].line == 9
    assert unreadable_reason(report) is None
