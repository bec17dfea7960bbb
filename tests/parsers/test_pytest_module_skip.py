"""pytest: a module skipped at import time is one ``skipped`` entry named by
the module's path, whatever the output variant.

The outputs come from running the real pytest (the one running these tests)
on a small project in a temp directory: ``pytest.skip(..., allow_module_level=True)``
and ``pytest.importorskip`` of a missing module, beside a passing and a failing test.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from greenloop.parsers import parse
from greenloop.parsers.models import Status
from tests.parsers.helpers import run_pytest, write_files

CORE = "def test_ok():\n    assert 1 + 1 == 2\n\n\ndef test_bad():\n    assert 1 + 1 == 3\n"
MODULE_SKIP = (
    "import pytest\n\n"
    "pytest.skip('database not configured', allow_module_level=True)\n\n\n"
    "def test_never():\n    assert False\n"
)
IMPORT_SKIP = (
    "import pytest\n\n"
    "yaml_lib = pytest.importorskip('no_such_yaml_lib')\n\n\n"
    "def test_load():\n    assert yaml_lib\n"
)
EXPECTED = {
    "tests/test_core.py::test_ok": Status.PASSED,
    "tests/test_core.py::test_bad": Status.FAILED,
    "tests/test_importskip.py": Status.SKIPPED,
    "tests/test_modskip.py": Status.SKIPPED,
}
REASONS = {
    "tests/test_importskip.py": "could not import 'no_such_yaml_lib'",
    "tests/test_modskip.py": "database not configured",
}


# import-time code that could skip but does not (json exists), and a skip at run time
MAYBE_NOT = (
    "import sys\n\nimport pytest\n\n"
    "json_lib = pytest.importorskip('json')\n\n"
    "if sys.version_info < (3, 0):\n    pytest.skip('python 2 only', allow_module_level=True)\n\n\n"
    "def test_dumps():\n    assert json_lib.dumps(1) == '1'\n\n\n"
    "def test_runtime_skip():\n    pytest.skip('not today')\n"
)
# a conditional skip that fires
MAYBE_YES = (
    "import pytest\n\n"
    "try:\n    import no_such_driver  # noqa: F401\n"
    "except ImportError:\n    pytest.skip('driver missing', allow_module_level=True)\n\n\n"
    "def test_drive():\n    assert True\n"
)
BROKEN = "from no_such_pkg import thing\n\n\ndef test_thing():\n    assert thing\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("modskip"), {
        "tests/test_core.py": CORE,
        "tests/test_modskip.py": MODULE_SKIP,
        "tests/test_importskip.py": IMPORT_SKIP,
    })


@pytest.fixture(scope="module")
def conditional(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("condskip"), {
        "tests/test_a.py": MAYBE_NOT,
        "tests/test_b.py": MAYBE_YES,
    })


@pytest.fixture(scope="module")
def with_import_error(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("skiperr"), {
        "tests/test_b.py": MAYBE_YES,
        "tests/test_c.py": BROKEN,
    })


VARIANTS = ["", "-q", "-v", "-vv", "-rA", "-rs", "-q -rs", "-q --tb=line", "-rA -v",
            "--junitxml=reports/junit.xml", "-o junit_family=xunit1 --junitxml=reports/junit1.xml"]
# the plugins the corpus used (dev dependencies); under CI a missing one fails its variants
if importlib.util.find_spec("pytest_jsonreport") is not None or os.environ.get("CI") == "true":
    VARIANTS.append("-q --json-report --json-report-file=reports/report.json")
if importlib.util.find_spec("xdist") is not None or os.environ.get("CI") == "true":
    VARIANTS += ["-n 2 -rA", "-n 2 -q --junitxml=reports/junit-xdist.xml"]


@pytest.mark.parametrize("args", VARIANTS)
@pytest.mark.parametrize("detect", [False, True])
def test_module_skipped_at_import_is_one_skipped_entry(project: Path, args: str, detect: bool) -> None:
    run = run_pytest(project, args)
    assert run.exit_code == 1, run.stdout_text
    report = parse(run, None if detect else "pytest")
    assert report.framework == "pytest"
    got = {t.id: t.status for t in report.tests}
    assert got == EXPECTED, (args, report.warnings, run.stdout_text)
    for tid, reason in REASONS.items():
        test = report.find(tid)
        assert test is not None and test.file == tid and test.line is None
        # the reason is printed only where pytest prints skip reasons
        if "-rs" in args or "-rA" in args or "junit" in args or "json" in args:
            assert test.message and reason in test.message, (args, test)
    assert report.totals.skipped == 2 and not report.build_error


CONSOLE = ["", "-q", "-v", "-rA", "-q -rs"]
REPORTS = ["--junitxml=reports/junit.xml", *[v for v in VARIANTS if "json" in v]]


@pytest.mark.parametrize("args", CONSOLE + REPORTS)
def test_which_conditional_skip_fired_is_solved_from_the_counts(conditional: Path, args: str) -> None:
    run = run_pytest(conditional, args)
    assert run.exit_code == 0, run.stdout_text
    report = parse(run, "pytest")
    assert {t.id: t.status for t in report.tests} == {
        "tests/test_a.py::test_dumps": Status.PASSED,
        "tests/test_a.py::test_runtime_skip": Status.SKIPPED,
        "tests/test_b.py": Status.SKIPPED,
    }, (args, report.warnings, run.stdout_text)
    assert not report.warnings


@pytest.mark.parametrize("args", CONSOLE + REPORTS)
def test_module_skip_beside_a_collection_error(with_import_error: Path, args: str) -> None:
    run = run_pytest(with_import_error, args)
    assert run.exit_code == 2, run.stdout_text
    report = parse(run, "pytest")
    assert {t.id: t.status for t in report.tests} == {
        "tests/test_b.py": Status.SKIPPED,
        "tests/test_c.py": Status.ERRORED,
    }, (args, report.warnings, run.stdout_text)
    assert report.build_error
