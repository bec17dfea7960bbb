"""A user's own test command, run for real in the sandbox: the single-test
run keeps its flags (here pytest's ``-p no:cacheprovider -q``) and swaps its
paths for the test's id, so the test is found in the output of its run
alone (it used to be ``python -m pytest <id>``, whose output differed)."""

from __future__ import annotations

from greenloop.parsers.models import Status
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.runner.select import single_test_command
from greenloop.sandbox.models import SandboxSettings
from tests.live.conftest import require, sandbox_backend

COMMAND = "python -m pytest -p no:cacheprovider -q tests"


async def test_a_custom_pytest_command_selects_one_test_with_its_own_flags(tmp_path):
    require(*(("bwrap",) if sandbox_backend() in ("bwrap", "auto") else ()))
    ws = tmp_path / "project"
    (ws / "tests").mkdir(parents=True)
    (ws / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n"
        "def test_zero():\n    assert add(4, 0) == 4\n")
    (ws / "conftest.py").write_text("")
    settings = SandboxSettings(backend=sandbox_backend(), timeout_s=120, network=False)
    plan = plan_tests(ws, test_command=COMMAND)
    assert (plan.framework, plan.default_command) == ("pytest", False)

    suite = await run_tests(plan, ws, tmp_path / "suite", settings)
    failing = suite.report.find("tests/test_calc.py::test_add")
    assert failing is not None and failing.status == Status.FAILED, suite.artifacts

    command = single_test_command(plan, failing)
    assert command == "python -m pytest -p no:cacheprovider -q tests/test_calc.py::test_add"
    alone = await run_tests(plan, ws, tmp_path / "alone", settings, command=command)
    assert [(t.id, t.status) for t in alone.report.tests] == [("tests/test_calc.py::test_add", Status.FAILED)]
    assert not (ws / ".pytest_cache").exists()  # the user's -p no:cacheprovider was kept

    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    fixed = await run_tests(plan, ws, tmp_path / "fixed", settings, command=command)
    assert fixed.report.find("tests/test_calc.py::test_add").status == Status.PASSED
