"""Maven Surefire parser: XML reports (single and multi-module, stale ones),
console fallback in 2.22 and 3.x wording, class-level errors, compilation
failures, and bad input. Outputs are written from Surefire's documented
formats for a small 'billing' project, not copied from the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import parse
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.models import Status, TestReport
from greenloop.parsers.run_output import RunOutput

INVOICE = """package org.billing;

import org.junit.jupiter.api.*;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class InvoiceTest {
    @Test
    void sumsLines() {}

    @Test
    void roundsHalfUp() {}

    @ParameterizedTest
    @CsvSource({"1, 2", "3, 4"})
    void taxRows(int a, int b) {}

    @Test
    void callsLedger() {}

    @Nested
    class WhenVoided {
        @Test
        void isZero() {}
    }
}
"""
LEDGER = """package org.billing;

import org.junit.jupiter.api.*;

class LedgerClientTest {
    @BeforeAll
    static void connect() throws Exception {
        throw new java.net.ConnectException("ledger down");
    }

    @Test
    void posts() {}
}
"""
LEGACY = """package org.billing;

import org.junit.Test;

public class LegacyInvoiceTest {
    @Test
    public void oldSum() {}

    @Test(timeout = 10)
    public void slow() {}
}
"""

INVOICE_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" name="org.billing.InvoiceTest" time="0.2" tests="6" errors="1" skipped="1" failures="2">
  <properties>
    <property name="java.version" value="17"/>
  </properties>
  <testcase name="sumsLines" classname="org.billing.InvoiceTest" time="0.001"/>
  <testcase name="roundsHalfUp" classname="org.billing.InvoiceTest" time="0.002">
    <failure message="expected: &lt;3&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <3> but was: <2>
\tat org.billing.InvoiceTest.roundsHalfUp(InvoiceTest.java:12)
]]></failure>
  </testcase>
  <testcase name="taxRows{int, int}[1]" classname="org.billing.InvoiceTest" time="0"/>
  <testcase name="taxRows{int, int}[2]" classname="org.billing.InvoiceTest" time="0">
    <failure message="row 2" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError: row 2
</failure>
  </testcase>
  <testcase name="callsLedger" classname="org.billing.InvoiceTest" time="0.5">
    <error message="callsLedger() timed out after 500 milliseconds" type="java.util.concurrent.TimeoutException">java.util.concurrent.TimeoutException: callsLedger() timed out after 500 milliseconds
</error>
  </testcase>
  <testcase name="isZero" classname="org.billing.InvoiceTest$WhenVoided" time="0">
    <skipped message="not yet"/>
  </testcase>
</testsuite>
"""
LEDGER_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="org.billing.LedgerClientTest" time="0" tests="1" errors="1" skipped="0" failures="0">
  <testcase name="org.billing.LedgerClientTest" classname="org.billing.LedgerClientTest" time="0">
    <error message="ledger down" type="java.net.ConnectException">java.net.ConnectException: ledger down
\tat org.billing.LedgerClientTest.connect(LedgerClientTest.java:8)
</error>
  </testcase>
</testsuite>
"""

CONSOLE_222 = """[INFO] Scanning for projects...
[INFO] --- maven-surefire-plugin:2.22.3:test (default-test) @ billing ---
[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running org.billing.InvoiceTest
[ERROR] Tests run: 6, Failures: 2, Errors: 1, Skipped: 1, Time elapsed: 0.2 s <<< FAILURE! - in org.billing.InvoiceTest
[ERROR] roundsHalfUp  Time elapsed: 0.002 s  <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <3> but was: <2>
\tat org.billing.InvoiceTest.roundsHalfUp(InvoiceTest.java:12)

[ERROR] taxRows{int, int}[2]  Time elapsed: 0 s  <<< FAILURE!
org.opentest4j.AssertionFailedError: row 2

[ERROR] callsLedger  Time elapsed: 0.5 s  <<< ERROR!
java.util.concurrent.TimeoutException: callsLedger() timed out after 500 milliseconds

[INFO] Running org.billing.LedgerClientTest
[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 0 s <<< FAILURE! - in org.billing.LedgerClientTest
[ERROR] org.billing.LedgerClientTest  Time elapsed: 0 s  <<< ERROR!
java.net.ConnectException: ledger down
\tat org.billing.LedgerClientTest.connect(LedgerClientTest.java:8)

[INFO] 
[INFO] Results:
[INFO] 
[ERROR] Failures: 
[ERROR]   InvoiceTest.roundsHalfUp:12 expected: <3> but was: <2>
[ERROR]   InvoiceTest.taxRows row 2
[ERROR] Errors: 
[ERROR]   LedgerClientTest.connect:8 » Connect ledger down
[ERROR]   InvoiceTest.callsLedger » Timeout callsLedger() timed out after 500 milliseconds
[INFO] 
[ERROR] Tests run: 7, Failures: 2, Errors: 2, Skipped: 1
[INFO] 
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test (default-test) on project billing: There are test failures.
[ERROR] Please refer to <ROOT>/target/surefire-reports for the individual test results.
"""

EXPECTED = {
    "org.billing.InvoiceTest#sumsLines": ("passed", 9),
    "org.billing.InvoiceTest#roundsHalfUp": ("failed", 12),
    "org.billing.InvoiceTest#taxRows{int, int}[1]": ("passed", 16),
    "org.billing.InvoiceTest#taxRows{int, int}[2]": ("failed", 16),
    "org.billing.InvoiceTest#callsLedger": ("errored", 19),
    "org.billing.InvoiceTest$WhenVoided#isZero": ("skipped", 24),
    "org.billing.LedgerClientTest#org.billing.LedgerClientTest": ("errored", 7),
}


def parse_surefire(run: RunOutput) -> TestReport:
    """The whole parse: the maven-surefire parser, then the normalizer (lines through ``surefire.locate``)."""
    return parse(run, "maven-surefire")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    pkg = tmp_path / "src" / "test" / "java" / "org" / "billing"
    pkg.mkdir(parents=True)
    (pkg / "InvoiceTest.java").write_text(INVOICE)
    (pkg / "LedgerClientTest.java").write_text(LEDGER)
    (pkg / "LegacyInvoiceTest.java").write_text(LEGACY)
    (tmp_path / "pom.xml").write_text("<project/>")
    return tmp_path


def _reports(root: Path, **files: str) -> None:
    d = root / "target" / "surefire-reports"
    d.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (d / f"TEST-{name}.xml").write_text(text)


def _run(project: Path, stdout: str, command: str = "mvn -B test", exit_code: int = 1) -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, cwd=project)


def _statuses(report) -> dict[str, tuple[str, int | None]]:
    return {t.id: (t.status.value, t.line) for t in report.tests}


def test_xml_reports_give_ids_statuses_and_locations(project: Path) -> None:
    _reports(project, **{"org.billing.InvoiceTest": INVOICE_XML, "org.billing.LedgerClientTest": LEDGER_XML})
    report = parse_surefire(_run(project, CONSOLE_222))
    assert _statuses(report) == EXPECTED
    got = {t.id: t for t in report.tests}
    timeout = got["org.billing.InvoiceTest#callsLedger"]
    assert timeout.timed_out and "timed out after 500 milliseconds" in timeout.message
    assert report.timed_out is True
    assert got["org.billing.InvoiceTest#roundsHalfUp"].message == (
        "org.opentest4j.AssertionFailedError: expected: <3> but was: <2>")
    assert got["org.billing.InvoiceTest$WhenVoided#isZero"].message == "not yet"
    # A class-level error says which lifecycle method failed, as Surefire's summary does.
    ledger = got["org.billing.LedgerClientTest#org.billing.LedgerClientTest"]
    assert "Connect ledger down" in ledger.message
    assert "LedgerClientTest.connect:8 » Connect ledger down" in ledger.message
    assert ledger.file == "src/test/java/org/billing/LedgerClientTest.java"
    assert "junit-xml:target/surefire-reports/TEST-org.billing.InvoiceTest.xml" in report.sources
    assert report.warnings == []


def test_class_level_smart_line_without_console(project: Path) -> None:
    _reports(project, **{"org.billing.LedgerClientTest": LEDGER_XML})
    report = parse_surefire(_run(project, ""))
    [t] = report.tests
    assert t.message.endswith("LedgerClientTest.connect:8 » Connect ledger down")
    assert t.line == 7


def test_stale_reports_of_classes_that_did_not_run_are_skipped(project: Path) -> None:
    _reports(project, **{"org.billing.InvoiceTest": INVOICE_XML, "org.billing.LedgerClientTest": LEDGER_XML})
    console = CONSOLE_222.split("[INFO] Running org.billing.LedgerClientTest")[0] + (
        "[ERROR] Tests run: 6, Failures: 2, Errors: 1, Skipped: 1\n")
    report = parse_surefire(_run(project, console, command="mvn test -Dtest=InvoiceTest"))
    assert all(t.id.startswith("org.billing.InvoiceTest") for t in report.tests)
    assert any("stale report TEST-org.billing.LedgerClientTest.xml" in w for w in report.warnings)


def test_multi_module_reports(project: Path) -> None:
    module = project / "invoices"
    (module / "target" / "surefire-reports").mkdir(parents=True)
    (module / "target" / "surefire-reports" / "TEST-org.billing.InvoiceTest.xml").write_text(INVOICE_XML)
    report = parse_surefire(_run(project, "[INFO] Running org.billing.InvoiceTest\n"))
    assert len(report.tests) == 6
    assert report.sources[0] == "junit-xml:invoices/target/surefire-reports/TEST-org.billing.InvoiceTest.xml"


def test_console_fallback_in_surefire_222_wording(project: Path) -> None:
    report = parse_surefire(_run(project, CONSOLE_222))
    assert _statuses(report) == {
        "org.billing.InvoiceTest#roundsHalfUp": ("failed", 12),
        "org.billing.InvoiceTest#taxRows{int, int}[2]": ("failed", 16),
        "org.billing.InvoiceTest#callsLedger": ("errored", 19),
        "org.billing.LedgerClientTest#org.billing.LedgerClientTest": ("errored", 7),
    }
    ledger = report.find("org.billing.LedgerClientTest#org.billing.LedgerClientTest")
    assert "LedgerClientTest.connect:8 » Connect ledger down" in ledger.message
    assert any("passing tests" in w for w in report.warnings)
    assert report.sources == ["console"]


def test_console_fallback_junit4_provider_and_surefire_3(project: Path) -> None:
    console = """[\x1b[1;34mINFO\x1b[m] Running org.billing.LegacyInvoiceTest
[\x1b[1;31mERROR\x1b[m] Tests run: 2, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! - in org.billing.LegacyInvoiceTest
[\x1b[1;31mERROR\x1b[m] oldSum(org.billing.LegacyInvoiceTest)  Time elapsed: 0.01 s  <<< FAILURE!
java.lang.AssertionError: expected:<1> but was:<2>
\tat app//org.billing.LegacyInvoiceTest.oldSum(LegacyInvoiceTest.java:7)

[INFO] Running org.billing.InvoiceTest
[ERROR] Tests run: 1, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.01 s <<< FAILURE! -- in org.billing.InvoiceTest
[ERROR] org.billing.InvoiceTest.sumsLines -- Time elapsed: 0.003 s <<< FAILURE!
org.opentest4j.AssertionFailedError: lines
first line
\tat org.billing.InvoiceTest.sumsLines(InvoiceTest.java:9)

[ERROR] slow(org.billing.LegacyInvoiceTest)  Time elapsed: 0.02 sec  <<< ERROR!
org.junit.runners.model.TestTimedOutException: test timed out after 10 milliseconds
"""
    report = parse_surefire(_run(project, console))
    got = {t.id: t for t in report.tests}
    assert _statuses(report) == {
        "org.billing.LegacyInvoiceTest#oldSum": ("failed", 7),
        "org.billing.InvoiceTest#sumsLines": ("failed", 9),
        "org.billing.LegacyInvoiceTest#slow": ("errored", 10),
    }
    assert got["org.billing.InvoiceTest#sumsLines"].message == "org.opentest4j.AssertionFailedError: lines\nfirst line"
    assert got["org.billing.LegacyInvoiceTest#slow"].timed_out


def test_compilation_failure_is_one_errored_entry_per_file(project: Path) -> None:
    _reports(project, **{"org.billing.InvoiceTest": INVOICE_XML})  # from an older build
    src = project / "src" / "main" / "java" / "org" / "billing" / "Invoice.java"
    console = f"""[INFO] --- maven-compiler-plugin:3.10.1:compile (default-compile) @ billing ---
[INFO] -------------------------------------------------------------
[ERROR] COMPILATION ERROR : 
[INFO] -------------------------------------------------------------
[ERROR] {src}:[14,20] incompatible types: java.lang.String cannot be converted to int
[ERROR] {src}:[20,5] missing return statement
[ERROR] <ROOT>/src/test/java/org/billing/InvoiceTest.java:[9,1] cannot find symbol
  symbol:   class Money
[INFO] 3 errors 
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.10.1:compile (default-compile) on project billing: Compilation failure: Compilation failure: 
[ERROR] {src}:[14,20] incompatible types: java.lang.String cannot be converted to int
[ERROR] {src}:[20,5] missing return statement
"""
    report = parse_surefire(_run(project, console))
    assert report.build_error is True
    got = {t.id: t for t in report.tests}
    assert set(got) == {"src/main/java/org/billing/Invoice.java", "src/test/java/org/billing/InvoiceTest.java"}
    main = got["src/main/java/org/billing/Invoice.java"]
    assert (main.status, main.line, main.file) == (Status.ERRORED, 14, "src/main/java/org/billing/Invoice.java")
    assert main.message.count("\n") == 1  # repeated errors counted once
    assert "incompatible types: java.lang.String cannot be converted to int" in main.message
    assert "symbol:   class Money" in got["src/test/java/org/billing/InvoiceTest.java"].details
    assert any("stale report" in w for w in report.warnings)


def test_dependency_failure_is_a_build_error(project: Path) -> None:
    console = ("[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal on project billing: Could not resolve "
               "dependencies for project org:billing:jar:1.0: org.acme:money:jar:9 was not found\n")
    report = parse_surefire(_run(project, console))
    assert report.build_error is True
    [t] = report.tests
    assert t.id == "pom.xml" and "Could not resolve dependencies" in t.message


def test_truncated_report_keeps_cases_and_warns(project: Path) -> None:
    _reports(project, **{"org.billing.InvoiceTest": INVOICE_XML[: INVOICE_XML.index('<testcase name="callsLedger"')]})
    report = parse_surefire(_run(project, ""))
    assert len(report.tests) == 4
    assert any("truncated" in w for w in report.warnings)


def test_run_killed_by_timeout(project: Path) -> None:
    console = "[INFO]  T E S T S\n[INFO] Running org.billing.InvoiceTest\n"
    report = parse_surefire(_run(project, console, command="timeout 60 mvn test", exit_code=124))
    assert report.timed_out is True
    assert any("killed while org.billing.InvoiceTest was running" in w for w in report.warnings)


@pytest.mark.parametrize("stdout", ["", "\x00\xff binary \x1b[" * 50, "[ERROR] x  Time elapsed: 1 s  <<< ERROR!\n"])
def test_bad_input_does_not_crash(tmp_path: Path, stdout: str) -> None:
    _reports(tmp_path, **{"broken": "<testsuite><testcase name='a' classname='b'><failure>\x01"})
    report = parse_surefire(RunOutput(command="mvn test", exit_code=1, stdout_text=stdout, cwd=tmp_path))
    assert report.framework == "maven-surefire"
    assert report.warnings


def test_detection(tmp_path: Path) -> None:
    for cmd in ("mvn -B test", "./mvnw -q -Dtest=InvoiceTest test", "cd api && mvn -pl core verify"):
        assert from_command(cmd).framework == "maven-surefire", cmd
    assert from_command("gradle test") is None or from_command("gradle test").framework != "maven-surefire"
    run = RunOutput(command="make check", stdout_text=CONSOLE_222, cwd=tmp_path)
    assert from_output(run).framework == "maven-surefire"


def test_running_names_that_are_not_report_names_do_not_filter(project: Path) -> None:
    # Some providers print display names in "Running ...": reports are kept rather than all dropped.
    _reports(project, **{"org.billing.InvoiceTest": INVOICE_XML})
    report = parse_surefire(_run(project, "[INFO] Running InvoiceSpec\n"))
    assert len(report.tests) == 6
    assert not any("stale" in w for w in report.warnings)
