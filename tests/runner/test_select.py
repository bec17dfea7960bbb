"""Single-test commands in each framework's own selector syntax."""

from __future__ import annotations

import re
import shlex

import pytest

from greenloop.parsers.models import Status, TestResult
from greenloop.runner.plan import SuitePlan
from greenloop.runner.select import single_test_command


def plan(framework: str, command: str = "x") -> SuitePlan:
    return SuitePlan(language="x", framework=framework, test_command=command)


def t(test_id: str, **kw) -> TestResult:
    return TestResult(id=test_id, status=Status.FAILED, **kw)


@pytest.mark.parametrize("framework, test, expected", [
    ("pytest", t("tests/test_a.py::TestX::test_y[1-2]"), "python -m pytest 'tests/test_a.py::TestX::test_y[1-2]'"),
    ("unittest", t("pkg.test_m.Case.test_a (key='v')"), "python -m unittest -v pkg.test_m.Case.test_a"),
    ("unittest", t("setUpClass (pkg.test_m.Case)"), "python -m unittest -v pkg.test_m.Case"),
    ("unittest", t("unittest.loader._FailedTest.test_bad"), "python -m unittest -v test_bad"),
    ("go", t("example.com/m/rates::TestPrice/heavy_EU", file="rates/rates_test.go"),
     "go test -json -count=1 -run '^TestPrice$/^heavy_EU$' ./rates"),
    ("cargo-test", t("tests::adds", suite="unittests src/lib.rs"), "cargo test --lib tests::adds -- --exact"),
    ("cargo-test", t("slow_one", suite="tests/slow.rs"), "cargo test --test slow slow_one -- --exact"),
    ("maven-surefire", t("com.x.PriceTest#discount{int}[2]"),
     "mvn -B test -Dtest=PriceTest#discount -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false"),
    ("rspec", t("Cart adds", file="spec/cart_spec.rb", line=12), "rspec spec/cart_spec.rb:12"),
    ("ctest", t("Stats.Mean"), "ctest --test-dir build --output-on-failure -R '^Stats\\.Mean$'"),
])
def test_selector_syntax(framework, test, expected):
    words = shlex.split(single_test_command(plan(framework), test))
    assert words[: len(shlex.split(expected))] == shlex.split(expected)


def test_js_name_filters_are_anchored_and_escaped():
    cmd = single_test_command(plan("jest"), t("Cart › adds (twice) a line", file="__tests__/cart.test.js"))
    pattern = shlex.split(cmd)[shlex.split(cmd).index("-t") + 1]
    assert re.fullmatch(pattern, "Cart adds (twice) a line")
    assert not re.fullmatch(pattern, "Cart adds (twice) a line too")


def test_junit_console_replaces_the_selection_of_the_users_command():
    p = plan("junit-console", "java -jar lib/console.jar -cp out --scan-classpath --details=tree")
    cmd = single_test_command(p, t("com.x.PriceTest#discount(int, int)[2]"))
    words = shlex.split(cmd)
    assert "--scan-classpath" not in words and "--details=tree" in words
    assert words[words.index("--select-method") + 1] == "com.x.PriceTest#discount"


def test_phpunit_filter_matches_data_sets_of_the_method():
    cmd = single_test_command(plan("phpunit", "phpunit"), t('VatTest::testRates with data set "low"'))
    pattern = shlex.split(cmd)[-1].strip("/")
    assert re.search(pattern, 'VatTest::testRates with data set "low"')
    assert not re.search(pattern, "VatTest::testRatesExtra")
