"""A small tape project, run for real through the runner in the sandbox.

Its ``npm test`` is what published tape packages do: a ``pretest`` lint
(eslint, which is not installed, so it fails, as it would offline) and a
``posttest`` ``npm audit`` (needs the network), around a test-only script
(which has a failing lint hook of its own here too).
tape comes from the npm registry (cached). Greenloop must find tape (not
jest), run only the tests, read one result per tape test named by its
``# name`` line, and re-run a failing test alone and find it again, before
and after the fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers.models import Status
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.runner.select import single_test_command
from greenloop.sandbox.models import SandboxSettings
from tests.live.conftest import npm_install, require, sandbox_backend

PACKAGE = {
    "name": "tiny-math", "version": "1.0.0", "private": True,
    "scripts": {
        "lint": "eslint .",
        "pretest": "npm run lint",
        "pretests-only": "npm run lint",
        "tests-only": "tape 'test/**/*.js'",
        "test": "npm run tests-only",
        "posttest": "npm audit --omit=dev",
    },
    "devDependencies": {"tape": "^5.9.0"},
}
BUGGY = ("exports.add = function (a, b) { return a - b; };\n"
         "exports.shout = function (s) { return s.toUpperCase() + '!'; };\n")
FIXED = BUGGY.replace("a - b", "a + b")
MATH_TEST = """var test = require('tape');
var m = require('../index.js');

test('add sums two numbers', function (t) {
  t.equal(m.add(2, 3), 5);
  t.end();
});

test('add keeps zero neutral', function (t) {
  t.equal(m.add(4, 0), 4, 'x + 0 is x');
  t.end();
});
"""
STRING_TEST = """var test = require('tape');
var m = require('../index.js');

test('shout adds an exclamation mark', function (t) {
  t.equal(m.shout('hi'), 'HI!');
  t.end();
});
"""


@pytest.fixture(scope="module")
def tape_project(tmp_path_factory) -> Path:
    require("node", "npm", *(("bwrap",) if sandbox_backend() in ("bwrap", "auto") else ()))
    root = tmp_path_factory.mktemp("tape-project")
    (root / "package.json").write_text(json.dumps(PACKAGE, indent=2))
    (root / "index.js").write_text(BUGGY)
    (root / "test").mkdir()
    (root / "test" / "math.js").write_text(MATH_TEST)
    (root / "test" / "strings.js").write_text(STRING_TEST)
    npm_install(root)
    return root


def _settings() -> SandboxSettings:
    return SandboxSettings(backend=sandbox_backend(), timeout_s=120, network=False)


async def test_tape_is_detected_run_without_its_hooks_and_tests_are_named(tape_project, tmp_path):
    plan = plan_tests(tape_project)
    assert (plan.language, plan.framework) == ("javascript", "tape"), plan.reason
    assert plan.test_command == "npx tape 'test/**/*.js'"
    assert "'tests-only' runs tape" in plan.reason and "pretest (npm run lint)" in plan.reason
    assert "pretests-only (npm run lint)" in plan.reason

    run = await run_tests(plan, tape_project, tmp_path / "suite", _settings())

    assert run.test.backend.startswith(sandbox_backend()) and run.test.command == plan.test_command
    report = run.report
    assert {t.id: t.status for t in report.tests} == {
        "add sums two numbers": Status.FAILED,
        "add keeps zero neutral": Status.PASSED,  # 4 - 0 is 4 too
        "shout adds an exclamation mark": Status.PASSED,
    }, run.artifacts
    failing = report.find("add sums two numbers")
    assert (failing.file, failing.line) == ("test/math.js", 4)
    assert failing.message == "should be strictly equal: expected 5, actual -1"
    assert report.exit_code == 1 and report.framework == "tape"


async def test_npm_test_itself_fails_on_its_pretest_lint(tape_project, tmp_path):
    # What running `npm test` gives: its pretest lint fails, and no test runs at all.
    plan = plan_tests(tape_project)
    with pytest.raises(GreenloopError) as err:
        await run_tests(plan, tape_project, tmp_path / "npm-test", _settings(), command="npm test")
    assert err.value.kind is ErrorKind.COMMAND_NOT_FOUND
    assert "eslint" in err.value.context["stderr"] and "tape" not in err.value.context["stderr"]


async def test_a_failing_tape_test_runs_alone_and_is_found_before_and_after_the_fix(tape_project, tmp_path):
    plan = plan_tests(tape_project)
    suite = await run_tests(plan, tape_project, tmp_path / "suite", _settings())
    failing = suite.report.find("add sums two numbers")
    command = single_test_command(plan, failing)
    assert command == "npx tape test/math.js"

    before = await run_tests(plan, tape_project, tmp_path / "alone-before", _settings(), command=command)
    assert before.report.find("add sums two numbers").status == Status.FAILED
    assert before.report.find("shout adds an exclamation mark") is None  # only its file ran

    (tape_project / "index.js").write_text(FIXED)
    try:
        after = await run_tests(plan, tape_project, tmp_path / "alone-after", _settings(), command=command)
    finally:
        (tape_project / "index.js").write_text(BUGGY)
    assert after.report.find("add sums two numbers").status == Status.PASSED
    assert after.report.find("add keeps zero neutral").status == Status.PASSED


async def test_the_fallback_runs_the_test_only_script_without_its_hooks(tape_project, tmp_path):
    # npm >= 7: `npm run --ignore-scripts X` runs X without its preX/postX hooks (here a lint that fails).
    plan = plan_tests(tape_project)
    assert plan.fallback_commands[0] == "npm run --ignore-scripts tests-only"
    run = await run_tests(plan, tape_project, tmp_path / "fallback", _settings(), command=plan.fallback_commands[0])
    assert {t.id: t.status for t in run.report.tests} == {
        "add sums two numbers": Status.FAILED, "add keeps zero neutral": Status.PASSED,
        "shout adds an exclamation mark": Status.PASSED}, run.artifacts
