"""What the Python recipe installs, from each kind of manifest, built for real
(uv against PyPI in the sandbox) where it matters."""

from __future__ import annotations

import subprocess

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers.models import Status
from greenloop.projectenv.python import (
    choose_interpreter,
    dependency_groups,
    extras,
    import_roots,
    interpreters,
    pdm_groups,
    poetry_constraint,
    poetry_groups,
    pyproject,
    recipe,
    requirement_files,
    requires_python,
    uv_binary,
    wanted_names,
)
from greenloop.projectenv.setup import set_up
from greenloop.projectenv.trust import node_modules_problem
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from tests.projectenv.conftest import git_init, write
from tests.projectenv.test_setup import SETTINGS

TEST_USES_INFLECTION = """
    import inflection

    from shout import shout


    def test_shout():
        assert shout(inflection.humanize("hello_world")) == "HELLO WORLD"
    """


async def _green(ws, tmp_path):
    plan = plan_tests(ws)
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS, tmp_path / "setup")
    run = await run_tests(plan.model_copy(update={"environment": environment}), ws, tmp_path / "suite", SETTINGS)
    return environment, {t.id: t.status for t in run.report.tests}


async def test_requirements_files_and_a_flat_layout(home, tmp_path):
    ws = git_init(write(tmp_path / "flat", {
        "requirements.txt": "inflection==0.5.1\n",
        "requirements-docs.txt": "greenloop-no-such-package-q7==1.0\n",  # documentation: left out
        "shout.py": "def shout(s):\n    return s.upper()\n",
        "tests/test_shout.py": TEST_USES_INFLECTION,
        "pytest.ini": "[pytest]\n",
    }))
    environment, statuses = await _green(ws, tmp_path)
    assert environment.import_roots == ["."] and "requirements.txt" in environment.reason
    assert statuses == {"tests/test_shout.py::test_shout": Status.PASSED}


async def test_pep735_groups_pinned_by_uv_lock(home, tmp_path):
    ws = write(tmp_path / "grouped", {
        "pyproject.toml": """
            [project]
            name = "shout"
            version = "1.0"
            requires-python = ">=3.11"

            [dependency-groups]
            lint = ["pyflakes"]
            test = ["pytest", {include-group = "extra-test"}]
            extra-test = ["inflection"]

            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [tool.hatch.build.targets.wheel]
            packages = ["src/shout"]
            """,
        "src/shout/__init__.py": "def shout(s):\n    return s.upper()\n",
        "tests/test_shout.py": TEST_USES_INFLECTION,
    })
    assert dependency_groups(pyproject(ws)) == ["pytest", "inflection"]
    lock = subprocess.run([uv_binary(), "lock", "--directory", str(ws)],
                          capture_output=True, text=True, timeout=300)
    assert lock.returncode == 0, lock.stderr
    git_init(ws)
    environment, statuses = await _green(ws, tmp_path)
    assert "uv.lock" in environment.reason and "groups test" in environment.reason
    assert environment.import_roots == ["src"]
    site = next((tmp_path / "home").glob("envs/python-*/venv/lib/python3*/site-packages"))
    assert (site / "inflection.py").is_file() and not (site / "pyflakes").exists()  # only the test groups
    assert statuses == {"tests/test_shout.py::test_shout": Status.PASSED}


def test_setup_cfg_and_setup_py_extras_and_poetry_groups(tmp_path):
    ws = write(tmp_path / "old", {
        "setup.cfg": "[options]\npackage_dir =\n    = lib\n\n"
                     "[options.extras_require]\ntesting = pytest\ndocs = sphinx\n",
        "setup.py": "from setuptools import setup\nsetup(extras_require={'dev': ['tox'], 'speed': ['ujson']})\n",
        "lib/old/__init__.py": "",
    })
    assert extras(ws, {}) == ["testing"]  # dev is left out: a test-specific extra exists
    assert import_roots(ws, {}) == ["lib"]
    assert "'.[testing]'" in " ".join(recipe(ws, "pytest").script)
    write(ws, {"tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ndeps =\n    pytest>=7  # the runner\n"
                          "    -rtest-reqs.txt\n    {env:EXTRA:}\n    py38: mock\ncommands = pytest\n",
               "test-reqs.txt": "freezegun\n"})
    script = " ".join(recipe(ws, "pytest").script)
    assert "'pytest>=7'" in script and "-r test-reqs.txt" in script and "mock" not in script
    poetry = {"tool": {"poetry": {"group": {"test": {"dependencies": {
        "pytest": "^7.2", "freezegun": {"version": "~1.2.1", "extras": ["x"]}, "local": {"path": "../local"}}}},
        "dev-dependencies": {"python": "^3.8", "black": "*", "mock": "0.4"}}}}
    assert wanted_names(tmp_path, poetry) == ("test", "tests", "testing")
    assert sorted(poetry_groups(poetry)) == ["freezegun[x]>=1.2.1,<1.3", "pytest>=7.2,<8"]
    assert sorted(poetry_groups(poetry, ("dev",))) == ["black", "mock==0.4"]
    assert poetry_constraint("^0.2.3") == ">=0.2.3,<0.3" and poetry_constraint(">=1,<2") == ">=1,<2"


def test_a_node_modules_is_reused_only_when_it_matches_the_lockfile_and_links_nowhere(tmp_path):
    lock = {"packages": {"": {"name": "x"}, "node_modules/a": {"version": "1.0.0"}}}
    ws = write(tmp_path / "n", {"package-lock.json": __import__("json").dumps(lock),
                                "node_modules/.package-lock.json": __import__("json").dumps(lock),
                                "node_modules/a/index.js": ""})
    assert node_modules_problem(ws) is None
    (ws / "node_modules" / "linked").symlink_to(tmp_path)
    assert "links outside it" in node_modules_problem(ws)
    (ws / "node_modules" / "linked").unlink()
    (ws / "node_modules/.package-lock.json").write_text('{"packages": {"node_modules/a": {"version": "2.0.0"}}}')
    assert "does not match" in node_modules_problem(ws)


def test_dev_extras_and_groups_only_when_nothing_is_named_for_tests(tmp_path):
    # structlog's shape: a tests extra, and a dev extra that pulls linters and release tools.
    both = write(tmp_path / "both", {"pyproject.toml": """
        [project]
        name = "both"
        version = "1"
        [project.optional-dependencies]
        tests = ["pytest"]
        typing = ["mypy"]
        dev = ["both[tests,typing]", "tox", "twine"]
        [dependency-groups]
        dev = ["ruff"]
        docs = ["sphinx"]
        """})
    assert extras(both, pyproject(both)) == ["tests"]
    text = " ".join(recipe(both, "pytest").script)
    assert "'.[tests]'" in text and "ruff" not in text and "sphinx" not in text
    only_dev = write(tmp_path / "dev", {"pyproject.toml": """
        [project]
        name = "dev"
        version = "1"
        [project.optional-dependencies]
        dev = ["pytest"]
        docs = ["sphinx"]
        [dependency-groups]
        dev = ["hypothesis"]
        lint = ["ruff"]
        [tool.pdm.dev-dependencies]
        dev = ["freezegun"]
        lint = ["black"]
        """})
    data = pyproject(only_dev)
    assert extras(only_dev, data) == ["dev"] and wanted_names(only_dev, data) == ("dev",)
    assert dependency_groups(data, ("dev",)) == ["hypothesis"] and pdm_groups(data, ("dev",)) == ["freezegun"]
    text = " ".join(recipe(only_dev, "pytest").script)
    assert "'.[dev]'" in text and "hypothesis" in text and "freezegun" in text
    assert "ruff" not in text and "black" not in text and "sphinx" not in text


def test_requirements_files_named_for_tests_are_preferred_over_dev_docs_and_lint(tmp_path):
    names = ["requirements.txt", "requirements-dev.txt", "requirements-test.txt", "requirements-docs.txt",
             "requirements/lint.txt", "requirements/base.txt", "requirements/tests.txt", "requirements/typing.txt"]
    write(tmp_path / "a", {n: "x\n" for n in names})
    assert requirement_files(tmp_path / "a") == ["requirements-test.txt", "requirements.txt",
                                                 "requirements/base.txt", "requirements/tests.txt"]
    write(tmp_path / "b", {n: "x\n" for n in ["requirements.txt", "dev-requirements.txt", "requirements-docs.txt",
                                               "requirements/lint.txt"]})
    assert requirement_files(tmp_path / "b") == ["dev-requirements.txt", "requirements.txt"]
    write(tmp_path / "c", {n: "x\n" for n in ["requirements/py3.txt", "requirements/docs.txt"]})
    assert requirement_files(tmp_path / "c") == ["requirements/py3.txt"]  # nothing named either way: all but docs


def test_the_newest_interpreter_satisfying_requires_python_is_chosen():
    found = (("3.13.0", "/p/3.13"), ("3.12.1", "/p/3.12"), ("3.11.7", "/p/3.11"), ("3.9.18", "/p/3.9"))
    where = "pyproject.toml's requires-python"
    assert choose_interpreter((">=3.9", where), found) == ("3.13.0", "/p/3.13")
    assert choose_interpreter((">=3.9,<3.13", where), found) == ("3.12.1", "/p/3.12")
    assert choose_interpreter(("~=3.10.0", where), (("3.10.2", "/p/3.10"), *found)) == ("3.10.2", "/p/3.10")
    with pytest.raises(GreenloopError) as caught:
        choose_interpreter((">=3.14", where), found)
    assert caught.value.kind is ErrorKind.SETUP_FAILED and ">=3.14" in caught.value.message
    assert "3.13.0 (/p/3.13)" in caught.value.message and "requires-python" in caught.value.message
    with pytest.raises(GreenloopError) as caught:
        choose_interpreter(("python3", where), found)
    assert caught.value.kind is ErrorKind.SETUP_FAILED and "not a valid version specifier" in caught.value.message


def test_the_python_constraint_is_read_from_each_manifest(tmp_path):
    assert requires_python(tmp_path, {"project": {"requires-python": ">=3.9"}}) == (
        ">=3.9", "pyproject.toml's requires-python")
    poetry = {"tool": {"poetry": {"dependencies": {"python": "^3.8"}}}}
    assert requires_python(tmp_path, poetry)[0] == ">=3.8,<4"
    write(tmp_path, {"setup.cfg": "[options]\npython_requires = >=3.7\n"})
    assert requires_python(tmp_path, {}) == (">=3.7", "setup.cfg's python_requires")


async def test_the_virtualenv_is_made_with_the_interpreter_requires_python_picks(home, tmp_path):
    # Pinned to the oldest interpreter found here (newer ones exist on most workers): the venv has exactly it.
    oldest, path = interpreters()[-1]
    ws = git_init(write(tmp_path / "pinned", {
        "pyproject.toml": f"""
            [project]
            name = "pinned"
            version = "1"
            requires-python = "=={oldest}"
            [build-system]
            requires = ["setuptools>=61"]
            build-backend = "setuptools.build_meta"
            """,
        "pinned.py": "",
        "tests/test_version.py": f"""
            import sys


            def test_version():
                assert "%d.%d.%d" % sys.version_info[:3] == "{oldest}"
            """,
    }))
    environment, statuses = await _green(ws, tmp_path)
    assert f"Python {oldest}" in environment.reason and f"=={oldest}" in environment.reason
    assert statuses == {"tests/test_version.py::test_version": Status.PASSED}


async def test_no_interpreter_satisfying_requires_python_is_setup_failed_naming_what_was_found(home, tmp_path):
    ws = git_init(write(tmp_path / "future", {
        "pyproject.toml": '[project]\nname = "future"\nversion = "1"\nrequires-python = ">=4"\n',
        "tests/test_x.py": "def test_x():\n    pass\n",
    }))
    with pytest.raises(GreenloopError) as caught:
        await set_up(ws, "python", "pytest", SETTINGS, tmp_path / "setup")
    err = caught.value
    assert err.kind is ErrorKind.SETUP_FAILED and "`>=4`" in err.message
    assert all(v in err.message for v, _ in interpreters())
