"""Validation queue: a batch check that fails for good (its retries spent) reaches
the run. Its fixes fail with the reason, the queue keeps serving, the run ends
with a report and a patch, and abort keeps working. The failure is real: the
run directory's ``batches`` folder is a plain file (as a full or read-only disk
would), so the check cannot make its scratch worktree; no mock of Temporal."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from greenloop.reports.record import RunSummary
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from tests.workflows.conftest import fix_request, replays
from tests.workflows.test_merge_queue import make_project, results, scenario, tid, verdicts


def blocked(request) -> Path:
    """The run directory with its batch checks' folder taken by a plain file."""
    run_dir = Path(request.run_dir)
    run_dir.mkdir(parents=True)
    (run_dir / "batches").write_text("not a folder: every batch check fails")
    return run_dir


async def until(condition, timeout_s: float = 240) -> None:
    for _ in range(int(timeout_s * 10)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("timed out")


async def test_a_batch_check_that_fails_for_good_fails_its_fixes_and_the_queue_goes_on(
        temporal_env, scripted, tmp_path):
    failing = make_project(tmp_path / "p", 2)
    server = scripted(scenario(2))
    request = fix_request(tmp_path / "p", tmp_path, concurrency=2, max_batch=4, validation="queue")
    run_dir = blocked(request)
    from greenloop.worker import build_worker

    queue = f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(temporal_env.client, task_queue=queue):
        handle = await temporal_env.client.start_workflow(
            FixSuiteWorkflow.run, request, id=f"bfail-{uuid.uuid4().hex[:6]}", task_queue=queue)
        # The second attempts are asked for once the first batch failed: the disk is freed then.
        await until(lambda: any(r.role == "fixer" and r.iteration == 2 for r in server.requests))
        (run_dir / "batches").unlink()
        summary: RunSummary = await asyncio.wait_for(handle.result(), 300)
    await replays(temporal_env.client, handle)

    assert summary.state == "completed" and sorted(summary.fixed) == failing and summary.final.failed == 0
    by_test = results(run_dir)
    failed_batch = [n for n in summary.notes if "the validation of batch" in n]
    assert failed_batch and "check_batch failed" in failed_batch[0]
    for t in failing:
        assert verdicts(by_test[t]) == ["FAIL", "PASS"]
        assert "the validation of batch" in by_test[t]["attempts"][0]["reason"]
    assert summary.patch and Path(summary.patch).read_text() and Path(summary.report_markdown or "").is_file()
    assert "return 1" in (run_dir / "workspace" / "calc" / "m00.py").read_text()


async def test_abort_still_works_when_every_batch_check_fails(temporal_env, scripted, tmp_path):
    make_project(tmp_path / "p", 2)
    server = scripted(scenario(2))
    request = fix_request(tmp_path / "p", tmp_path, concurrency=2, max_batch=4, validation="queue")
    run_dir = blocked(request)
    from greenloop.worker import build_worker

    queue = f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(temporal_env.client, task_queue=queue):
        handle = await temporal_env.client.start_workflow(
            FixSuiteWorkflow.run, request, id=f"babort-{uuid.uuid4().hex[:6]}", task_queue=queue)
        await until(lambda: any(r.role == "fixer" and r.iteration == 2 for r in server.requests))
        phase = await asyncio.wait_for(handle.execute_update(FixSuiteWorkflow.abort, "stop"), 300)
        summary: RunSummary = await asyncio.wait_for(handle.result(), 300)
    await replays(temporal_env.client, handle)

    assert phase in ("finalizing", "finished") and summary.state == "aborted" and summary.fixed == []
    assert Path(summary.report_markdown or "").is_file()
    assert all("return 0" in (run_dir / "workspace" / "calc" / f"m{i:02d}.py").read_text() for i in range(2))
    assert any("the validation of batch" in n for n in summary.notes)
    assert tid(0) in summary.aborted or tid(0) in summary.escalated or tid(0) in summary.skipped
