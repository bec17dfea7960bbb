"""Test impact (runner/impact.py): the plugin Greenloop loads into the project's own
pytest records which tests ran which files, with the real pytest and coverage.py
(also under xdist, whose workers each write their part); the map's rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from greenloop.runner import impact
from greenloop.runner.impact import ImpactMap

ADD = "tests/test_calc.py::test_add"
MUL = "tests/test_calc.py::test_mul"
NEG = "tests/test_calc.py::TestNeg::test_neg[1]"


def project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n")
    (root / "other.py").write_text("LIMIT = 3  # read at import only\n\n\ndef neg(a):\n    return -a\n")
    (root / "tests" / "test_calc.py").write_text(
        "import pytest\n\nimport calc\nimport other\n\n\n"
        "def test_add():\n    assert calc.add(1, 2) == 3\n\n\n"
        "def test_mul():\n    assert calc.mul(2, 2) == 4\n\n\n"
        "class TestNeg:\n    @pytest.mark.parametrize('x', [1])\n    def test_neg(self, x):\n"
        "        assert other.neg(x) == -x\n")
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    impact.prepare(root)
    command = impact.command(f"{sys.executable} -m pytest -q -p no:cacheprovider {' '.join(args)} tests")
    return subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_the_plugin_maps_each_file_to_the_tests_that_ran_it(tmp_path, args):
    root = project(tmp_path / "p")
    done = run(root, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    found = impact.collect(root, {ADD, MUL, NEG})
    assert found.files["calc.py"] == [ADD, MUL]
    assert found.files["other.py"] == [NEG]
    assert sorted(found.files["tests/test_calc.py"]) == sorted([ADD, MUL, NEG])
    assert not any(f.startswith(".greenloop") for f in found.files)
    # The run's output is the suite's own: the plugin prints nothing.
    assert "3 passed" in done.stdout and "greenloop" not in done.stdout + done.stderr


def test_only_ids_the_report_knows_are_kept(tmp_path):
    root = project(tmp_path / "p")
    assert run(root).returncode == 0
    found = impact.collect(root, {ADD})
    assert found.files == {"calc.py": [ADD], "tests/test_calc.py": [ADD]}


def test_a_suite_without_coverage_py_gives_no_map(tmp_path):
    root = project(tmp_path / "p")
    # An interpreter where coverage cannot be imported: the plugin stays silent, the suite still runs.
    (root / "coverage.py").write_text("raise ImportError('no coverage here')\n")
    done = run(root)
    assert done.returncode == 0 and "3 passed" in done.stdout
    assert impact.collect(root, {ADD, MUL, NEG}).files == {}


def test_impacted_is_the_union_and_unknown_for_a_file_no_test_ran():
    found = ImpactMap(files={"calc.py": [ADD, MUL], "other.py": [NEG]})
    assert found.impacted(["calc.py"]) == {ADD, MUL}
    assert found.impacted(["calc.py", "other.py"]) == {ADD, MUL, NEG}
    assert found.impacted([]) == set()
    # A file no test ran (new, configuration, run only at import) could matter to any test.
    assert found.impacted(["calc.py", "setup.cfg"]) is None
    assert found.tests == {ADD, MUL, NEG}


def test_a_map_that_is_gone_or_broken_is_none(tmp_path):
    assert impact.load(None) is None
    assert impact.load(str(tmp_path / "missing.json")) is None
    (tmp_path / "bad.json").write_text("{not json")
    assert impact.load(str(tmp_path / "bad.json")) is None
    good = ImpactMap(files={"a.py": ["t"]})
    (tmp_path / "good.json").write_text(good.model_dump_json())
    assert impact.load(str(tmp_path / "good.json")) == good


def test_a_suite_that_measures_its_own_coverage_is_left_alone(tmp_path):
    root = project(tmp_path / "p")
    # As pytest-cov does: the suite's own coverage is running before the plugin is configured.
    (root / "conftest.py").write_text(
        "import coverage\n\nmine = coverage.Coverage(data_file='.own-coverage')\nmine.start()\n\n\n"
        "def pytest_unconfigure(config):\n    mine.stop()\n    mine.save()\n")
    done = run(root)
    assert done.returncode == 0 and "3 passed" in done.stdout
    assert impact.collect(root, {ADD, MUL, NEG}).files == {}
    assert (root / ".own-coverage").is_file()  # its data is its own, written as it asked


def test_prepare_and_clear_leave_nothing_of_an_earlier_run(tmp_path):
    root = project(tmp_path / "p")
    assert run(root).returncode == 0 and impact.collect(root, {ADD}).files
    impact.clear(root)
    assert not (root / impact.IMPACT_DIR).exists() and not (root / ".greenloop" / f"{impact.PLUGIN}.py").exists()
