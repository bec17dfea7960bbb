"""A person answers an escalation through the CLI, as users do: retry gives
more attempts, abort ends the test (rolled back, the run aborted), and an
answer the state cannot take is refused with a message that says why."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

from temporalio.client import WorkflowUpdateFailedError

from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from greenloop.workflows.models import Answer, AnswerChoice, FixState, FixStatusView, RunSummary
from tests.conftest import REPO
from tests.workflows.conftest import DEMO, fix_request, replays, wait_for_view

TARGET = "tests/test_cart.py::test_discount"


async def greenloop(*args: str) -> tuple[int, str, str]:
    # Asynchronously: the worker answering the CLI's queries lives in this event loop.
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "greenloop.cli.main", *args, cwd=REPO,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode, out.decode(), err.decode()


async def escalated(client, child, attempt: int) -> FixStatusView:
    return await wait_for_view(client, child.id,
                               lambda v: v.state == FixState.ESCALATED and v.attempt == attempt,
                               f"ESCALATED after attempt {attempt}")


async def test_retry_then_abort_answered_from_the_cli(temporal_env, demo_repo, scripted, tmp_path):
    scripted(DEMO.parent / "scenarios" / "unfixable.yaml")
    address = temporal_env.client.service_client.config.target_host
    queue = f"q-{uuid.uuid4().hex[:6]}"
    request = fix_request(demo_repo, tmp_path, select=[TARGET], max_attempts=1)
    client = temporal_env.client
    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"esc-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue)
        child = client.get_workflow_handle(child_id(handle.id, TARGET))
        await escalated(client, child, attempt=1)

        # A unique prefix names the test; retry grants one more attempt.
        code, out, err = await greenloop("answer", handle.id, "tests/test_cart.py::test_disc", "retry",
                                         "--attempts", "1", "--address", address, "--json")
        assert code == 0, err
        assert json.loads(out) == {"test": TARGET, "state": "ANALYZING"}
        # The test is working again: a second answer now is refused, and says why.
        try:
            await child.execute_update("answer", Answer(choice=AnswerChoice.SKIP), result_type=str)
            raise AssertionError("an answer to a test that is not waiting was taken")
        except WorkflowUpdateFailedError as exc:
            assert "not waiting for an answer" in str(exc.cause)

        await escalated(client, child, attempt=2)
        code, out, err = await greenloop("answer", handle.id, TARGET, "abort", "--address", address)
        assert code == 0, err
        assert "ABORTED" in out
        summary: RunSummary = await handle.result()

    assert summary.state == "aborted" and summary.aborted == [TARGET]
    view = {t.test_id: t for t in summary.tests}[TARGET]
    assert view.state == FixState.ABORTED and view.attempt == 2
    # Both failed attempts were rolled back: the workspace holds the original bug.
    assert "percent / 100, 2)  # bug" in (tmp_path.joinpath(request.run_dir.split("/")[-1], "workspace",
                                                           "shop/cart.py").read_text())
    await replays(client, handle, keep="escalation")
    # After the run, the CLI says the test is no longer waiting rather than failing obscurely.
    code, _, err = await greenloop("answer", handle.id, TARGET, "skip", "--address", address)
    assert code != 0 and "Traceback" not in err
