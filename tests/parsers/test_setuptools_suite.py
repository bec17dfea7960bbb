"""The test suite a setuptools project declares (``test_suite``), read without running setup.py,
and the ``python -m unittest`` call that runs it: a callable's suite, a module, a package's modules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from greenloop.parsers import RunOutput, parse
from greenloop.parsers.detect import from_project
from greenloop.parsers.setuptools_suite import DeclaredSuite, command, declared
from tests.parsers.helpers import write_files

SETUP_KEYWORD = 'from setuptools import setup\nsetup(name="p", packages=["p"], test_suite="p.test.test_suite")\n'
# As idna 3.3 declares it: a key of the dict literal setup() is given as **arguments, inside a function.
SETUP_SPLAT = '''import sys
from setuptools import setup


def main():
    arguments = {
        'name': 'p',
        'test_suite': 'tests',
    }
    setup(**arguments)


if __name__ == '__main__':
    main()
'''


@pytest.mark.parametrize("files, name, source", [
    ({"setup.py": SETUP_KEYWORD}, "p.test.test_suite", "setup.py"),
    ({"setup.py": SETUP_SPLAT}, "tests", "setup.py"),
    ({"setup.py": "import setuptools\nsetuptools.setup(**dict(name='p', test_suite='p.tests'))\n"}, "p.tests",
     "setup.py"),
    ({"setup.py": "from setuptools import setup\nsetup()\n",
      "setup.cfg": "[metadata]\nname = p\n\n[options]\npackages = find:\ntest_suite = p.tests.suite\n"},
     "p.tests.suite", "setup.cfg"),
])
def test_the_declared_suite_is_read_without_running_setup_py(tmp_path, files, name, source):
    # setup.py would fail if it were run: its only reading is the syntax tree's.
    write_files(tmp_path, {**files, "p/__init__.py": ""})
    (tmp_path / "setup.py").write_text("raise SystemExit('never run')\n" + files["setup.py"])
    assert declared(tmp_path) == DeclaredSuite(name=name, source=source)


@pytest.mark.parametrize("files", [
    {"setup.py": "from setuptools import setup\nsetup(name='p')\n"},                          # none declared
    {"setup.py": "from setuptools import setup\nsetup(test_suite=SUITE)\n"},                  # not a literal
    {"setup.py": "def broken(:\n"},                                                          # not Python
    {"setup.py": "from setuptools import setup\nsetup(test_suite='nose.collector')\n"},        # nose's collector
    {"setup.py": "from setuptools import setup\nsetup(test_suite='tests', tests_require=['pytest'])\n"},
    {"setup.py": "from setuptools import setup\nsetup(test_suite='tests')\n",
     "tox.ini": "[testenv]\ncommands = pytest {posargs}\n"},                                  # run under pytest
    {"setup.py": "from setuptools import setup\nsetup(test_suite='tests; rm -rf /')\n"},       # not a dotted name
])
def test_no_suite_is_honoured_when_none_is_declared_or_the_project_runs_another_runner(tmp_path, files):
    write_files(tmp_path, files)
    assert declared(tmp_path) is None


def test_a_declared_suite_makes_the_project_a_unittest_one_unless_pytest_is_configured(tmp_path):
    write_files(tmp_path, {"setup.py": SETUP_SPLAT, "tests/__init__.py": "", "tests/test_a.py": "import unittest\n"})
    found = from_project(tmp_path)
    assert found is not None and (found.framework, found.confidence) == ("unittest", "high")
    assert "test_suite 'tests' declared in setup.py" in found.reason
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    found = from_project(tmp_path)
    assert found is not None and found.framework == "pytest"


@pytest.mark.parametrize("files, name, expected", [
    ({"tests/__init__.py": ""}, "tests", "python -m unittest discover -v -s tests -t ."),
    ({"src/p/__init__.py": "", "src/p/tests/__init__.py": ""}, "p.tests",
     "python -m unittest discover -v -s src/p/tests -t src"),
    ({"checks/test_a.py": ""}, "checks", "python -m unittest discover -v -s checks"),  # no __init__.py
    ({"p/__init__.py": "", "p/test/__init__.py": ""}, "p.test.test_suite", "python -m unittest -v p.test.test_suite"),
    ({"p/__init__.py": "", "p/tests.py": ""}, "p.tests", "python -m unittest -v p.tests"),
    ({}, "missing.suite", "python -m unittest -v missing.suite"),
])
def test_the_command_loads_a_name_and_discovers_a_package(tmp_path, files, name, expected):
    write_files(tmp_path, files)
    assert command(tmp_path, DeclaredSuite(name=name, source="setup.py")) == expected


# A suite built by a callable, as python3-openid's openid.test.test_suite() builds its own: two
# generated tests print one name. setup.py declares it; unittest's loader calls what it is named.
SUITE = '''import unittest


class Vector(unittest.TestCase):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def runTest(self):
        self.assertLess(self.n, 3)


class Plain(unittest.TestCase):
    def test_plain(self):
        pass


def test_suite():
    suite = unittest.TestSuite(Vector(n) for n in range(4))
    suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(Plain))
    return suite
'''


def test_a_declared_callable_runs_its_suite_and_every_test_is_counted(tmp_path):
    write_files(tmp_path, {"setup.py": SETUP_KEYWORD, "p/__init__.py": "", "p/test/__init__.py": SUITE})
    suite = declared(tmp_path)
    assert suite is not None
    cmd = command(tmp_path, suite)
    done = subprocess.run([sys.executable, *cmd.split()[1:]], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert "Ran 5 tests" in done.stderr and "failures=1" in done.stderr
    report = parse(RunOutput(command=cmd, exit_code=done.returncode, stdout_text=done.stdout,
                             stderr_text=done.stderr, cwd=tmp_path), "unittest")
    assert report.totals.total == 5 and report.totals.failed == 1 and report.miscount is None
    failed = [t for t in report.tests if t.status == "failed"]
    assert [(t.id, t.printed) for t in failed] == [("p.test.Vector.runTest [#4]", "p.test.Vector.runTest")]
