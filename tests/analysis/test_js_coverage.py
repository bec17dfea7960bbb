"""JavaScript's per-test-file coverage (runner/v8_coverage.py) through the suite activity,
with the real node (node:test runs each test file in its own process) in the bwrap sandbox:
the faulty function is reached through a table of callbacks, so neither the failure's stack
nor the test's calls name it; the failing test file's own process says it ran, so it is in
the fixer's first message with the coverage, and not without."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import ActivityEnvironment

from greenloop.activities.testing import SuiteInput, execute_suite, load_report
from greenloop.analysis.localize import Spectrum
from greenloop.domain.workspace import Workspace
from greenloop.llm.first_message import first_message
from greenloop.runner import v8_coverage
from greenloop.runner.plan import plan_tests
from greenloop.sandbox.models import SandboxSettings
from tests.live.conftest import require

FILES = {
    "package.json": '{"name": "shop", "version": "1.0.0", "private": true, "type": "commonjs",\n'
                    ' "scripts": {"test": "node --test"}}\n',
    # The bug: a tenth instead of a hundredth.
    "src/round.js": "'use strict';\n\n// An amount in whole cents.\nfunction cents(x) {\n  return Math.round(x * 10);\n}\n\n"
                    "// Run by no test.\nfunction unused(x) {\n  return x;\n}\n\nmodule.exports = { cents, unused };\n",
    # scale reaches cents through a table of rounders: no call a reading of the code can follow.
    "src/scale.js": "'use strict';\n\nconst round = require('./round');\n\nconst ROUNDERS = { cents: round.cents };\n\n"
                    "// The amount of n items in the given unit.\nfunction scale(x, n, unit) {\n"
                    "  const rounder = ROUNDERS[unit];\n  return rounder(x) * n;\n}\n\nmodule.exports = { scale };\n",
    "src/cart.js": "'use strict';\n\nconst { scale } = require('./scale');\n\n// The price of n items, in cents.\n"
                   "function total(price, n) {\n  return scale(price, n, 'cents');\n}\n\n"
                   "// How many items.\nfunction count(items) {\n  return items.length;\n}\n\n"
                   "module.exports = { total, count };\n",
    "test/total.test.js": "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\n"
                          "const { total } = require('../src/cart');\n\n"
                          "test('total of two items', () => {\n  assert.strictEqual(total(1.5, 2), 300);\n});\n",
    "test/count.test.js": "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\n"
                          "const { count } = require('../src/cart');\n\n"
                          "test('count of two items', () => {\n  assert.strictEqual(count([1, 2]), 2);\n});\n",
}
TOTAL, COUNT = "total of two items", "count of two items"


def project(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


async def test_the_function_a_callback_table_reaches_is_in_the_first_message_with_coverage_only(tmp_path):
    require("node")
    root = project(tmp_path / "shop")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    ws = Workspace(path=str(root), run_dir=str(run_dir), repo=str(root))
    plan = plan_tests(root)
    assert plan.framework == "node-test"
    run = await ActivityEnvironment().run(execute_suite, SuiteInput(
        workspace=ws, plan=plan, label="flaky-check", impact=True, sandbox=SandboxSettings(backend="bwrap", timeout_s=300)))
    assert run.totals.failed == 1 and run.totals.passed == 1
    spectrum = Spectrum.load(run_dir)
    assert spectrum is not None
    # The failing test file's process ran cents's body (line 5); the passing one's did not; no test ran unused.
    assert 5 in spectrum.covered(TOTAL)["src/round.js"]
    assert "src/round.js" not in spectrum.covered(COUNT)
    assert 10 not in spectrum.covered(TOTAL)["src/round.js"]
    assert not (root / v8_coverage.FOLDER).exists()  # nothing left in the workspace

    report = load_report(run.report_path)
    test = report.find(TOTAL)
    assert test is not None
    with_coverage = first_message(root, report, test, spectrum)
    without = first_message(root, report, test, None)
    # Neither the stack (an assertion in the test) nor the calls (total -> scale -> a table) lead to cents.
    assert "Math.round(x * 10)" not in without.text
    assert without.rank("src/round.js", "cents") is None
    # With the coverage it is shown whole, as a function the failing test ran and no passing one did.
    assert with_coverage.shows("src/round.js", 5) and "Math.round(x * 10)" in with_coverage.text
    assert "run by 1 failing test and no passing test" in with_coverage.text
    assert (with_coverage.rank("src/round.js", "cents") or 99) <= 3
    assert with_coverage.rank("src/round.js", "unused") is None
    assert with_coverage.rank("src/cart.js", "count") is None  # run by the passing test only
