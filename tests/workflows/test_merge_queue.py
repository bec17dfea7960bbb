"""The validation queue (``FixRequest.validation == "queue"``): candidate fixes
validated in batches like a merge queue, on the real dev server with the real
sandbox, small generated pytest projects and the scripted LLM.

A batch that passes is accepted whole; a regressing fix is found by bisection,
rolled back and retried with the regression as feedback; two fixes that break a
test only together: one is accepted, the other rejected; a flaky test in a batch
is not blamed on a fix; an abort or a lost worker in the middle of a bisection
accepts nothing that was not validated. Every run replays deterministically."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle

from greenloop.domain.states import FixState, Verdict
from greenloop.reports.record import RunSummary
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from greenloop.workspace.backups import slug
from tests.workflows.conftest import drive, fix_request, replays
from tests.workflows.test_deployment import hosts_for, request_for  # noqa: F401 - fixture

GUARD = "tests/test_guard.py::test_shared_still_works"
SHARED = 'def shared():\n    return "ok"\n'
BREAK = {"name": "replace_in_file", "input": {"path": "calc/shared.py", "old_text": 'return "ok"',
                                              "new_text": 'return "broken"'}}


def tid(i: int) -> str:
    return f"tests/test_values.py::test_value_{i:02d}"


def make_project(root: Path, n: int, guard: str = "assert shared() == 'ok'", slow_s: float = 0.0) -> list[str]:
    """``n`` failing tests (``calc/mNN.py`` returns 0, its test wants 1) and a guard
    test that passes (``guard``, with ``shared``, ``calc`` and the modules imported)."""
    (root / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "calc" / "__init__.py").write_text("")
    (root / "calc" / "shared.py").write_text(SHARED)
    for i in range(n):
        (root / "calc" / f"m{i:02d}.py").write_text("def value():\n    return 0  # bug\n")
    imports = ", ".join(f"m{i:02d}" for i in range(n))
    (root / "tests" / "test_values.py").write_text(f"from calc import {imports}\n" + "".join(
        f"\n\ndef test_value_{i:02d}():\n    assert m{i:02d}.value() == 1\n" for i in range(n)))
    (root / "tests" / "test_guard.py").write_text(
        f"from pathlib import Path\n\nfrom calc import {imports}\nfrom calc.shared import shared\n\n\n"
        f"def test_shared_still_works():\n    {guard}\n")
    if slow_s:
        (root / "tests" / "conftest.py").write_text(f"import time\ntime.sleep({slow_s})\n")
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n\n'
                                         '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    return [tid(i) for i in range(n)]


def fix_call(i: int) -> dict:
    return {"name": "replace_in_file", "input": {"path": f"calc/m{i:02d}.py", "old_text": "return 0  # bug",
                                                 "new_text": "return 1"}}


def scenario(n: int, breaking: dict[int, list[dict]] | None = None, delay_s: float = 0.0) -> dict:
    """The fixer fixes test ``i``'s module; for ``i`` in ``breaking`` its first attempt
    also makes those extra calls, and a later attempt told of a REGRESSION fixes cleanly."""
    rules: list[dict] = [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\nvalue() returns 0."}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "value() now returns 1."}},
    ]
    for i in range(n):
        context = f"::test_value_{i:02d}$"
        if breaking and i in breaking:
            rules.append({"priority": 10, "trigger": {"role": "fixer", "turn": 1, "context": context, "iteration": 1},
                          "response": {"tool_calls": [fix_call(i), *breaking[i]], "delay_s": delay_s}})
        rules.append({"trigger": {"role": "fixer", "turn": 1, "context": context},
                      "response": {"tool_calls": [fix_call(i)], "delay_s": delay_s}})
    return {"name": "merge-queue", "rules": rules, "default": {"text": "no script"}}


def events(run_dir: Path, kind: str) -> list[dict]:
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event_type"] == kind]


def results(run_dir: Path) -> dict[str, dict]:
    return {r["test_id"]: r for r in (json.loads(p.read_text()) for p in (run_dir / "results").glob("*.json"))}


def verdicts(result: dict) -> list[str]:
    return [a["verdict"] for a in result["attempts"]]


def assert_only_validated_in(workspace: Path, run_dir: Path, n: int, fixed: list[str]) -> None:
    """The workspace holds exactly the accepted fixes (each accepted in a batch whose
    check passed), and never the breaking edit."""
    accepted = [t for e in events(run_dir, "batch_accepted") for t in e["tests"]]
    assert sorted(accepted) == sorted(fixed)
    checked_ok = [set(e["tests"]) for e in events(run_dir, "batch_checked") if e["ok"]]
    for e in events(run_dir, "batch_accepted"):
        assert set(e["tests"]) in checked_ok or any(set(e["tests"]) <= s for s in checked_ok)
    assert (workspace / "calc" / "shared.py").read_text() == SHARED
    for i in range(n):
        text = (workspace / "calc" / f"m{i:02d}.py").read_text()
        assert ("return 1" in text) == (tid(i) in fixed), (i, text)


async def queue_run(temporal_env, tmp_path, **options) -> tuple[RunSummary, Path]:
    """Drive the project in ``tmp_path / "p"`` in queue mode (4 at once, batches of up to 8
    unless ``options`` say otherwise), replay its history; the summary and the run directory."""
    request = fix_request(tmp_path / "p", tmp_path, **{"concurrency": 4, "max_batch": 8, "validation": "queue",
                                                        **options})
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)
    return summary, Path(request.run_dir)


async def test_a_batch_that_passes_is_accepted_whole(temporal_env, scripted, tmp_path):
    failing = make_project(tmp_path / "p", 4)
    scripted(scenario(4))
    summary, run_dir = await queue_run(temporal_env, tmp_path)
    assert summary.state == "completed" and sorted(summary.fixed) == failing
    assert summary.final.failed == 0 and summary.attempts == 4
    # The four fixes were validated together: fewer full-suite runs than fixes.
    checks = events(run_dir, "batch_checked")
    assert len(checks) < 4 and all(c["ok"] for c in checks)
    accepted = events(run_dir, "batch_accepted")
    assert sum(len(e["tests"]) for e in accepted) == 4 and max(len(e["tests"]) for e in accepted) >= 2
    # Each fix says which batch accepted it: its result, its history, the reports.
    by_test = results(run_dir)
    for t in failing:
        assert by_test[t]["batch"] is not None and verdicts(by_test[t]) == ["PASS"]
    report = Path(summary.report_html).read_text()
    assert f"fix accepted in validation batch {by_test[failing[0]]['batch']}" in report
    views = {v.test_id: v for v in summary.tests}
    assert views[failing[0]].history[-1] == f"fix accepted in batch {by_test[failing[0]]['batch']}"
    # Nothing of the queue is left behind: no scratch worktree.
    assert not list(run_dir.glob("batches/*/workspace"))


async def test_a_batch_fills_with_the_proposals_that_arrive_while_it_gathers(temporal_env, scripted, tmp_path):
    """Eight children propose side by side, their fixes arriving one after another
    (the model answers test i after 0.3·i s): the first batch does not leave with the
    first proposal alone, it takes those arriving while it gathers."""
    failing = make_project(tmp_path / "p", 8)
    sc = scenario(8)
    for rule in sc["rules"]:
        context = rule["trigger"].get("context", "")
        if rule["trigger"].get("turn") == 1 and context:
            rule["response"]["delay_s"] = 0.3 * int(context.removeprefix("::test_value_").removesuffix("$"))
    scripted(sc)
    summary, run_dir = await queue_run(temporal_env, tmp_path, concurrency=8, max_batch=8, test_impact=False)
    assert summary.state == "completed" and sorted(summary.fixed) == failing
    batches = [e["tests"] for e in events(run_dir, "batch_accepted")]
    assert sum(len(b) for b in batches) == 8
    assert len(batches[0]) >= 4, batches  # not one proposal at a time
    assert len(batches) <= 2, batches


async def test_a_regressing_fix_is_found_by_bisection_and_retried_with_the_regression(
        temporal_env, scripted, tmp_path):
    failing = make_project(tmp_path / "p", 4)
    server = scripted(scenario(4, breaking={2: [BREAK]}))
    # Without test impact (the next test has it): plain bisection.
    request = fix_request(tmp_path / "p", tmp_path, concurrency=4, max_batch=8, validation="queue",
                          test_impact=False)
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)

    run_dir = Path(request.run_dir)
    assert summary.state == "completed" and sorted(summary.fixed) == failing
    assert summary.final.failed == 0 and summary.regressions_prevented == 1
    assert not (run_dir / "impact.json").exists()
    by_test = results(run_dir)
    bad = by_test[tid(2)]
    assert verdicts(bad) == ["REGRESSION", "PASS"]
    assert GUARD in bad["attempts"][0]["reason"]
    assert all(verdicts(by_test[t]) == ["PASS"] for t in failing if t != tid(2))
    # The retry was told why: the fixer's second conversation for it shows the regression.
    retry = [r for r in server.requests if r.role == "fixer" and r.context.endswith(tid(2)) and r.iteration == 2]
    assert retry and retry[0].turn == 1
    # The failing batch was bisected: every check without the breaking fix passed, and a
    # smaller part with it named the guard.
    checks = events(run_dir, "batch_checked")
    whole = next(c for c in checks if tid(2) in c["tests"])
    assert not whole["ok"] and len(whole["tests"]) > 1
    assert any(not c["ok"] and tid(2) in c["tests"] and GUARD in c["regressions"]
               and len(c["tests"]) < len(whole["tests"]) for c in checks)
    assert all(c["ok"] for c in checks if tid(2) not in c["tests"])
    assert_only_validated_in(run_dir / "workspace", run_dir, 4, failing)


async def test_each_attempt_analyses_the_failure_its_previous_attempt_left(temporal_env, scripted, tmp_path):
    """Queue mode: attempt 1's fix makes the test fail differently (7 == 1 instead of 0 == 1);
    attempt 2's analysis is of that failure, as when each attempt validates itself."""
    failing = make_project(tmp_path / "p", 2)
    wrong = {"name": "replace_in_file", "input": {"path": "calc/m00.py", "old_text": "return 0  # bug",
                                                  "new_text": "return 7"}}
    sc = scenario(2)
    sc["rules"].append({"priority": 10, "trigger": {"role": "fixer", "turn": 1, "context": "::test_value_00$",
                                                    "iteration": 1}, "response": {"tool_calls": [wrong]}})
    server = scripted(sc)
    summary, run_dir = await queue_run(temporal_env, tmp_path, concurrency=2)
    assert summary.state == "completed" and sorted(summary.fixed) == failing
    assert verdicts(results(run_dir)[tid(0)]) == ["FAIL", "PASS"]

    def failure_shown(iteration: int) -> str:
        """The failure block the analyzer was shown (its message before the pattern analysis)."""
        asked = next(r for r in server.requests if r.role == "analyzer" and r.context.endswith(tid(0))
                     and r.iteration == iteration and r.turn == 1)
        return json.dumps(asked.body["messages"][0]).split("pattern analysis")[0]

    assert "assert 0 == 1" in failure_shown(1) and "assert 7" not in failure_shown(1)
    assert "assert 7 == 1" in failure_shown(2) and "assert 0 == 1" not in failure_shown(2)


async def test_test_impact_names_the_regressing_fix_without_a_suite_run_or_bisection(
        temporal_env, scripted, tmp_path):
    failing = make_project(tmp_path / "p", 4)
    scripted(scenario(4, breaking={2: [BREAK]}))
    summary, run_dir = await queue_run(temporal_env, tmp_path)
    assert summary.state == "completed" and sorted(summary.fixed) == failing
    assert summary.final.failed == 0 and summary.regressions_prevented == 1
    # The map: each module is run by its own test, shared.py by the guard alone.
    found = json.loads((run_dir / "impact.json").read_text())["files"]
    assert found["calc/shared.py"] == [GUARD]
    assert all(found[f"calc/m{i:02d}.py"] == [tid(i)] for i in range(4))
    assert any(n.startswith("test impact: ") for n in summary.notes)
    by_test = results(run_dir)
    assert verdicts(by_test[tid(2)]) == ["REGRESSION", "PASS"] and GUARD in by_test[tid(2)]["attempts"][0]["reason"]
    checks = events(run_dir, "batch_checked")
    # The batch's quick check ran the guard (its files are the guard's) beside the fixes' tests:
    # it failed there and alone, so the batch failed with no full-suite run ...
    whole = next(c for c in checks if tid(2) in c["tests"])
    assert not whole["ok"] and len(whole["tests"]) > 1
    assert whole["suite_runs"] == 0 and whole["impacted"] >= 1 and whole["regressions"] == [GUARD]
    # ... and the fixes whose files the guard never ran were checked first, as one part, and accepted.
    assert sorted(whole["innocent"]) == sorted(set(whole["tests"]) - {tid(2)})
    rest = next(c for c in checks if set(c["tests"]) == set(whole["innocent"]))
    assert rest["ok"]
    # No bisection: no other failing check held the breaking fix with others.
    assert [c for c in checks if not c["ok"] and tid(2) in c["tests"]] == [whole]
    assert_only_validated_in(run_dir / "workspace", run_dir, 4, failing)


async def test_an_impacted_test_that_only_passes_inside_the_whole_suite_is_not_blamed(
        temporal_env, scripted, tmp_path):
    # The guard runs m00.py (so fix 0's quick check selects it) but passes only after tests/test_aaa.py
    # ran in the same session: selected on its own it fails, with or without any fix.
    failing = make_project(tmp_path / "p", 3,
                           guard="assert getattr(__import__('calc.shared').shared, 'READY', False) "
                                 "and m00.value() in (0, 1)")
    (tmp_path / "p" / "tests" / "test_aaa.py").write_text(
        "import calc.shared\n\n\ndef test_ready():\n    calc.shared.READY = True\n")
    scripted(scenario(3))
    summary, run_dir = await queue_run(temporal_env, tmp_path, concurrency=3)
    assert summary.state == "completed" and sorted(summary.fixed) == failing
    assert summary.regressions_prevented == 0 and summary.final.failed == 0
    assert all(verdicts(r) == ["PASS"] for r in results(run_dir).values())
    checks = events(run_dir, "batch_checked")
    # The guard was in the quick check (impacted), failed there, yet the full suite decided.
    with_guard = [c for c in checks if tid(0) in c["tests"]]
    assert with_guard and with_guard[0]["impacted"] >= 1 and with_guard[0]["suite_runs"] >= 1
    assert all(c["ok"] and c["regressions"] == [] for c in checks)


async def test_a_test_fixed_along_with_another_while_its_own_fix_is_written_ends_fixed(
        temporal_env, scripted, tmp_path):
    # Two tests, one bug (in m00.py): the second test's fixer writes the same fix while the first's is
    # validated; once that is accepted the second test passes, and its stale fix no longer applies.
    make_project(tmp_path / "p", 1)
    (tmp_path / "p" / "tests" / "test_values.py").write_text(
        "from calc import m00\n\n\ndef test_value_00():\n    assert m00.value() == 1\n\n\n"
        "def test_value_01():\n    assert m00.value() + 1 == 2\n")
    rules = scenario(1)["rules"] + [{"trigger": {"role": "fixer", "turn": 1, "context": "::test_value_01$"},
                                     "response": {"tool_calls": [fix_call(0)]}}]
    scripted({"name": "fixed-along", "rules": rules, "default": {"text": "no script"}})
    request = fix_request(tmp_path / "p", tmp_path, validation="queue", escalation_deadline_s=600)
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)

    assert summary.state == "completed" and summary.final.failed == 0
    assert sorted(summary.fixed) == [tid(0), tid(1)] and summary.escalated == []
    views = {v.test_id: v for v in summary.tests}
    # Whichever fix was accepted, the other test passed with it: fixed, without escalating.
    assert any("fixed along" in line for v in views.values() for line in v.history) or all(
        "fix accepted in batch" in v.history[-1] for v in views.values())
    assert "return 1" in (Path(request.run_dir) / "workspace" / "calc" / "m00.py").read_text()


async def test_two_fixes_that_regress_only_together_one_is_accepted(temporal_env, scripted, tmp_path):
    failing = make_project(tmp_path / "p", 2, guard="assert m00.value() + m01.value() < 2")
    scripted(scenario(2))
    request = fix_request(tmp_path / "p", tmp_path, concurrency=2, max_batch=8, validation="queue", max_attempts=1,
                          escalation_deadline_s=1)
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)

    run_dir = Path(request.run_dir)
    assert summary.state == "completed" and len(summary.fixed) == 1 and len(summary.skipped) == 1
    [kept], [rejected] = summary.fixed, summary.skipped
    by_test = results(run_dir)
    assert verdicts(by_test[kept]) == ["PASS"]
    assert verdicts(by_test[rejected]) == ["REGRESSION"] and GUARD in by_test[rejected]["attempts"][0]["reason"]
    checks = events(run_dir, "batch_checked")
    # Together they failed; each alone passed: the first was kept, the second judged on top of it.
    assert any(not c["ok"] and sorted(c["tests"]) == failing for c in checks)
    assert any(c["ok"] and c["tests"] == [kept] for c in checks)
    assert any(c["ok"] and c["tests"] == [rejected] for c in checks)
    assert summary.final.failed == 1 and summary.still_failing == [rejected]  # the guard passes
    assert_only_validated_in(run_dir / "workspace", run_dir, 2, [kept])


FLAKY = ("marker = Path('.flaky-seen')\n    if '/batches/' in str(Path.cwd()) and not marker.exists():\n"
         "        marker.write_text('seen')\n        raise AssertionError('flaky: fails the first time in a batch')")


async def test_a_flaky_test_in_a_batch_is_not_blamed_on_a_fix(temporal_env, scripted, tmp_path):
    failing = make_project(tmp_path / "p", 3, guard=FLAKY)
    scripted(scenario(3))
    summary, run_dir = await queue_run(temporal_env, tmp_path, concurrency=3)
    assert summary.state == "completed" and sorted(summary.fixed) == failing
    assert summary.regressions_prevented == 0 and summary.attempts == 3 and summary.final.failed == 0
    assert GUARD in summary.flaky and any("flaky, not blamed" in n for n in summary.notes)
    checks = events(run_dir, "batch_checked")
    assert checks and all(c["ok"] and c["flaky"] == [GUARD] for c in checks)
    assert all(verdicts(r) == ["PASS"] for r in results(run_dir).values())


async def wait_for_phase(handle: WorkflowHandle, prefix: str, timeout_s: float = 240) -> str:
    for _ in range(int(timeout_s / 0.2)):
        try:
            phase = await handle.query(FixSuiteWorkflow.phase)
            if phase.startswith(prefix):
                return phase
        except Exception:  # noqa: BLE001 - not started yet
            pass
        await asyncio.sleep(0.2)
    raise AssertionError(f"the run never reached {prefix!r}")


async def abort_at(client, request, phase: str, after_s: float = 0.0) -> tuple[RunSummary, WorkflowHandle, float]:
    """Run ``request`` on a worker of its own, abort it ``after_s`` seconds into ``phase``;
    its summary and handle (the history replayed), and how long the abort took to end it."""
    from greenloop.worker import build_worker  # one worker for the run; the test steers it

    queue = f"q-{uuid.uuid4().hex[:6]}"
    loop = asyncio.get_running_loop()
    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"abort-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue)
        await wait_for_phase(handle, phase)
        await asyncio.sleep(after_s)
        asked = loop.time()
        await handle.signal(FixSuiteWorkflow.abort_signal, f"stop while {phase}")
        summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=400)
        waited = loop.time() - asked
    await replays(client, handle)
    return summary, handle, waited


async def test_an_abort_mid_bisection_accepts_nothing_unvalidated(temporal_env, scripted, tmp_path):
    make_project(tmp_path / "p", 3, slow_s=1.5)
    scripted(scenario(3, breaking={1: [BREAK]}))
    request = fix_request(tmp_path / "p", tmp_path, concurrency=3, max_batch=8, validation="queue")
    summary, handle, _ = await abort_at(temporal_env.client, request, "bisecting batch")

    run_dir = Path(request.run_dir)
    assert summary.state == "aborted"
    assert_only_validated_in(run_dir / "workspace", run_dir, 3, summary.fixed)
    # The bisected batch was never accepted: none of its fixes is in the workspace.
    assert summary.fixed == [] and events(run_dir, "batch_accepted") == []
    # The cancelled check removes its scratch worktree as it ends, which may be just after the run ends.
    for _ in range(60):
        if not list(run_dir.glob("batches/*/workspace")):
            break
        await asyncio.sleep(0.5)
    assert not list(run_dir.glob("batches/*/workspace"))


async def test_an_abort_cancels_the_batch_check_in_flight(temporal_env, scripted, tmp_path):
    make_project(tmp_path / "p", 2)
    # Any pytest run on files with the first fix applied (only a batch check has them) takes two minutes.
    (tmp_path / "p" / "tests" / "conftest.py").write_text(
        "import pathlib\nimport time\n\n"
        "if 'return 1' in (pathlib.Path(__file__).parent.parent / 'calc' / 'm00.py').read_text():\n"
        "    time.sleep(120)\n")
    scripted(scenario(2))
    request = fix_request(tmp_path / "p", tmp_path, concurrency=2, max_batch=8, validation="queue")
    # Three seconds into the batch's check: its test process is running (and sleeping).
    summary, handle, waited = await abort_at(temporal_env.client, request, "validating batch", after_s=3)

    run_dir = Path(request.run_dir)
    assert summary.state == "aborted" and summary.fixed == []
    # The check in flight was cancelled, its test process killed: the run did not wait for it.
    assert waited < 60, waited
    assert events(run_dir, "batch_accepted") == []
    assert all("return 0" in (run_dir / "workspace" / "calc" / f"m{i:02d}.py").read_text() for i in range(2))
    assert not list(run_dir.glob("batches/*/workspace"))


async def test_a_worker_lost_mid_bisection_accepts_nothing_unvalidated(
        temporal_env, scripted, tmp_path, hosts_for):  # noqa: F811 - the fixture
    failing = make_project(tmp_path / "p", 3, slow_s=1.5)
    hosts = await hosts_for(scripted(scenario(3, breaking={1: [BREAK]})))
    client = temporal_env.client
    request = request_for(tmp_path / "p", tmp_path, concurrency=3, max_batch=8, validation="queue")
    run_id = f"lostq-{uuid.uuid4().hex[:6]}"
    handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=hosts[0].queue)
    await wait_for_phase(handle, "bisecting batch")
    [holder] = [h for h in hosts if h.holds(run_id)]
    [survivor] = [h for h in hosts if h is not holder]
    holder.kill()

    summary: RunSummary = await asyncio.wait_for(handle.result(), timeout=400)
    await replays(client, handle)
    assert summary.state == "completed" and sorted(summary.fixed) == failing and summary.final.failed == 0
    assert any(f"rebuilt on {survivor.host_queue}" in n for n in summary.notes), summary.notes
    run_dir = survivor.run_dir(run_id)
    # Only validated fixes were ever accepted: the rebuilt workspace replays them, the breaking edit never.
    workspace = run_dir / "workspace"
    assert (workspace / "calc" / "shared.py").read_text() == SHARED
    assert all("return 1" in (workspace / "calc" / f"m{i:02d}.py").read_text() for i in range(3))
    accepted_here = [t for e in events(run_dir, "batch_accepted") for t in e["tests"]]
    assert accepted_here and set(accepted_here) <= set(failing)
    views = {v.test_id: v for v in summary.tests}
    assert views[tid(1)].state == FixState.FIXED
    bad = json.loads((run_dir / "results" / f"{slug(tid(1))}.json").read_text())
    assert Verdict.PASS.value in verdicts(bad)


async def test_queue_mode_continues_as_new_and_rolls_back_by_hand(temporal_env, scripted, tmp_path):
    """Two tests per workflow run: the first run validates its fixes and continues as new
    with them accepted; a fix the first run accepted is rolled back by hand while the
    second run works (the accepted edit sets travelled with it)."""
    failing = make_project(tmp_path / "p", 4)
    sc = scenario(4)
    # The second run's analyses take a while: time to roll back while it works.
    sc["rules"].insert(0, {"priority": 10, "trigger": {"role": "analyzer", "context": "::test_value_0[23]$"},
                           "response": {"text": "## Root Cause\nvalue() returns 0.", "delay_s": 6}})
    scripted(sc)
    client = temporal_env.client
    request = fix_request(tmp_path / "p", tmp_path, concurrency=2, tests_per_run=2, validation="queue")
    run_id = f"qcan-{uuid.uuid4().hex[:6]}"
    from greenloop.worker import build_worker

    queue = f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
        for _ in range(600):
            if (await client.get_workflow_handle(run_id).describe()).run_id != handle.first_execution_run_id:
                break
            await asyncio.sleep(0.1)
        latest = client.get_workflow_handle(run_id)
        views = {v.test_id: v for v in await latest.query(FixSuiteWorkflow.status)}
        first = sorted(t for t, v in views.items() if v.state == FixState.FIXED)
        assert len(first) == 2
        undone = first[0]
        assert await asyncio.wait_for(latest.execute_update(FixSuiteWorkflow.rollback, undone), 120) \
            == f"rolled back {undone}"
        summary: RunSummary = await asyncio.wait_for(handle.result(), 240)
        assert await replays(client, handle) == 2

    assert summary.state == "completed" and summary.skipped == [undone]
    assert sorted(summary.fixed) == sorted(set(failing) - {undone})
    assert summary.still_failing == [undone] and summary.final.failed == 1
    ws = Path(request.run_dir, "workspace")
    for i in range(4):
        assert ("return 1" in (ws / "calc" / f"m{i:02d}.py").read_text()) == (tid(i) != undone)


async def test_one_bug_failing_thirty_tests_in_three_files_is_one_conversation(temporal_env, scripted, tmp_path):
    """One function broken in one line fails 30 tests in 3 files: they are one root-cause group
    (one top suspect); only its root is asked for (one analyzer and one fixer conversation,
    counted at the scripted server), the others wait for its verdict and pass along with it."""
    root = tmp_path / "p"
    (root / "text").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "text" / "__init__.py").write_text("")
    (root / "text" / "slug.py").write_text(
        "def slugify(title):\n    words = title.strip().lower().split()\n    return '_'.join(words)  # bug\n")
    (root / "text" / "pages.py").write_text(
        "from text.slug import slugify\n\n\ndef url(title):\n    return '/' + slugify(title)\n")
    names = ["pages", "posts", "tags"]
    for f, name in enumerate(names):
        (root / "tests" / f"test_{name}.py").write_text("from text.pages import url\n" + "".join(
            f"\n\ndef test_{name}_{i:02d}():\n    assert url('a b {i}') == '/a-b-{i}'\n" for i in range(10)))
    (root / "tests" / "test_single.py").write_text(
        "from text.pages import url\n\n\ndef test_one_word():\n    assert url('Home') == '/home'\n")
    (root / "pyproject.toml").write_text('[project]\nname = "text"\nversion = "0"\n')
    server = scripted({"name": "one-bug", "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "slugify joins words with underscores."}},
        {"trigger": {"role": "fixer", "turn": 1}, "response": {"tool_calls": [
            {"name": "str_replace_based_edit_tool", "input": {
                "command": "str_replace", "path": "text/slug.py",
                "old_str": "return '_'.join(words)  # bug", "new_str": "return '-'.join(words)"}}]}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "Words are joined with dashes."}},
    ], "default": {"text": "no script"}})
    summary, run_dir = await queue_run(temporal_env, tmp_path, concurrency=8)

    failing = [f"tests/test_{name}.py::test_{name}_{i:02d}" for name in names for i in range(10)]
    assert summary.state == "completed" and summary.initial.failed == 30 and summary.final.failed == 0
    assert sorted(summary.fixed) == sorted(failing) and summary.escalated == []
    asked = {r.context.split("/", 1)[1] for r in server.requests}
    assert len(asked) == 1, asked  # one test's conversations: the group's root
    assert [r.role for r in server.requests] == ["analyzer", "fixer", "fixer"]
    along = [v for v in summary.tests if any("fixed along" in line for line in v.history)]
    assert len(along) == 29


def batch_checks(history) -> list[tuple[int, int | None, dict]]:
    """The parent's batch checks: (scheduled event id, completed event id or None, input)."""
    scheduled: dict[int, dict] = {}
    completed: dict[int, int] = {}
    for e in history.events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            a = e.activity_task_scheduled_event_attributes
            if a.activity_type.name == "check_batch":
                scheduled[e.event_id] = json.loads(a.input.payloads[0].data)
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            completed[e.activity_task_completed_event_attributes.scheduled_event_id] = e.event_id
    return [(s, completed.get(s), inp) for s, inp in scheduled.items()]


async def test_the_next_batch_is_checked_on_top_of_the_batch_being_judged(temporal_env, scripted, tmp_path):
    """Batches of two, every check slow (each pytest session sleeps): while batch 1 is
    checked, batch 2 is checked on top of it (its check starts before batch 1's ends,
    the history says so); batch 1 passes whole, so batch 2's check stands and is not redone."""
    failing = make_project(tmp_path / "p", 6, slow_s=1.0)
    scripted(scenario(6))
    request = fix_request(tmp_path / "p", tmp_path, concurrency=6, max_batch=2, validation="queue",
                          test_impact=False)
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)
    run_dir = Path(request.run_dir)
    assert summary.state == "completed" and sorted(summary.fixed) == failing
    checks = batch_checks(await handle.fetch_history())
    overlapping = [(first, second) for first in checks for second in checks
                   if first[1] is not None and first[0] < second[0] < first[1] and second[2]["ahead"]]
    assert overlapping, [(s, c, i["label"], [a["test_id"] for a in i["ahead"]]) for s, c, i in checks]
    first, second = overlapping[0]
    assert [c["test_id"] for c in second[2]["ahead"]] == [c["test_id"] for c in first[2]["candidates"]]
    assert not set(c["test_id"] for c in second[2]["candidates"]) & set(c["test_id"] for c in first[2]["ahead"])
    # Every batch passed whole: each speculative check stood (one check per batch, nothing redone).
    accepted = events(run_dir, "batch_accepted")
    assert len(events(run_dir, "batch_checked")) == len(accepted) == len(checks)
    assert not [n for n in summary.notes if "checked again on the accepted state" in n]
    assert_only_validated_in(run_dir / "workspace", run_dir, 6, failing)

