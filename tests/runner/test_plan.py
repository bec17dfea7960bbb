"""Default build/test commands, lockfiles, added reports and fallbacks."""

from __future__ import annotations

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.runner.plan import REPORT_DIR, plan_tests


def make(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_python_defaults_to_pytest_with_junit_report_and_fallbacks(tmp_path):
    plan = plan_tests(make(tmp_path, {"pytest.ini": "[pytest]\n"}))
    assert plan.framework == "pytest" and plan.language == "python"
    assert plan.test_command == f"python -m pytest --junitxml={REPORT_DIR}/pytest.xml"
    assert "python -m unittest discover -v" in plan.fallback_commands
    assert plan.build_command is None


@pytest.mark.parametrize("lockfile, pm", [("yarn.lock", "yarn"), ("pnpm-lock.yaml", "pnpm"), ("package-lock.json", "npm")])
def test_js_package_manager_from_lockfile(tmp_path, lockfile, pm):
    plan = plan_tests(make(tmp_path, {
        "package.json": '{"scripts": {"test": "vitest run", "build": "vite build"}, "devDependencies": {"vitest": "4"}}',
        lockfile: "",
    }))
    assert plan.framework == "vitest"
    assert plan.build_command == f"{pm} run build"
    # The script without its pre/post hooks (npm >= 7), then the script as the user types it.
    assert plan.fallback_commands == ([f"{pm} run --ignore-scripts test"] if pm == "npm" else []) + [f"{pm} test"]
    assert plan.test_command.startswith("npx vitest run ")
    assert "--outputFile.junit=" in plan.test_command


def test_typescript_without_build_script_type_checks(tmp_path):
    plan = plan_tests(make(tmp_path, {"package.json": '{"devDependencies": {"jest": "30"}}', "tsconfig.json": "{}"}))
    assert plan.build_command == "npx tsc --noEmit"


def test_explicit_command_is_kept_verbatim_and_sets_the_framework(tmp_path):
    plan = plan_tests(make(tmp_path, {"go.mod": "module m\n"}), test_command="go test -v ./pkg/...")
    assert (plan.test_command, plan.framework, plan.default_command) == ("go test -v ./pkg/...", "go", False)


def test_run_build_false_skips_and_true_without_command_is_an_error(tmp_path):
    root = make(tmp_path, {"package.json": '{"scripts": {"test": "jest", "build": "tsc"}}'})
    assert plan_tests(root, run_build=False).build_command is None
    with pytest.raises(GreenloopError) as err:
        plan_tests(make(tmp_path / "py", {"setup.py": ""}), run_build=True)
    assert err.value.kind is ErrorKind.VALIDATION_ERROR


def test_missing_directory_is_a_validation_error(tmp_path):
    with pytest.raises(GreenloopError) as err:
        plan_tests(tmp_path / "nope")
    assert err.value.kind is ErrorKind.VALIDATION_ERROR and err.value.context["exists"] is False


def test_cmake_project_builds_then_runs_ctest_with_junit(tmp_path):
    plan = plan_tests(make(tmp_path, {"CMakeLists.txt": "project(x)\n"}))
    assert plan.build_command == "cmake -S . -B build && cmake --build build"
    assert plan.test_command.startswith("ctest --test-dir build") and "--output-junit" in plan.test_command


@pytest.mark.parametrize("extra, framework", [
    ({}, "unittest"),
    ({"tests/test_b.py": "import pytest\n"}, "pytest"),  # one pytest-style file: pytest runs both
    ({"requirements-dev.txt": "pytest>=8\n"}, "pytest"),
    ({"pytest.ini": "[pytest]\n"}, "pytest"),
])
def test_plain_unittest_projects_run_with_unittest(tmp_path, extra, framework):
    plan = plan_tests(make(tmp_path, {"tests/__init__.py": "", "tests/test_a.py": "import unittest\n", **extra}))
    assert plan.framework == framework
    if framework == "unittest":
        assert plan.test_command == "python -m unittest discover -v"


@pytest.mark.parametrize("files, command", [
    # idna 3.3: test_suite in the dict setup() is given as **arguments; a package of test modules
    ({"setup.py": "from setuptools import setup\nargs = {'test_suite': 'tests'}\nsetup(**args)\n",
      "tests/__init__.py": "", "tests/test_a.py": "import unittest\n"},
     "python -m unittest discover -v -s tests -t ."),
    # a callable that builds the suite (python3-openid's openid.test.test_suite), declared in setup.cfg
    ({"setup.cfg": "[options]\ntest_suite = p.test.test_suite\n", "p/__init__.py": "", "p/test/__init__.py": ""},
     "python -m unittest -v p.test.test_suite"),
])
def test_a_declared_test_suite_is_run_with_unittest(tmp_path, files, command):
    plan = plan_tests(make(tmp_path, files))
    assert (plan.framework, plan.test_command, plan.default_command) == ("unittest", command, True)
    assert "test_suite" in plan.reason


def test_a_declared_test_suite_gives_way_to_a_pytest_configuration(tmp_path):
    plan = plan_tests(make(tmp_path, {"setup.cfg": "[options]\ntest_suite = tests\n\n[tool:pytest]\naddopts = -q\n",
                                      "tests/__init__.py": ""}))
    assert plan.framework == "pytest"
