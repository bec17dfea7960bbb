"""pytest readings merged by the normalizer's rule: a test whose teardown
errors after its call passed is one ``errored`` entry, whether it is read from
the console, from JUnit XML (where pytest writes a second ``<testcase>`` for
the teardown error) or from both, and the summary line ("1 failed, 1 passed,
1 error") checks out against the entries without a warning.

The outputs come from running the real pytest on a small project."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers import parse
from greenloop.parsers.models import Status
from tests.parsers.helpers import write_files
from tests.parsers.test_pytest_module_skip import run_pytest

SOURCE = (
    "import pytest\n\n\n"
    "@pytest.fixture\ndef conn():\n    yield 1\n    raise RuntimeError('close failed')\n\n\n"
    "def test_query(conn):\n    assert conn == 1\n\n\n"
    "def test_math():\n    assert 1 + 1 == 3\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("teardown"), {"tests/test_db.py": SOURCE})


@pytest.mark.parametrize("args", ["-rA", "-v", "-q", "--junitxml=reports/junit.xml", "-rA --junitxml=reports/j.xml"])
def test_teardown_error_is_one_errored_entry_and_the_summary_agrees(project: Path, args: str) -> None:
    run = run_pytest(project, args)
    assert run.exit_code == 1, run.stdout_text
    report = parse(run, "pytest")
    got = {t.id: t.status for t in report.tests}
    assert got == {"tests/test_db.py::test_query": Status.ERRORED, "tests/test_db.py::test_math": Status.FAILED}, \
        (args, report.warnings)
    # the summary line is "1 failed, 1 passed, 1 error": the passed one is the test whose teardown errored
    assert report.summary_counts == {"failed": 1, "passed": 0}, args
    assert not any("summary counted" in w for w in report.warnings), report.warnings
    if "junit" in args:
        assert any(s.startswith("junit-xml:") for s in report.sources)
        assert "close failed" in (report.find("tests/test_db.py::test_query").message or "")
