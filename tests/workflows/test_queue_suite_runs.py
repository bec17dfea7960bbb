"""How many times the validation queue runs the suite: a batch's own tests are judged
from its full-suite run (one runner invocation when its fixes work), a fix that does
not work is still told apart by its test run alone, and the final verdict reuses the
last accepted batch's suite run when it ran on exactly the final files (and runs the
suite again when anything differs). Real dev server, bwrap, the scripted LLM."""

from __future__ import annotations

import subprocess
from pathlib import Path

from temporalio.testing import ActivityEnvironment

from greenloop.activities.testing import SuiteInput, execute_suite, run_suite
from greenloop.domain.states import Verdict
from greenloop.domain.workspace import Workspace
from greenloop.runner.plan import plan_tests
from greenloop.sandbox.models import SandboxSettings
from greenloop.workspace.worktree import content_tree
from tests.workflows.conftest import BACKEND
from tests.workflows.test_merge_queue import events, fix_call, make_project, queue_run, results, scenario, tid, verdicts

SANDBOX = SandboxSettings(backend=BACKEND, timeout_s=120)


def runs_in(run_dir: Path) -> list[str]:
    """Every sandboxed runner invocation of the run: its artifacts' folders (the run's own and the batches')."""
    return sorted(p.name for p in [*run_dir.glob("runs/*"), *run_dir.glob("batches/*/runs/*")] if p.is_dir())


async def test_a_batch_that_passes_runs_the_suite_once_and_the_final_verdict_reuses_it(
        temporal_env, scripted, tmp_path):
    failing = make_project(tmp_path / "p", 4)
    scripted(scenario(4))
    summary, run_dir = await queue_run(temporal_env, tmp_path)
    assert summary.state == "completed" and sorted(summary.fixed) == failing and summary.final.failed == 0
    checks = events(run_dir, "batch_checked")
    assert checks and all(c["ok"] for c in checks)
    # Each batch: one full-suite run, which judged its own tests; no separate invocation for them.
    assert all(c["suite_runs"] == 1 and c["single_runs"] == 0 for c in checks), checks
    invocations = runs_in(run_dir)
    assert not [r for r in invocations if "single" in r], invocations
    assert len([r for r in invocations if r.startswith("validate-batch-suite")]) == len(checks)
    # The last accepted batch ran on exactly the final files: the final verdict is that run, said so.
    assert not (run_dir / "runs" / "final-1").exists(), invocations
    [reused] = events(run_dir, "suite_run_reused")
    assert reused["label"] == "final" and reused["earlier"] == "validate-batch-suite"
    assert any(n.startswith("the final verdict is the suite run validate-batch-suite") for n in summary.notes)
    assert "the final verdict is the suite run validate-batch-suite" in Path(summary.report_html).read_text()
    assert summary.final.passed == 5 and summary.initial.failed == 4  # counted as a final run: against the first


async def test_a_fix_that_does_not_work_is_judged_by_its_test_run_alone(temporal_env, scripted, tmp_path):
    failing = make_project(tmp_path / "p", 3)
    sc = scenario(3)
    wrong = {"name": "replace_in_file", "input": {"path": "calc/m01.py", "old_text": "return 0  # bug",
                                                  "new_text": "return 7"}}
    sc["rules"].insert(0, {"priority": 10, "trigger": {"role": "fixer", "turn": 1, "context": "::test_value_01$",
                                                       "iteration": 1},
                           "response": {"tool_calls": [wrong]}})
    scripted(sc)
    summary, run_dir = await queue_run(temporal_env, tmp_path, concurrency=3)
    assert summary.state == "completed" and sorted(summary.fixed) == failing and summary.final.failed == 0
    by_test = results(run_dir)
    assert verdicts(by_test[tid(1)]) == [Verdict.FAIL.value, Verdict.PASS.value]
    # Its failure is the test's own, run alone (what its next attempt analysed), not "fails in the suite".
    first = by_test[tid(1)]["attempts"][0]["reason"]
    assert "7 == 1" in first and "passes alone" not in first, first
    checks = events(run_dir, "batch_checked")
    failed = next(c for c in checks if tid(1) in c["still_failing"])
    assert failed["suite_runs"] == 1 and failed["single_runs"] >= 1 and not failed["ok"]
    # What was accepted never held the wrong fix.
    assert "return 1" in (run_dir / "workspace" / "calc" / "m01.py").read_text()
    assert fix_call(1)["input"]["new_text"] == "return 1"


def _repo(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text("def value():\n    return 0\n")
    (root / "tests" / "test_calc.py").write_text("from calc import value\n\n\ndef test_value():\n    assert value() == 1\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"], cwd=root, check=True)
    return root


async def test_the_final_run_reuses_a_run_of_the_same_files_only(tmp_path):
    root = _repo(tmp_path / "p")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    ws = Workspace(path=str(root), run_dir=str(run_dir), repo=str(root))
    plan = plan_tests(root, framework="pytest")
    env = ActivityEnvironment()
    initial = await env.run(execute_suite, SuiteInput(workspace=ws, plan=plan, label="initial", sandbox=SANDBOX))
    assert initial.totals.failed == 1
    (root / "calc.py").write_text("def value():\n    return 1\n")
    checked = (await env.run(execute_suite, SuiteInput(workspace=ws, plan=plan, label="check", sandbox=SANDBOX)))
    earlier = checked.model_copy(update={"tree": content_tree(root)}).as_baseline()

    def final() -> SuiteInput:
        return SuiteInput(workspace=ws, plan=plan, label="final", sandbox=SANDBOX, compare_to=initial, reuse=earlier)

    # The same files: the earlier run stands for the final one, compared with the first run.
    same = await env.run(run_suite, final())
    assert same.reused_as == "final" and same.report_path == checked.report_path
    assert same.newly_passing == ["tests/test_calc.py::test_value"] and same.totals.passed == 1
    assert not (run_dir / "runs" / "final-1").exists()
    # A changed file, or a new one: the suite runs again, and says what it finds.
    (root / "calc.py").write_text("def value():\n    return 2\n")
    changed = await env.run(run_suite, final())
    assert changed.reused_as is None and changed.label == "final" and changed.totals.failed == 1
    (root / "calc.py").write_text("def value():\n    return 1\n")
    (root / "conftest.py").write_text("import pytest\n\n\n@pytest.fixture(autouse=True)\ndef broken():\n    raise RuntimeError\n")
    added = await env.run(run_suite, final())
    assert added.reused_as is None and added.totals.passed == 0
    assert sorted(p.name for p in (run_dir / "runs").iterdir()) == ["check-1", "final-1", "final-2", "initial-1"]
