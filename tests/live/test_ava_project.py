"""A small AVA project (``ava`` from the npm registry, cached) behind an
``xo`` lint step, run for real through the runner in the sandbox: detected
as AVA, run with ``--tap`` without the lint, tests named ``file › title``,
and a failing test re-run alone with ``--match`` under the same id."""

from __future__ import annotations

import json

import pytest

from greenloop.parsers.models import Status
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.runner.select import single_test_command
from greenloop.sandbox.models import SandboxSettings
from tests.live.conftest import npm_install, require, sandbox_backend

PACKAGE = {"name": "tiny-ava", "version": "1.0.0", "private": True,
           "scripts": {"test": "xo && ava"}, "devDependencies": {"ava": "^6.1.0"}}


@pytest.fixture(scope="module")
def ava_project(tmp_path_factory):
    require("node", "npm", *(("bwrap",) if sandbox_backend() in ("bwrap", "auto") else ()))
    root = tmp_path_factory.mktemp("ava-project")
    (root / "package.json").write_text(json.dumps(PACKAGE, indent=2))
    (root / "index.js").write_text("exports.double = (n) => n + n + 1;\n")
    (root / "test").mkdir()
    (root / "test" / "math.js").write_text(
        "const test = require('ava');\nconst { double } = require('../index.js');\n"
        "test('doubles two', t => { t.is(double(2), 4); });\n"
        "test('doubles zero', t => { t.is(double(0), 0); });\n")
    (root / "test" / "other.js").write_text("const test = require('ava');\ntest('runs', t => { t.pass(); });\n")
    npm_install(root)
    return root


async def test_ava_project_is_run_named_and_a_test_selected_alone(ava_project, tmp_path):
    settings = SandboxSettings(backend=sandbox_backend(), timeout_s=120, network=False)
    plan = plan_tests(ava_project)
    assert (plan.framework, plan.test_command) == ("ava", "npx ava --tap"), plan.reason
    assert "`xo` in test" in plan.reason

    suite = await run_tests(plan, ava_project, tmp_path / "suite", settings)
    assert {t.id: t.status for t in suite.report.tests} == {
        "math › doubles two": Status.FAILED, "math › doubles zero": Status.FAILED, "other › runs": Status.PASSED,
    }, suite.artifacts

    failing = suite.report.find("math › doubles two")
    command = single_test_command(plan, failing)
    assert command == "npx ava --tap --match 'doubles two'"
    alone = await run_tests(plan, ava_project, tmp_path / "alone", settings, command=command)
    assert [(t.id, t.status) for t in alone.report.tests] == [("math › doubles two", Status.FAILED)]
