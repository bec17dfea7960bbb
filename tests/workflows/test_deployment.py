"""A real deployment on a real dev server: two ``greenloop worker`` processes that
each see only their own data directory (separate mount namespaces, the other's
home hidden under a tmpfs), as on two machines.

Runs end green with exact content at concurrency 1 and 2; a worker SIGKILLed
for good while it holds a run (mid-FIXING, mid-VALIDATING, mid-merge of a
worktree, mid-acceptance of a batch) loses nothing: the
other worker rebuilds the workspace from the history (the repository and every
accepted fix, in order) and finishes the run with exactly the right files; a
missing workspace is a typed error (``workspace_lost``), never an empty run."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Replayer

from greenloop.activities import testing as testing_acts
from greenloop.activities.testing import SuiteInput
from greenloop.domain.states import FixState
from greenloop.domain.workspace import Workspace
from greenloop.reports.record import RunSummary
from greenloop.runner.plan import SuitePlan
from greenloop.sandbox.models import SandboxSettings
from greenloop.workflows.fix_one_test import FixOneTestWorkflow
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from tests.workflows.conftest import DEMO, drive, fix_request, replays, wait_for_view
from tests.workflows.deployment import GREENLOOP, Host, start_hosts, stop_hosts, wait_polling

SCENARIO = DEMO.parent / "scenarios" / "demo-python.yaml"
FAILING = ["tests/test_cart.py::test_add_same_sku_merges_quantities", "tests/test_cart.py::test_discount",
           "tests/test_money.py::test_format_whole_euros"]
# The demo's three bugs, and their fixes as the scenario makes them.
FIXES = {
    "shop/cart.py": [("self.lines[sku] = (price, qty)  # bug: forgets the quantity already in the cart",
                      "self.lines[sku] = (price, old + qty)"),
                     ("return round(self.total() * percent / 100, 2)  # bug: returns the discount, not the total",
                      "return round(self.total() * (100 - percent) / 100, 2)")],
    "shop/money.py": [('return f"{cents // 100}.{cents % 100} EUR"  # bug: no zero padding of the cents',
                       'return f"{cents // 100}.{cents % 100:02d} EUR"')],
}


def expected(path: str) -> str:
    text = (DEMO / path).read_text()
    for old, new in FIXES[path]:
        assert text.count(old) == 1
        text = text.replace(old, new)
    return text


def assert_exact(workspace: Path) -> None:
    """Every fix exactly once, nothing else changed (against the starting point)."""
    for path in FIXES:
        assert (workspace / path).read_text() == expected(path), path
    changed = subprocess.run(["git", "-C", str(workspace), "diff", "--name-only", "HEAD~1", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.split()
    assert sorted(changed) == sorted(FIXES)


def slowed_scenario(test: str, delay_s: float) -> dict:
    """The demo scenario, with ``test``'s first fixer call answered after ``delay_s``."""
    sc = yaml.safe_load(SCENARIO.read_text())
    for rule in sc["rules"]:
        trig = rule["trigger"]
        if trig.get("role") == "fixer" and trig.get("context", "") in test and trig.get("turn") == 1:
            rule["response"]["delay_s"] = delay_s
    return sc


@pytest.fixture
def hosts_for(temporal_env, tmp_path):
    started: list[list[Host]] = []

    async def start(server, names=("a", "b"), crash: dict[str, str] | None = None) -> list[Host]:
        client = temporal_env.client
        queue = f"deploy-{uuid.uuid4().hex[:6]}"
        env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "scripted-test-key", **(crash or {})}
        hosts = start_hosts(list(names), tmp_path / "hosts", client.service_client.config.target_host, queue, env)
        started.append(hosts)
        await wait_polling(client, hosts)
        return hosts

    yield start
    for hosts in started:
        stop_hosts(hosts)


def request_for(demo_repo: Path, tmp_path: Path, **overrides):
    # No run_dir: each worker keeps runs under its own GREENLOOP_HOME, as on its own machine.
    return fix_request(demo_repo, tmp_path, run_dir=None, heartbeat_timeout_s=5, host_timeout_s=5, **overrides)


@pytest.mark.parametrize("concurrency", [1, 2])
async def test_two_workers_without_a_shared_disk_drive_the_demo_to_green(
        temporal_env, demo_repo, scripted, tmp_path, hosts_for, concurrency):
    hosts = await hosts_for(scripted(SCENARIO))
    client = temporal_env.client
    request = request_for(demo_repo, tmp_path, concurrency=concurrency)
    run_id = f"deploy-{uuid.uuid4().hex[:6]}"
    handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=hosts[0].queue)
    summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=300)

    assert summary.state == "completed" and sorted(summary.fixed) == sorted(FAILING)
    assert summary.final.failed == 0 and summary.final.passed == 7
    holders = [h for h in hosts if h.holds(run_id)]
    assert len(holders) == 1  # the run's files live on one worker only, and it never moved
    assert not any("rebuilt" in n for n in summary.notes)
    assert_exact(holders[0].run_dir(run_id) / "workspace")
    assert summary.patch == str(holders[0].run_dir(run_id) / "greenloop.patch")


@pytest.mark.parametrize("kill_in", ["FIXING", "VALIDATING"])
async def test_a_worker_lost_for_good_loses_nothing(temporal_env, demo_repo, scripted, tmp_path, hosts_for, kill_in):
    victim_test = FAILING[1]  # the second test: the first one's accepted fix must be replayed elsewhere
    if kill_in == "VALIDATING":
        (demo_repo / "tests" / "conftest.py").write_text("import time\ntime.sleep(1.5)\n")
    server = scripted(slowed_scenario(victim_test, 4.0 if kill_in == "FIXING" else 0.0))
    hosts = await hosts_for(server)
    client = temporal_env.client
    request = request_for(demo_repo, tmp_path)
    run_id = f"lost-{uuid.uuid4().hex[:6]}"
    handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=hosts[0].queue)
    await wait_for_view(client, child_id(run_id, victim_test), lambda v: v.state == FixState[kill_in], kill_in,
                        timeout_s=180)
    await asyncio.sleep(0.5)
    [holder] = [h for h in hosts if h.holds(run_id)]
    [survivor] = [h for h in hosts if h is not holder]
    holder.kill()

    summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=300)
    assert summary.state == "completed" and sorted(summary.fixed) == sorted(FAILING)
    assert summary.final.failed == 0
    assert any(f"rebuilt on {survivor.host_queue}" in n for n in summary.notes), summary.notes
    assert_exact(survivor.run_dir(run_id) / "workspace")
    assert summary.patch == str(survivor.run_dir(run_id) / "greenloop.patch")
    # The lost attempt's model calls were made and are counted. Killed in FIXING, the fixer's call in
    # flight is made again (by the child that follows the run, or by a new one): two first calls.
    # Killed in VALIDATING, the proposal was complete: asked again only if the test was driven again,
    # or its fix made again on the current files (it waited for its verdict and followed the run to
    # the new worker, where the file it was written on is not kept). The run says which, each time.
    firsts = [r for r in server.requests if r.context.endswith(victim_test) and r.role == "fixer" and r.turn == 1]
    [victim] = [v for v in summary.tests if v.test_id == victim_test]
    made_again = sum("made again on the current files" in h for h in victim.history)
    driven_again = sum("driven again" in h for h in victim.history)
    expected = 2 + made_again if kill_in == "FIXING" else 1 + made_again + driven_again
    assert len(firsts) == expected, victim.history
    await replays(client, handle, keep="worker-lost" if kill_in == "FIXING" else None)  # the move replays


async def test_a_test_waiting_for_its_verdict_follows_the_run_to_its_new_worker(
        temporal_env, demo_repo, scripted, tmp_path, hosts_for):
    """The validation queue: a test's first fix is wrong and its child waits for the
    verdict when the worker holding the run dies. The run moves; the child learns the
    new worker and makes its second attempt there: no wait on the dead worker's queue,
    no restart from attempt 1, no model call made twice."""
    victim_test = FAILING[2]  # the only test that edits shop/money.py: nothing of it is made again
    (demo_repo / "tests" / "conftest.py").write_text("import time\ntime.sleep(1.5)\n")  # batches take a while
    sc = yaml.safe_load(SCENARIO.read_text())
    cents = next(r for r in sc["rules"] if r.get("name") == "cents-fix")
    cents["trigger"]["user"] = "Attempt 1: FAIL"  # the right fix, once the wrong one failed
    cents["priority"] = 10
    wrong = {"name": "cents-wrong", "trigger": {"role": "fixer", "context": "test_format_whole_euros", "turn": 1},
             "response": {"tool_calls": [{"name": "replace_in_file", "input": {
                 "path": "shop/money.py", "old_text": "{cents % 100} EUR", "new_text": "{cents % 100:2d} EUR"}}]}}
    sc["rules"].insert(0, wrong)
    server = scripted(sc)
    hosts = await hosts_for(server)
    client = temporal_env.client
    request = request_for(demo_repo, tmp_path, validation="queue")
    run_id = f"verdict-{uuid.uuid4().hex[:6]}"
    handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=hosts[0].queue)
    await wait_for_view(client, child_id(run_id, victim_test), lambda v: v.state == FixState.VALIDATING,
                        "VALIDATING", timeout_s=180)
    await asyncio.sleep(0.5)
    [holder] = [h for h in hosts if h.holds(run_id)]
    [survivor] = [h for h in hosts if h is not holder]
    holder.kill()
    summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=300)

    assert summary.state == "completed" and sorted(summary.fixed) == sorted(FAILING)
    assert any(f"rebuilt on {survivor.host_queue}" in n for n in summary.notes), summary.notes
    assert_exact(survivor.run_dir(run_id) / "workspace")
    [victim] = [v for v in summary.tests if v.test_id == victim_test]
    assert not any("worker lost" in h for h in victim.history), victim.history  # never driven again
    assert victim.attempt == 2 and victim.workflow_id == child_id(run_id, victim_test)
    # The wrong fix once, the right one once: attempt 1 was not made again.
    firsts = [r for r in server.requests if r.context.endswith(victim_test) and r.role == "fixer" and r.turn == 1]
    assert len(firsts) == 2
    child = await client.get_workflow_handle_for(FixOneTestWorkflow.run, victim.workflow_id).query(
        FixOneTestWorkflow.status)
    assert any(f"the run moved to {survivor.host_queue}" in h for h in child.history), child.history
    await replays(client, handle)


@pytest.mark.parametrize(("validation", "kill_at"), [("each", "merge_worktree"), ("queue", "accept_batch")])
async def test_a_worker_lost_mid_merge_loses_nothing(temporal_env, demo_repo, scripted, tmp_path, hosts_for,
                                                     validation, kill_at):
    """Concurrency 2: the worker holding the run dies half-way through putting a
    validated fix into the run workspace (each mode: merging it from its test's
    worktree; queue mode: accepting a batch), the files changed, nothing recorded.
    The other worker rebuilds from the accepted fixes only, and the half-applied
    fix is applied again there (queue) or its test fixed again (each)."""
    marker = tmp_path / "crashed"
    hosts = await hosts_for(scripted(SCENARIO), crash={"KILL_AT": kill_at, "KILLED_MARKER": str(marker)})
    client = temporal_env.client
    request = request_for(demo_repo, tmp_path, concurrency=2, validation=validation)
    run_id = f"merge-{uuid.uuid4().hex[:6]}"
    handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=hosts[0].queue)
    summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=300)

    assert marker.read_text() == kill_at
    [dead] = [h for h in hosts if h.proc is not None and h.proc.poll() is not None]
    [survivor] = [h for h in hosts if h is not dead]
    assert summary.state == "completed" and sorted(summary.fixed) == sorted(FAILING)
    assert summary.final.failed == 0
    assert any(f"rebuilt on {survivor.host_queue}" in n for n in summary.notes), summary.notes
    assert_exact(survivor.run_dir(run_id) / "workspace")
    await replays(client, handle)


async def test_a_missing_workspace_is_a_typed_error_not_an_empty_run(tmp_path):
    ws = Workspace(path=str(tmp_path / "gone" / "workspace"), run_dir=str(tmp_path / "gone"), repo=str(DEMO))
    plan = SuitePlan(language="python", framework="pytest", test_command="python -m pytest", build_command=None)
    inp = SuiteInput(workspace=ws, plan=plan, label="initial", sandbox=SandboxSettings(backend="bwrap"))
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(testing_acts.run_suite, inp)
    assert err.value.type == "workspace_lost" and err.value.non_retryable
    assert "is not on worker" in err.value.message
    assert not (tmp_path / "gone").exists()  # nothing was created


async def test_a_workspace_wiped_mid_run_is_rebuilt_from_the_history(temporal_env, demo_repo, scripted, tmp_path):
    """The worker is still there but its files are not (a wiped disk): the next
    activity says ``workspace_lost`` and the run rebuilds, never runs an empty folder."""
    victim_test = FAILING[1]
    scripted(slowed_scenario(victim_test, 4.0))
    request = fix_request(demo_repo, tmp_path, heartbeat_timeout_s=5, host_timeout_s=5)
    run_id = f"wiped-{uuid.uuid4().hex[:6]}"

    async def wipe() -> None:
        await wait_for_view(temporal_env.client, child_id(run_id, victim_test),
                            lambda v: v.state == FixState.FIXING, "FIXING")
        shutil.rmtree(Path(request.run_dir) / "workspace")

    wiper = asyncio.ensure_future(wipe())
    summary, _ = await drive(temporal_env, request, run_id=run_id)
    await wiper
    assert summary.state == "completed" and sorted(summary.fixed) == sorted(FAILING)
    assert summary.final.failed == 0 and summary.final.passed == 7
    assert any("rebuilt" in n and "workspace_lost" not in n for n in summary.notes), summary.notes
    assert_exact(Path(request.run_dir) / "workspace")


async def test_a_scripted_worker_answers_for_a_cluster(temporal_env, demo_repo, tmp_path):
    """``greenloop worker --scripted SCENARIO``: a worker whose LLM is the scripted one,
    for rehearsals on a cluster; plain ``run`` requests go to it."""
    client = temporal_env.client
    hosts = start_hosts(["solo"], tmp_path / "hosts", client.service_client.config.target_host,
                        f"rehearsal-{uuid.uuid4().hex[:6]}", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/nothing"},
                        extra_args=["--scripted", str(SCENARIO)])
    try:
        await wait_polling(client, hosts)
        request = request_for(demo_repo, tmp_path)
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"rehearsal-{uuid.uuid4().hex[:6]}",
                                             task_queue=hosts[0].queue)
        summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=300)
    finally:
        stop_hosts(hosts)
    assert sorted(summary.fixed) == sorted(FAILING) and summary.final.failed == 0
    assert_exact(hosts[0].run_dir(handle.id) / "workspace")


async def test_run_scripted_keeps_its_run_away_from_other_workers(temporal_env, tmp_path):
    """Another worker polls the shared queue and has no scripted LLM (its model
    calls would fail): ``run --scripted`` puts its run on a queue of its own, so
    none of the run's activities reaches that worker; ``--no-wait`` is refused
    (the scripted LLM cannot outlive the command)."""
    client = temporal_env.client
    address = client.service_client.config.target_host
    queue = f"shared-{uuid.uuid4().hex[:6]}"
    hosts = start_hosts(["other"], tmp_path / "hosts", address, queue,
                        {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/nothing", "ANTHROPIC_API_KEY": "none"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env |= {"GREENLOOP_TASK_QUEUE": queue, "GREENLOOP_HOME": str(tmp_path / "cli-home")}
    try:
        await wait_polling(client, hosts)
        cli = [str(GREENLOOP), "run", str(DEMO), "--scripted", str(SCENARIO), "--address", address]
        done = await asyncio.to_thread(subprocess.run, [*cli, "--json"], capture_output=True, text=True,
                                       timeout=280, env=env)
        refused = await asyncio.to_thread(subprocess.run, [*cli, "--no-wait"], capture_output=True, text=True,
                                          timeout=60, env=env)
    finally:
        stop_hosts(hosts)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert len(summary["fixed"]) == 3 and summary["final"]["failed"] == 0
    assert str(tmp_path / "cli-home") in summary["patch"]  # prepared by the command's own worker
    assert not (hosts[0].home / "runs").exists()  # nothing of the run reached the other worker
    assert refused.returncode == 2 and "--no-wait" in refused.stderr and "greenloop worker --scripted" in refused.stderr
    assert "Traceback" not in done.stderr + refused.stderr


async def test_a_conversation_interrupted_by_a_kill_resumes_at_the_next_model_call(
        temporal_env, demo_repo, scripted, tmp_path):
    """Each model call is its own activity: the worker dies while the fixer's
    second call is in flight, comes back (same disk, same host queue), and the
    conversation goes on from that call; the first is never asked again."""
    sc = yaml.safe_load(SCENARIO.read_text())
    for rule in sc["rules"]:
        if rule["trigger"] == {"role": "fixer", "context": "merges_quantities", "turn": 2}:
            rule["response"]["delay_s"] = 4.0
    server = scripted(sc)
    client = temporal_env.client
    address, queue = client.service_client.config.target_host, f"resume-{uuid.uuid4().hex[:6]}"
    env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "scripted-test-key"}
    root = tmp_path / "hosts"
    [first] = start_hosts(["one"], root, address, queue, env)
    second: list[Host] = []
    try:
        await wait_polling(client, [first])
        request = request_for(demo_repo, tmp_path, select=[FAILING[0]])
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"resume-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue)

        def fixer_turns(turn: int) -> int:
            return sum(1 for r in server.requests if r.role == "fixer" and r.turn == turn)

        for _ in range(600):
            if fixer_turns(2):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # the second call is in flight (answered after 4 s)
        first.kill()
        second = start_hosts(["one"], root, address, queue, env)  # the same machine, back with its disk
        summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=240)
    finally:
        stop_hosts([first, *second])
    assert summary.fixed == [FAILING[0]]
    assert (fixer_turns(1), fixer_turns(2), fixer_turns(3)) == (1, 2, 1)  # only the call in flight was redone
    assert not any("rebuilt" in n for n in summary.notes)  # the worker came back in time: nothing moved
    ws = second[0].run_dir(handle.id) / "workspace"
    assert (ws / "shop/cart.py").read_text().count("self.lines[sku] = (price, old + qty)") == 1
    # Every completed model call is counted (the analyzer's and the fixer's three); the lost one is not.
    assert summary.usage.calls == 4


async def test_an_analyzer_conversation_interrupted_by_a_kill_resumes_at_the_next_model_call(
        temporal_env, demo_repo, scripted, tmp_path):
    """The analyzer reads a file, then answers; the worker dies with that second call
    in flight (answered, the answer not saved), comes back (same disk, same host
    queue), and the conversation goes on from that call: its first call and its
    tool calls are not made again, and only completed calls are counted."""
    sc = yaml.safe_load(SCENARIO.read_text())
    sc["rules"][:0] = [
        {"trigger": {"role": "analyzer", "turn": 1}, "response": {
            "text": "Reading the cart.", "tool_calls": [{"name": "read_file", "input": {"path": "shop/cart.py"}}]}},
        {"trigger": {"role": "analyzer", "turn": 2}, "response": {"text": "discount() returns the discount."}},
    ]
    server = scripted(sc)
    client = temporal_env.client
    address, queue = client.service_client.config.target_host, f"resume-{uuid.uuid4().hex[:6]}"
    marker = tmp_path / "crashed"
    env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "scripted-test-key",
           "KILL_AT": "analyzer_turn", "KILLED_MARKER": str(marker)}
    root = tmp_path / "hosts"
    victim = FAILING[1]
    [first] = start_hosts(["one"], root, address, queue, env)
    second: list[Host] = []
    try:
        await wait_polling(client, [first])
        request = request_for(demo_repo, tmp_path, select=[victim])
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"resume-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue)
        assert first.proc is not None
        await asyncio.wait_for(asyncio.to_thread(first.proc.wait), timeout=180)  # it dies on its own
        second = start_hosts(["one"], root, address, queue, env)  # the same machine, back with its disk
        summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=240)
    finally:
        stop_hosts([first, *second])

    def calls(role: str) -> list[int]:
        return [r.turn for r in server.requests if r.role == role]

    assert marker.read_text() == "analyzer_turn"
    assert calls("analyzer") == [1, 2, 2]  # only the call in flight was made again
    assert calls("fixer") == [1, 2]
    assert summary.fixed == [victim] and not any("rebuilt" in n for n in summary.notes)
    ws = second[0].run_dir(handle.id) / "workspace"
    old, new = FIXES["shop/cart.py"][1]
    assert (ws / "shop/cart.py").read_text() == (DEMO / "shop/cart.py").read_text().replace(old, new)
    assert (ws / "shop/money.py").read_text() == (DEMO / "shop/money.py").read_text()
    # The analyzer's findings (from the call made again) reached the fixer.
    assert "discount() returns the discount." in server.requests[-2].body["messages"][0]["content"][0]["text"]
    # Every completed model call is counted (two of the analyzer's, two of the fixer's); the lost one is not.
    assert summary.usage.calls == 4
    child = client.get_workflow_handle(child_id(handle.id, victim))
    history = await child.fetch_history()
    started = {}
    for e in history.events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            started[e.event_id] = [e.activity_task_scheduled_event_attributes.activity_type.name]
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[e.activity_task_started_event_attributes.scheduled_event_id].append(
                e.activity_task_started_event_attributes.attempt)
    analyzer = [v for v in started.values() if v[0].startswith(("start_analysis", "analyzer_", "finish_analysis"))]
    # One activity per model call: the second call's activity ran twice (its first worker died), and
    # that last turn finished the analysis (no finishing step of its own).
    assert analyzer == [["start_analysis", 1], ["analyzer_turn", 1], ["analyzer_tools", 1], ["analyzer_turn", 2]]
    await replays(client, handle)
    await Replayer(workflows=[FixOneTestWorkflow], data_converter=pydantic_data_converter).replay_workflow(history)


async def test_a_local_path_no_surviving_worker_sees_fails_saying_so(temporal_env, scripted, tmp_path):
    """The repository is a local path only worker b sees; b holds the run and is
    lost: a cannot rebuild, and the run fails with an error that says why and
    recommends a git URL (never an empty or half run)."""
    victim_test = FAILING[1]
    server = scripted(slowed_scenario(victim_test, 4.0))
    client = temporal_env.client
    address, queue = client.service_client.config.target_host, f"unreachable-{uuid.uuid4().hex[:6]}"
    env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "scripted-test-key"}
    root = tmp_path / "hosts"
    # b alone first, so that b prepares the run; then a, which cannot see b's data directory.
    (root / "home-a").mkdir(parents=True)
    [b] = start_hosts(["b"], root, address, queue, env)
    hosts = [b]
    try:
        repo = b.home / "checkout"  # inside b's data directory: hidden from a
        shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        await wait_polling(client, [b])
        request = request_for(repo, tmp_path)
        run_id = f"unreachable-{uuid.uuid4().hex[:6]}"
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
        await wait_for_view(client, child_id(run_id, victim_test), lambda v: v.state == FixState.FIXING, "FIXING",
                            timeout_s=180)
        [a] = start_hosts(["a"], root, address, queue, env, hide=[b.home])
        hosts.append(a)
        await wait_polling(client, [a])
        assert b.holds(run_id)
        b.kill()
        with pytest.raises(WorkflowFailureError) as err:
            await asyncio.wait_for(handle.result(), timeout=240)
    finally:
        stop_hosts(hosts)
    cause = err.value.cause
    while cause is not None and not (isinstance(cause, ApplicationError) and cause.type == "repository_unreachable"):
        cause = cause.cause
    assert cause is not None, err.value
    assert "local path that worker a cannot see" in cause.message and "git URL" in cause.message
    assert not a.holds(run_id)
