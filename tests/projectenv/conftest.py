"""Small real projects for the setup phase: built with real uv/pip/npm
against PyPI and npm, in the real sandbox."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

BACKEND = os.environ.get("GREENLOOP_TEST_SANDBOX", "bwrap")


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip())
    return root


def git_init(root: Path) -> Path:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ["PATH"]}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
    return root


# A src-layout library whose test extra needs a package Greenloop itself does not have
# (inflection), and whose pytest configuration turns every warning into an error.
SRC_LAYOUT = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "wordy"
        version = "0.1.0"

        [project.optional-dependencies]
        test = ["pytest>=7", "inflection==0.5.1"]

        [tool.pytest.ini_options]
        filterwarnings = ["error"]
        """,
    "src/wordy/__init__.py": """
        import inflection


        def title(s):
            return inflection.titleize(s)


        def add(a, b):
            return a - b  # the bug a fix would correct
        """,
    "tests/test_wordy.py": """
        from wordy import add, title


        def test_title():
            assert title("hello_world") == "Hello World"


        def test_add():
            assert add(2, 2) == 4
        """,
    ".gitignore": ".venv/\nnode_modules/\n",
}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A private Greenloop data directory (the environment cache lives under it)."""
    path = tmp_path / "home"
    monkeypatch.setenv("GREENLOOP_HOME", str(path))
    return path


@pytest.fixture
def src_project(tmp_path) -> Path:
    return git_init(write(tmp_path / "wordy", SRC_LAYOUT))


@pytest.fixture(scope="session")
def node_lockfile(tmp_path_factory) -> str:
    """A real package-lock.json for the Node project, resolved once from npm."""
    root = tmp_path_factory.mktemp("lock")
    (root / "package.json").write_text(json.dumps(NODE_MANIFEST))
    subprocess.run(["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=root,
                   check=True, capture_output=True, timeout=300)
    return (root / "package-lock.json").read_text()


NODE_MANIFEST = {"name": "numbers", "version": "1.0.0", "private": True, "scripts": {"test": "node --test",
                 "prepare": "exit 1"}, "devDependencies": {"is-number": "7.0.0"}}


@pytest.fixture
def node_project(tmp_path, node_lockfile) -> Path:
    root = write(tmp_path / "numbers", {
        "index.js": "const isNumber = require('is-number');\nmodule.exports = (x) => isNumber(x);\n",
        "test/numbers.test.js": """
            const test = require('node:test');
            const assert = require('node:assert');
            const check = require('..');
            test('a number is a number', () => { assert.strictEqual(check(5), true); });
            test('a word is not', () => { assert.strictEqual(check('five'), false); });
            """,
        ".gitignore": "node_modules/\n",
    })
    (root / "package.json").write_text(json.dumps(NODE_MANIFEST, indent=2))
    (root / "package-lock.json").write_text(node_lockfile)
    return git_init(root)


def copy_project(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


VITEST_MANIFEST = {"name": "sums", "version": "1.0.0", "private": True, "type": "module",
                   "scripts": {"test": "vitest"}, "devDependencies": {"vitest": "1.6.0"}}


@pytest.fixture(scope="session")
def vitest_lockfile(tmp_path_factory) -> str:
    """A real package-lock.json for a Vitest project, resolved once from npm."""
    root = tmp_path_factory.mktemp("vitest-lock")
    (root / "package.json").write_text(json.dumps(VITEST_MANIFEST))
    subprocess.run(["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=root,
                   check=True, capture_output=True, timeout=300)
    return (root / "package-lock.json").read_text()


@pytest.fixture
def vitest_project(tmp_path, vitest_lockfile) -> Path:
    root = write(tmp_path / "sums", {
        "test/math.test.js": """
            import { describe, it, expect } from 'vitest';

            describe('math', () => {
              it('adds', () => { expect(1 + 1).toBe(2); });
              it('subtracts', () => { expect(3 - 1).toBe(1); });
            });
            """,
        ".gitignore": "node_modules/\n",
    })
    (root / "package.json").write_text(json.dumps(VITEST_MANIFEST, indent=2))
    (root / "package-lock.json").write_text(vitest_lockfile)
    return git_init(root)


# An npm workspace: `lib` holds the bug, `app`'s tests find it (`@mono/lib`, through the workspace's
# link) and need a dependency of app's own (is-number). The root's `test` is a chain of a build,
# lint (eslint is not even installed) and coverage over every member's tests.
NPM_WORKSPACE_MANIFEST = {
    "name": "mono", "private": True, "workspaces": ["packages/*"],
    "scripts": {"build": "npm run build --workspaces --if-present", "lint": "eslint .",
                "coverage": "c8 npm run test --workspaces", "test": "npm run build && npm run lint && npm run coverage"},
    "devDependencies": {"c8": "10.1.2"}}
NPM_WORKSPACE_MEMBERS = {
    "packages/lib": {"name": "@mono/lib", "version": "1.0.0", "main": "index.js",
                     "scripts": {"test": "node --test test/"}},
    "packages/app": {"name": "@mono/app", "version": "1.0.0", "main": "index.js", "scripts": {"test": "node --test"},
                     "dependencies": {"@mono/lib": "1.0.0", "is-number": "7.0.0"}},
}
LIB_BUGGY = "exports.total = (prices) => prices.slice(1).reduce((sum, p) => sum + p, 0);\n"
LIB_FIXED = "exports.total = (prices) => prices.reduce((sum, p) => sum + p, 0);\n"
NPM_WORKSPACE_FILES = {
    "packages/lib/index.js": LIB_BUGGY,
    "packages/lib/test/lib.test.js": """
        const test = require('node:test');
        const assert = require('node:assert');
        const { total } = require('..');
        test('an empty list costs nothing', () => { assert.strictEqual(total([]), 0); });
        """,
    "packages/app/index.js": """
        const { total } = require('@mono/lib');
        const isNumber = require('is-number');
        exports.bill = (items) => total(items.filter((x) => isNumber(x)));
        """,
    "packages/app/test/app.test.js": """
        const test = require('node:test');
        const assert = require('node:assert');
        const { bill } = require('..');
        test('a bill adds its prices', () => { assert.strictEqual(bill([2, 3]), 5); });
        test('a bill skips what is not a price', () => { assert.strictEqual(bill(['x', 2]), 2); });
        """,
    ".gitignore": "node_modules/\n",
}


def make_npm_workspace(root: Path) -> Path:
    """The npm workspace at ``root``, with a package-lock.json resolved from npm, committed."""
    write(root, NPM_WORKSPACE_FILES)
    (root / "package.json").write_text(json.dumps(NPM_WORKSPACE_MANIFEST, indent=2))
    for rel, manifest in NPM_WORKSPACE_MEMBERS.items():
        (root / rel / "package.json").write_text(json.dumps(manifest, indent=2))
    subprocess.run(["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=root,
                   check=True, capture_output=True, timeout=300)
    return git_init(root)


@pytest.fixture
def npm_workspace(tmp_path) -> Path:
    return make_npm_workspace(tmp_path / "mono")


# A uv workspace: the root project `shop` needs the member `prices` (by name, from the workspace),
# whose src-layout code holds the bug; the failing test is the root's, prices' own test passes.
SETUPTOOLS = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
UV_WORKSPACE = {
    "pyproject.toml": SETUPTOOLS + """
        [project]
        name = "shop"
        version = "0.1.0"
        dependencies = ["prices"]

        [tool.uv.sources]
        prices = { workspace = true }

        [tool.uv.workspace]
        members = ["packages/*"]
        """,
    "src/shop/__init__.py": """
        from prices import with_tax


        def checkout(amounts):
            return with_tax(sum(amounts))
        """,
    "tests/test_shop.py": """
        from shop import checkout


        def test_checkout_adds_tax():
            assert checkout([50, 50]) == 120
        """,
    "packages/prices/pyproject.toml": SETUPTOOLS + """
        [project]
        name = "prices"
        version = "0.1.0"
        """,
    "packages/prices/src/prices/__init__.py": """
        def with_tax(amount):
            return amount * 1.2 if amount > 100 else amount  # the bug: no tax on 100
        """,
    "packages/prices/tests/test_prices.py": """
        from prices import with_tax


        def test_no_amount_no_tax():
            assert with_tax(0) == 0
        """,
    ".gitignore": ".venv/\n",
}


@pytest.fixture(params=["uv.lock", "no lockfile"])
def uv_workspace(request, tmp_path) -> Path:
    from greenloop.projectenv.python import uv_binary

    root = write(tmp_path / "shop", UV_WORKSPACE)
    if request.param == "uv.lock":
        subprocess.run([uv_binary() or "uv", "lock", "--quiet"], cwd=root, check=True, capture_output=True,
                       timeout=300, env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    return git_init(root)


def _tool_from_npm(root: Path, package: str, bin_path: str) -> Path:
    """A folder with ``package``'s command in it, installed from npm (corepack cannot verify pnpm's
    or yarn's signature against this machine's registry). Its ``bin/`` is a sibling of the package,
    so the sandbox, which shows a PATH folder's parent, finds what the link points to."""
    subprocess.run(["npm", "install", "--prefix", str(root), "--no-audit", "--no-fund", package],
                   check=True, capture_output=True, timeout=300)
    (root / "bin").mkdir()
    name = package.rsplit("@", 1)[0]
    (root / "bin" / name).symlink_to(f"../node_modules/{name}/{bin_path}")
    return root / "bin"


@pytest.fixture(scope="session")
def pnpm_bin(tmp_path_factory) -> Path:
    return _tool_from_npm(tmp_path_factory.mktemp("pnpm"), "pnpm@9.15.9", "bin/pnpm.cjs")


@pytest.fixture(scope="session")
def yarn_bin(tmp_path_factory) -> Path:
    return _tool_from_npm(tmp_path_factory.mktemp("yarn"), "yarn@1.22.22", "bin/yarn.js")


def make_yarn_workspace(root: Path, yarn: Path) -> Path:
    """The npm workspace as a Yarn 1 workspace, with a yarn.lock resolved from npm, committed."""
    write(root, NPM_WORKSPACE_FILES)
    (root / "package.json").write_text(json.dumps({"name": "mono", "private": True, "workspaces": ["packages/*"],
                                                   "scripts": {"test": "yarn workspaces run test"}}, indent=2))
    for rel, manifest in NPM_WORKSPACE_MEMBERS.items():
        (root / rel / "package.json").write_text(json.dumps(manifest, indent=2))
    subprocess.run([str(yarn / "yarn"), "install", "--ignore-scripts", "--no-progress", "--non-interactive"],
                   cwd=root, check=True, capture_output=True, timeout=300,
                   env={**os.environ, "PATH": f"{yarn}:{os.environ['PATH']}"})
    shutil.rmtree(root / "node_modules")
    return git_init(root)


def make_pnpm_workspace(root: Path, pnpm: Path) -> Path:
    """The npm workspace's packages as a pnpm workspace (``pnpm-workspace.yaml``, ``workspace:*``),
    with a pnpm-lock.yaml resolved from npm, committed."""
    write(root, {**NPM_WORKSPACE_FILES, "pnpm-workspace.yaml": "packages:\n  - packages/*\n"})
    (root / "package.json").write_text(json.dumps({"name": "mono", "private": True,
                                                   "scripts": {"test": "pnpm -r test"}}, indent=2))
    for rel, manifest in NPM_WORKSPACE_MEMBERS.items():
        deps = {k: ("workspace:*" if k == "@mono/lib" else v) for k, v in manifest.get("dependencies", {}).items()}
        (root / rel / "package.json").write_text(json.dumps({**manifest, "dependencies": deps}, indent=2))
    subprocess.run([str(pnpm / "pnpm"), "install", "--lockfile-only"], cwd=root, check=True, capture_output=True,
                   timeout=300)
    return git_init(root)
