import asyncio, uuid
from pathlib import Path
from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from tests.workflows.conftest import fix_request
from tests.workflows.test_merge_queue import make_project, scenario

async def test_debug(temporal_env, scripted, tmp_path):
    make_project(tmp_path / "p", 4)
    sc = scenario(4); sc["rules"][0]["response"]["delay_s"] = 2
    scripted(sc)
    request = fix_request(tmp_path / "p", tmp_path, concurrency=2, tests_per_run=2, validation="queue")
    queue = f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(temporal_env.client, task_queue=queue):
        h = await temporal_env.client.start_workflow(FixSuiteWorkflow.run, request, id=f"dbg-{uuid.uuid4().hex[:6]}", task_queue=queue)
        for i in range(8):
            await asyncio.sleep(5)
            lh = temporal_env.client.get_workflow_handle(h.id)
            d = await lh.describe()
            print("T", i*5, d.run_id == h.first_execution_run_id, d.status, await lh.query(FixSuiteWorkflow.phase))
            if d.raw_description.pending_workflow_task.attempt > 1:
                for e in reversed((await lh.fetch_history()).events):
                    if e.event_type == 7 or "FAILED" in str(e.event_type):
                        print(str(e)[:1500]); break
        await h.terminate()
