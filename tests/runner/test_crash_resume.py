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
