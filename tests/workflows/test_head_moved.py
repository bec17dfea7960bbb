"""A commit to the user's repository during a run: the end says the branch moved, rebases the
fixes onto the new head when they apply cleanly, and otherwise names the conflict and leaves
the fixes on the base commit, which every view names."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid

from greenloop.git_command import git
from greenloop.llm.scenario import Scenario
from greenloop.reports.record import RunSummary
from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from tests.conftest import REPO
from tests.workflows.conftest import DEMO, fix_request

SCENARIO = DEMO.parent / "scenarios" / "demo-python.yaml"
TARGET = "tests/test_money.py::test_format_whole_euros"


async def run_with_a_commit(env, repo, scripted, tmp_path, path: str, text: str) -> tuple[RunSummary, str, str, str]:
    """Run on ``repo`` (a git repository), committing ``text`` to ``path`` in it while the model
    is thinking; the summary, the commit the run started from, the new head and the run's id."""
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the user's start")
    origin = git(repo, "rev-parse", "HEAD")
    scenario = Scenario.load(SCENARIO)
    for rule in scenario.rules:
        if rule.name == "analyzer":
            rule.response.delay_s = 3.0  # the model is slow: the user commits meanwhile
    server = scripted(scenario.model_dump())
    request = fix_request(repo, tmp_path, select=[TARGET])
    queue = f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(env.client, task_queue=queue):
        handle = await env.client.start_workflow(FixSuiteWorkflow.run, request, id=f"run-{uuid.uuid4().hex[:6]}",
                                                 task_queue=queue)
        for _ in range(600):
            if server.requests:
                break
            await asyncio.sleep(0.1)
        assert server.requests, "the model was never asked"
        (repo / path).write_text(text)
        git(repo, "commit", "-qam", "the user's commit during the run")
        head = git(repo, "rev-parse", "HEAD")
        (repo / "notes.txt").write_text("the user's uncommitted work\n")
        summary = await handle.result()
    assert summary.fixed == [TARGET]
    assert summary.base_commit == origin
    assert (repo / "notes.txt").read_text() == "the user's uncommitted work\n"  # never touched
    return summary, origin, head, handle.id


async def test_a_commit_during_a_run_is_rebased_onto(temporal_env, demo_repo, scripted, tmp_path):
    summary, origin, head, run_id = await run_with_a_commit(temporal_env, demo_repo, scripted, tmp_path,
                                                            "tests/test_cart.py", "# the user's own change\n")
    assert summary.moved_to == head and summary.rebased_onto == head and summary.head_conflicts == []
    said = f"the branch moved from {origin[:10]} to {head[:10]} during the run"
    assert f"{said}: the fixes were rebased onto {head[:10]}" in summary.notes
    # The patch applies to the new head; the branch fetched into the user's repository sits on it.
    check = subprocess.run(["git", "-C", str(demo_repo), "apply", "--check", summary.patch], capture_output=True)
    assert check.returncode == 0, check.stderr
    assert git(demo_repo, "rev-parse", f"{summary.branch}^") == head
    report = open(summary.report_markdown).read()
    assert f"- base commit: `{origin}`, rebased onto `{head}`" in report and said in report
    # The CLI names them at the end of the run (`greenloop watch` of the ended run, as users see it).
    address = temporal_env.client.service_client.config.target_host
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "greenloop.cli.main", "watch", run_id,
                                                "--address", address, cwd=REPO, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert f"base commit: {origin}" in out.decode() and f"rebased onto: {head}" in out.decode(), err.decode()
    assert said in out.decode()


async def test_a_conflicting_commit_is_named_and_the_fixes_stay_on_the_base(temporal_env, demo_repo, scripted,
                                                                             tmp_path):
    summary, origin, head, _ = await run_with_a_commit(
        temporal_env, demo_repo, scripted, tmp_path, "shop/money.py",
        'def format_cents(cents):\n    return f"{cents / 100:.2f} EUR"  # the user\'s own fix\n')
    assert summary.moved_to == head and summary.rebased_onto is None
    assert summary.head_conflicts == ["shop/money.py"]
    assert any("conflict with it in shop/money.py" in n and f"stay on {origin[:10]}" in n for n in summary.notes)
    # Nothing lost: the patch holds the fix, against the base.
    assert "+    return f\"{cents // 100}.{cents % 100:02d} EUR\"" in open(summary.patch).read()
    assert git(demo_repo, "rev-parse", f"{summary.branch}^") == origin
    assert f"- base commit: `{origin}`" in open(summary.report_markdown).read()
