"""Test impact: which tests ran which of the project's files, from per-test coverage.

Where a framework can say it cheaply, the run's second suite run (the one that
looks for flaky tests, in queue mode) also measures coverage per test: for
every source file, the tests that executed it, at no extra suite run.
The validation queue uses it to pick the tests a batch's quick check runs
beside the fixes' own tests, and to order a failing batch's bisection (the
fixes whose files the regressing tests ran are judged last, on top of the
others). The batch's full-suite run stays the gate: impact only makes a
failure found sooner and its culprit found in fewer runs.

pytest: coverage.py (installed in the project's environment by the setup
phase) switched to one context per test by a small plugin Greenloop writes
into ``.greenloop/`` and loads through ``PYTEST_ADDOPTS``; each pytest process
(xdist workers too) writes ``{file: [test ids]}`` as JSON. A suite that
measures its own coverage (pytest-cov) is left alone: no impact. Other
frameworks have no per-test coverage that is cheap to get (istanbul/c8 and
``go test -cover`` measure per process or per package): no impact for them
(JavaScript's per-test-file V8 coverage, ``runner/v8_coverage.py``, and Go's per-test runs of a
sample of tests, ``runner/go_coverage.py``, feed fault localization only: a sample cannot say which
tests never run a file).

A file that no test ran is "unknown", never "touches nothing": an edit to it
(a new file, configuration, data, code run only at import) could matter to
any test, so a candidate with such a file has no impact set.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pydantic import BaseModel, Field

IMPACT_DIR = ".greenloop/impact"
PLUGIN = "greenloop_impact"
PLUGIN_SOURCE = '''"""Greenloop (runner/impact.py): per-test coverage contexts, written as {file: [test ids]}
and {file: {test id: [lines]}}."""
import json
import os

_cov = None


def pytest_configure(config):
    global _cov
    try:
        import coverage
    except ImportError:
        return
    if coverage.Coverage.current() is not None:  # the suite measures its own coverage: leave it alone
        return
    _cov = coverage.Coverage(data_file=None, branch=False, config_file=False)
    _cov.start()


def pytest_runtest_setup(item):
    if _cov is not None:
        _cov.switch_context(item.nodeid)


def pytest_unconfigure(config):
    if _cov is None:
        return
    _cov.stop()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this file is <root>/.greenloop/
    data = _cov.get_data()
    files = {}
    lines = {}
    for path in data.measured_files():
        rel = os.path.relpath(path, root)
        if rel.startswith("..") or "site-packages" in rel or rel.startswith((".greenloop", ".venv")):
            continue
        by_test = {}
        for lineno, contexts in data.contexts_by_lineno(path).items():
            for c in contexts:
                if c:
                    by_test.setdefault(c, []).append(lineno)
        if by_test:
            rel = rel.replace(os.sep, "/")
            files[rel] = sorted(by_test)
            lines[rel] = {t: sorted(n) for t, n in by_test.items()}
    out = os.path.join(root, ".greenloop", "impact")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "impact-%d.json" % os.getpid()), "w") as f:
        json.dump(files, f)
    with open(os.path.join(out, "lines-%d.json" % os.getpid()), "w") as f:
        json.dump(lines, f)
'''
FRAMEWORKS = ("pytest",)


class ImpactMap(BaseModel):
    """For each source file (relative to the workspace), the tests that ran it."""

    files: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def tests(self) -> set[str]:
        return {t for ids in self.files.values() for t in ids}

    def impacted(self, files: list[str]) -> set[str] | None:
        """The tests that ran any of ``files``; None when one of them no test ran (unknown)."""
        out: set[str] = set()
        for f in files:
            if f not in self.files:
                return None
            out.update(self.files[f])
        return out


def supported(framework: str) -> bool:
    return framework in FRAMEWORKS


def prepare(workspace: Path) -> None:
    """Write the plugin into the workspace's ``.greenloop/`` (Greenloop's own folder there), with no
    earlier run's map left."""
    clear(workspace)
    folder = workspace / ".greenloop"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)


def clear(workspace: Path) -> None:
    """Remove what a run with the plugin left in the workspace."""
    shutil.rmtree(workspace / IMPACT_DIR, ignore_errors=True)
    (workspace / ".greenloop" / f"{PLUGIN}.py").unlink(missing_ok=True)


def command(test_command: str) -> str:
    """The suite's own command with the plugin loaded into every pytest it starts."""
    return ('PYTHONPATH="$PWD/.greenloop${PYTHONPATH:+:$PYTHONPATH}" '
            f'PYTEST_ADDOPTS="-p {PLUGIN}${{PYTEST_ADDOPTS:+ $PYTEST_ADDOPTS}}" {test_command}')


def collect(workspace: Path, known: set[str]) -> ImpactMap:
    """The map the run's pytest processes wrote, restricted to test ids the suite's report knows."""
    files: dict[str, set[str]] = {}
    for part in sorted((workspace / IMPACT_DIR).glob("impact-*.json")):
        try:
            data = json.loads(part.read_text())
        except (OSError, ValueError):
            continue
        for file, tests in data.items() if isinstance(data, dict) else ():
            files.setdefault(str(file), set()).update(str(t) for t in tests if str(t) in known)
    return ImpactMap(files={f: sorted(t) for f, t in sorted(files.items()) if t})


def collect_lines(workspace: Path, known: set[str]) -> dict[str, dict[str, list[int]]]:
    """The lines each test ran, per file (the spectrum fault localization reads), restricted to
    test ids the suite's report knows."""
    files: dict[str, dict[str, set[int]]] = {}
    for part in sorted((workspace / IMPACT_DIR).glob("lines-*.json")):
        try:
            data = json.loads(part.read_text())
        except (OSError, ValueError):
            continue
        for file, by_test in data.items() if isinstance(data, dict) else ():
            if not isinstance(by_test, dict):
                continue
            into = files.setdefault(str(file), {})
            for test, lines in by_test.items():
                if str(test) in known and isinstance(lines, list):
                    into.setdefault(str(test), set()).update(int(n) for n in lines if isinstance(n, int))
    return {f: {t: sorted(n) for t, n in sorted(by.items())} for f, by in sorted(files.items()) if by}


def load(path: str | None) -> ImpactMap | None:
    """A map written by a run (``activities/impact.py``); None when there is none, or it is
    gone (the run moved to another worker: that worker checks without one)."""
    if not path or not Path(path).is_file():
        return None
    try:
        return ImpactMap.model_validate_json(Path(path).read_text())
    except ValueError:
        return None
