"""Time to recover after losing a worker for good, per activity kind.

Two ``greenloop worker`` processes that see only their own data directory
(mount namespaces, as in tests/workflows/test_deployment.py) drive the demo
repository (three failing pytest tests) on a real dev server with the
scripted LLM. The worker holding the run is SIGKILLed while the run's second
test is in one kind of activity; the other worker rebuilds the workspace from
the history and finishes. From the parent's history it reports, from the kill:

  * detected: when the run knew its host was lost (``rebuild_workspace`` scheduled):
    the heartbeat timeout (the dead attempt) plus the host timeout (nobody polls
    the host queue for the retry);
  * rebuilt: when the rebuilt workspace was ready (copy, replay of the accepted
    fixes, one suite run that stands in for the lost reports);
  * resumed: when the test was driven again (its new child started);
  * run: the whole run, against the same run with no worker lost.

Usage: python bench/recovery.py [--heartbeat S] [--host-timeout S]
                                [--kinds fixer_turn,run_single_test,apply_edits,merge_worktree]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402
from temporalio.api.enums.v1 import EventType  # noqa: E402
from temporalio.client import Client  # noqa: E402
from temporalio.contrib.pydantic import pydantic_data_converter  # noqa: E402
from temporalio.testing import WorkflowEnvironment  # noqa: E402

from greenloop.domain.llm import LLMSettings  # noqa: E402
from greenloop.domain.states import FixState  # noqa: E402
from greenloop.llm.scenario import Scenario  # noqa: E402
from greenloop.llm.scripted_server import ScriptedLLMServer  # noqa: E402
from greenloop.reports.record import FixStatusView  # noqa: E402
from greenloop.run_request import FixRequest  # noqa: E402
from greenloop.sandbox.models import SandboxSettings  # noqa: E402
from greenloop.server import search_attributes as search  # noqa: E402
from greenloop.server.dev import temporal_binary  # noqa: E402
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id  # noqa: E402
from tests.workflows.deployment import start_hosts, stop_hosts, wait_polling  # noqa: E402

DEMO = REPO / "samples" / "demo-python"
SCENARIO = REPO / "samples" / "scenarios" / "demo-python.yaml"
VICTIM = "tests/test_cart.py::test_discount"  # the demo's second test: the first one's fix is replayed
# How each kind is reached: the victim's state to wait for, a scenario delay, a slower suite, a crash point.
KINDS = {
    "fixer_turn": {"state": FixState.FIXING, "delay": 6.0},  # a model call in flight
    "run_single_test": {"state": FixState.VALIDATING, "slow": True},
    # Only a fix validated alone is applied by apply_edits or merged from a worktree (the queue, the
    # default, accepts batches instead): these kinds run with --validation each.
    "apply_edits": {"crash": "apply_edits", "validation": "each"},
    "merge_worktree": {"crash": "merge_worktree", "concurrency": 2, "validation": "each"},
}


def scenario(delay: float) -> dict:
    sc = yaml.safe_load(SCENARIO.read_text())
    for rule in sc["rules"]:
        trig = rule["trigger"]
        if trig.get("role") == "fixer" and trig.get("context") == "test_discount" and trig.get("turn") == 1:
            rule["response"]["delay_s"] = delay
    return sc


async def wait_state(client: Client, run_id: str, state: FixState) -> None:
    child = client.get_workflow_handle(child_id(run_id, VICTIM))
    while True:
        try:
            if (await child.query("status", result_type=FixStatusView)).state == state:
                return
        except Exception:  # noqa: BLE001 - not started yet
            pass
        await asyncio.sleep(0.1)


async def events(client: Client, workflow_id: str) -> list:
    return [e async for e in client.get_workflow_handle(workflow_id).fetch_history_events()]


async def one(client: Client, root: Path, kind: str | None, args) -> dict[str, float]:
    spec = KINDS.get(kind or "", {})
    work = root / uuid.uuid4().hex[:6]
    repo = work / "demo"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    if spec.get("slow"):
        (repo / "tests" / "conftest.py").write_text("import time\ntime.sleep(2)\n")
    marker = work / "crashed"
    with ScriptedLLMServer(Scenario.model_validate(scenario(spec.get("delay", 0.0)))) as llm:
        env = {"ANTHROPIC_BASE_URL": llm.base_url, "ANTHROPIC_API_KEY": "bench"}
        if crash := spec.get("crash"):
            env |= {"KILL_AT": crash, "KILLED_MARKER": str(marker)}  # the dying worker of tests/workflows/deployment.py
        queue = f"recovery-{uuid.uuid4().hex[:6]}"
        hosts = start_hosts(["a", "b"], work / "hosts", client.service_client.config.target_host, queue, env)
        try:
            await wait_polling(client, hosts)
            request = FixRequest(repo=str(repo), sandbox=SandboxSettings(backend=args.sandbox, timeout_s=120),
                                 llm=LLMSettings(model="claude-scripted", max_tool_turns=8),
                                 concurrency=spec.get("concurrency", 1), validation=spec.get("validation", "queue"),
                                 heartbeat_timeout_s=args.heartbeat,
                                 host_timeout_s=args.host_timeout)
            run_id = f"recovery-{kind or 'none'}-{uuid.uuid4().hex[:6]}"
            start = time.time()
            handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
            killed = None
            if kind and "state" in spec:
                await wait_state(client, run_id, spec["state"])
                await asyncio.sleep(1.0)
                [holder] = [h for h in hosts if h.holds(run_id)]
                holder.kill()
                killed = time.time()
            elif kind:
                while killed is None:
                    if any(h.proc.poll() is not None for h in hosts):
                        killed = time.time()
                    await asyncio.sleep(0.05)
            summary = await asyncio.wait_for(handle.result(), timeout=600)
            end = time.time()
        finally:
            stop_hosts(hosts)
    assert summary.state == "completed" and len(summary.fixed) == 3 and summary.final.failed == 0, summary
    out = {"run": end - start}
    if killed is None:
        return out
    history = await events(client, run_id)
    scheduled = {e.event_id: e for e in history
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                 and e.activity_task_scheduled_event_attributes.activity_type.name == "rebuild_workspace"}
    completed = [e for e in history if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
                 and e.activity_task_completed_event_attributes.scheduled_event_id in scheduled]
    children = [e for e in history if e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
                and "/moved-" in e.start_child_workflow_execution_initiated_event_attributes.workflow_id]
    ts = lambda e: e.event_time.ToDatetime().timestamp()  # noqa: E731
    first = min(scheduled.values(), key=ts)
    out |= {"detected": ts(first) - killed, "rebuilt": ts(completed[0]) - killed,
            "resumed": ts(children[0]) - killed if children else float("nan"), "rebuilds": float(len(scheduled))}
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heartbeat", type=int, default=5)
    ap.add_argument("--host-timeout", type=int, default=5)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--sandbox", default="bwrap")
    args = ap.parse_args()
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(), data_converter=pydantic_data_converter,
        search_attributes=search.ALL, dev_server_log_level="error", ui=False)
    root = Path(tempfile.mkdtemp(prefix="greenloop-recovery-"))
    try:
        base = await one(env.client, root, None, args)
        print(f"heartbeat timeout {args.heartbeat} s, host timeout {args.host_timeout} s; "
              f"the run with no worker lost: {base['run']:.1f} s\n")
        print("| activity killed | detected | workspace rebuilt | test driven again | run | run − no loss |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for kind in args.kinds.split(","):
            r = await one(env.client, root, kind, args)
            print(f"| `{kind}` | {r['detected']:.1f} s | {r['rebuilt']:.1f} s | {r['resumed']:.1f} s | "
                  f"{r['run']:.1f} s | {r['run'] - base['run']:+.1f} s |", flush=True)
    finally:
        await env.shutdown()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
