"""A small node-tap project (the ``tap`` package from the npm registry,
cached), run for real through the runner in the sandbox: detected as
node-tap, run with its TAP reporter and without its 100%-coverage gate,
tests named by their subtests, and a failing nested test re-run alone with
``--grep`` per level and found again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.parsers.models import Status
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.runner.select import single_test_command
from greenloop.sandbox.models import SandboxSettings
from tests.live.conftest import npm_install, require, sandbox_backend

PACKAGE = {"name": "tiny-cart", "version": "1.0.0", "private": True,
           "scripts": {"test": "tap"}, "devDependencies": {"tap": "^21.1.0"}}
SOURCE = "exports.total = (items) => items.reduce((sum, i) => sum + i.price, 0) + 1\n"
TESTS = """const t = require('tap')
const { total } = require('../index.js')

t.test('total', async t => {
  t.test('of nothing is zero', async t => { t.equal(total([]), 0) })
  t.test('adds prices', async t => { t.equal(total([{ price: 2 }, { price: 3 }]), 5) })
})
t.test('is a function', async t => { t.type(total, 'function') })
"""


@pytest.fixture(scope="module")
def tap_project(tmp_path_factory) -> Path:
    require("node", "npm", *(("bwrap",) if sandbox_backend() in ("bwrap", "auto") else ()))
    root = tmp_path_factory.mktemp("tap-project")
    (root / "package.json").write_text(json.dumps(PACKAGE, indent=2))
    (root / "index.js").write_text(SOURCE)
    (root / "test").mkdir()
    (root / "test" / "cart.js").write_text(TESTS)
    npm_install(root)
    return root


async def test_node_tap_project_is_run_named_and_a_nested_test_selected(tap_project, tmp_path):
    settings = SandboxSettings(backend=sandbox_backend(), timeout_s=180, network=False)
    plan = plan_tests(tap_project)
    assert (plan.language, plan.framework) == ("javascript", "node-tap"), plan.reason
    assert plan.test_command == "npx tap --reporter=tap --disable-coverage"

    suite = await run_tests(plan, tap_project, tmp_path / "suite", settings)
    assert {t.id: t.status for t in suite.report.tests} == {
        "test/cart.js > total > of nothing is zero": Status.FAILED,
        "test/cart.js > total > adds prices": Status.FAILED,
        "test/cart.js > is a function": Status.PASSED,
    }, suite.artifacts

    failing = suite.report.find("test/cart.js > total > adds prices")
    assert failing.file == "test/cart.js"
    command = single_test_command(plan, failing)
    alone = await run_tests(plan, tap_project, tmp_path / "alone", settings, command=command)
    assert alone.report.find(failing.id).status == Status.FAILED, alone.artifacts
    # The other tests were filtered out by the --grep levels: none of them ran.
    assert all(t.status == Status.SKIPPED for t in alone.report.tests if t.id != failing.id)

    (tap_project / "index.js").write_text(SOURCE.replace(" + 1", ""))
    fixed = await run_tests(plan, tap_project, tmp_path / "fixed", settings, command=command)
    assert fixed.report.find(failing.id).status == Status.PASSED, fixed.artifacts
