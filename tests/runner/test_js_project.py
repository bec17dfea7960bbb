"""JavaScript projects: the runner and command come from package.json's
scripts and dependencies (parsers/npm_scripts.py, through plan_tests)."""

from __future__ import annotations

import json

import pytest

from greenloop.parsers import detect
from greenloop.parsers.command import raw_words, split_segments
from greenloop.parsers.npm_scripts import plan_js_tests, resolve_script
from greenloop.parsers.plugin import plugin
from greenloop.runner.plan import REPORT_DIR, plan_tests


def project(tmp_path, scripts: dict[str, str], dev: tuple[str, ...] = (), **files: str):
    pkg = {"name": "p", "version": "1.0.0", "scripts": scripts, "devDependencies": {d: "*" for d in dev}}
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("scripts, dev, framework, command", [
    ({"test": "tape 'test/**/*.js'"}, ("tape",), "tape", "npx tape 'test/**/*.js'"),
    ({"test": "node test/index.js"}, ("tape",), "tape", "node test/index.js"),
    ({"test": "tap test/*.js"}, ("tap",), "node-tap", "npx tap test/*.js --reporter=tap"),
    ({"test": "mocha --recursive"}, ("mocha",), "mocha", "npx mocha --recursive"),
    ({"test": "jest --config jest.unit.js"}, ("jest",), "jest", "npx jest --config jest.unit.js --ci"),
    ({"test": "vitest"}, ("vitest",), "vitest", "npx vitest run"),
    ({"test": "node --test test/"}, (), "node-test", "node --test --test-reporter"),  # flags before the path
    ({"test": "cross-env NODE_ENV=test jest"}, ("jest", "cross-env"), "jest", "NODE_ENV=test npx jest --ci"),
])
def test_the_runner_and_its_own_arguments_come_from_the_test_script(tmp_path, scripts, dev, framework, command):
    plan = plan_tests(project(tmp_path, scripts, dev))
    assert plan.framework == framework, plan.reason
    assert plan.language == "javascript"
    assert plan.test_command.startswith(command), plan.test_command
    assert f"'test' runs {framework}" in plan.reason


def test_ava_runs_with_its_tap_reporter(tmp_path):
    plan = plan_tests(project(tmp_path, {"test": "xo && ava --verbose"}, ("ava", "xo")))
    assert (plan.framework, plan.test_command) == ("ava", "npx ava --verbose --tap")
    assert "`xo` in test" in plan.reason


@pytest.mark.parametrize("runner, command", [("uvu", "npx uvu tests"), ("jasmine", "npx jasmine")])
def test_runners_without_a_parser_of_their_own_are_named_and_run(tmp_path, runner, command):
    scripts = {"test": {"uvu": "uvu tests", "jasmine": "jasmine"}[runner]}
    plan = plan_tests(project(tmp_path, scripts, (runner,)))
    # Not jest (the old default for JavaScript): the project's runner, read by the generic parser.
    assert plan.framework == "generic" and plan.test_command == command
    assert f"runs {runner}" in plan.reason and f"no {runner} parser" in plan.reason


def test_tape_project_is_not_taken_for_jest(tmp_path):
    # The published tape package's own layout: lint and audit around a test-only script.
    root = project(tmp_path, {
        "lint": "eslint --ext=js,mjs .",
        "pretest": "npm run lint",
        "tests-only": "nyc tape 'test/**/*.js'",
        "test": "npm run tests-only",
        "posttest": "aud --production",
    }, ("tape", "nyc", "eslint", "aud"))
    plan = plan_tests(root)
    assert plan.framework == "tape" and plan.test_command == "npx tape 'test/**/*.js'"
    assert plan.fallback_commands == ["npm run --ignore-scripts tests-only", "npm test"]
    assert "'tests-only' runs tape" in plan.reason
    for left_out in ("pretest (npm run lint)", "posttest (aud --production)", "the wrapper `nyc`"):
        assert left_out in plan.reason
    assert detect.from_project(root).framework == "tape"


def test_a_test_script_wrapped_in_lint_runs_only_its_runner(tmp_path):
    plan = plan_tests(project(tmp_path, {"lint": "eslint .", "test": "npm run lint && tape test/*.js | tap-spec"},
                              ("tape", "tap-spec")))
    assert plan.framework == "tape" and plan.test_command == "npx tape test/*.js"
    assert "`npm run lint` in test" not in plan.reason  # resolved into the lint script itself
    assert "lint (eslint .)" in plan.reason and "the pipe into `tap-spec` in test" in plan.reason


def test_a_package_script_behind_a_coverage_wrapper_is_followed_to_its_runner(tmp_path):
    plan = plan_tests(project(tmp_path, {"test": "npm run eslint && nyc npm run test-spec", "eslint": "eslint .",
                                         "test-spec": "mocha spec -R spec"}, ("mocha", "nyc", "eslint")))
    assert plan.framework == "mocha" and plan.test_command == "npx mocha spec -R spec"
    assert "eslint (eslint .)" in plan.reason


def test_a_test_only_script_is_preferred_to_test(tmp_path):
    plan = plan_tests(project(tmp_path, {"test": "npm run lint && npm audit && mocha", "test:unit": "mocha test/unit",
                                         "lint": "standard"}, ("mocha", "standard")))
    assert plan.test_command == "npx mocha test/unit"
    assert "'test:unit' runs mocha" in plan.reason and "preferred to 'test'" in plan.reason
    assert plan.fallback_commands[0] == "npm run --ignore-scripts test:unit"


def test_a_test_only_script_of_another_runner_does_not_replace_test(tmp_path):
    plan = plan_tests(project(tmp_path, {"test": "jest", "unit": "mocha"}, ("jest", "mocha")))
    assert plan.framework == "jest"


def test_dependencies_decide_when_no_script_names_a_runner(tmp_path):
    plan = plan_tests(project(tmp_path, {"test": "make test"}, ("tape",)))
    assert plan.framework == "tape" and "tape is in package.json's dependencies" in plan.reason


def test_a_script_with_no_known_runner_runs_as_a_script_without_hooks(tmp_path):
    plan = plan_tests(project(tmp_path, {"pretest": "npm run lint", "test": "node check.js"}))
    assert plan.framework == "generic"
    assert plan.test_command == "npm run --ignore-scripts test"
    assert "names no test runner" in plan.reason


def test_node_file_without_a_tap_library_is_not_a_runner(tmp_path):
    assert resolve_script({"scripts": {"test": "node build.js && node --test"}}, "test").steps[0].framework \
        == "node-test"
    assert resolve_script({"scripts": {"test": "node build.js"}}, "test").steps == []


def test_runner_scripts_named_through_run_s_are_followed(tmp_path):
    res = resolve_script({"scripts": {"test": "run-s lint unit", "lint": "eslint .", "unit": "ava"},
                          "devDependencies": {"ava": "*"}}, "test")
    assert [(s.framework, s.command, s.script) for s in res.steps] == [("ava", "ava", "unit")]


def test_command_detection_tells_tape_files_from_node_test_files(tmp_path):
    root = project(tmp_path, {"test": "node test/index.js"}, ("tape",))
    assert detect.from_command("node test/index.js", root).framework == "tape"
    assert detect.from_command("npm test", root).framework == "tape"
    assert detect.from_command("node test/index.js", tmp_path / "elsewhere").framework == "node-test"


def test_no_package_json_no_plan(tmp_path):
    assert plan_js_tests(tmp_path) is None


def test_shell_text_keeps_quotes_and_redirections():
    assert split_segments("a 'x && y' && b 2>&1 | c; d") == [
        ("", "a 'x && y'"), ("&&", "b 2>&1"), ("|", "c"), (";", "d")]
    assert raw_words("tape 'test/**/*.js' \"a b\"") == ["tape", "'test/**/*.js'", '"a b"']


def test_a_build_the_tests_need_is_kept_before_the_runner(tmp_path):
    plan = plan_tests(project(tmp_path, {"pretest": "npm run build && npm run lint", "build": "tsc -p .",
                                         "lint": "eslint src", "test": "node --test dist/", "posttest": "npm run lint"},
                              ("typescript", "eslint")))
    assert plan.framework == "node-test"
    assert plan.test_command.startswith("npm run build && node --test ")
    assert "lint (eslint src)" in plan.reason and "posttest (npm run lint)" in plan.reason


def test_checks_after_the_runner_are_left_out_and_own_tools_go_through_npx(tmp_path):
    plan = plan_tests(project(tmp_path, {"test": "rimraf out && tsc && ava && nyc check-coverage && npm audit"},
                              ("ava", "typescript", "rimraf")))
    assert plan.test_command == "npx rimraf out && npx tsc && npx ava --tap"
    assert plan.framework == "ava"
    assert "`nyc check-coverage` in test" in plan.reason and "`npm audit` in test" in plan.reason


def test_a_users_npm_test_is_selected_through_the_runner_its_script_calls(tmp_path):
    from greenloop.parsers.models import Status, TestResult
    from greenloop.runner.select import single_test_command

    root = project(tmp_path, {"pretest": "npm run lint", "lint": "eslint .", "test": "jest --config jest.unit.js"},
                   ("jest",))
    plan = plan_tests(root, test_command="npm test")
    assert plan.framework == "jest" and plan.runner_command == "npx jest --config jest.unit.js"
    test = TestResult(id="Cart › adds", status=Status.FAILED, file="cart.test.js")
    assert single_test_command(plan, test) == "npx jest --config jest.unit.js cart.test.js -t '^Cart\\ adds$'"


def test_a_tool_that_runs_the_test_only_script_by_name_is_not_kept_as_a_build(tmp_path):
    # tape's own package.json: `test` runs tests-only through npm-run-posix-or-windows.
    plan = plan_tests(project(tmp_path, {
        "pretest": "npm run lint", "lint": "eslint .", "test": "npm-run-posix-or-windows tests-only",
        "tests-only": "cross-env NODE_OPTIONS='--no-warnings' nyc tap 'test/*.js'",
        "posttest": "npx npm@'>=10.2' audit --production"}, ("tap", "nyc", "cross-env", "npm-run-posix-or-windows")))
    assert plan.framework == "node-tap"
    assert plan.test_command.startswith("NODE_OPTIONS='--no-warnings' npx tap 'test/*.js' --reporter=tap")
    assert "npm-run-posix-or-windows" not in plan.test_command


def test_other_test_steps_of_test_are_named_when_a_test_only_script_is_chosen(tmp_path):
    plan = plan_tests(project(tmp_path, {
        "test": "npm run tests-only && npm run test:corejs", "tests-only": "nyc tape 'test/*.js'",
        "test:corejs": "nyc tape test-core-js.js 'test/*.js'"}, ("tape", "nyc")))
    assert plan.test_command == "npx tape 'test/*.js'"
    assert "`tape test-core-js.js 'test/*.js'` in test:corejs" in plan.reason


def test_create_react_app_runs_jest_once_without_watching(tmp_path):
    from greenloop.parsers.models import Status, TestResult
    from greenloop.runner.select import single_test_command

    plan = plan_tests(project(tmp_path, {"test": "react-scripts test"}, ("react-scripts",)))
    assert plan.framework == "jest"
    assert plan.test_command.startswith("npx react-scripts test --watchAll=false --ci --json")
    test = TestResult(id="App › renders", status=Status.FAILED, file="src/App.test.js")
    assert single_test_command(plan, test).startswith(
        "npx react-scripts test --watchAll=false --ci --json --outputFile=.greenloop/reports/jest.json "
        "--testLocationInResults src/App.test.js -t")


@pytest.mark.parametrize("script, command", [
    ("node --test test/", "node --test {reports} test/"),
    ("node --test --test-concurrency 1 test/ && echo done", "node --test --test-concurrency 1 {reports} test/"),
    ("npm run build && node --test dist/", "npm run build && node --test {reports} dist/"),
])
def test_node_reads_greenloops_report_flags_before_its_paths(tmp_path, script, command):
    # Node 20 takes a flag after the first path for one more file to run.
    plan = plan_tests(project(tmp_path, {"test": script, "build": "tsc"}, ()))
    reports = plugin("node-test").report_options(REPORT_DIR).strip()
    assert plan.test_command == command.format(reports=reports)
