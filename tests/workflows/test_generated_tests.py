"""Generated unittest tests that print one name, in a project that declares its suite in setup.py
(``test_suite``, a callable building it, as python3-openid's does): every test is counted, the
failing ones (numbered apart) are fixed, and a fix is validated by the whole suite alone, since
unittest cannot select one of them by name (it would build ``Vector('runTest')``, none of them).
On the real dev server with the real sandbox and the scripted LLM; the run replays."""

from __future__ import annotations

import json
from pathlib import Path

from tests.workflows.conftest import drive, fix_request, replays

NAME = "vectors.suite.Vector.runTest"
SUITE = '''import unittest

from vectors.core import double


class Vector(unittest.TestCase):
    """Generated: one per value, all printing the name runTest (vectors.suite.Vector.runTest)."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def runTest(self):
        self.assertEqual(double(self.n), self.n + self.n)


def test_suite():
    return unittest.TestSuite(Vector(n) for n in range(5))
'''


def make_project(root: Path) -> None:
    (root / "vectors").mkdir(parents=True)
    (root / "vectors" / "__init__.py").write_text("")
    # The bug: values above 2 are tripled.
    (root / "vectors" / "core.py").write_text("def double(n):\n    return n * 3 if n > 2 else n * 2  # bug\n")
    (root / "vectors" / "suite.py").write_text(SUITE)
    (root / "setup.py").write_text("from setuptools import setup\n\n"
                                   "setup(name='vectors', packages=['vectors'], test_suite='vectors.suite.test_suite')\n")


def events(path: Path, kind: str) -> list[dict]:
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["event_type"] == kind]


async def test_generated_tests_printing_one_name_are_fixed_and_validated_by_the_whole_suite(
        temporal_env, scripted, tmp_path):
    make_project(tmp_path / "p")
    scripted({"name": "generated", "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "double() triples values above 2."}},
        {"trigger": {"role": "fixer", "turn": 1, "context": "Vector\\.runTest"}, "response": {"tool_calls": [
            {"name": "replace_in_file", "input": {"path": "vectors/core.py",
                                                  "old_text": "return n * 3 if n > 2 else n * 2  # bug",
                                                  "new_text": "return n * 2"}}]}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "double() doubles every value."}},
    ], "default": {"text": "no script"}})
    request = fix_request(tmp_path / "p", tmp_path, validation="queue", concurrency=2)
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)

    assert summary.framework == "unittest"
    assert summary.state == "completed", summary.reason
    assert (summary.initial.passed, summary.initial.failed) == (3, 2)  # all five counted, not one
    assert sorted(summary.fixed) == [f"{NAME} [#4]", f"{NAME} [#5]"]
    assert summary.final.passed == 5 and summary.final.failed == 0 and not summary.escalated
    run_dir = Path(request.run_dir)
    plan = events(run_dir / "events.jsonl", "plan")[0]
    assert plan["test_command"] == "python -m unittest -v vectors.suite.test_suite"
    # The batch checks ran the suite and nothing "alone" (that run would have been the suite's too).
    checked = events(run_dir / "events.jsonl", "batch_checked")
    assert checked and all(c["suite_runs"] == 1 for c in checked) and checked[-1]["ok"]
    assert [e for p in run_dir.glob("batches/*/events.jsonl") for e in events(p, "single_run")] == []
