"""PHPUnit parser: synthetic outputs written from PHPUnit's documented
formats (progress printer, defect sections, testdox, JUnit log, PHP fatal
errors), on a small made-up project ("shop": a cart and a coupon)."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import parse, phpunit
from greenloop.parsers.locate import SourceIndex
from greenloop.parsers.models import Status, TestReport
from greenloop.parsers.run_output import RunOutput
from greenloop.parsers.source import php
from tests.parsers.helpers import by_id

BANNER = "PHPUnit 9.6.7 by Sebastian Bergmann and contributors.\n\n"

CONFIG = """<?xml version="1.0" encoding="UTF-8"?>
<phpunit bootstrap="vendor/autoload.php">
  <testsuites>
    <testsuite name="unit">
      <directory>tests/Unit</directory>
    </testsuite>
  </testsuites>
</phpunit>
"""

CART_TEST = """<?php
namespace Shop\\Tests\\Unit;

use PHPUnit\\Framework\\TestCase;

class CartTest extends TestCase
{
    public function testEmptyCart(): void
    {
        $this->assertSame(0, (new Cart())->count());
    }

    /**
     * @test
     */
    public function addsItems(): void
    {
        $this->assertSame(1, 1);
    }

    private function helper(): int
    {
        return 1;
    }

    /**
     * @dataProvider prices
     */
    public function testPrice(int $cents, string $label): void
    {
        $this->assertSame($label, format($cents));
    }

    public static function prices(): array
    {
        return [
            [100, '1.00'],
            [250, '2.50'],
            'free' => [0, '0.00'],
        ];
    }

    public function testSkippedOne(): void
    {
        $this->markTestSkipped('later');
    }
}
"""

COUPON_TEST = """<?php
namespace Shop\\Tests\\Unit;

use PHPUnit\\Framework\\TestCase;

final class CouponTest extends TestCase
{
    /** @dataProvider codes */
    public function test_code_is_valid(string $code): void
    {
        $this->assertTrue(valid($code));
    }

    public function codes(): iterable
    {
        yield 'summer sale' => ['SUMMER'];
        yield 'winter' => ['WINTER'];
    }

    public function testExpired(): void
    {
        $this->assertFalse(true);
    }
}
"""


def make_project(root: Path) -> None:
    (root / "tests/Unit").mkdir(parents=True)
    (root / "phpunit.xml").write_text(CONFIG)
    (root / "tests/Unit/CartTest.php").write_text(CART_TEST)
    (root / "tests/Unit/CouponTest.php").write_text(COUPON_TEST)


def parse_phpunit(run: RunOutput) -> TestReport:
    """The whole parse: the phpunit parser, then the normalizer (lines through ``phpunit.locate``)."""
    return parse(run, "phpunit")


def run_of(tmp_path: Path, stdout: str, command: str = "vendor/bin/phpunit", exit_code: int = 1,
           stderr: str = "") -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=tmp_path)


# Execution order of the project: CartTest (sorted first), then CouponTest.
ORDER = [
    "Shop\\Tests\\Unit\\CartTest::testEmptyCart",
    "Shop\\Tests\\Unit\\CartTest::addsItems",
    "Shop\\Tests\\Unit\\CartTest::testPrice with data set #0",
    "Shop\\Tests\\Unit\\CartTest::testPrice with data set #1",
    'Shop\\Tests\\Unit\\CartTest::testPrice with data set "free"',
    "Shop\\Tests\\Unit\\CartTest::testSkippedOne",
    'Shop\\Tests\\Unit\\CouponTest::test_code_is_valid with data set "summer sale"',
    'Shop\\Tests\\Unit\\CouponTest::test_code_is_valid with data set "winter"',
    "Shop\\Tests\\Unit\\CouponTest::testExpired",
]

PROGRESS_OUT = BANNER + """\
.E.F.S.RF                                                           9 / 9 (100%)

Time: 00:00.010, Memory: 6.00 MB

There was 1 error:

1) Shop\\Tests\\Unit\\CartTest::addsItems
RuntimeException: cart is locked

/work/shop/src/Cart.php:40
/work/shop/tests/Unit/CartTest.php:17

--

There were 2 failures:

1) Shop\\Tests\\Unit\\CartTest::testPrice with data set #1 (250, '2.50')
Failed asserting that two strings are identical.
--- Expected
+++ Actual
@@ @@
-'2.50'
+'2.5'

/work/shop/tests/Unit/CartTest.php:30

2) Shop\\Tests\\Unit\\CouponTest::testExpired
Failed asserting that true is false.

/work/shop/tests/Unit/CouponTest.php:21

--

There was 1 risky test:

1) Shop\\Tests\\Unit\\CouponTest::test_code_is_valid with data set "winter" ('WINTER')
This test did not perform any assertions

/work/shop/tests/Unit/CouponTest.php:9

ERRORS!
Tests: 9, Assertions: 7, Errors: 1, Failures: 2, Skipped: 1, Risky: 1.
"""


def test_progress_names_every_test_from_the_sources(tmp_path: Path) -> None:
    make_project(tmp_path)
    report = parse_phpunit(run_of(tmp_path, PROGRESS_OUT, exit_code=2))
    assert [t.id for t in report.tests] == ORDER
    got = by_id(report)
    assert got[ORDER[0]].status == Status.PASSED
    assert got[ORDER[1]].status == Status.ERRORED
    assert got[ORDER[1]].message == "RuntimeException: cart is locked"
    assert got[ORDER[3]].status == Status.FAILED
    assert got[ORDER[3]].message == "Failed asserting that two strings are identical."
    assert "+'2.5'" in got[ORDER[3]].details
    assert got[ORDER[5]].status == Status.SKIPPED
    risky = got[ORDER[7]]
    assert (risky.status, risky.native_status) == (Status.PASSED, "risky")
    assert risky.message == "This test did not perform any assertions"
    assert report.warnings == []


def test_file_and_line_are_the_method_definition(tmp_path: Path) -> None:
    make_project(tmp_path)
    got = by_id(parse_phpunit(run_of(tmp_path, PROGRESS_OUT, exit_code=2)))
    assert (got[ORDER[1]].file, got[ORDER[1]].line) == ("tests/Unit/CartTest.php", 16)
    assert (got[ORDER[4]].file, got[ORDER[4]].line) == ("tests/Unit/CartTest.php", 29)
    assert (got[ORDER[8]].file, got[ORDER[8]].line) == ("tests/Unit/CouponTest.php", 20)


def test_without_sources_only_named_tests_are_listed(tmp_path: Path) -> None:
    report = parse_phpunit(run_of(tmp_path, PROGRESS_OUT, exit_code=2))
    assert {t.id for t in report.tests} == {ORDER[1], ORDER[3], ORDER[8], ORDER[7]}
    assert any("could not be matched" in w for w in report.warnings)
    # no sources: the trace still gives a location
    assert by_id(report)[ORDER[8]].file == "/work/shop/tests/Unit/CouponTest.php"


def test_progress_line_cut_by_test_output(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = BANNER + "..hello from a test\n.......     9 / 9 (100%)\n\nTime: 00:00.010, Memory: 6.00 MB\n\nOK (9 tests, 9 assertions)\n"
    report = parse_phpunit(run_of(tmp_path, out, exit_code=0))
    assert [t.id for t in report.tests] == ORDER
    assert all(t.status == Status.PASSED for t in report.tests)


def test_filter_selects_data_set_rows(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = BANNER + "..   2 / 2 (100%)\n\nTime: 00:00.003, Memory: 6.00 MB\n\nOK (2 tests, 2 assertions)\n"
    report = parse_phpunit(run_of(tmp_path, out, command="phpunit --filter 'testPrice#0-1'", exit_code=0))
    assert [t.id for t in report.tests] == ORDER[2:4]
    report = parse_phpunit(run_of(tmp_path, out.replace("..", ".", 1).replace("2 / 2", "1 / 1"),
                                  command="phpunit --filter test_code_is_valid@winter", exit_code=0))
    assert [t.id for t in report.tests] == [ORDER[7]]


def test_path_argument_limits_the_suite(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = BANNER + "..F  3 / 3 (100%)\n\nTime: 00:00.003, Memory: 6.00 MB\n\nThere was 1 failure:\n\n" \
        "1) Shop\\Tests\\Unit\\CouponTest::testExpired\nFailed asserting that true is false.\n\n" \
        "/w/tests/Unit/CouponTest.php:21\n\nFAILURES!\nTests: 3, Assertions: 3, Failures: 1.\n"
    report = parse_phpunit(run_of(tmp_path, out, command="phpunit tests/Unit/CouponTest.php"))
    assert [t.id for t in report.tests] == ORDER[6:]
    assert [t.status for t in report.tests] == [Status.PASSED, Status.PASSED, Status.FAILED]


def test_verbose_sections_name_skipped_and_incomplete(tmp_path: Path) -> None:
    out = BANNER + "SI  2 / 2 (100%)\n\nTime: 00:00.003, Memory: 6.00 MB\n\n" \
        "There was 1 incomplete test:\n\n1) App\\FooTest::testLater\nnot yet\n\n/p/tests/FooTest.php:12\n\n--\n\n" \
        "There was 1 skipped test:\n\n1) App\\FooTest::testNoDb\nno database\n\n/p/tests/FooTest.php:8\n\n" \
        "OK, but incomplete, skipped, or risky tests!\nTests: 2, Assertions: 0, Skipped: 1, Incomplete: 1.\n"
    got = by_id(parse_phpunit(run_of(tmp_path, out, command="phpunit -v", exit_code=0)))
    assert (got["App\\FooTest::testLater"].status, got["App\\FooTest::testLater"].native_status) == \
        (Status.SKIPPED, "incomplete")
    assert got["App\\FooTest::testNoDb"].status == Status.SKIPPED
    assert got["App\\FooTest::testNoDb"].message == "no database"


def test_colours_are_ignored(tmp_path: Path) -> None:
    make_project(tmp_path)
    coloured = PROGRESS_OUT.replace(".E.F", ".\x1b[31;1mE\x1b[0m.\x1b[41;37mF\x1b[0m").replace(
        "ERRORS!", "\x1b[37;41mERRORS!\x1b[0m")
    report = parse_phpunit(run_of(tmp_path, coloured, command="phpunit --colors=always", exit_code=2))
    assert [t.id for t in report.tests] == ORDER
    assert by_id(report)[ORDER[1]].status == Status.ERRORED


def test_test_id_drops_printed_data() -> None:
    assert phpunit.test_id('A\\BTest::testX with data set "a (b)" (1, 2)') == 'A\\BTest::testX with data set "a (b)"'
    assert phpunit.test_id("BTest::testX with data set #3 (array(), null)") == "BTest::testX with data set #3"
    assert phpunit.test_id("BTest::testX") == "BTest::testX"


# ---------------------------------------------------------------- testdox
TESTDOX_OUT = BANNER + """\
Cart (Shop\\Tests\\Unit\\Cart)
 ✔ Empty cart
 ✘ Adds items
   │
   │ Undefined array key "qty"
   │
   │ /work/shop/src/Cart.php:40
   │ /work/shop/tests/Unit/CartTest.php:17
   │

 ✔ Price with data set #0
 ✘ Price with data set #1
   │
   │ Failed asserting that two strings are identical.
   │ --- Expected
   │ +++ Actual
   │ @@ @@
   │ -'2.50'
   │ +'2.5'
   │
   │ /work/shop/tests/Unit/CartTest.php:30
   │

 ✔ Price with data set "free"
 ↩ Skipped one

Coupon (Shop\\Tests\\Unit\\Coupon)
 ✔ Code is valid with data set "summer sale"
 ☢ Code is valid with data set "winter"
 ✘ Expired
   │
   │ LogicException: no clock
   │
   │ /work/shop/tests/Unit/CouponTest.php:21
   │

Time: 00:00.010, Memory: 6.00 MB

ERRORS!
Tests: 9, Assertions: 7, Errors: 2, Failures: 1, Skipped: 1, Risky: 1.
"""


def test_testdox_maps_humanised_names_back(tmp_path: Path) -> None:
    make_project(tmp_path)
    report = parse_phpunit(run_of(tmp_path, TESTDOX_OUT, command="phpunit --testdox", exit_code=2))
    assert [t.id for t in report.tests] == ORDER
    got = by_id(report)
    # "LogicException: ..." is an error by shape; the summary says 2 errors,
    # so the PHP-warning-shaped message is the other one
    assert got[ORDER[8]].status == Status.ERRORED
    assert got[ORDER[1]].status == Status.ERRORED
    assert got[ORDER[3]].status == Status.FAILED
    assert got[ORDER[1]].message == 'Undefined array key "qty"'
    assert got[ORDER[7]].native_status == "risky"
    assert got[ORDER[5]].status == Status.SKIPPED
    assert report.warnings == []


def test_testdox_colour_tells_error_from_failure(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = TESTDOX_OUT.replace(" ✘ Adds items", " \x1b[31m✘\x1b[0m Adds items").replace(
        " ✘ Price with data set #1", " \x1b[33m✘\x1b[0m Price with data set #1")
    got = by_id(parse_phpunit(run_of(tmp_path, out, command="phpunit --testdox --colors=always", exit_code=2)))
    assert got[ORDER[1]].status == Status.FAILED
    assert got[ORDER[3]].status == Status.ERRORED


def test_testdox_coloured_data_set_names(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = TESTDOX_OUT.replace('with data set "summer sale"', "with summer·sale").replace(
        "Price with data set #0", "Price with data set 0")
    ids = [t.id for t in parse_phpunit(run_of(tmp_path, out, command="phpunit --testdox")).tests]
    assert ids == ORDER


def test_testdox_without_sources_rebuilds_ids(tmp_path: Path) -> None:
    report = parse_phpunit(run_of(tmp_path, TESTDOX_OUT, command="phpunit --testdox", exit_code=2))
    ids = [t.id for t in report.tests]
    assert "Shop\\Tests\\Unit\\CartTest::testEmptyCart" in ids
    assert "Shop\\Tests\\Unit\\CartTest::testPrice with data set #1" in ids
    assert any("not matched" in w for w in report.warnings)


def test_testdox_summary_of_non_successful_tests_is_not_counted_twice(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = TESTDOX_OUT.replace(
        "Time: 00:00.010, Memory: 6.00 MB\n",
        "Time: 00:00.010, Memory: 6.00 MB\n\nSummary of non-successful tests:\n\nCoupon (Shop\\Tests\\Unit\\Coupon)\n"
        " ✘ Expired\n   │\n   │ LogicException: no clock\n   │\n")
    report = parse_phpunit(run_of(tmp_path, out, command="phpunit --testdox", exit_code=2))
    assert len(report.tests) == 9


def test_prettifier_rules() -> None:
    src = php.PhpSources(SourceIndex(None))
    assert src.pretty_method("testTotalWithVat") == "Total with vat"
    assert src.pretty_method("test_it_works") == "It works"
    assert src.pretty_method("testSha256Hash") == "Sha 256 hash"
    assert php.pretty_class("App\\Tests\\InvoiceTest") == "Invoice (App\\Tests\\Invoice)"
    assert php.pretty_class("TestShoppingCart") == "Shopping Cart"


# ---------------------------------------------------------------- JUnit
JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="unit" tests="5" errors="2" failures="1" skipped="1">
    <testsuite name="Shop\\Tests\\Unit\\CouponTest" file="/work/shop/tests/Unit/CouponTest.php">
      <testsuite name="Shop\\Tests\\Unit\\CouponTest::test_code_is_valid">
        <testcase name="test_code_is_valid with data set &quot;summer sale&quot;" class="Shop\\Tests\\Unit\\CouponTest"
                  classname="Shop.Tests.Unit.CouponTest" file="/work/shop/tests/Unit/CouponTest.php" line="9"/>
        <testcase name="test_code_is_valid with data set &quot;winter&quot;" class="Shop\\Tests\\Unit\\CouponTest"
                  classname="Shop.Tests.Unit.CouponTest" file="/work/shop/tests/Unit/CouponTest.php" line="9">
          <error type="PHPUnit\\Framework\\RiskyTestError">Shop\\Tests\\Unit\\CouponTest::test_code_is_valid with data set "winter" ('WINTER')
This test did not perform any assertions

/work/shop/tests/Unit/CouponTest.php:9</error>
        </testcase>
      </testsuite>
      <testcase name="testExpired" class="Shop\\Tests\\Unit\\CouponTest" classname="Shop.Tests.Unit.CouponTest"
                file="/work/shop/tests/Unit/CouponTest.php" line="19">
        <failure type="PHPUnit\\Framework\\ExpectationFailedException">Shop\\Tests\\Unit\\CouponTest::testExpired
Failed asserting that true is false.

/work/shop/tests/Unit/CouponTest.php:21</failure>
      </testcase>
      <testcase name="testLater" class="Shop\\Tests\\Unit\\CouponTest" classname="Shop.Tests.Unit.CouponTest"
                file="/work/shop/tests/Unit/CouponTest.php" line="30">
        <skipped/>
      </testcase>
      <testcase name="testBoom" class="Shop\\Tests\\Unit\\CouponTest" classname="Shop.Tests.Unit.CouponTest"
                file="/work/shop/tests/Unit/CouponTest.php" line="35">
        <error type="Error">Shop\\Tests\\Unit\\CouponTest::testBoom
Error: Call to undefined function boom()

/work/shop/tests/Unit/CouponTest.php:36</error>
      </testcase>
    </testsuite>
  </testsuite>
</testsuites>
"""

JUNIT_CONSOLE = BANNER + ".RFIE   5 / 5 (100%)\n\nTime: 00:00.010, Memory: 6.00 MB\n\nERRORS!\n" \
    "Tests: 5, Assertions: 3, Errors: 1, Failures: 1, Incomplete: 1, Risky: 1.\n"


def test_junit_log_is_used_and_refined_by_the_console(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / "build/junit.xml").write_text(JUNIT)
    report = parse_phpunit(run_of(tmp_path, JUNIT_CONSOLE, command="phpunit --log-junit build/junit.xml", exit_code=2))
    assert report.sources[0] == "junit-xml:build/junit.xml"
    got = by_id(report)
    winter = got['Shop\\Tests\\Unit\\CouponTest::test_code_is_valid with data set "winter"']
    assert (winter.status, winter.native_status) == (Status.PASSED, "risky")
    assert winter.message == "This test did not perform any assertions"
    expired = got["Shop\\Tests\\Unit\\CouponTest::testExpired"]
    assert (expired.status, expired.message, expired.line) == (Status.FAILED, "Failed asserting that true is false.", 19)
    assert expired.file == "/work/shop/tests/Unit/CouponTest.php"  # outside the project root: kept as printed
    assert got["Shop\\Tests\\Unit\\CouponTest::testBoom"].status == Status.ERRORED
    assert got["Shop\\Tests\\Unit\\CouponTest::testBoom"].message == "Error: Call to undefined function boom()"
    assert got["Shop\\Tests\\Unit\\CouponTest::testLater"].status == Status.SKIPPED
    assert len(report.tests) == 5


def test_truncated_junit_falls_back_to_console(tmp_path: Path) -> None:
    make_project(tmp_path)
    (tmp_path / "junit.xml").write_text(JUNIT[: JUNIT.index("<testcase name=\"testExpired\"")])
    report = parse_phpunit(run_of(tmp_path, PROGRESS_OUT, command="phpunit --log-junit=junit.xml", exit_code=2))
    assert any("truncated" in w for w in report.warnings)
    ids = [t.id for t in report.tests]
    # the two rows the log kept, then everything else from the console
    assert set(ids) == set(ORDER)
    assert by_id(report)[ORDER[8]].status == Status.FAILED


def test_missing_junit_is_a_warning(tmp_path: Path) -> None:
    make_project(tmp_path)
    report = parse_phpunit(run_of(tmp_path, PROGRESS_OUT, command="phpunit --log-junit nowhere.xml", exit_code=2))
    assert any("does not exist" in w for w in report.warnings)
    assert len(report.tests) == 9


# ---------------------------------------------------------------- crashes and bad input
def test_php_parse_error_is_a_build_error(tmp_path: Path) -> None:
    make_project(tmp_path)
    err = (f"PHP Parse error:  syntax error, unexpected token \"}}\" in {tmp_path}/tests/Unit/CartTest.php on line 12\n")
    report = parse_phpunit(run_of(tmp_path, "", exit_code=255, stderr=err))
    assert report.build_error
    [t] = report.tests
    assert (t.id, t.status, t.line) == ("tests/Unit/CartTest.php", Status.ERRORED, 12)
    assert 'syntax error, unexpected token "}"' in t.message


def test_uncaught_parse_error_with_stack_trace(tmp_path: Path) -> None:
    err = ("PHP Fatal error:  Uncaught ParseError: syntax error, unexpected identifier \"x\" in <ROOT>/tests/ATest.php:7\n"
           "Stack trace:\n#0 /usr/share/php/PHPUnit/Util/FileLoader.php(49): PHPUnit\\Util\\FileLoader::load()\n"
           "#1 {main}\n  thrown in /usr/share/php/PHPUnit/TextUI/Command.php on line 99\n")
    report = parse_phpunit(run_of(tmp_path, "", exit_code=255, stderr=err))
    [t] = report.tests
    assert (t.id, t.line, report.build_error) == ("tests/ATest.php", 7, True)
    assert "ParseError: syntax error" in t.message
    assert "Stack trace:" in t.details


def test_phpunit_10_crash_message(tmp_path: Path) -> None:
    out = ("PHPUnit 10.5.1 by Sebastian Bergmann and contributors.\n\n\nAn error occurred inside PHPUnit.\n\n"
           "Message:  syntax error, unexpected token \"->\"\nLocation: <ROOT>/tests/BTest.php:13\n\n#0 {main}\n")
    report = parse_phpunit(run_of(tmp_path, out, exit_code=255))
    [t] = report.tests
    assert (t.id, t.line, t.status, report.build_error) == ("tests/BTest.php", 13, Status.ERRORED, True)
    assert 'syntax error, unexpected token "->"' in t.message


def test_killed_by_timeout_names_the_running_test(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = BANNER + "..."
    report = parse_phpunit(run_of(tmp_path, out, command="timeout 10 vendor/bin/phpunit", exit_code=124))
    assert report.timed_out
    assert [t.id for t in report.tests] == ORDER[:4]
    assert report.tests[-1].timed_out and report.tests[-1].status == Status.FAILED


@pytest.mark.parametrize("stdout", ["", "\x00\xff garbage \x1b[31m\n" * 50, "PHPUnit 9.6.7 by Sebastian Bergmann"])
def test_bad_input_does_not_crash(tmp_path: Path, stdout: str) -> None:
    report = parse_phpunit(run_of(tmp_path, stdout, exit_code=1))
    assert report.tests == []
    assert report.warnings


def test_ok_summary_cross_check_warns_on_mismatch(tmp_path: Path) -> None:
    out = BANNER + "..  2 / 2 (100%)\n\nTime: 00:00.003, Memory: 6.00 MB\n\nOK (3 tests, 3 assertions)\n"
    report = parse(run_of(tmp_path, out, exit_code=0), "phpunit")
    assert any("summary counted 3 total; the per-test results have 0 total" in w for w in report.warnings)


def test_command_and_output_patterns() -> None:
    def cmd(s: str) -> bool:
        return any(p.search(s) for p in phpunit.COMMAND_RE)

    assert cmd("phpunit")
    assert cmd("vendor/bin/phpunit --testdox")
    assert cmd("php -d memory_limit=-1 vendor/bin/phpunit tests")
    assert cmd("XDEBUG_MODE=off ./vendor/bin/phpunit --filter x")
    assert not cmd("cd phpunit")
    assert not cmd("pytest tests/test_phpunit.py")
    assert any(p.search(BANNER) for p in phpunit.OUTPUT_RE)


# ---------------------------------------------------------------- more source rules
ATTR_TEST = """<?php
declare(strict_types=1);

namespace Bank\\Tests;

use PHPUnit\\Framework\\Attributes\\DataProvider;
use PHPUnit\\Framework\\Attributes\\Test;
use PHPUnit\\Framework\\Attributes\\TestWith;
use PHPUnit\\Framework\\TestCase;

final class LedgerTest extends TestCase
{
    #[Test]
    public function balances(): void
    {
        $this->assertTrue(true);
    }

    #[DataProvider(
        'amounts'
    )]
    public function testAmount(int $a): void
    {
        $this->assertGreaterThan(0, $a);
    }

    public static function amounts(): array
    {
        return [
            5 => [1],
            'big' => [1000],
            9 => [2],
        ];
    }

    #[TestWith([1])]
    #[TestWith([2])]
    public function testWithRows(int $n): void
    {
        $this->assertGreaterThan(0, $n);
    }

    protected function testNotATestBecauseProtected(): void
    {
    }
}
"""


def make_attr_project(root: Path) -> None:
    (root / "tests").mkdir(parents=True)
    (root / "phpunit.xml").write_text(CONFIG.replace("tests/Unit", "tests"))
    (root / "tests/LedgerTest.php").write_text(ATTR_TEST)


ATTR_ORDER = [
    "Bank\\Tests\\LedgerTest::balances",
    # PHPUnit merges provider rows: integer keys are renumbered 0, 1, ...
    "Bank\\Tests\\LedgerTest::testAmount with data set #0",
    'Bank\\Tests\\LedgerTest::testAmount with data set "big"',
    "Bank\\Tests\\LedgerTest::testAmount with data set #1",
    "Bank\\Tests\\LedgerTest::testWithRows with data set #0",
    "Bank\\Tests\\LedgerTest::testWithRows with data set #1",
]


def test_attributes_and_renumbered_data_sets(tmp_path: Path) -> None:
    make_attr_project(tmp_path)
    out = BANNER.replace("9.6.7", "10.5.2") + "......   6 / 6 (100%)\n\nTime: 00:00.010, Memory: 8.00 MB\n\nOK (6 tests, 6 assertions)\n"
    report = parse_phpunit(run_of(tmp_path, out, exit_code=0))
    assert [t.id for t in report.tests] == ATTR_ORDER
    assert by_id(report)[ATTR_ORDER[2]].line == 22


def test_reverse_order_reverses_the_plan(tmp_path: Path) -> None:
    make_attr_project(tmp_path)
    out = BANNER + "F.....   6 / 6 (100%)\n\nTime: 00:00.010, Memory: 8.00 MB\n\nThere was 1 failure:\n\n" \
        "1) Bank\\Tests\\LedgerTest::testWithRows with data set #1 (2)\nFailed asserting that 2 is less than 0.\n\n" \
        "/p/tests/LedgerTest.php:40\n\nFAILURES!\nTests: 6, Assertions: 6, Failures: 1.\n"
    report = parse_phpunit(run_of(tmp_path, out, command="phpunit --order-by=reverse"))
    assert [t.id for t in report.tests] == ATTR_ORDER[::-1]
    assert report.tests[0].status == Status.FAILED


def test_random_order_names_leftovers_only_when_they_agree(tmp_path: Path) -> None:
    make_attr_project(tmp_path)
    failing = "1) Bank\\Tests\\LedgerTest::balances\nFailed asserting that false is true.\n\n/p/tests/LedgerTest.php:16\n\n"
    out = BANNER + "..F...   6 / 6 (100%)\n\nTime: 00:00.010, Memory: 8.00 MB\n\nThere was 1 failure:\n\n" + failing + \
        "FAILURES!\nTests: 6, Assertions: 6, Failures: 1.\n"
    report = parse_phpunit(run_of(tmp_path, out, command="phpunit --order-by=random"))
    assert sorted(t.id for t in report.tests) == sorted(ATTR_ORDER)
    assert by_id(report)["Bank\\Tests\\LedgerTest::balances"].status == Status.FAILED
    # a skipped one among them: which one is unknown, so none is named
    mixed = out.replace("..F...", ".SF...").replace("Failures: 1.", "Failures: 1, Skipped: 1.")
    report = parse_phpunit(run_of(tmp_path, mixed, command="phpunit --order-by=random"))
    assert [t.id for t in report.tests] == ["Bank\\Tests\\LedgerTest::balances"]
    assert any("could not be matched" in w for w in report.warnings)


def test_phpunit10_class_level_error_and_issue_sections(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = ("PHPUnit 10.5.2 by Sebastian Bergmann and contributors.\n\nRuntime:       PHP 8.3.1\n"
           "Configuration: /p/phpunit.xml\n\nE..D   4 / 4 (100%)\n\nTime: 00:00.010, Memory: 8.00 MB\n\n"
           "There was 1 error:\n\n1) Shop\\Tests\\Unit\\CartTest\nRuntimeException: no database\n\n"
           "/p/tests/Unit/CartTest.php:9\n\n--\n\n"
           "There was 1 deprecation:\n\n1) /p/src/Coupon.php:12\nstrlen(): Passing null is deprecated\n\n"
           "Triggered by:\n\n* Shop\\Tests\\Unit\\CouponTest::testExpired\n  /p/tests/Unit/CouponTest.php:20\n\n"
           "ERRORS!\nTests: 4, Assertions: 3, Errors: 1, Deprecations: 1.\n")
    report = parse_phpunit(run_of(tmp_path, out, exit_code=2))
    got = by_id(report)
    # setUpBeforeClass failed: PHPUnit 10 names the class, its tests never ran
    cls = got["Shop\\Tests\\Unit\\CartTest"]
    assert (cls.status, cls.file, cls.line) == (Status.ERRORED, "tests/Unit/CartTest.php", 6)
    assert [t.id for t in report.tests] == ["Shop\\Tests\\Unit\\CartTest", *ORDER[6:]]
    expired = got["Shop\\Tests\\Unit\\CouponTest::testExpired"]
    assert (expired.status, expired.native_status) == (Status.PASSED, "deprecation")


def test_phpunit10_testdox_with_bodies_for_skipped(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = ("PHPUnit 11.0.0 by Sebastian Bergmann and contributors.\n\nRuntime:       PHP 8.3.1\n\n"
           "....   4 / 4 (100%)\n\nTime: 00:00.010, Memory: 8.00 MB\n\n"
           "Coupon (Shop\\Tests\\Unit\\Coupon)\n ✔ Code is valid with data set \"summer sale\"\n"
           " ↩ Code is valid with data set \"winter\"\n   │\n   │ no winter this year\n   │\n"
           " ✘ Expired\n   │\n   │ Failed asserting that true is false.\n   │\n"
           "   │ /p/tests/Unit/CouponTest.php:21\n   │\n\n"
           "FAILURES!\nTests: 3, Assertions: 2, Failures: 1, Skipped: 1.\n")
    report = parse_phpunit(run_of(tmp_path, out, command="phpunit tests/Unit/CouponTest.php --testdox"))
    assert [t.id for t in report.tests] == ORDER[6:]
    winter = report.tests[1]
    assert (winter.status, winter.message) == (Status.SKIPPED, "no winter this year")
    assert report.tests[2].status == Status.FAILED


def test_fatal_error_mid_run_errors_the_running_test(tmp_path: Path) -> None:
    make_attr_project(tmp_path)
    err = f"PHP Fatal error:  Allowed memory size of 16777216 bytes exhausted in {tmp_path}/src/Ledger.php on line 3\n"
    report = parse_phpunit(run_of(tmp_path, BANNER + "..", exit_code=255, stderr=err))
    assert not report.build_error
    assert [(t.id, t.status) for t in report.tests] == [
        (ATTR_ORDER[0], Status.PASSED), (ATTR_ORDER[1], Status.PASSED), (ATTR_ORDER[2], Status.ERRORED)]
    assert "Allowed memory size" in report.tests[2].message


def test_debug_lines_name_every_test(tmp_path: Path) -> None:
    make_project(tmp_path)
    started = "".join(f"Test '{t}' started\nTest '{t}' ended\n" for t in ORDER)
    out = BANNER + started + "\n\nTime: 00:00.010, Memory: 6.00 MB\n\nThere was 1 failure:\n\n" \
        "1) Shop\\Tests\\Unit\\CouponTest::testExpired\nFailed asserting that true is false.\n\n" \
        "/w/tests/Unit/CouponTest.php:21\n\nFAILURES!\nTests: 9, Assertions: 8, Failures: 1, Skipped: 1.\n"
    report = parse_phpunit(run_of(tmp_path, out, command="phpunit --debug"))
    assert [t.id for t in report.tests] == ORDER
    got = by_id(report)
    assert got[ORDER[8]].status == Status.FAILED
    # the one skipped test is the one whose body calls markTestSkipped()
    assert got[ORDER[5]].status == Status.SKIPPED
    assert sum(t.status == Status.SKIPPED for t in report.tests) == 1


def test_debug_run_killed_while_a_test_ran(tmp_path: Path) -> None:
    make_project(tmp_path)
    out = BANNER + f"Test '{ORDER[0]}' started\nTest '{ORDER[0]}' ended\nTest '{ORDER[1]}' started\n"
    report = parse_phpunit(run_of(tmp_path, out, command="timeout 5 phpunit --debug", exit_code=124))
    assert [(t.id, t.status, t.timed_out) for t in report.tests] == [
        (ORDER[0], Status.PASSED, False), (ORDER[1], Status.FAILED, True)]


def test_phpunit9_stand_in_tests(tmp_path: Path) -> None:
    make_attr_project(tmp_path)
    out = BANNER + "W.E..   5 / 5 (100%)\n\nTime: 00:00.004, Memory: 6.00 MB\n\nThere was 1 error:\n\n" \
        "1) Error\nThe data provider specified for Bank\\Tests\\LedgerTest::testAmount is invalid.\n" \
        "RuntimeException: no amounts\n/p/tests/LedgerTest.php:30\n\n--\n\nThere was 1 warning:\n\n" \
        "1) Warning\nNo tests found in class \"Bank\\Tests\\EmptyTest\".\n\nERRORS!\n" \
        "Tests: 5, Assertions: 3, Errors: 1, Warnings: 1.\n"
    report = parse_phpunit(run_of(tmp_path, out, exit_code=2))
    # the broken provider stands for its method; the empty class is no test
    assert [(t.id, t.status) for t in report.tests] == [
        (ATTR_ORDER[0], Status.PASSED),
        ("Bank\\Tests\\LedgerTest::testAmount", Status.ERRORED),
        (ATTR_ORDER[4], Status.PASSED), (ATTR_ORDER[5], Status.PASSED)]
    assert by_id(report)["Bank\\Tests\\LedgerTest::testAmount"].line == 22
    assert any("No tests found" in w for w in report.warnings)


def test_no_tests_executed_is_an_empty_but_complete_run(tmp_path: Path) -> None:
    out = BANNER + "\n\nTime: 00:00.002, Memory: 6.00 MB\n\nNo tests executed!\n"
    report = parse_phpunit(run_of(tmp_path, out, command="phpunit --filter nothingMatches", exit_code=0))
    assert report.tests == [] and report.per_test
    assert not any("no PHPUnit results" in w for w in report.warnings)
