"""What the Python recipe installs, from each kind of manifest, built for real
(uv against PyPI in the sandbox) where it matters."""

from __future__ import annotations

import subprocess

from greenloop.parsers.models import Status
from greenloop.projectenv.python import (
    dependency_groups,
    extras,
    import_roots,
    poetry_constraint,
    poetry_groups,
    pyproject,
    recipe,
    uv_binary,
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
    assert extras(ws, {}) == ["dev", "testing"]
    assert import_roots(ws, {}) == ["lib"]
    assert "'.[dev,testing]'" in " ".join(recipe(ws, "pytest").script)
    write(ws, {"tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ndeps =\n    pytest>=7  # the runner\n"
                          "    -rtest-reqs.txt\n    {env:EXTRA:}\n    py38: mock\ncommands = pytest\n",
               "test-reqs.txt": "freezegun\n"})
    script = " ".join(recipe(ws, "pytest").script)
    assert "'pytest>=7'" in script and "-r test-reqs.txt" in script and "mock" not in script
    poetry = {"tool": {"poetry": {"group": {"test": {"dependencies": {
        "pytest": "^7.2", "freezegun": {"version": "~1.2.1", "extras": ["x"]}, "local": {"path": "../local"}}}},
        "dev-dependencies": {"python": "^3.8", "black": "*", "mock": "0.4"}}}}
    assert sorted(poetry_groups(poetry)) == ["black", "freezegun[x]>=1.2.1,<1.3", "mock==0.4", "pytest>=7.2,<8"]
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
