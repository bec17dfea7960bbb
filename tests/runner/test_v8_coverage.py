"""V8 coverage per test file (runner/v8_coverage.py), with the real node: node:test runs each
test file in its own process; vitest's forked workers end by a signal or a disconnect (the
preload writes their coverage). The functions each process ran become the spectrum's lines
for the tests of its one test file (analysis/localize.py's ``Spectrum.from_functions``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from greenloop.analysis.localize import Spectrum
from greenloop.parsers.locate import SourceIndex
from greenloop.runner import v8_coverage
from tests.live.conftest import npm_install, require

HELPERS = ("export function price(x) {\n  return Math.round(x * 100) / 100;\n}\n\n"
           "export function discount(total) {\n  return price(total * 0.9);\n}\n\n"
           "export function unused(x) {\n  return x;\n}\n")
CART = ("import { discount, price } from './helpers.js';\n\n"
        "export function total(items) {\n  return discount(items.reduce((a, b) => a + b, 0));\n}\n\n"
        "export function subtotal(items) {\n  return price(items.reduce((a, b) => a + b, 0));\n}\n")


def project(root: Path, tests: dict[str, str], package: str) -> Path:
    for rel, text in {"package.json": package, "src/helpers.js": HELPERS, "src/cart.js": CART, **tests}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def run(root: Path, test_command: str) -> list[v8_coverage.ProcessCoverage]:
    v8_coverage.prepare(root)
    done = subprocess.run(["bash", "-c", v8_coverage.command(test_command)], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return v8_coverage.collect(root)


def spectrum(root: Path, processes: list[v8_coverage.ProcessCoverage], tests: dict[str, list[str]]) -> Spectrum:
    return Spectrum.from_functions(SourceIndex(root), v8_coverage.attributed(processes, tests))


def ran(s: Spectrum, test: str, file: str, line: int) -> bool:
    return line in s.covered(test).get(file, [])


def test_node_test_each_test_file_is_its_own_process(tmp_path):
    require("node")
    root = project(tmp_path / "a project", {  # a space in the path: NODE_OPTIONS quotes the preload
        "test/total.test.js": "import test from 'node:test';\nimport assert from 'node:assert';\n"
                              "import { total } from '../src/cart.js';\n\n"
                              "test('total', () => { assert.strictEqual(total([100]), 90); });\n",
        "test/subtotal.test.js": "import test from 'node:test';\nimport assert from 'node:assert';\n"
                                 "import { subtotal } from '../src/cart.js';\n\n"
                                 "test('subtotal', () => { assert.strictEqual(subtotal([1, 2]), 3); });\n",
    }, '{"name": "p", "type": "module"}\n')
    processes = run(root, "node --test test/")
    s = spectrum(root, processes, {"test/total.test.js": ["total"], "test/subtotal.test.js": ["subtotal"]})

    # discount's body (line 6) ran in total's process only; price's (line 2) in both; unused in none.
    assert ran(s, "total", "src/helpers.js", 6) and not ran(s, "subtotal", "src/helpers.js", 6)
    assert ran(s, "total", "src/helpers.js", 2) and ran(s, "subtotal", "src/helpers.js", 2)
    assert not any(ran(s, t, "src/helpers.js", 10) for t in ("total", "subtotal"))
    assert ran(s, "total", "src/cart.js", 4) and not ran(s, "total", "src/cart.js", 8)
    assert not any(f.startswith((".greenloop", "node_modules")) for p in processes for f in p.functions)


def test_vitest_forked_workers_write_their_coverage(tmp_path):
    require("node", "npm")
    root = project(tmp_path / "p", {
        "test/total.test.js": "import { it, expect } from 'vitest';\nimport { total } from '../src/cart.js';\n\n"
                              "it('totals', () => { expect(total([100])).toBe(90); });\n",
        "test/subtotal.test.js": "import { it, expect } from 'vitest';\nimport { subtotal } from '../src/cart.js';\n\n"
                                 "it('subtotals', () => { expect(subtotal([1, 2])).toBe(3); });\n",
    }, '{"name": "p", "private": true, "type": "module", "devDependencies": {"vitest": "^4.1.12"}}\n')
    npm_install(root)
    processes = run(root, "./node_modules/.bin/vitest run --pool=forks")
    s = spectrum(root, processes, {"test/total.test.js": ["totals"], "test/subtotal.test.js": ["subtotals"]})

    assert ran(s, "totals", "src/helpers.js", 6) and not ran(s, "subtotals", "src/helpers.js", 6)
    assert ran(s, "subtotals", "src/helpers.js", 2)
    v8_coverage.clear(root)
    assert not (root / v8_coverage.FOLDER).exists() and not (root / ".greenloop" / v8_coverage.PRELOAD).exists()
