"""cargo test / libtest parser: human (pretty, terse, --nocapture) output
over several binaries and doc tests, libtest JSON and JUnit (including the
formatter crash that truncates its XML), compile errors, runs killed by
timeout, crashed binaries, workspaces and bad input.

Outputs are written from libtest's and cargo's documented formats for a
small 'ledger' crate, not copied from the corpus.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import cargo
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.models import Status
from greenloop.parsers.run_output import RunOutput
from tests.parsers.helpers import by_id

LIB_RS = """\
//! Ledger utilities.
//!
//! ```
//! assert!(ledger::balance(&[]) == 0);
//! ```

pub mod money;

/// Sums entries.
///
/// ```
/// assert_eq!(ledger::balance(&[1, 2]), 3);
/// ```
pub fn balance(xs: &[i64]) -> i64 {
    xs.iter().sum()
}

pub struct Book;

impl Book {
    /// Opens a book.
    ///
    /// ```should_panic
    /// ledger::Book::open("");
    /// ```
    ///
    /// ```text
    /// not a doc test
    /// ```
    pub fn open(name: &str) -> Book {
        let _ = "{ not a brace }";
        assert!(!name.is_empty());
        Book
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance_empty() {
        assert_eq!(balance(&[]), 0);
    }

    #[test]
    fn balance_negative() {
        assert_eq!(balance(&[-1, -2]), -4);
    }

    #[test]
    #[ignore = "talks to the bank"]
    fn sync_with_bank() {}

    #[test]
    #[should_panic(
        expected = "empty name"
    )]
    fn open_rejects_empty() {
        Book::open("");
    }
}
"""

MONEY_RS = """\
//! Money.

pub fn cents(units: i64) -> i64 {
    units * 100
}

#[cfg(test)]
mod tests {
    #[test]
    fn to_cents() {
        assert_eq!(super::cents(2), 200);
    }
}
"""

API_RS = """\
use ledger::balance;

#[test]
fn api_balance() {
    assert_eq!(balance(&[5]), 5);
}

#[test]
fn api_overflow() {
    assert_eq!(balance(&[i64::MAX, 1]), 0);
}

#[test]
fn api_waits_forever() {
    std::thread::sleep(std::time::Duration::from_secs(600));
}
"""

RUN_LIB = "     Running unittests src/lib.rs (target/debug/deps/ledger-0f1e2d3c4b5a6978)"
RUN_API = "     Running tests/api.rs (target/debug/deps/api-1a2b3c4d5e6f7081)"
DOC = "   Doc-tests ledger"


@pytest.fixture
def crate(tmp_path: Path) -> Path:
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "ledger"\nversion = "0.1.0"\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "src" / "lib.rs").write_text(LIB_RS)
    (tmp_path / "src" / "money.rs").write_text(MONEY_RS)
    (tmp_path / "tests" / "api.rs").write_text(API_RS)
    return tmp_path


def run(root: Path, command: str, stdout: str, stderr: str = "", exit_code: int = 101) -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=root)


def lines_of(text: str, needle: str) -> int:
    return next(i + 1 for i, x in enumerate(text.splitlines()) if needle in x)


LIB_PRETTY = """
running 5 tests
test tests::balance_empty ... ok
test money::tests::to_cents ... ok
test tests::sync_with_bank ... ignored, talks to the bank
test tests::open_rejects_empty - should panic ... ok
test tests::balance_negative ... FAILED

failures:

---- tests::balance_negative stdout ----

thread 'tests::balance_negative' (4242) panicked at src/lib.rs:49:9:
assertion `left == right` failed
  left: -3
 right: -4
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::balance_negative

test result: FAILED. 3 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

"""
API_PRETTY = """
running 2 tests
test api_balance ... ok
test api_overflow ... FAILED

failures:

---- api_overflow stdout ----

thread 'api_overflow' (4250) panicked at tests/api.rs:10:5:
attempt to add with overflow


failures:
    api_overflow

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 1 filtered out; finished in 0.00s

"""
DOC_PRETTY = """
running 3 tests
test src/lib.rs - (line 3) ... ok
test src/lib.rs - balance (line 11) ... ok
test src/lib.rs - Book::open (line 23) - should panic ... ok

test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.21s

"""


# -- detection -----------------------------------------------------------------


@pytest.mark.parametrize("command", [
    "cargo test", "cargo +nightly test --lib", "RUSTC_BOOTSTRAP=1 cargo test -- -Z unstable-options --format json",
    "cargo t -q", "cargo --locked test --workspace", "timeout 60 cargo test --test api",
])
def test_command_re_matches_cargo_test(command: str) -> None:
    assert any(p.search(command) for p in cargo.COMMAND_RE)
    assert from_command(command).framework == "cargo-test"


@pytest.mark.parametrize("command", ["cargo build", "cargo nextest run", "cargo test-all", "pytest -k cargo_test"])
def test_command_re_rejects_other_commands(command: str) -> None:
    assert not any(p.search(command) for p in cargo.COMMAND_RE)


def test_output_patterns_detect_libtest() -> None:
    found = from_output(RunOutput(stdout_text=LIB_PRETTY, stderr_text=RUN_LIB))
    assert found is not None and found.framework == "cargo-test"


# -- human output ----------------------------------------------------------------


def test_pretty_output_over_three_binaries(crate: Path) -> None:
    stderr = "\n".join([
        "   Compiling ledger v0.1.0 (<ROOT>)", RUN_LIB, "error: test failed, to rerun pass `--lib`",
        RUN_API, "error: test failed, to rerun pass `--test api`", DOC, "error: 2 targets failed:",
    ])
    report = cargo.parse(run(crate, "cargo test --no-fail-fast -- --skip waits", LIB_PRETTY + API_PRETTY
                             + DOC_PRETTY, stderr))
    t = by_id(report)
    assert report.totals.passed == 7 and report.totals.failed == 2 and report.totals.skipped == 1
    assert not report.build_error and not report.timed_out and report.sources == ["console"]

    neg = t["tests::balance_negative"]
    assert neg.status == Status.FAILED and neg.suite == "unittests src/lib.rs"
    assert "left: -3" in neg.message and "RUST_BACKTRACE" not in neg.message
    # file/line is the test's definition, not the panic location
    assert (neg.file, neg.line) == ("src/lib.rs", lines_of(LIB_RS, "fn balance_negative"))

    skip = t["tests::sync_with_bank"]
    assert skip.status == Status.SKIPPED and skip.message == "talks to the bank" and skip.native_status == "ignored"
    panics = t["tests::open_rejects_empty"]
    assert panics.status == Status.PASSED and panics.native_status == "ok (should panic)"
    assert panics.line == lines_of(LIB_RS, "fn open_rejects_empty")  # after a multi-line attribute
    cents = t["money::tests::to_cents"]
    assert (cents.file, cents.line) == ("src/money.rs", lines_of(MONEY_RS, "fn to_cents"))

    over = t["api_overflow"]
    assert over.suite == "tests/api.rs" and over.message == "attempt to add with overflow"
    assert (over.file, over.line) == ("tests/api.rs", lines_of(API_RS, "fn api_overflow"))

    doc = t["src/lib.rs - Book::open (line 23)"]
    assert doc.status == Status.PASSED and doc.suite == "doc-tests" and (doc.file, doc.line) == ("src/lib.rs", 23)
    assert t["src/lib.rs - (line 3)"].line == 3


def test_fail_fast_lists_only_binaries_that_ran(crate: Path) -> None:
    report = cargo.parse(run(crate, "cargo test", LIB_PRETTY, RUN_LIB + "\nerror: test failed, to rerun pass `--lib`"))
    assert {t.suite for t in report.tests} == {"unittests src/lib.rs"}
    assert report.totals.total == 5


def test_nocapture_takes_panics_from_stderr_by_thread_name(crate: Path) -> None:
    stdout = """
running 3 tests
test tests::balance_empty ... ok
printing from a test: test-like line ... but not a result
test tests::balance_negative ... FAILED
test api_balance ... ok

failures:

failures:
    tests::balance_negative

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 2 filtered out; finished in 0.00s
"""
    stderr = RUN_LIB + """

thread 'tests::balance_empty' (7) panicked at src/other.rs:1:1:
a caught panic in a passing test

thread 'tests::balance_negative' (8) panicked at src/lib.rs:49:9:
assertion `left == right` failed
  left: -3
 right: -4
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
error: test failed, to rerun pass `--lib`
"""
    report = cargo.parse(run(crate, "cargo test --lib -- --nocapture", stdout, stderr))
    t = by_id(report)
    assert report.totals.total == 3
    assert t["tests::balance_negative"].message.startswith("assertion `left == right` failed\n  left: -3")
    assert t["tests::balance_empty"].status == Status.PASSED and t["tests::balance_empty"].message is None


def test_single_thread_nocapture_result_after_output(crate: Path) -> None:
    stdout = """
running 2 tests
test tests::balance_empty ... computing balance
ok
test tests::balance_negative ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s
"""
    report = cargo.parse(run(crate, "cargo test --lib -- --nocapture --test-threads=1", stdout, RUN_LIB))
    t = by_id(report)
    assert t["tests::balance_empty"].status == Status.PASSED
    assert t["tests::balance_negative"].status == Status.FAILED


def test_include_ignored_runs_ignored_tests(crate: Path) -> None:
    stdout = """
running 1 test
test tests::sync_with_bank ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out; finished in 0.00s
"""
    report = cargo.parse(run(crate, "cargo test --lib sync -- --include-ignored", stdout, RUN_LIB, 0))
    assert [(t.id, t.status) for t in report.tests] == [("tests::sync_with_bank", Status.PASSED)]


def test_report_time_and_time_limit(crate: Path) -> None:
    stdout = """
running 2 tests
test tests::balance_empty ... ok <0.002s>
test tests::balance_negative ... FAILED (time limit exceeded) <2.500s>

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.50s
"""
    report = cargo.parse(run(crate, "cargo test -- -Zunstable-options --report-time --ensure-time", stdout, RUN_LIB))
    t = by_id(report)
    assert t["tests::balance_empty"].duration_s == pytest.approx(0.002)
    assert t["tests::balance_negative"].timed_out and report.timed_out


def test_old_panic_format(crate: Path) -> None:
    stdout = """
running 1 test
test tests::balance_negative ... FAILED

failures:

---- tests::balance_negative stdout ----
thread 'tests::balance_negative' panicked at 'assertion failed: `(left == right)`
  left: `-3`,
 right: `-4`', src/lib.rs:49:9

failures:
    tests::balance_negative

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
"""
    report = cargo.parse(run(crate, "cargo test", stdout, RUN_LIB))
    assert "assertion failed" in report.tests[0].message
    assert "left: `-3`" in report.tests[0].message


# -- quiet (terse) output --------------------------------------------------------


def test_quiet_output_lists_passed_and_ignored_from_the_sources(crate: Path) -> None:
    stdout = """
running 5 tests
..i.F
failures:

---- tests::balance_negative stdout ----

thread 'tests::balance_negative' (1) panicked at src/lib.rs:49:9:
assertion `left == right` failed


failures:
    tests::balance_negative

test result: FAILED. 3 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s


running 3 tests
...
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s


running 3 tests
...
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.30s

"""
    # -q hides cargo's Running lines: the binaries come from the layout.
    report = cargo.parse(run(crate, "cargo test -q --no-fail-fast", stdout, "error: test failed"))
    t = by_id(report)
    assert report.totals.passed == 9 and report.totals.failed == 1 and report.totals.skipped == 1
    assert t["tests::sync_with_bank"].status == Status.SKIPPED
    assert t["tests::sync_with_bank"].message == "talks to the bank"
    assert t["money::tests::to_cents"].suite == "unittests src/lib.rs"
    assert t["api_waits_forever"].suite == "tests/api.rs"
    assert t["src/lib.rs - balance (line 11)"].suite == "doc-tests"
    assert "src/lib.rs - Book::open (line 30)" not in t  # a ```text fence is no test


def test_quiet_output_with_counts_the_sources_cannot_explain(crate: Path) -> None:
    stdout = """
running 7 tests
......F
failures:

failures:
    tests::generated_case_7

test result: FAILED. 6 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"""
    report = cargo.parse(run(crate, "cargo test -q --lib", stdout))
    assert [t.id for t in report.tests] == ["tests::generated_case_7"]
    assert any("quiet" in w for w in report.warnings)


# -- libtest JSON ----------------------------------------------------------------

JSON_OUT = """\
{ "type": "suite", "event": "started", "test_count": 4 }
{ "type": "test", "event": "started", "name": "tests::balance_empty" }
{ "type": "test", "event": "started", "name": "tests::balance_negative" }
{ "type": "test", "name": "tests::balance_empty", "event": "ok", "exec_time": 0.0001 }
{ "type": "test", "event": "started", "name": "tests::sync_with_bank" }
{ "type": "test", "name": "tests::sync_with_bank", "event": "ignored", "message": "talks to the bank" }
{ "type": "test", "name": "tests::balance_negative", "event": "failed", "exec_time": 0.0002, \
"stdout": "\\nthread 'tests::balance_negative' (3) panicked at src/lib.rs:49:9:\\nassertion `left == right` \
failed\\n  left: -3\\n right: -4\\n" }
{ "type": "test", "event": "started", "name": "tests::open_rejects_empty" }
{ "type": "test", "name": "tests::open_rejects_empty", "event": "failed", \
"message": "test did not panic as expected at src/lib.rs:60:8" }
{ "type": "suite", "event": "failed", "passed": 1, "failed": 2, "ignored": 1, "measured": 0, "filtered_out": 1 }
"""


def test_json_events(crate: Path) -> None:
    report = cargo.parse(run(crate, "cargo test --lib -- -Z unstable-options --format json --report-time",
                             JSON_OUT, RUN_LIB))
    t = by_id(report)
    assert report.sources == ["libtest-json:stdout"]
    assert t["tests::balance_empty"].duration_s == pytest.approx(0.0001)
    assert t["tests::sync_with_bank"].status == Status.SKIPPED and t["tests::sync_with_bank"].message == \
        "talks to the bank"
    assert "left: -3" in t["tests::balance_negative"].message
    assert t["tests::open_rejects_empty"].message == "test did not panic as expected at src/lib.rs:60:8"
    assert t["tests::balance_negative"].line == lines_of(LIB_RS, "fn balance_negative")


def test_json_killed_by_timeout_fails_started_tests(crate: Path) -> None:
    stdout = """\
{ "type": "suite", "event": "started", "test_count": 3 }
{ "type": "test", "event": "started", "name": "api_balance" }
{ "type": "test", "event": "started", "name": "api_waits_forever" }
{ "type": "test", "name": "api_balance", "event": "ok" }
{ "type": "test", "name": "api_waits_forever", "event": "timeout" }
{ "type": "test", "event": "start
"""
    report = cargo.parse(run(crate, "timeout 90 cargo test --test api -- -Zunstable-options --format=json",
                             stdout, RUN_API, 124))
    t = by_id(report)
    assert report.timed_out and set(t) == {"api_balance", "api_waits_forever"}
    assert t["api_waits_forever"].status == Status.FAILED and t["api_waits_forever"].timed_out
    assert any("could not be decoded" in w for w in report.warnings)


# -- libtest JUnit ---------------------------------------------------------------

XML = '<?xml version="1.0" encoding="UTF-8"?>'


def test_junit_documents_per_binary(crate: Path) -> None:
    lib = (XML + '<testsuites><testsuite name="test" package="test" id="0" errors="0" failures="1" tests="5" '
           'skipped="1" ><testcase classname="tests" name="balance_empty" time="0"/>'
           '<testcase classname="money::tests" name="to_cents" time="0"/>'
           '<testcase classname="tests" name="open_rejects_empty" time="0"/>'
           '<testcase classname="tests" name="balance_negative" time="0"><failure type="assert"/><system-out>'
           "<![CDATA[\x1b[31mred\x1b[0m]]>&#xA;<![CDATA[thread 'tests::balance_negative' (5) panicked at "
           "src/lib.rs:49:9:]]>&#xA;<![CDATA[boom]]></system-out></testcase>"
           '<system-out/><system-err/></testsuite></testsuites>\n')
    api = (XML + '<testsuites><testsuite name="test" package="test" id="0" errors="0" failures="0" tests="1" '
           'skipped="0" ><testcase classname="integration" name="api_balance" time="0"/>'
           '<system-out/><system-err/></testsuite></testsuites>\n')
    report = cargo.parse(run(crate, "cargo test -- -Z unstable-options --format junit", lib + api,
                             RUN_LIB + "\n" + RUN_API))
    t = by_id(report)
    assert report.sources == ["junit-xml:stdout"]
    assert t["tests::balance_negative"].message == "boom"
    assert t["money::tests::to_cents"].status == Status.PASSED
    assert t["api_balance"].suite == "tests/api.rs"
    # This formatter writes no <testcase> for ignored tests: the header's count and #[ignore] tell it.
    assert t["tests::sync_with_bank"].status == Status.SKIPPED
    assert report.totals.total == 6


def test_junit_formatter_crash_truncates_document(crate: Path) -> None:
    # The formatter panicked inside a <testcase> (a multi-line failure message);
    # the next binary's document starts on the same line.
    lib = (XML + '<testsuites><testsuite name="test" package="test" id="0" errors="0" failures="2" tests="5" '
           'skipped="1" ><testcase classname="tests" name="balance_empty" time="0"/>'
           '<testcase classname="tests" name="open_rejects_empty" time="0">')
    api = (XML + '<testsuites><testsuite name="test" package="test" id="0" errors="0" failures="0" tests="1" '
           'skipped="0" ><testcase classname="integration" name="api_balance" time="0"/>'
           '<system-out/><system-err/></testsuite></testsuites>\n')
    stderr = "\n".join([RUN_LIB, "",
                        "thread 'main' (9) panicked at /rustc/abc/library/test/src/formatters/junit.rs:22:9:",
                        "assertion failed: !s.contains('\\n')", RUN_API])
    report = cargo.parse(run(crate, "cargo test --no-fail-fast -- -Z unstable-options --format junit", lib + api,
                             stderr))
    t = by_id(report)
    assert t["tests::open_rejects_empty"].status == Status.FAILED  # the case it died in
    # 5 tests, 2 failures, 1 ignored: one pass and one failure are unaccounted
    # for among two unseen tests, so neither is guessed; the #[ignore] one is.
    assert t["tests::sync_with_bank"].status == Status.SKIPPED
    assert "tests::balance_negative" not in t and "money::tests::to_cents" not in t
    assert t["api_balance"].status == Status.PASSED and t["api_balance"].suite == "tests/api.rs"
    assert any("truncated" in w for w in report.warnings)
    assert any("could not be told apart" in w for w in report.warnings)


def test_junit_crash_recovery_resolves_unseen_failures(crate: Path) -> None:
    lib = (XML + '<testsuites><testsuite name="test" package="test" id="0" errors="0" failures="2" tests="5" '
           'skipped="1" ><testcase classname="tests" name="balance_empty" time="0"/>'
           '<testcase classname="money::tests" name="to_cents" time="0"/>'
           '<testcase classname="tests" name="open_rejects_empty" time="0">')
    report = cargo.parse(run(crate, "cargo test --lib -- -Z unstable-options --format junit", lib, RUN_LIB))
    t = by_id(report)
    # 5 - 2 failures - 1 ignored = 2 passed, both seen: the unseen non-ignored
    # test is the second failure, the #[ignore] one the skip.
    assert t["tests::open_rejects_empty"].status == Status.FAILED
    assert t["tests::balance_negative"].status == Status.FAILED
    assert t["tests::sync_with_bank"].status == Status.SKIPPED
    assert report.totals.total == 5


# -- compile errors --------------------------------------------------------------


def test_compile_error_is_an_errored_crate(crate: Path) -> None:
    stderr = """\
   Compiling ledger v0.1.0 (<ROOT>)
error[E0425]: cannot find value `total` in this scope
  --> src/money.rs:4:5
   |
4  |     total * 100
   |     ^^^^^ not found in this scope

warning: unused import: `std::fmt`
 --> src/lib.rs:1:5

For more information about this error, try `rustc --explain E0425`.
error: could not compile `ledger` (lib) due to 1 previous error
warning: build failed, waiting for other jobs to finish...
error: could not compile `ledger` (lib test) due to 1 previous error
"""
    report = cargo.parse(run(crate, "cargo test", "", stderr))
    assert report.build_error
    [entry] = report.tests
    assert entry.id == "ledger" and entry.status == Status.ERRORED
    assert (entry.file, entry.line) == ("src/money.rs", 4)
    assert "error[E0425]: cannot find value `total`" in entry.message


def test_short_message_format_and_build_script_failure(crate: Path) -> None:
    stderr = """\
src/lib.rs:3:9: error[E0308]: mismatched types
error: could not compile `ledger` (lib) due to 1 previous error
error: failed to run custom build command for `ledger-sys v0.2.0 (<ROOT>/sys)`
"""
    report = cargo.parse(run(crate, "cargo test --message-format short", "", stderr))
    t = by_id(report)
    assert (t["ledger"].file, t["ledger"].line) == ("src/lib.rs", 3)
    assert t["ledger_sys"].status == Status.ERRORED and report.build_error


# -- timeouts and crashes --------------------------------------------------------


def test_killed_parallel_run_names_the_silent_test_from_sources(crate: Path) -> None:
    stdout = "\nrunning 3 tests\ntest api_balance ... ok\ntest api_overflow ... ok\n"
    report = cargo.parse(run(crate, "cargo test --no-run && timeout 20 cargo test --test api", stdout, RUN_API, 124))
    t = by_id(report)
    assert report.timed_out
    hang = t["api_waits_forever"]
    assert hang.status == Status.FAILED and hang.timed_out
    assert (hang.file, hang.line) == ("tests/api.rs", lines_of(API_RS, "fn api_waits_forever"))
    assert report.totals.passed == 2


def test_killed_serial_run_fails_only_the_started_test(crate: Path) -> None:
    stdout = "\nrunning 3 tests\ntest api_balance ... ok\ntest api_overflow ... "
    report = cargo.parse(run(crate, "timeout 20 cargo test --test api -- --test-threads=1", stdout, RUN_API, 124))
    t = by_id(report)
    assert set(t) == {"api_balance", "api_overflow"}
    assert t["api_overflow"].timed_out


def test_sixty_second_warning_names_the_hanging_test(crate: Path) -> None:
    stdout = "\nrunning 3 tests\ntest api_balance ... ok\ntest api_overflow ... ok\n" \
             "test api_waits_forever has been running for over 60 seconds\n"
    report = cargo.parse(run(crate, "timeout -s KILL 90 cargo test --test api", stdout, RUN_API, 137))
    assert by_id(report)["api_waits_forever"].timed_out


def test_crashed_binary_fails_the_running_test(crate: Path) -> None:
    stdout = "\nrunning 3 tests\ntest api_balance ... ok\ntest api_waits_forever ... ok\n"
    stderr = RUN_API + """

thread 'api_overflow' (77) has overflowed its stack
fatal runtime error: stack overflow
error: test failed, to rerun pass `--test api`

Caused by:
  process didn't exit successfully: `<ROOT>/target/debug/deps/api-1a2b` (signal: 6, SIGABRT: process abort signal)
"""
    report = cargo.parse(run(crate, "cargo test --test api", stdout, stderr))
    crashed = by_id(report)["api_overflow"]
    assert crashed.status == Status.FAILED and not crashed.timed_out and not report.timed_out
    assert "overflowed its stack" in crashed.message
    assert any("without its 'test result:' line" in w for w in report.warnings)


def test_module_files_of_an_integration_test_root(crate: Path) -> None:
    (crate / "tests" / "api.rs").write_text("mod support;\n\n#[test]\nfn api_balance() {}\n")
    (crate / "tests" / "support").mkdir()
    (crate / "tests" / "support" / "mod.rs").write_text("pub fn helper() {}\n\n#[test]\nfn helper_works() {}\n")
    # The same fn name elsewhere: only the module tree of tests/api.rs says which one.
    (crate / "tests" / "other").mkdir()
    (crate / "tests" / "other" / "mod.rs").write_text("#[test]\nfn helper_works() {}\n")
    stdout = """
running 2 tests
test api_balance ... ok
test support::helper_works ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"""
    report = cargo.parse(run(crate, "cargo test --test api", stdout, RUN_API))
    helper = by_id(report)["support::helper_works"]
    assert (helper.file, helper.line) == ("tests/support/mod.rs", 4)


# -- workspaces ------------------------------------------------------------------


def test_workspace_member_paths(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text('[workspace]\nmembers = ["crates/*"]\n')
    member = tmp_path / "crates" / "ledger-core"
    (member / "src").mkdir(parents=True)
    (member / "Cargo.toml").write_text('[package]\nname = "ledger-core"\nversion = "0.1.0"\n')
    (member / "src" / "lib.rs").write_text(LIB_RS)
    (member / "src" / "money.rs").write_text(MONEY_RS)
    stderr = "     Running unittests src/lib.rs (target/debug/deps/ledger_core-0123456789abcdef)\n" \
             "   Doc-tests ledger_core\n"
    report = cargo.parse(run(tmp_path, "cargo test --workspace", LIB_PRETTY + DOC_PRETTY, stderr))
    t = by_id(report)
    assert t["money::tests::to_cents"].file == "crates/ledger-core/src/money.rs"
    assert t["src/lib.rs - balance (line 11)"].file == "crates/ledger-core/src/lib.rs"


# -- bad input -------------------------------------------------------------------


def test_empty_output(tmp_path: Path) -> None:
    report = cargo.parse(run(tmp_path, "cargo test", "", "", 101))
    assert report.tests == [] and report.warnings


def test_garbage_output(tmp_path: Path) -> None:
    garbage = "\x00\xff\x1b[31m" + "".join(chr(i % 250 + 1) for i in range(5000))
    report = cargo.parse(run(tmp_path, "cargo test -- -Zunstable-options --format junit", garbage, garbage))
    assert report.tests == [] and report.warnings


def test_truncated_json_and_missing_junit_file(crate: Path) -> None:
    report = cargo.parse(run(crate, "cargo test -- -Zunstable-options --format junit > reports/out.xml", "", RUN_LIB))
    assert any("not found" in w for w in report.warnings)
    report = cargo.parse(run(crate, "cargo test -- --format json -Zunstable-options",
                             '{ "type": "suite", "event": "started", "test_count": 2 }\n{ "type": "te', RUN_LIB))
    assert report.tests == []


def test_junit_written_to_a_file(crate: Path) -> None:
    reports = crate / "reports"
    reports.mkdir()
    (reports / "out.xml").write_text(
        XML + '<testsuites><testsuite name="test" package="test" id="0" errors="0" failures="0" tests="1" '
        'skipped="0" ><testcase classname="tests" name="balance_empty" time="0"/>'
        '<system-out/><system-err/></testsuite></testsuites>\n')
    report = cargo.parse(run(crate, "cargo test --lib -- -Zunstable-options --format junit > reports/out.xml", "",
                             RUN_LIB, 0))
    assert [t.id for t in report.tests] == ["tests::balance_empty"]
    assert report.sources == ["junit-xml:reports/out.xml"]
