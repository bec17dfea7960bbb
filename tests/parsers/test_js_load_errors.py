"""A JavaScript test file that fails to load because an ES-module import
cannot be resolved (``ERR_MODULE_NOT_FOUND``: "Cannot find module" / "Cannot
find package") is one ``errored`` entry named by that test file, in every
JavaScript runner and reporter: never a result named after the runner.

The outputs come from the real runners (Mocha, Jest, Vitest at the corpus's
versions, installed from npm into a temp project; node:test from Node), run
on small ES-module projects written here.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from greenloop.parsers import RunOutput, parse
from greenloop.parsers.models import Status, TestReport
from tests.live.conftest import npm_install, require
from tests.parsers.helpers import write_files

PACKAGE = (
    '{"name": "esm-load", "version": "1.0.0", "private": true, "type": "module",\n'
    ' "devDependencies": {"mocha": "12.0.3", "jest": "30.5.2", "vitest": "4.1.12"}}\n'
)
SUM = "export function sum(a, b) { return a + b; }\n"


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One npm install of the three runners, linked into every project."""
    require("node", "npm")
    root = write_files(tmp_path_factory.mktemp("js-runners"), {"package.json": PACKAGE})
    npm_install(root)
    return root / "node_modules"


def project(tmp_path: Path, node_modules: Path, files: dict[str, str], module: bool = True) -> Path:
    pkg = '{"name": "sample", "version": "1.0.0", "private": true' + (', "type": "module"' if module else "") + "}\n"
    root = write_files(tmp_path, {"package.json": pkg, "src/sum.js": SUM, **files})
    (root / "node_modules").symlink_to(node_modules)
    return root


def run(root: Path, command: str) -> RunOutput:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}
    proc = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, timeout=180)
    return RunOutput(command=command, exit_code=proc.returncode, stdout_text=proc.stdout,
                     stderr_text=proc.stderr, cwd=root)


def both(out: RunOutput, framework: str) -> list[TestReport]:
    """The report with the framework given, and detected."""
    given, detected = parse(out, framework), parse(out)
    assert detected.framework == framework, (detected.detection, out.stdout_text, out.stderr_text)
    return [given, detected]


def errored(report: TestReport) -> dict[str, tuple[str | None, int | None, str | None]]:
    return {t.id: (t.file, t.line, t.message) for t in report.tests if t.status == Status.ERRORED}


# ---------------------------------------------------------------- mocha

MOCHA_OK = (
    "import assert from 'node:assert';\nimport { sum } from '../src/sum.js';\n\n"
    "describe('sum', () => {\n  it('adds', () => { assert.strictEqual(sum(1, 2), 3); });\n});\n"
)
MOCHA_MISSING_MODULE = (
    "import assert from 'node:assert';\nimport { product } from '../src/product.js';\n\n"
    "describe('product', () => {\n  it('multiplies', () => { assert.strictEqual(product(2, 3), 6); });\n});\n"
)
MOCHA_MISSING_PACKAGE = (
    "import assert from 'node:assert';\n\nimport leftPad from 'no-such-left-pad';\n\n"
    "describe('pad', () => {\n  it('pads', () => { assert.strictEqual(leftPad('1', 2), ' 1'); });\n});\n"
)
MOCHA_REPORTERS = ["", "--reporter dot", "--reporter json", "--reporter tap", "--reporter xunit",
                   "--reporter xunit --reporter-option output=reports/xunit.xml"]


@pytest.mark.parametrize("reporter", MOCHA_REPORTERS)
@pytest.mark.parametrize("spec, source, line, says", [
    ("test/product.spec.js", MOCHA_MISSING_MODULE, 2, "Cannot find module"),
    ("test/pad.spec.js", MOCHA_MISSING_PACKAGE, 3, "Cannot find package 'no-such-left-pad'"),
])
def test_mocha_spec_that_cannot_resolve_an_import(tmp_path: Path, node_modules: Path, reporter: str, spec: str,
                                                  source: str, line: int, says: str) -> None:
    root = project(tmp_path, node_modules, {"test/add.spec.js": MOCHA_OK, spec: source})
    out = run(root, f"npx mocha {reporter}".strip())
    assert "ERR_MODULE_NOT_FOUND" in out.stderr_text, out.stderr_text
    for report in both(out, "mocha"):
        # Mocha aborts while loading the files: the one entry is the spec file
        got = errored(report)
        assert list(got) == [spec] and len(report.tests) == 1, report.tests
        file, at, message = got[spec]
        assert file == spec and at == line and message and says in message
        assert report.build_error and not report.warnings


def test_mocha_spec_whose_helper_imports_a_missing_module(tmp_path: Path, node_modules: Path) -> None:
    """Node names the helper that imports the missing module; the entry is
    the spec file that imports the helper, at that import's line."""
    root = project(tmp_path, node_modules, {
        "test/a.spec.js": "const assert = require('node:assert');\n"
                          "describe('a', () => { it('works', () => assert.ok(true)); });\n",
        "test/b.spec.mjs": "import assert from 'node:assert';\n\nimport { helper } from '../src/helper.mjs';\n"
                           "describe('b', () => { it('helps', () => assert.ok(helper())); });\n",
        "src/helper.mjs": "import { deep } from './deep.mjs';\nexport function helper() { return deep(); }\n",
    }, module=False)
    out = run(root, "npx mocha --extension mjs --extension js")
    assert "imported from" in out.stderr_text and "helper.mjs" in out.stderr_text
    for report in both(out, "mocha"):
        assert errored(report).keys() == {"test/b.spec.mjs"} and report.tests[0].line == 3


# ---------------------------------------------------------------- jest, vitest, node:test

MISSING = "import { product } from '../src/product.js';\n"
PKG_MISSING = "import leftPad from 'no-such-left-pad';\n"


@pytest.mark.parametrize("options", ["", "--verbose", "--json --outputFile=jest-results.json"])
def test_jest_esm_suite_that_cannot_resolve_an_import(tmp_path: Path, node_modules: Path, options: str) -> None:
    root = project(tmp_path, node_modules, {
        "__tests__/sum.test.js": "import { sum } from '../src/sum.js';\n\n"
                                 "test('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
        "__tests__/product.test.js": "// products\n" + MISSING + "test('m', () => { expect(product(2, 3)).toBe(6); });\n",
        "__tests__/pad.test.js": PKG_MISSING + "test('pads', () => { expect(leftPad('1', 2)).toBe(' 1'); });\n",
    })
    out = run(root, f"NODE_OPTIONS=--experimental-vm-modules npx jest {options}".strip())
    for report in both(out, "jest"):
        assert {t.id: t.status for t in report.tests} == {
            "adds": Status.PASSED, "__tests__/product.test.js": Status.ERRORED, "__tests__/pad.test.js": Status.ERRORED}
        got = errored(report)
        assert got["__tests__/product.test.js"][1] == 2 and got["__tests__/pad.test.js"][1] == 1
        assert "Cannot find module" in (got["__tests__/pad.test.js"][2] or "")


VITEST_HEAD = "import { it, expect } from 'vitest';\n"


@pytest.mark.parametrize("options", ["", "--reporter=verbose", "--reporter=json --outputFile=report.json",
                                     "--reporter=junit --outputFile=reports/junit.xml"])
def test_vitest_file_that_cannot_resolve_an_import(tmp_path: Path, node_modules: Path, options: str) -> None:
    root = project(tmp_path, node_modules, {
        "test/sum.test.js": VITEST_HEAD + "import { sum } from '../src/sum.js';\n"
                            "it('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
        "test/product.test.js": VITEST_HEAD + MISSING + "it('m', () => { expect(product(2, 3)).toBe(6); });\n",
        "test/pad.test.js": VITEST_HEAD + PKG_MISSING + "it('pads', () => { expect(leftPad('1', 2)).toBe(' 1'); });\n",
    })
    out = run(root, f"NO_COLOR=1 npx vitest run {options}".strip())
    for report in both(out, "vitest"):
        assert {t.id: t.status for t in report.tests} == {
            "adds": Status.PASSED, "test/product.test.js": Status.ERRORED, "test/pad.test.js": Status.ERRORED}
        got = errored(report)
        assert got["test/product.test.js"][1] == 2 and "Cannot find package" in (got["test/pad.test.js"][2] or "")


@pytest.mark.parametrize("options", ["", "--test-reporter=spec", "--test-reporter=dot"])
def test_node_test_file_that_cannot_resolve_an_import(tmp_path: Path, options: str) -> None:
    require("node")
    root = write_files(tmp_path, {
        "package.json": '{"name": "sample", "version": "1.0.0", "private": true, "type": "module"}\n',
        "src/sum.js": SUM,
        "test/sum.test.js": "import { test } from 'node:test';\nimport assert from 'node:assert';\n"
                            "import { sum } from '../src/sum.js';\n"
                            "test('adds', () => { assert.strictEqual(sum(1, 2), 3); });\n",
        "test/product.test.js": "import { test } from 'node:test';\n" + MISSING + "test('m', () => product(2, 3));\n",
    })
    out = run(root, f"node --test {options}".strip())
    for report in both(out, "node-test"):
        got = errored(report)
        # node:test names a file that failed to load by its path as printed
        assert [t.id for t in report.tests if t.status == Status.PASSED] == ["adds"]
        assert len(got) == 1 and next(iter(got.values()))[0] == "test/product.test.js", report.tests
        assert next(iter(got)).endswith("/test/product.test.js")
        assert report.build_error
        if options != "--test-reporter=dot":  # the dot reporter prints only "test failed"
            file, line, message = next(iter(got.values()))
            assert line == 2 and message and "Cannot find module" in message

