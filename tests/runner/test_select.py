"""Single-test commands in each framework's own selector syntax."""

from __future__ import annotations

import re
import shlex

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers.models import Status, TestResult
from greenloop.runner.plan import SuitePlan
from greenloop.runner.select import selection_command, single_test_command
from greenloop.runner.select import tests_command as command_for_tests


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


# The suite's own command (custom or planned) keeps its flags; its positional
# paths and its own name filters give way to the selector.
@pytest.mark.parametrize("framework, command, test, expected", [
    ("pytest", "python -m pytest -p no:cacheprovider -q tests", t("tests/test_a.py::test_x[1]"),
     "python -m pytest -p no:cacheprovider -q 'tests/test_a.py::test_x[1]'"),
    ("pytest", "cd sub && PYTHONPATH=src pytest -m 'not slow' --junitxml=r.xml tests/ -x | tee log",
     t("tests/test_a.py::test_x"),
     "cd sub && PYTHONPATH=src pytest -m 'not slow' --junitxml=r.xml -x tests/test_a.py::test_x"),
    ("unittest", "python -m unittest discover -s tests -t . -p 'test_*.py' -b -v", t("tests.test_a.Case.test_x"),
     "python -m unittest -b -v tests.test_a.Case.test_x"),
    ("go", "go test -v -count=1 -timeout 3s ./...", t("ex.com/m/rates::TestPrice/heavy", file="rates/r_test.go"),
     "go test -v -count=1 -timeout 3s -run '^TestPrice$/^heavy$' ./rates"),
    ("cargo-test", "RUSTC_BOOTSTRAP=1 cargo test --no-fail-fast -- -Z unstable-options --format json",
     t("tests::adds", suite="unittests src/lib.rs"),
     "RUSTC_BOOTSTRAP=1 cargo test --no-fail-fast --lib tests::adds -- -Z unstable-options --format json --exact"),
    ("jest", "npx jest --config jest.unit.js --ci -t slow __tests__/", t("Cart › adds", file="__tests__/cart.test.js"),
     "npx jest --config jest.unit.js --ci __tests__/cart.test.js -t '^Cart\\ adds$'"),
    ("vitest", "npx vitest --reporter=verbose test/", t("M > adds", file="test/m.test.js"),
     "npx vitest run --reporter=verbose test/m.test.js -t '^M\\ adds$'"),
    ("mocha", "npx mocha --reporter tap --timeout 5000 'test/**/*.spec.js'", t("Auth logs in", file="test/auth.spec.js"),
     "npx mocha --reporter tap --timeout 5000 test/auth.spec.js --grep '^Auth\\ logs\\ in$'"),
    ("mocha", "npx mocha --reporter tap 'test/**/*.spec.js'", t("Auth logs in"),
     "npx mocha --reporter tap 'test/**/*.spec.js' --grep '^Auth\\ logs\\ in$'"),
    ("node-test", "node --test --test-reporter=spec test/", t("geo > dist", file="test/geo.test.js"),
     "node --test --test-reporter=spec --test-name-pattern='^dist$' test/geo.test.js"),
    ("tape", "npx tape 'test/**/*.js'", t("adds numbers", file="test/a.js"), "npx tape test/a.js"),
    ("tape", "node test/index.js", t("adds numbers"), "node test/index.js"),
    ("node-tap", "npx tap test/ --reporter=tap --disable-coverage", t("test/a.js > group > inner bad", file="test/a.js"),
     "npx tap --reporter=tap --disable-coverage '--grep=^group$' '--grep=^inner\\ bad$' test/a.js"),
    ("ava", "npx ava --verbose test/*.js --tap", t("math › adds (twice)", file="test/math.js"),
     "npx ava --verbose --tap test/*.js --match 'adds (twice)'"),
    ("rspec", "bundle exec rspec --format documentation spec/", t("Cart adds", file="spec/cart_spec.rb", line=3),
     "bundle exec rspec --format documentation spec/cart_spec.rb:3"),
    ("phpunit", "vendor/bin/phpunit -c phpunit.xml --colors=always tests", t("VatTest::testX"),
     "vendor/bin/phpunit -c phpunit.xml --colors=always tests --filter '/VatTest::testX( with data set .*)?$/'"),
    ("maven-surefire", "mvn -B -s ci-settings.xml -Dtest=Other test", t("com.x.PriceTest#discount"),
     ("mvn -B -s ci-settings.xml test -Dtest=PriceTest#discount -Dsurefire.failIfNoSpecifiedTests=false "
      "-DfailIfNoTests=false")),
    ("ctest", "ctest --test-dir build --output-on-failure -j2 -R Stats", t("Stats.Mean"),
     "ctest --test-dir build --output-on-failure -j2 -R '^Stats\\.Mean$'"),
    ("googletest", "./build/t --gtest_filter=-Slow.* --gtest_brief=1", t("Stats.Mean"),
     "./build/t --gtest_brief=1 --gtest_filter=Stats.Mean"),
])
def test_a_custom_command_keeps_its_flags_and_gets_the_selector(framework, command, test, expected):
    got = single_test_command(plan(framework, command), test)
    assert shlex.split(got) == shlex.split(expected), got


def test_a_command_that_does_not_call_the_runner_gets_the_default_invocation():
    cmd = single_test_command(plan("pytest", "npm test"), t("tests/test_a.py::test_x"))
    assert shlex.split(cmd)[:4] == ["python", "-m", "pytest", "tests/test_a.py::test_x"]


@pytest.mark.parametrize("framework, command, tests, expected", [
    ("pytest", "pytest -q tests", [t("a.py::b"), t("a.py::c")], "pytest -q a.py::b a.py::c"),
    ("jest", "npx jest", [t("A › x", file="a.test.js"), t("B › y", file="b.test.js")],
     "npx jest a.test.js b.test.js -t '^(?:A\\ x|B\\ y)$'"),
    ("go", "go test ./...", [t("m/p::TestA", file="p/a_test.go"), t("m/p::TestB", file="p/b_test.go")],
     "go test -count=1 -run '^(?:TestA|TestB)$' ./p"),
    ("tape", "npx tape 'test/*.js'", [t("x", file="test/a.js"), t("y", file="test/b.js")],
     "npx tape test/a.js test/b.js"),
])
def test_several_tests_are_selected_at_once(framework, command, tests, expected):
    assert shlex.split(selection_command(plan(framework, command), tests)) == shlex.split(expected)


def test_tests_that_cannot_share_one_selector_are_refused():
    with pytest.raises(GreenloopError) as err:
        selection_command(plan("go", "go test ./..."), [t("m/p::TestA", file="p/a_test.go"),
                                                        t("m/q::TestB", file="q/b_test.go")])
    assert err.value.kind is ErrorKind.VALIDATION_ERROR


def test_one_of_the_generated_unittest_tests_printing_one_name_is_validated_by_the_whole_suite():
    # idna's 6,225 TestIdnaTest instances all print tests.test_idna_uts46.TestIdnaTest.runTest: the name
    # would load TestIdnaTest('runTest'), a test of its own that is none of them.
    suite = "python -m unittest discover -v -s tests -t ."
    name = "tests.test_idna_uts46.TestIdnaTest.runTest"
    for test in (t(name, printed=name), t(f"{name} [#245]", printed=name)):
        with pytest.raises(GreenloopError) as err:
            selection_command(plan("unittest", suite), [test])
        assert err.value.kind is ErrorKind.VALIDATION_ERROR and "the whole suite decides" in str(err.value)
        assert command_for_tests(plan("unittest", suite), [test]) == suite
    # pytest selects every parametrization printing the name, in order: its numbers hold
    assert selection_command(plan("pytest", "python -m pytest"), [t("t.py::test_v[#2]", printed="t.py::test_v")]) \
        == "python -m pytest t.py::test_v"


def test_greenloops_own_race_flag_is_not_needed_for_one_go_test():
    test = t("m/p::TestA", file="p/a_test.go")
    planned = SuitePlan(language="go", framework="go", test_command="go test -json -race ./...")
    assert "-race" not in shlex.split(single_test_command(planned, test))
    users = planned.model_copy(update={"default_command": False})
    assert "-race" in shlex.split(single_test_command(users, test))


def test_earlier_runs_of_the_runner_give_way_but_a_build_before_them_stays():
    p = plan("tape", "npm run build && npx tape test/a/*.js && npx tape test/b/*.js")
    assert single_test_command(p, t("x", file="test/a/m.js")) == "npm run build && npx tape test/a/m.js"
