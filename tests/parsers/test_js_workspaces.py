"""Workspace members and the script calls that run in them (``parsers/js_workspaces.py``),
and how a root's test script that delegates to its members is followed (``npm_scripts``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.parsers import npm_scripts
from greenloop.parsers.command import raw_words
from greenloop.parsers.js_workspaces import MemberCall, member_call, members


def _package(root: Path, rel: str, data: dict) -> None:
    (root / rel).mkdir(parents=True, exist_ok=True)
    (root / rel / "package.json").write_text(json.dumps(data))


@pytest.mark.parametrize(("command", "call"), [
    ("npm run test --workspaces", MemberCall("test", None)),
    ("npm test -ws --if-present", MemberCall("test", None)),
    ("npm run test:unit -w packages/app", MemberCall("test:unit", ("packages/app",))),
    ("npm --workspace=@mono/app run test", MemberCall("test", ("@mono/app",))),
    ("yarn workspaces run test", MemberCall("test", None)),
    ("yarn workspaces foreach -A run test", MemberCall("test", None)),
    ("yarn workspace @mono/app test", MemberCall("test", ("@mono/app",))),
    ("pnpm -r test", MemberCall("test", None)),
    ("pnpm --filter app run test", MemberCall("test", ("app",))),
    ("npm run test", None),
    ("npm test", None),
    ("node --test", None),
])
def test_calls_that_run_a_script_in_members(command, call):
    assert member_call(raw_words(command)) == call


def test_members_come_from_the_workspaces_globs_and_pnpm_workspace_yaml(tmp_path):
    _package(tmp_path, ".", {"name": "root", "workspaces": {"packages": ["packages/*", "!packages/old"]}})
    for rel in ("packages/a", "packages/b", "packages/old"):
        _package(tmp_path, rel, {"name": rel.rsplit("/", 1)[1]})
    (tmp_path / "packages" / "notes").mkdir()  # no package.json: not a member
    (tmp_path / "pnpm-workspace.yaml").write_text("packages:\n  - tools/*\n")
    _package(tmp_path, "tools/cli", {"name": "cli"})
    assert [(m.path, m.name) for m in members(tmp_path)] == [("packages/a", "a"), ("packages/b", "b"),
                                                             ("tools/cli", "cli")]
    assert members(tmp_path / "packages" / "a") == []


def test_a_root_that_delegates_to_its_members_runs_their_tests_from_the_root_in_one_call(tmp_path):
    _package(tmp_path, ".", {"workspaces": ["packages/*"], "devDependencies": {"vitest": "1"},
                             "scripts": {"test": "npm run build && npm run format:check && npm run coverage",
                                         "build": "tsc -b", "format:check": "prettier --check .",
                                         "coverage": "c8 npm run test --workspaces --if-present"}})
    _package(tmp_path, "packages/lib", {"name": "@m/lib", "scripts": {"test": "vitest run"}})
    _package(tmp_path, "packages/app", {"name": "@m/app", "scripts": {"test": "vitest run test/unit"}})
    (tmp_path / "packages" / "app" / "test" / "unit").mkdir(parents=True)
    _package(tmp_path, "packages/docs", {"name": "@m/docs", "scripts": {"build": "true"}})  # no test script
    js = npm_scripts.plan_js_tests(tmp_path)
    assert js is not None and js.framework == "vitest"
    # The build stays (the members import each other's output); the format check and coverage go;
    # the members' one runner call is one run from the root, of each member's tests.
    assert js.command == "npm run build && npx vitest run packages/app/test/unit packages/lib"
    assert "without format:check (prettier --check .)" in js.reason and "packages/app's test" in js.reason


def test_a_member_script_that_runs_no_tests_is_a_step_as_written(tmp_path):
    _package(tmp_path, ".", {"workspaces": ["packages/*"], "devDependencies": {"jest": "29"},
                             "scripts": {"test": "npm run build --workspaces && jest"}})
    _package(tmp_path, "packages/lib", {"name": "lib", "scripts": {"build": "tsc"}})
    js = npm_scripts.plan_js_tests(tmp_path)
    assert js is not None and js.command.startswith("npm run build --workspaces && npx jest")


@pytest.mark.parametrize("selector", ["@m/app", "packages/app", "./packages/app", "app", "packages/a*"])
def test_a_call_for_one_member_runs_only_that_members_tests(tmp_path, selector):
    _package(tmp_path, ".", {"workspaces": ["packages/*"], "devDependencies": {"jest": "29"},
                             "scripts": {"test": f"npm test -w {selector}"}})
    _package(tmp_path, "packages/app", {"name": "@m/app", "scripts": {"test": "jest"}})
    _package(tmp_path, "packages/lib", {"name": "@m/lib", "scripts": {"test": "jest"}})
    js = npm_scripts.plan_js_tests(tmp_path)
    assert js is not None and js.command == "npx jest packages/app"


def test_a_members_config_file_stays_the_value_of_its_option(tmp_path):
    _package(tmp_path, ".", {"workspaces": ["packages/*"], "devDependencies": {"jest": "29"},
                             "scripts": {"test": "npm test --workspaces"}})
    _package(tmp_path, "packages/app", {"name": "app", "scripts": {"test": "jest --config jest.config.js test"}})
    (tmp_path / "packages" / "app" / "jest.config.js").write_text("module.exports = {};\n")
    (tmp_path / "packages" / "app" / "test").mkdir()
    js = npm_scripts.plan_js_tests(tmp_path)
    assert js is not None and js.command == "npx jest --config packages/app/jest.config.js packages/app/test"
