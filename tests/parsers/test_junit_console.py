"""JUnit Platform console launcher parser: every --details mode, the legacy
XML reports, javac failures, and the shared Java helpers (parsers/source/java.py).

The outputs below are written from the launcher's documented formats (tree,
flat, verbose, testfeed printers, the Failures section, the legacy XML
writer) for a small 'shop' project, not copied from the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import junit_console, parse
from greenloop.parsers.detect import from_command, from_output
from greenloop.parsers.locate import SourceIndex
from greenloop.parsers.models import Status, TestReport
from greenloop.parsers.run_output import RunOutput
from greenloop.parsers.source.java import CompileErrors, JavaSources, exception_head, is_timeout, simple_type

LAUNCH = "java -jar lib/junit-platform-console-standalone.jar --class-path out --scan-class-path"

CART = """package org.shop.cart;

import org.junit.jupiter.api.*;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CartTest {
    @Test
    void addsItem() {}

    @Test
    void removesItem() {}

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void quantities(int q) {}

    @Test
    @DisplayName("empty cart costs nothing")
    void emptyCart() {}

    @Test
    @Disabled("later")
    void later() {}

    @Test
    void onlyOnCi() {}

    @Test
    void slowCheckout() {}

    @Nested
    class WithCoupon {
        @Test
        void appliesCoupon() {}
    }
}
"""
PRICING = """package org.shop.cart;

import org.junit.jupiter.api.*;

class PricingTest {
    @BeforeAll
    static void loadRates() {}

    @Test
    void net() {}

    @Test
    void gross() {}
}
"""
LEGACY = """package org.shop.cart;

import org.junit.Test;

public class LegacyCartTest {
    @Test
    public void oldTotal() {}
}
"""

# id -> (status, line, message substring or None, timed_out)
EXPECTED = {
    "org.shop.cart.CartTest#addsItem()": ("passed", 9, None, False),
    "org.shop.cart.CartTest#removesItem()": ("failed", 12, "expected: <1> but was: <0>", False),
    "org.shop.cart.CartTest#quantities(int)[1]": ("passed", 16, None, False),
    "org.shop.cart.CartTest#quantities(int)[2]": ("failed", 16, "quantity 2 ==> expected: <true>", False),
    "org.shop.cart.CartTest#emptyCart()": ("passed", 20, None, False),
    "org.shop.cart.CartTest#later()": ("skipped", 24, "later", False),
    "org.shop.cart.CartTest#onlyOnCi()": ("skipped", 27, "not on CI", False),
    "org.shop.cart.CartTest#slowCheckout()": ("failed", 30, "timed out after 100 milliseconds", True),
    "org.shop.cart.CartTest$WithCoupon#appliesCoupon()": ("failed", 35, "coupon\nsecond line", False),
    "org.shop.cart.PricingTest#net()": ("errored", 10, "rates.csv", False),
    "org.shop.cart.PricingTest#gross()": ("errored", 13, "rates.csv", False),
    "org.shop.cart.LegacyCartTest#oldTotal": ("passed", 7, None, False),
}

SUMMARY = """
Test run finished after 120 ms
[         6 containers found      ]
[         0 containers skipped    ]
[         6 containers started    ]
[         0 containers aborted    ]
[         5 containers successful ]
[         1 containers failed     ]
[        12 tests found           ]
[         1 tests skipped         ]
[         9 tests started         ]
[         1 tests aborted         ]
[         4 tests successful      ]
[         4 tests failed          ]
"""

FAILURES = """
Failures (5):
  JUnit Jupiter:CartTest:removesItem()
    MethodSource [className = 'org.shop.cart.CartTest', methodName = 'removesItem', methodParameterTypes = '']
    => org.opentest4j.AssertionFailedError: expected: <1> but was: <0>
       org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)
       org.shop.cart.CartTest.removesItem(CartTest.java:12)
       [...]
  JUnit Jupiter:CartTest:quantities(int):[2] 2
    MethodSource [className = 'org.shop.cart.CartTest', methodName = 'quantities', methodParameterTypes = 'int']
    => org.opentest4j.AssertionFailedError: quantity 2 ==> expected: <true> but was: <false>
       org.shop.cart.CartTest.quantities(CartTest.java:16)
       [...]
  JUnit Jupiter:CartTest:slowCheckout()
    MethodSource [className = 'org.shop.cart.CartTest', methodName = 'slowCheckout', methodParameterTypes = '']
    => java.util.concurrent.TimeoutException: slowCheckout() timed out after 100 milliseconds
       org.junit.jupiter.engine.extension.TimeoutExceptionFactory.create(TimeoutExceptionFactory.java:29)
       [...]
  JUnit Jupiter:CartTest:WithCoupon:appliesCoupon()
    MethodSource [className = 'org.shop.cart.CartTest$WithCoupon', methodName = 'appliesCoupon', methodParameterTypes = '']
    => org.opentest4j.AssertionFailedError: coupon
second line
       org.shop.cart.CartTest$WithCoupon.appliesCoupon(CartTest.java:35)
       [...]
  JUnit Jupiter:PricingTest
    ClassSource [className = 'org.shop.cart.PricingTest', filePosition = null]
    => java.io.FileNotFoundException: rates.csv
       org.shop.cart.PricingTest.loadRates(PricingTest.java:7)
       [...]
"""

C, G, R, Y, M, B, X = "\x1b[36m", "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[35m", "\x1b[34m", "\x1b[0m"

TREE = (
    f"{G}Thanks for using JUnit! Support its development at https://junit.org/sponsoring{X}\n\n"
    f"{C}╷{X}\n"
    f"{C}├─{X} {C}JUnit Jupiter{X} {G}✔{X}\n"
    f"{C}│  ├─{X} {C}CartTest{X} {G}✔{X}\n"
    f"{C}│  │  ├─{X} {B}addsItem(){X} {G}✔{X}\n"
    f"{C}│  │  ├─{X} {R}removesItem(){X} {R}✘{X} {R}expected: <1> but was: <0>{X}\n"
    f"{C}│  │  ├─{X} {C}quantities(int){X} {G}✔{X}\n"
    f"{C}│  │  │  ├─{X} {B}[1] 1{X} {G}✔{X}\n"
    f"{C}│  │  │  └─{X} {R}[2] 2{X} {R}✘{X} {R}quantity 2 ==> expected: <true> but was: <false>{X}\n"
    f"{C}│  │  ├─{X} {B}empty cart costs nothing{X} {G}✔{X}\n"
    f"{C}│  │  ├─{X} {M}later(){X} {M}↷{X} {M}later{X}\n"
    f"{C}│  │  ├─{X} {Y}onlyOnCi(){X} {Y}■{X} {R}Assumption failed: not on CI{X}\n"
    f"{C}│  │  ├─{X} {R}slowCheckout(){X} {R}✘{X} {R}slowCheckout() timed out after 100 milliseconds{X}\n"
    f"{C}│  │  └─{X} {C}WithCoupon{X} {G}✔{X}\n"
    f"{C}│  │     └─{X} {R}appliesCoupon(){X} {R}✘{X} {R}coupon{X}\n"
    f"{C}│  │           {X}{R}second line{X}\n"
    f"{C}│  └─{X} {R}PricingTest{X} {R}✘{X} {R}rates.csv{X}\n"
    f"{C}└─{X} {C}JUnit Vintage{X} {G}✔{X}\n"
    f"{C}   └─{X} {C}LegacyCartTest{X} {G}✔{X}\n"
    f"{C}      └─{X} {B}oldTotal{X} {G}✔{X}\n"
    + FAILURES + SUMMARY
)

J = "[engine:junit-jupiter]"
CART_UID = f"{J}/[class:org.shop.cart.CartTest]"
COUPON_UID = f"{CART_UID}/[nested-class:WithCoupon]"
TEMPLATE_UID = f"{CART_UID}/[test-template:quantities(int)]"
PRICING_UID = f"{J}/[class:org.shop.cart.PricingTest]"
V = "[engine:junit-vintage]"
LEGACY_UID = f"{V}/[runner:org.shop.cart.LegacyCartTest]"
OLD_UID = f"{LEGACY_UID}/[test:oldTotal(org.shop.cart.LegacyCartTest)]"
IND = " " * 13


def _flat(kind: str, name: str, uid: str, *details: str) -> str:
    lines = [f"{kind + ':':<10}   {name} ({uid})"]
    if details:
        lines.append(f"{IND}=> {details[0]}")
        lines.extend(IND + d for d in details[1:])
    return "\n".join(lines)


def _flat_test(name: str, uid: str, *details: str) -> str:
    return _flat("Started", name, uid) + "\n" + _flat("Finished", name, uid, *details)


FLAT = "\n".join([
    "Test execution started. Number of static tests: 10",
    _flat("Started", "JUnit Jupiter", J),
    _flat("Started", "CartTest", CART_UID),
    _flat_test("addsItem()", f"{CART_UID}/[method:addsItem()]"),
    _flat_test("removesItem()", f"{CART_UID}/[method:removesItem()]",
               "Exception: org.opentest4j.AssertionFailedError: expected: <1> but was: <0>",
               "\tat org.shop.cart.CartTest.removesItem(CartTest.java:12)"),
    _flat("Started", "quantities(int)", TEMPLATE_UID),
    _flat("Registered", " [1] 1", f"{TEMPLATE_UID}/[test-template-invocation:#1]"),
    _flat_test("[1] 1", f"{TEMPLATE_UID}/[test-template-invocation:#1]"),
    _flat_test("[2] 2", f"{TEMPLATE_UID}/[test-template-invocation:#2]",
               "Exception: org.opentest4j.AssertionFailedError: quantity 2 ==> expected: <true> but was: <false>",
               "\tat org.shop.cart.CartTest.quantities(CartTest.java:16)"),
    _flat("Finished", "quantities(int)", TEMPLATE_UID),
    _flat_test("empty cart costs nothing", f"{CART_UID}/[method:emptyCart()]"),
    _flat("Skipped", "later()", f"{CART_UID}/[method:later()]", "Reason: later"),
    _flat_test("onlyOnCi()", f"{CART_UID}/[method:onlyOnCi()]",
               "Exception: org.opentest4j.TestAbortedException: Assumption failed: not on CI",
               "\tat org.junit.jupiter.api.Assumptions.throwAssumptionFailed(Assumptions.java:316)"),
    _flat_test("slowCheckout()", f"{CART_UID}/[method:slowCheckout()]",
               "Exception: java.util.concurrent.TimeoutException: slowCheckout() timed out after 100 milliseconds",
               "\tat org.junit.jupiter.engine.extension.TimeoutExceptionFactory.create(TimeoutExceptionFactory.java:29)"),
    _flat("Started", "WithCoupon", COUPON_UID),
    _flat_test("appliesCoupon()", f"{COUPON_UID}/[method:appliesCoupon()]",
               "Exception: org.opentest4j.AssertionFailedError: coupon", "second line",
               "\tat org.shop.cart.CartTest$WithCoupon.appliesCoupon(CartTest.java:35)"),
    "stray output the test printed",
    _flat("Finished", "WithCoupon", COUPON_UID),
    _flat("Finished", "CartTest", CART_UID),
    _flat("Started", "PricingTest", PRICING_UID),
    _flat("Finished", "PricingTest", PRICING_UID, "Exception: java.io.FileNotFoundException: rates.csv",
          "\tat org.shop.cart.PricingTest.loadRates(PricingTest.java:7)"),
    _flat("Finished", "JUnit Jupiter", J),
    _flat("Started", "JUnit Vintage", V),
    _flat("Started", "LegacyCartTest", LEGACY_UID),
    _flat_test("oldTotal", OLD_UID),
    _flat("Finished", "LegacyCartTest", LEGACY_UID),
    _flat("Finished", "JUnit Vintage", V),
    "Test execution finished.",
]) + "\n" + SUMMARY


def _vtest(ind: str, name: str, uid: str, parent: str, *rest: str) -> str:
    pad = ind + "│  "
    out = [f"{ind}├─ {name}", f"{pad}      tags: []", f"{pad}  uniqueId: {uid}", f"{pad}    parent: {parent}"]
    out.extend(pad + r for r in rest)
    return "\n".join(out)


VERBOSE = "\n".join([
    "Test plan execution started. Number of static tests: 10",
    "╷",
    "├─ JUnit Jupiter",
    "│  ├─ CartTest",
    _vtest("│  │  ", "addsItem()", f"{CART_UID}/[method:addsItem()]", CART_UID,
           "  duration: 3 ms", "    status: ✔ SUCCESSFUL"),
    _vtest("│  │  ", "removesItem()", f"{CART_UID}/[method:removesItem()]", CART_UID,
           "    caught: org.opentest4j.AssertionFailedError: expected: <1> but was: <0>",
           "              \tat org.shop.cart.CartTest.removesItem(CartTest.java:12)",
           "  duration: 2 ms", "    status: ✘ FAILED"),
    "│  │  ├─ quantities(int)",
    "│  │  │  ├─ [1] 1 dynamically registered",
    _vtest("│  │  │  ", "[1] 1", f"{TEMPLATE_UID}/[test-template-invocation:#1]", TEMPLATE_UID,
           "  duration: 1 ms", "    status: ✔ SUCCESSFUL"),
    "│  │  │  ├─ [2] 2 dynamically registered",
    _vtest("│  │  │  ", "[2] 2", f"{TEMPLATE_UID}/[test-template-invocation:#2]", TEMPLATE_UID,
           "    caught: org.opentest4j.AssertionFailedError: quantity 2 ==> expected: <true> but was: <false>",
           "  duration: 1 ms", "    status: ✘ FAILED"),
    "│  │  └─ quantities(int) finished after 9 ms.",
    _vtest("│  │  ", "empty cart costs nothing", f"{CART_UID}/[method:emptyCart()]", CART_UID,
           "  duration: 1 ms", "    status: ✔ SUCCESSFUL"),
    _vtest("│  │  ", "later()", f"{CART_UID}/[method:later()]", CART_UID,
           "    reason: later", "    status: ↷ SKIPPED"),
    _vtest("│  │  ", "onlyOnCi()", f"{CART_UID}/[method:onlyOnCi()]", CART_UID,
           "    caught: org.opentest4j.TestAbortedException: Assumption failed: not on CI",
           "  duration: 1 ms", "    status: ■ ABORTED"),
    _vtest("│  │  ", "slowCheckout()", f"{CART_UID}/[method:slowCheckout()]", CART_UID,
           "    caught: java.util.concurrent.TimeoutException: slowCheckout() timed out after 100 milliseconds",
           "  duration: 104 ms", "    status: ✘ FAILED"),
    "│  │  ├─ WithCoupon",
    _vtest("│  │  │  ", "appliesCoupon()", f"{COUPON_UID}/[method:appliesCoupon()]", COUPON_UID,
           "    caught: org.opentest4j.AssertionFailedError: coupon",
           "              second line",
           "              \tat org.shop.cart.CartTest$WithCoupon.appliesCoupon(CartTest.java:35)",
           "  duration: 1 ms", "    status: ✘ FAILED"),
    "│  │  └─ WithCoupon finished after 2 ms.",
    "│  └─ CartTest finished after 130 ms.",
    "│  ├─ PricingTest",
    "│  │  │     caught: java.io.FileNotFoundException: rates.csv",
    "│  │  │               \tat org.shop.cart.PricingTest.loadRates(PricingTest.java:7)",
    "│  └─ PricingTest finished after 1 ms.",
    "└─ JUnit Jupiter finished after 140 ms.",
    "├─ JUnit Vintage",
    "│  ├─ LegacyCartTest",
    _vtest("│  │  ", "oldTotal", OLD_UID, LEGACY_UID, "  duration: 1 ms", "    status: ✔ SUCCESSFUL"),
    "│  └─ LegacyCartTest finished after 3 ms.",
    "└─ JUnit Vintage finished after 5 ms.",
    "Test plan execution finished. Number of all tests: 12",
]) + "\n" + SUMMARY


def _feed(path: str, status: str, *lines: str) -> str:
    return "\n".join([f"{path} :: {status}", *("\t" + ln for ln in lines)])


FEED = "\n".join([
    _feed("JUnit Jupiter > CartTest > addsItem()", "STARTED"),
    _feed("JUnit Jupiter > CartTest > addsItem()", "SUCCESSFUL"),
    _feed("JUnit Jupiter > CartTest > removesItem()", "STARTED"),
    _feed("JUnit Jupiter > CartTest > removesItem()", "FAILED",
          "org.opentest4j.AssertionFailedError: expected: <1> but was: <0>",
          "\tat org.shop.cart.CartTest.removesItem(CartTest.java:12)"),
    _feed("JUnit Jupiter > CartTest > quantities(int) > [1] 1", "SUCCESSFUL"),
    _feed("JUnit Jupiter > CartTest > quantities(int) > [2] 2", "FAILED",
          "org.opentest4j.AssertionFailedError: quantity 2 ==> expected: <true> but was: <false>"),
    _feed("JUnit Jupiter > CartTest > empty cart costs nothing", "SUCCESSFUL"),
    _feed("JUnit Jupiter > CartTest > later()", "SKIPPED", "Reason: later"),
    _feed("JUnit Jupiter > CartTest > onlyOnCi()", "ABORTED",
          "org.opentest4j.TestAbortedException: Assumption failed: not on CI"),
    _feed("JUnit Jupiter > CartTest > slowCheckout()", "FAILED",
          "java.util.concurrent.TimeoutException: slowCheckout() timed out after 100 milliseconds"),
    _feed("JUnit Jupiter > CartTest > WithCoupon > appliesCoupon()", "FAILED",
          "org.opentest4j.AssertionFailedError: coupon", "second line",
          "\tat org.shop.cart.CartTest$WithCoupon.appliesCoupon(CartTest.java:35)"),
    _feed("JUnit Vintage > LegacyCartTest > oldTotal", "SUCCESSFUL"),
]) + "\n" + SUMMARY


def parse_junit_console(run: RunOutput) -> TestReport:
    """The whole parse: the junit-console parser, then the normalizer (lines through ``junit_console.locate``)."""
    return parse(run, "junit-console")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    pkg = tmp_path / "src" / "test" / "java" / "org" / "shop" / "cart"
    pkg.mkdir(parents=True)
    (pkg / "CartTest.java").write_text(CART)
    (pkg / "PricingTest.java").write_text(PRICING)
    (pkg / "LegacyCartTest.java").write_text(LEGACY)
    return tmp_path


def _run(project: Path, stdout: str, command: str = LAUNCH, exit_code: int = 1, stderr: str = "") -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=project)


def _check(report, expected=EXPECTED) -> None:
    got = {t.id: t for t in report.tests}
    assert set(got) == set(expected), sorted(set(got) ^ set(expected))
    for tid, (status, line, msg, timed_out) in expected.items():
        t = got[tid]
        assert t.status.value == status, tid
        assert t.line == line, tid
        assert t.file is not None and t.file.endswith(".java"), tid
        if msg is not None:
            assert msg in (t.message or ""), (tid, t.message)
        assert t.timed_out == timed_out, tid


@pytest.mark.parametrize("output", [TREE, FLAT, VERBOSE, FEED + FAILURES], ids=["tree", "flat", "verbose", "testfeed"])
def test_every_details_mode_gives_the_legacy_xml_ids(project: Path, output: str) -> None:
    report = parse_junit_console(_run(project, output))
    _check(report)
    assert report.timed_out is True
    assert report.build_error is False
    assert report.sources == ["console"]


ASCII_TREE = """.
+-- JUnit Jupiter [OK]
| +-- CartTest [OK]
| | +-- addsItem() [OK]
| | +-- removesItem() [X] expected: <1> but was: <0>
| | +-- quantities(int) [OK]
| | | +-- [1] 1 [OK]
| | | '-- [2] 2 [X] quantity 2 ==> expected: <true> but was: <false>
| | +-- empty cart costs nothing [OK]
| | +-- later() [S] later
| | +-- onlyOnCi() [A] Assumption failed: not on CI
| | +-- slowCheckout() 12001 ms [X] slowCheckout() timed out after 100 milliseconds
| | '-- WithCoupon [OK]
| |   '-- appliesCoupon() [X] coupon
| |         second line
| '-- PricingTest [X] rates.csv
'-- JUnit Vintage [OK]
  '-- LegacyCartTest [OK]
    '-- oldTotal [OK]
"""


def test_tree_in_the_ascii_theme_with_a_long_duration(project: Path) -> None:
    # --details-theme=ascii; 1.11 prints the duration of tests slower than 10 s.
    _check(parse_junit_console(_run(project, ASCII_TREE + FAILURES + SUMMARY)))


def test_flat_colours_decide_the_status(project: Path) -> None:
    # A custom exception the launcher reports as aborted (yellow) is not an assertion failure.
    uid = f"{CART_UID}/[method:addsItem()]"
    out = "\n".join([
        "Test execution started. Number of static tests: 1",
        f"{B}Started:     addsItem() ({uid}){X}",
        f"{Y}Finished:    addsItem() ({uid})",
        f"{IND}=> Exception: org.shop.cart.NotReadyException: no stock service{X}",
    ])
    [t] = parse_junit_console(_run(project, out)).tests
    assert t.id == "org.shop.cart.CartTest#addsItem()"
    assert t.status == Status.SKIPPED
    assert t.native_status.startswith("aborted")


def test_legacy_xml_reports_with_console_cross_check(project: Path) -> None:
    reports = project / "reports"
    reports.mkdir()
    before_all = ("java.io.FileNotFoundException: rates.csv\n\tat org.shop.cart.PricingTest.loadRates(PricingTest.java:7)\n"
                  "\tat org.junit.jupiter.engine.descriptor.ClassBasedTestDescriptor.invokeBeforeAllMethods(X.java:1)")
    (reports / "TEST-junit-jupiter.xml").write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Jupiter" tests="5" skipped="1" failures="1" errors="3">
<testcase name="removesItem()" classname="org.shop.cart.CartTest" time="0.01">
<failure message="expected: &lt;1&gt; but was: &lt;0&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <1> but was: <0>
\tat org.shop.cart.CartTest.removesItem(CartTest.java:12)]]></failure>
</testcase>
<testcase name="slowCheckout()" classname="org.shop.cart.CartTest" time="0.1">
<error message="slowCheckout() timed out after 100 milliseconds" type="java.util.concurrent.TimeoutException"><![CDATA[java.util.concurrent.TimeoutException: slowCheckout() timed out after 100 milliseconds]]></error>
</testcase>
<testcase name="onlyOnCi()" classname="org.shop.cart.CartTest" time="0">
<skipped><![CDATA[org.opentest4j.TestAbortedException: Assumption failed: not on CI
\tat org.junit.jupiter.api.Assumptions.throwAssumptionFailed(Assumptions.java:316)]]></skipped>
</testcase>
<testcase name="quantities(int)[2]" classname="org.shop.cart.CartTest" time="0"/>
<testcase name="net()" classname="org.shop.cart.PricingTest" time="0">
<error message="rates.csv" type="java.io.FileNotFoundException"><![CDATA[{before_all}]]></error>
</testcase>
<testcase name="gross()" classname="org.shop.cart.PricingTest" time="0">
<error message="rates.csv" type="java.io.FileNotFoundException"><![CDATA[{before_all}]]></error>
</testcase>
</testsuite>
""")
    (reports / "TEST-junit-vintage.xml").write_text("""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Vintage" tests="1"><testcase name="oldTotal" classname="org.shop.cart.LegacyCartTest" time="0"/></testsuite>
""")
    report = parse_junit_console(_run(project, TREE, command=LAUNCH + " --reports-dir reports"))
    got = {t.id: t for t in report.tests}
    # The XML is the list of tests: the console's other tests are not added.
    assert set(got) == {
        "org.shop.cart.CartTest#removesItem()", "org.shop.cart.CartTest#slowCheckout()",
        "org.shop.cart.CartTest#onlyOnCi()", "org.shop.cart.CartTest#quantities(int)[2]",
        "org.shop.cart.PricingTest#net()", "org.shop.cart.PricingTest#gross()",
        "org.shop.cart.LegacyCartTest#oldTotal",
    }
    # <error> for a non-assertion exception is still a failed test.
    assert got["org.shop.cart.CartTest#slowCheckout()"].status == Status.FAILED
    assert got["org.shop.cart.CartTest#slowCheckout()"].timed_out
    assert got["org.shop.cart.CartTest#onlyOnCi()"].status == Status.SKIPPED
    assert got["org.shop.cart.CartTest#onlyOnCi()"].message == "org.opentest4j.TestAbortedException: Assumption failed: not on CI"
    assert got["org.shop.cart.PricingTest#net()"].status == Status.ERRORED
    assert got["org.shop.cart.PricingTest#gross()"].line == 13
    assert report.sources[:2] == ["junit-xml:reports/TEST-junit-jupiter.xml", "junit-xml:reports/TEST-junit-vintage.xml"]


def test_xml_alone_recognises_a_before_all_failure_by_its_trace(project: Path) -> None:
    reports = project / "out-reports"
    reports.mkdir()
    (reports / "TEST-junit-jupiter.xml").write_text("""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Jupiter" tests="3">
<testcase name="net()" classname="org.shop.cart.PricingTest" time="0">
<error message="rates.csv" type="java.io.FileNotFoundException"><![CDATA[java.io.FileNotFoundException: rates.csv
\tat org.junit.jupiter.engine.descriptor.ClassBasedTestDescriptor.before(ClassBasedTestDescriptor.java:215)]]></error>
</testcase>
<testcase name="addsItem()" classname="org.shop.cart.CartTest" time="0">
<error message="boom" type="java.lang.IllegalStateException"><![CDATA[java.lang.IllegalStateException: boom
\tat org.shop.cart.CartTest.addsItem(CartTest.java:9)]]></error>
</testcase>
<testcase name="later()" classname="org.shop.cart.DisabledTest" time="0"><skipped><![CDATA[parent was skipped: off]]></skipped></testcase>
</testsuite>
""")
    report = parse_junit_console(_run(project, "", command=LAUNCH + " --details=none --reports-dir=out-reports"))
    got = {t.id: t.status for t in report.tests}
    assert got == {
        "org.shop.cart.PricingTest#net()": Status.ERRORED,
        "org.shop.cart.CartTest#addsItem()": Status.FAILED,
        "org.shop.cart.DisabledTest#later()": Status.SKIPPED,
    }


def test_truncated_xml_keeps_what_was_read_and_adds_the_console(project: Path) -> None:
    reports = project / "reports"
    reports.mkdir()
    (reports / "TEST-junit-jupiter.xml").write_text(
        '<?xml version="1.0"?>\n<testsuite name="JUnit Jupiter">\n'
        '<testcase name="addsItem()" classname="org.shop.cart.CartTest" time="0"/>\n<testcase name="remo')
    report = parse_junit_console(_run(project, TREE, command=LAUNCH + " --reports-dir reports"))
    assert any("truncated" in w for w in report.warnings)
    _check(report)


def test_missing_reports_dir_falls_back_to_the_console(project: Path) -> None:
    report = parse_junit_console(_run(project, FLAT, command=LAUNCH + " --reports-dir=nowhere"))
    assert any("no XML report" in w for w in report.warnings)
    _check(report)


def test_javac_failure_in_the_chain(project: Path) -> None:
    stale = project / "reports"
    stale.mkdir()
    (stale / "TEST-junit-jupiter.xml").write_text(
        '<testsuite><testcase name="old()" classname="org.shop.cart.CartTest"/></testsuite>')
    stderr = (
        "src/test/java/org/shop/cart/CartTest.java:12: error: cannot find symbol\n"
        "    void removesItem() { cart.drop(); }\n"
        "                             ^\n"
        "  symbol:   method drop()\n"
        "  location: variable cart of type Cart\n"
        "src/test/java/org/shop/cart/CartTest.java:16: error: ';' expected\n"
        "src/main/java/org/shop/cart/Cart.java:3: error: class, interface, enum, or record expected\n"
        "3 errors\n"
    )
    cmd = "mkdir -p out && javac -d out $(find src -name '*.java') && " + LAUNCH + " --reports-dir reports"
    report = parse_junit_console(_run(project, "", command=cmd, stderr=stderr))
    assert report.build_error is True
    got = {t.id: t for t in report.tests}
    assert set(got) == {"src/test/java/org/shop/cart/CartTest.java", "src/main/java/org/shop/cart/Cart.java"}
    cart = got["src/test/java/org/shop/cart/CartTest.java"]
    assert cart.status == Status.ERRORED and cart.line == 12
    assert "error: cannot find symbol" in cart.message and "error: ';' expected" in cart.message
    assert "symbol:   method drop()" in cart.details
    assert any("did not write them" in w for w in report.warnings)


def test_run_killed_by_timeout_lists_the_hanging_test(project: Path) -> None:
    out = "\n".join([
        "Test plan execution started. Number of static tests: 3",
        "╷",
        "├─ JUnit Jupiter",
        "│  ├─ CartTest",
        _vtest("│  │  ", "addsItem()", f"{CART_UID}/[method:addsItem()]", CART_UID,
               "  duration: 3 ms", "    status: ✔ SUCCESSFUL"),
        _vtest("│  │  ", "slowCheckout()", f"{CART_UID}/[method:slowCheckout()]", CART_UID,
               "    source: MethodSource [className = 'org.shop.cart.CartTest', methodName = 'slowCheckout']"),
    ])
    report = parse_junit_console(_run(project, out, command="timeout 30 " + LAUNCH + " --details=verbose",
                                      exit_code=124))
    got = {t.id: t for t in report.tests}
    assert got["org.shop.cart.CartTest#addsItem()"].status == Status.PASSED
    hanging = got["org.shop.cart.CartTest#slowCheckout()"]
    assert hanging.status == Status.FAILED and hanging.timed_out and hanging.line == 30
    assert report.timed_out is True


def test_summary_details_list_failures_and_say_so(project: Path) -> None:
    report = parse_junit_console(_run(project, FAILURES + SUMMARY, command=LAUNCH + " --details=summary"))
    got = {t.id: t.status for t in report.tests}
    assert got["org.shop.cart.CartTest#removesItem()"] == Status.FAILED
    assert got["org.shop.cart.PricingTest#net()"] == Status.ERRORED
    assert "org.shop.cart.CartTest#quantities(int)[2]" not in got  # its index is not printed
    assert any("failures only" in w for w in report.warnings)


@pytest.mark.parametrize("stdout", ["", "\x00\x01\x02garbage\xff" * 100, "╷\n├─ \n│  └─ ✘\nFailures (x):\n  :\n"])
def test_bad_input_does_not_crash(tmp_path: Path, stdout: str) -> None:
    report = parse_junit_console(RunOutput(command=LAUNCH, exit_code=1, stdout_text=stdout, cwd=tmp_path))
    assert report.framework == "junit-console"
    assert all(t.status in Status for t in report.tests)


def test_unique_ids_map_to_legacy_names() -> None:
    f = junit_console.legacy_from_uid
    assert f(f"{TEMPLATE_UID}/[test-template-invocation:#3]") == ("org.shop.cart.CartTest", "quantities(int)[3]",
                                                                 "junit-jupiter")
    assert f(f"{CART_UID}/[method:find(java.lang.String, org.junit.jupiter.api.TestInfo)]")[1] == "find(String, TestInfo)"
    assert f(f"{CART_UID}/[test-factory:checks()]/[dynamic-container:#2]/[dynamic-test:#1]")[1] == "checks()[2][1]"
    assert f(f"{COUPON_UID}/[method:appliesCoupon()]")[0] == "org.shop.cart.CartTest$WithCoupon"
    vintage = f"{V}/[runner:org.shop.cart.Rows]/[test:%5B0%5D]/[test:row%5B0%5D(org.shop.cart.Rows)]"
    assert f(vintage) == ("org.shop.cart.Rows", "row[0]", "junit-vintage")


def test_detection_by_command_and_output(tmp_path: Path) -> None:
    for cmd in (LAUNCH, "java -jar junit-platform-console-standalone-1.10.2.jar execute --select-method a.B#c",
                "javac -d out A.java && java -cp out:lib/* org.junit.platform.console.ConsoleLauncher -c a.B"):
        found = from_command(cmd)
        assert found is not None and found.framework == "junit-console", cmd
    assert from_command("mvn test").framework != "junit-console"
    run = RunOutput(command="./run-tests.sh", stdout_text=TREE, cwd=tmp_path)
    assert from_output(run).framework == "junit-console"


# -- shared Java helpers (parsers/source/java.py) ----------------------------------


def test_java_sources_locate_methods_classes_and_display_names(project: Path) -> None:
    js = JavaSources(SourceIndex(project))
    assert js.class_file("org.shop.cart.CartTest$WithCoupon") == "src/test/java/org/shop/cart/CartTest.java"
    assert js.locate_test("org.shop.cart.CartTest", "quantities{int}[2]") == (
        "src/test/java/org/shop/cart/CartTest.java", 16)
    assert js.locate_test("org.shop.cart.CartTest", "empty cart costs nothing")[1] == 20
    assert js.resolve_class("WithCoupon", "org.shop.cart.CartTest") == "org.shop.cart.CartTest$WithCoupon"
    assert js.resolve_class("PricingTest") == "org.shop.cart.PricingTest"
    assert [d.name for d in js.declared_tests("org.shop.cart.CartTest")] == [
        "addsItem()", "removesItem()", "quantities(int)", "emptyCart()", "later()", "onlyOnCi()",
        "slowCheckout()", "appliesCoupon()",
    ]
    assert js.locate_test("org.shop.Missing", "x") == (None, None)


def test_exception_helpers() -> None:
    text = "org.opentest4j.AssertionFailedError: a\nb\n\tat x.Y.z(Y.java:1)\nCaused by: q"
    assert exception_head(text) == "org.opentest4j.AssertionFailedError: a\nb"
    assert is_timeout("java.util.concurrent.TimeoutException", "x")
    assert is_timeout("org.opentest4j.AssertionFailedError", "execution timed out after 50 ms")
    assert not is_timeout("java.lang.AssertionError", "expected 5")
    assert simple_type("[Ljava.lang.String;") == "String[]"
    assert simple_type("java.util.Map$Entry") == "Entry"


def test_compile_errors_group_by_file(tmp_path: Path) -> None:
    ce = CompileErrors(SourceIndex(tmp_path))
    for line in [f"[ERROR] {tmp_path}/src/A.java:[3,9] cannot find symbol",
                 "  symbol: class B", f"[ERROR] {tmp_path}/src/A.java:[3,9] cannot find symbol", "[INFO] 1 error"]:
        ce.feed(line)
    [r] = ce.results()
    assert (r.id, r.line, r.status) == ("src/A.java", 3, Status.ERRORED)
    assert r.message == "src/A.java:[3,9] cannot find symbol"


def test_after_all_failure_keeps_the_tests_own_results(project: Path) -> None:
    # The legacy XML repeats the class's @AfterAll error on every test; the console
    # shows the tests passed and only the container failed.
    reports = project / "reports"
    reports.mkdir()
    (reports / "TEST-junit-jupiter.xml").write_text("""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Jupiter">
<testcase name="addsItem()" classname="org.shop.cart.CartTest" time="0">
<error message="cleanup failed" type="java.lang.IllegalStateException"><![CDATA[java.lang.IllegalStateException: cleanup failed]]></error>
</testcase>
<testcase name="removesItem()" classname="org.shop.cart.CartTest" time="0">
<failure message="expected: &lt;1&gt; but was: &lt;0&gt;" type="org.opentest4j.AssertionFailedError"/>
<error message="cleanup failed" type="java.lang.IllegalStateException"/>
</testcase>
</testsuite>
""")
    tree = "\n".join([
        "╷",
        "├─ JUnit Jupiter ✔",
        "│  └─ CartTest ✘ cleanup failed",
        "│     ├─ addsItem() ✔",
        "│     └─ removesItem() ✘ expected: <1> but was: <0>",
    ])
    report = parse_junit_console(_run(project, tree, command=LAUNCH + " --reports-dir reports"))
    got = {t.id: t.status for t in report.tests}
    assert got == {"org.shop.cart.CartTest#addsItem()": Status.PASSED,
                   "org.shop.cart.CartTest#removesItem()": Status.FAILED}
    assert any("CartTest failed after its tests ran" in w for w in report.warnings)


def test_verbose_parameterized_method_that_fails_before_any_invocation(project: Path) -> None:
    out = "\n".join([
        "Test plan execution started. Number of static tests: 1",
        "╷",
        "├─ JUnit Jupiter",
        "│  ├─ CartTest",
        _vtest("│  │  ", "addsItem()", f"{CART_UID}/[method:addsItem()]", CART_UID,
               "  duration: 3 ms", "    status: ✔ SUCCESSFUL"),
        "│  │  ├─ quantities(int)",
        "│  │  │  │     caught: org.junit.platform.commons.PreconditionViolationException: no arguments",
        "│  │  └─ quantities(int) finished after 2 ms.",
        "│  └─ CartTest finished after 9 ms.",
        "└─ JUnit Jupiter finished after 10 ms.",
    ])
    report = parse_junit_console(_run(project, out, command=LAUNCH + " --details verbose"))
    got = {t.id: t for t in report.tests}
    assert set(got) == {"org.shop.cart.CartTest#addsItem()", "org.shop.cart.CartTest#quantities(int)"}
    broken = got["org.shop.cart.CartTest#quantities(int)"]
    assert broken.status == Status.FAILED and broken.line == 16 and "no arguments" in broken.message
