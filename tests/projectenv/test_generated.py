"""A git checkout lacks what the project's build generates into its sources (git ignores it):
the environment's build made it, and every workspace and worktree gets it. Real projects built
by real uv against PyPI (hatch-vcs, setuptools-scm, a setup.py writing a module), real sandbox."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from greenloop.parsers.models import Status
from greenloop.projectenv.setup import set_up
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.runner.readable import caveats
from greenloop.sandbox.models import SandboxSettings
from greenloop.workspace import worktree
from tests.projectenv.conftest import BACKEND, git_init, write

SETTINGS = SandboxSettings(backend=BACKEND, timeout_s=120)

TESTS = """
    import {pkg}
    from {pkg} import double


    def test_the_generated_module_imports():
        assert {check}


    def test_double():
        assert double(2) == 4
    """
CODE = "from .{module} import {name}\n\n\ndef double(x):\n    return x * 3  # the bug a fix would correct\n"

HATCH_VCS = {
    "pyproject.toml": """
        [build-system]
        requires = ["hatchling", "hatch-vcs"]
        build-backend = "hatchling.build"

        [project]
        name = "hvpkg"
        dynamic = ["version"]

        [project.optional-dependencies]
        test = ["pytest"]

        [tool.hatch.version]
        source = "vcs"

        [tool.hatch.build.hooks.vcs]
        version-file = "src/hvpkg/_version.py"
        """,
    ".gitignore": "src/*/_version.py\n__pycache__/\n",
    "src/hvpkg/__init__.py": CODE.format(module="_version", name="__version__"),
    "tests/test_hvpkg.py": TESTS.format(pkg="hvpkg", check="hvpkg.__version__"),
}
SETUPTOOLS_SCM = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64", "setuptools-scm>=8"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "scmpkg"
        dynamic = ["version"]

        [project.optional-dependencies]
        test = ["pytest"]

        [tool.setuptools_scm]
        version_file = "src/scmpkg/_version.py"
        """,
    ".gitignore": "/src/scmpkg/_version.py\n__pycache__/\n",
    "src/scmpkg/__init__.py": CODE.format(module="_version", name="version"),
    "tests/test_scmpkg.py": TESTS.format(pkg="scmpkg", check="scmpkg.version"),
}
# A setup.py that writes a module of the package when it runs (build information, as many do).
SETUP_PY = {
    "setup.py": """
        from pathlib import Path

        from setuptools import setup

        Path("stamped", "_build_info.py").write_text("BUILT_BY = 'setup.py'\\n")
        setup(name="stamped", version="1.0", packages=["stamped"], extras_require={"test": ["pytest"]})
        """,
    ".gitignore": "stamped/_build_info.py\n__pycache__/\n*.egg-info/\nbuild/\n",
    "stamped/__init__.py": CODE.format(module="_build_info", name="BUILT_BY"),
    "tests/test_stamped.py": TESTS.format(pkg="stamped", check="stamped.BUILT_BY == 'setup.py'"),
}
PROJECTS = {"hatch-vcs": (HATCH_VCS, "src/hvpkg/_version.py"),
            "setuptools-scm": (SETUPTOOLS_SCM, "src/scmpkg/_version.py"),
            "setup.py": (SETUP_PY, "stamped/_build_info.py")}


def _statuses(run) -> dict[str, Status]:
    return {t.id.rsplit("::", 1)[-1]: t.status for t in run.report.tests}


def _status(repo: Path) -> str:
    """What git sees changed, less the test run's reports (a run's workspace excludes ``.greenloop/``)."""
    out = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
                         capture_output=True, text=True, check=True).stdout
    return "".join(line for line in out.splitlines(keepends=True) if "/.greenloop/" not in f"/{line[3:]}")


@pytest.mark.parametrize("name", list(PROJECTS))
async def test_a_checkout_without_its_generated_file_gets_the_builds(name, home, tmp_path):
    files, made = PROJECTS[name]
    ws = git_init(write(tmp_path / "project", files))
    assert not (ws / made).exists()  # a checkout: git ignores the file, no clone has it
    plan = plan_tests(ws)
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS, tmp_path / "setup")
    assert environment.source == "built"
    assert list(environment.generated) == [made]
    plan = plan.model_copy(update={"environment": environment})

    run = await run_tests(plan, ws, tmp_path / "suite", SETTINGS)
    # The tests import the workspace's sources, generated module included: only the bug fails.
    assert _statuses(run) == {"test_the_generated_module_imports": Status.PASSED, "test_double": Status.FAILED}
    assert (ws / made).is_file() and _status(ws) == ""  # present, and still no change git sees

    # Another checkout of the commit (a clone, a later run's workspace) lacks it too, and gets it.
    tree = tmp_path / "trees" / "fix"
    subprocess.run(["git", "-C", str(ws), "worktree", "add", "-q", "--detach", str(tree)], check=True)
    assert not (tree / made).exists()
    code = next(tree.glob("**/__init__.py"))
    code.write_text(code.read_text().replace("x * 3", "x * 2"))
    fixed = await run_tests(plan, tree, tmp_path / "tree-suite", SETTINGS)
    assert _statuses(fixed) == {"test_the_generated_module_imports": Status.PASSED, "test_double": Status.PASSED}
    assert (tree / made).is_file() and not (tree / made).is_symlink()
    # A fix's worktree starts from the workspace's files, the generated one included.
    fix = tmp_path / "trees" / "fix-2"
    worktree.create(ws, fix)
    assert (fix / made).read_bytes() == (ws / made).read_bytes()


async def test_a_file_of_the_build_that_git_does_not_ignore_is_left_missing(home, tmp_path):
    # Missing and not ignored is the project's own business (a deleted file is a change to keep).
    files = {**SETUP_PY, ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\n"}
    ws = git_init(write(tmp_path / "project", files))
    (ws / "stamped" / "_build_info.py").unlink(missing_ok=True)
    plan = plan_tests(ws)
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS, tmp_path / "setup")
    assert environment.generated == {}
    run = await run_tests(plan.model_copy(update={"environment": environment}), ws, tmp_path / "suite", SETTINGS)
    assert not (ws / "stamped" / "_build_info.py").exists()
    assert not any(s == Status.PASSED for s in _statuses(run).values())


async def test_tests_that_cannot_import_a_generated_file_no_build_made_are_said_so(home, tmp_path):
    # The build does not write the version file (a script of the project's would): every test module
    # errors at import, and the report says why, not just that they errored.
    files = {**SETUPTOOLS_SCM, "pyproject.toml": SETUPTOOLS_SCM["pyproject.toml"].split("[tool.setuptools_scm]")[0]
             .replace('dynamic = ["version"]', 'version = "1.0"').replace(', "setuptools-scm>=8"', "")}
    ws = git_init(write(tmp_path / "project", files))
    plan = plan_tests(ws)
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS, tmp_path / "setup")
    assert environment.generated == {}
    run = await run_tests(plan.model_copy(update={"environment": environment}), ws, tmp_path / "suite", SETTINGS)
    assert run.report.totals.errored >= 1 and run.report.totals.passed == 0
    said = run.report.setup_explains or ""
    assert "cannot import scmpkg._version" in said and "src/scmpkg/_version.py is not in this checkout" in said
    assert said in caveats(run.report)  # what the run's summary and `greenloop doctor` show

    # A module simply missing (git does not ignore it) is the code's own problem: nothing is explained.
    (ws / ".gitignore").write_text("__pycache__/\n")
    run = await run_tests(plan.model_copy(update={"environment": environment}), ws, tmp_path / "again", SETTINGS)
    assert run.report.totals.errored >= 1 and run.report.setup_explains is None
