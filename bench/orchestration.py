"""Durable-workflow overhead: N failing tests driven to green through the real
workflows, the real worker, the real sandbox and a real Temporal dev server,
with the scripted LLM at the provider boundary.

The generated project has one module per test (``calc/vNNNN.py``, an
off-by-one bug each) and one test file with N failing tests plus one that
passes. The scenario answers the analyzer with one rule and the fixer with
one rule per test (scenarios have no templating): a unique-string
``replace_in_file`` of that test's module, then "done". Every test goes
PENDING → ANALYZING → FIXING → VALIDATING → FIXED on its first attempt, and
every validation runs the test alone and then the whole suite:
that full-suite run per test is the product's real cost and is measured as
it is.

From the workflow histories (parent runs and every child) it reports:
  * wall time per test (the fixing phase of the parent, divided by N);
  * time in test runs (run_single_test + run_suite activities, and the
    sandboxed process alone), time in the LLM activities and in the scripted
    server itself, and the orchestration overhead = wall − test activities −
    LLM server time (Temporal scheduling, workflow tasks, child starts,
    prompt building, edits, records);
  * history events and bytes per test, and whether continue-as-new kicked in.

Usage: python bench/orchestration.py [--tests N] [--fix K] [--sandbox bwrap|local|docker|auto] [--fast] [--keep]
                                    [--suite light|heavy] [--delay-s S] [--module-kb K] [--concurrency C]
                                    [--progress-s S]

  --fix K   drive only K of the N failing tests (evenly spread, through
            FixRequest.select): the per-test cost at suite size N without
            waiting for all N (every validation still runs the N-test suite);
  --fast    a lean suite command through FixRequest.test_command (no pytest
            plugin autoload, one-line tracebacks); the single-test command
            and every validation step are the product's, unchanged;
  --suite heavy  every pytest session of the project pays a fixed setup
            (``HEAVY_SETUP_S``, a session fixture: a database, a build...),
            so one suite run costs seconds, not a second;
  --delay-s S  the scripted model answers every call S seconds late (a real
            model's latency); the bench prints the model-bound ideal, model
            calls × S ÷ concurrency, and the run's wall time against it;
  --module-kb K  each generated module padded to about K kB (the payload
            figures at large files: the largest payload in the histories and
            the state each continue-as-new carries);
  --concurrency C  FixRequest.concurrency (default: the product's default,
            derived from the model's request limit);
  --progress-s S  every S seconds, one line on stderr of what the run reached
            (children done, the parent runs' largest payload, the states
            continued as new), read from the live histories: a run too long
            for the session still leaves figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = "GREENLOOP_BENCH_SNAPSHOT"


def run_from_snapshot() -> None:
    """Re-run this script from a copy of the source tree. The worker's workflow
    sandbox re-imports workflow modules from disk for every new run (each child,
    each continue-as-new), so edits to the checkout during an hour-long bench
    would otherwise break it halfway."""
    if os.environ.get(SNAPSHOT) or "--in-place" in sys.argv:
        return
    snap = Path(tempfile.mkdtemp(prefix="greenloop-src-")) / "src"
    shutil.copytree(REPO, snap, ignore=shutil.ignore_patterns(
        ".venv", ".git", "__pycache__", "*_cache", "node_modules", "target", "*.egg-info"))
    script = snap / "bench" / Path(__file__).name
    os.execve(sys.executable, [sys.executable, str(script), *sys.argv[1:]], {**os.environ, SNAPSHOT: str(snap)})


if __name__ == "__main__":
    run_from_snapshot()
sys.path.insert(0, str(REPO))

from temporalio.api.enums.v1 import EventType  # noqa: E402
from temporalio.client import Client  # noqa: E402
from temporalio.contrib.pydantic import pydantic_data_converter  # noqa: E402
from temporalio.testing import WorkflowEnvironment  # noqa: E402

from greenloop.activities.batch import CheckResult  # noqa: E402
from greenloop.domain.llm import LLMSettings  # noqa: E402
from greenloop.llm.scenario import Scenario  # noqa: E402
from greenloop.llm.scripted_server import ScriptedLLMServer  # noqa: E402
from greenloop.reports.record import RunSummary  # noqa: E402
from greenloop.run_request import FixRequest  # noqa: E402
from greenloop.runner.plan import with_reports  # noqa: E402
from greenloop.runner.runs import SingleRun, SuiteRun  # noqa: E402
from greenloop.sandbox.models import SandboxSettings  # noqa: E402
from greenloop.server import search_attributes as search  # noqa: E402
from greenloop.server.dev import temporal_binary  # noqa: E402
from greenloop.server.history import run_chain  # noqa: E402
from greenloop.worker import build_worker  # noqa: E402
from greenloop.workflows.fix_suite import FixSuiteWorkflow  # noqa: E402

TEST_ACTIVITIES = {"run_single_test", "run_suite", "check_batch"}
LLM_ACTIVITIES = {"fixer_turn", "analyzer_turn"}


def name(i: int) -> str:
    return f"{i:04d}"


# The suite command of --fast: rendering hundreds of full tracebacks (with
# assertion introspection) is most of a big failing pytest run's time, and
# the worker venv's plugins (hypothesis, asyncio...) cost ~1 s to load.
FAST_COMMAND = with_reports("pytest", "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q --tb=line -p no:cacheprovider")


HEAVY_SETUP_S = 3.0  # --suite heavy: what every pytest session of the project pays before its tests


def filler(kb: int) -> str:
    """About ``kb`` kB of harmless module text (the file a fix lands in, at size)."""
    line = "def helper_{0}():\n    return {0}  # filler line of a large module\n\n\n"
    return "".join(line.format(i) for i in range(kb * 1024 // len(line.format(0)))) if kb else ""


def make_project(root: Path, n: int, heavy: bool = False, module_kb: int = 0) -> list[str]:
    """A Python project with ``n`` failing tests, one buggy module each; the failing ids."""
    (root / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "calc" / "__init__.py").write_text("")
    pad = filler(module_kb)
    for i in range(n):
        (root / "calc" / f"v{name(i)}.py").write_text(
            f'"""Value {i}."""\n\n\n{pad}def value():\n    return {i} + 1  # bug: off by one\n')
    if heavy:
        (root / "tests" / "conftest.py").write_text(
            "import time\n\nimport pytest\n\n\n@pytest.fixture(scope='session', autouse=True)\n"
            f"def heavy_setup():\n    time.sleep({HEAVY_SETUP_S})\n")
    lines = ["from calc import " + ", ".join(f"v{name(i)}" for i in range(n)), "", "",
             "def test_sanity():", "    assert 1 + 1 == 2", ""]
    for i in range(n):
        lines += ["", f"def test_value_{name(i)}():", f"    assert v{name(i)}.value() == {i}", ""]
    (root / "tests" / "test_values.py").write_text("\n".join(lines))
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
                                         'testpaths = ["tests"]\n')
    return [f"tests/test_values.py::test_value_{name(i)}" for i in range(n)]


def scenario(n: int, delay_s: float = 0.0) -> Scenario:
    """Analyzer: one rule. Fixer: the right edit for whichever test it is asked about, then done;
    every answer ``delay_s`` late."""
    rules: list[dict] = [
        {"name": "analyzer", "priority": 100, "trigger": {"role": "analyzer"},
         "response": {"text": "## Root Cause\nvalue() is off by one.\n## Recommended Fix\nReturn the value itself."}},
        {"name": "fixer-done", "priority": 90, "trigger": {"role": "fixer", "turn": 2},
         "response": {"text": "value() added one; it now returns the value itself."}},
    ]
    for i in range(n):
        rules.append({
            "name": f"fix-{name(i)}", "trigger": {"role": "fixer", "turn": 1, "context": f"::test_value_{name(i)}$"},
            "response": {"tool_calls": [{"name": "replace_in_file", "input": {
                "path": f"calc/v{name(i)}.py", "old_text": f"return {i} + 1  # bug: off by one",
                "new_text": f"return {i}"}}]},
        })
    for rule in rules:
        rule["response"]["delay_s"] = delay_s
    return Scenario.model_validate({"name": f"bench-{n}", "rules": rules, "default": {"text": "no script"}})


class TimedServer(ScriptedLLMServer):
    """The scripted server, timing how long it spends answering (to subtract it)."""

    def __init__(self, sc: Scenario) -> None:
        super().__init__(sc)
        self.busy_s = 0.0
        inner = self.llm.answer

        def timed(body, headers):
            t0 = time.perf_counter()
            try:
                return inner(body, headers)
            finally:
                self.busy_s += time.perf_counter() - t0

        self.llm.answer = timed  # type: ignore[method-assign]


# --- reading histories ------------------------------------------------------------


def ts(event) -> float:
    return event.event_time.ToDatetime().timestamp()


class Activities:
    """Activity executions of one history: type -> [(scheduled, started, completed, result payloads)]."""

    def __init__(self) -> None:
        self.by_type: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
        self.sandbox_s = 0.0  # the sandboxed test process itself (SuiteRun/SingleRun.duration_s)
        self.check_sandbox_s = 0.0  # batch checks: their clean full-suite run's process
        self.suite_runs = 0  # full-suite runs (each run_suite, and those inside each batch check)
        self.single_runs = 0  # runner invocations for single tests (alone, or a batch's tests together)
        self.reused = 0  # run_suite activities an earlier run of the same files stood for (the final verdict)
        self.first_suite_s = 0.0  # the first run_suite (the run's initial suite): one plain suite run

    def add(self, history) -> None:
        scheduled: dict[int, tuple[str, float]] = {}
        started: dict[int, float] = {}
        for e in history.events:
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                scheduled[e.event_id] = (e.activity_task_scheduled_event_attributes.activity_type.name, ts(e))
            elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                started[e.activity_task_started_event_attributes.scheduled_event_id] = ts(e)
            elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
                a = e.activity_task_completed_event_attributes
                kind, t_sched = scheduled[a.scheduled_event_id]
                self.by_type[kind].append((t_sched, started[a.scheduled_event_id], ts(e)))
                if kind in TEST_ACTIVITIES:
                    cls = {"run_suite": SuiteRun, "run_single_test": SingleRun, "check_batch": CheckResult}[kind]
                    [result] = pydantic_data_converter.payload_converter.from_payloads(
                        list(a.result.payloads), [cls])
                    if kind == "check_batch":
                        self.suite_runs += result.suite_runs
                        self.single_runs += result.single_runs
                        self.check_sandbox_s += result.suite.duration_s if result.suite else 0.0
                    elif kind == "run_suite" and result.reused_as is not None:
                        self.reused += 1  # an earlier run of the same files stood for it: nothing ran
                    else:
                        self.sandbox_s += result.duration_s
                        self.suite_runs += kind == "run_suite"
                        self.single_runs += kind == "run_single_test"
                    if kind == "run_suite" and not self.first_suite_s:
                        self.first_suite_s = ts(e) - started[a.scheduled_event_id]

    def run_s(self, kinds: set[str]) -> float:
        """Started → completed, summed over ``kinds``."""
        return sum(c - s for k in kinds for (_, s, c) in self.by_type.get(k, []))

    def all_run_s(self) -> float:
        return self.run_s(set(self.by_type))


async def stuck(client: Client, workflow_id: str) -> str | None:
    """Why the run (its latest parent run or its running child) cannot go on,
    when a workflow task keeps failing; such a run would otherwise hang forever."""
    d = (await client.get_workflow_handle(workflow_id).describe()).raw_description
    ids = [workflow_id, *(c.workflow_id for c in d.pending_children)]
    for wid in ids:
        handle = client.get_workflow_handle(wid)
        info = d if wid == workflow_id else (await handle.describe()).raw_description
        if info.pending_workflow_task.attempt > 2:
            for e in reversed((await handle.fetch_history()).events):
                if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
                    return f"{wid}: workflow task failing: {e.workflow_task_failed_event_attributes.failure.message}"
    return None


async def progress(client: Client, handle, t0: float) -> str:
    """One line of what the run reached so far, read from its parent runs' live histories: a run
    too long for the session still leaves its figures (tests done, the largest payload of the
    parent runs, the states it continued as new with)."""
    parents = await run_chain(client, handle.id, handle.first_execution_run_id or handle.result_run_id)
    events = [e for h in parents for e in h.events]
    done = sum(1 for e in events if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
    largest = max(events, key=payload_bytes)
    continued = [payload_bytes(e) for e in events
                 if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW]
    kind = EventType.Name(largest.event_type).removeprefix("EVENT_TYPE_").lower()
    return (f"[{time.perf_counter() - t0:7.1f} s, load {os.getloadavg()[0]:.1f}] {done} children done, "
            f"{len(parents)} parent run(s), {sum(e.ByteSize() for e in events) / 1e6:.2f} MB of parent history; "
            f"largest parent payload {payload_bytes(largest) / 1e3:.1f} kB ({kind}); "
            f"continued as new with {', '.join(f'{c / 1e3:.1f} kB' for c in continued) or 'nothing yet'}")


async def result_or_stuck(client: Client, handle, every_s: float = 0.0) -> RunSummary:
    """The run's result; fails fast with the cause when the run is stuck. With ``every_s``,
    prints the run's progress that often."""
    result = asyncio.ensure_future(handle.result())
    t0 = last = time.perf_counter()
    while True:
        done, _ = await asyncio.wait([result], timeout=20)
        if done:
            return result.result()
        if every_s and time.perf_counter() - last >= every_s:
            last = time.perf_counter()
            print(await progress(client, handle, t0), file=sys.stderr, flush=True)
        why = await stuck(client, handle.id)
        if why:
            result.cancel()
            raise SystemExit(f"the run is stuck: {why}")


# --- the benchmark ----------------------------------------------------------------


def payload_bytes(event) -> int:
    """The bytes of what an event carries in (input) or out (result, signal, child input)."""
    for field in ("activity_task_scheduled_event_attributes", "activity_task_completed_event_attributes",
                  "workflow_execution_signaled_event_attributes", "workflow_execution_started_event_attributes",
                  "workflow_execution_continued_as_new_event_attributes",
                  "start_child_workflow_execution_initiated_event_attributes",
                  "child_workflow_execution_completed_event_attributes",
                  "signal_external_workflow_execution_initiated_event_attributes",
                  "workflow_execution_completed_event_attributes", "marker_recorded_event_attributes"):
        if event.HasField(field):
            attrs = getattr(event, field)
            for part in ("input", "result"):
                if hasattr(attrs, part) and attrs.HasField(part):
                    return getattr(attrs, part).ByteSize()
            if hasattr(attrs, "details"):
                return sum(p.ByteSize() for p in attrs.details.values())
    return 0


async def bench(n: int, fix: int, backend: str, fast: bool, keep: bool, validation: str = "queue",
                concurrency: int | None = None, suite_heavy: bool = False, delay_s: float = 0.0,
                module_kb: int = 0, progress_s: float = 0.0) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="greenloop-bench-"))
    project = tmp / "project"
    every = make_project(project, n, suite_heavy, module_kb)
    failing = every[:: max(1, n // fix)][:fix]
    sc = scenario(n, delay_s)
    load = os.getloadavg()[0]
    server = TimedServer(sc).start()
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    os.environ["ANTHROPIC_API_KEY"] = "scripted-bench-key"
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(), data_converter=pydantic_data_converter,
        search_attributes=search.ALL, dev_server_log_level="error", ui=False,
    )
    try:
        client = env.client
        request = FixRequest(
            repo=str(project), run_dir=str(tmp / "run"), framework="pytest",
            test_command=FAST_COMMAND if fast else None, select=failing if fix < n else [],
            sandbox=SandboxSettings(backend=backend, timeout_s=600),
            llm=LLMSettings(model="claude-scripted", max_tool_turns=8),
            run_budget_s=7 * 24 * 3600, per_test_budget_s=3600, escalation_deadline_s=3600,
            validation=validation, concurrency=concurrency,
        )
        queue = f"bench-{uuid.uuid4().hex[:6]}"
        wid = f"bench-{n}-{uuid.uuid4().hex[:6]}"
        async with build_worker(client, task_queue=queue):
            t0 = time.perf_counter()
            handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=wid, task_queue=queue)
            summary = await result_or_stuck(client, handle, progress_s)
            wall = time.perf_counter() - t0
        assert summary.state == "completed", summary
        if sorted(summary.fixed) != sorted(failing) or (summary.final and summary.final.failed != n - len(failing)):
            raise SystemExit(f"not every test was fixed: fixed {len(summary.fixed)}/{n}, final {summary.final}, "
                             f"escalated {summary.escalated[:3]}, skipped {summary.skipped[:3]}, "
                             f"notes {summary.notes}")

        parents = await run_chain(client, wid, handle.first_execution_run_id or handle.result_run_id)
        parent_acts, child_acts = Activities(), Activities()
        child_ids: list[tuple[str, str]] = []
        initiated: list[float] = []
        records_done: list[float] = []
        for h in parents:
            parent_acts.add(h)
            for e in h.events:
                if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
                    we = e.child_workflow_execution_started_event_attributes.workflow_execution
                    child_ids.append((we.workflow_id, we.run_id))
                elif e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
                    initiated.append(ts(e))
        records_done = [c for (_, _, c) in parent_acts.by_type["record_result"]]
        children = [await client.get_workflow_handle(w, run_id=r).fetch_history() for w, r in child_ids]
        child_wall = 0.0
        for h in children:
            child_acts.add(h)
            child_wall += ts(h.events[-1]) - ts(h.events[0])

        fixing_s = max(records_done) - min(initiated)
        test_s = child_acts.run_s(TEST_ACTIVITIES) + parent_acts.run_s({"check_batch"})
        llm_s = child_acts.run_s(LLM_ACTIVITIES)
        other_s = child_acts.all_run_s() - test_s - llm_s + parent_acts.run_s({"record_result"})
        events_parent = sum(len(h.events) for h in parents)
        events_child = sum(len(h.events) for h in children)
        bytes_parent = sum(sum(e.ByteSize() for e in h.events) for h in parents)
        bytes_child = sum(sum(e.ByteSize() for e in h.events) for h in children)
        llm_calls = len(server.requests)
        events = [(kind, e) for kind, hs in (("parent", parents), ("child", children)) for h in hs for e in h.events]
        largest = max(events, key=lambda ke: payload_bytes(ke[1]))
        continued = [payload_bytes(e) for h in parents for e in h.events
                     if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW]
        by_kind: dict[str, int] = defaultdict(int)  # history bytes by event type: what makes histories big
        for h in [*parents, *children]:
            for e in h.events:
                by_kind[EventType.Name(e.event_type).removeprefix("EVENT_TYPE_").lower()] += e.ByteSize()
        heavy = sorted(by_kind.items(), key=lambda kv: -kv[1])[:3]
        # What dominates: each activity type's count and mean time from scheduled to completed
        # (queueing for a worker slot included), and the workflow tasks of every history.
        steps: dict[str, list[float]] = defaultdict(list)
        for acts in (parent_acts, child_acts):
            for kind, runs in acts.by_type.items():
                steps[kind] += [c - s for (s, _, c) in runs]
        dominant = sorted(steps.items(), key=lambda kv: -sum(kv[1]))[:6]
        workflow_tasks = sum(1 for h in [*parents, *children] for e in h.events
                             if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
        n = len(failing)  # per-test figures are per driven test
        result = dict(
            suite=len(every), n=n, backend=backend, fast=fast, wall=wall, fixing=fixing_s, child_wall=child_wall,
            test=test_s, sandbox=child_acts.sandbox_s + parent_acts.check_sandbox_s, llm_act=llm_s, llm_server=server.busy_s,
            other_act=other_s, setup=min(initiated) - ts(parents[0].events[0]),
            finish=ts(parents[-1].events[-1]) - max(records_done),
            events_parent=events_parent, events_child=events_child, bytes_parent=bytes_parent,
            bytes_child=bytes_child, runs=len(parents), children=len(children), llm_calls=llm_calls,
            max_parent_events=max(len(h.events) for h in parents),
            max_parent_bytes=max(sum(e.ByteSize() for e in h.events) for h in parents),
            suites=parent_acts.suite_runs + child_acts.suite_runs,
            validation_suites=child_acts.suite_runs + parent_acts.suite_runs
            - (len(parent_acts.by_type["run_suite"]) - parent_acts.reused),
            reused=parent_acts.reused,
            singles=parent_acts.single_runs + child_acts.single_runs,
            plain_suite=parent_acts.first_suite_s, batches=len(parent_acts.by_type["check_batch"]),
            validation=validation, concurrency=concurrency,
            tmp=str(tmp), heavy=heavy, dominant=dominant, workflow_tasks=workflow_tasks,
            activities=sum(len(v) for v in steps.values()), suite_kind="heavy" if suite_heavy else "light", delay_s=delay_s,
            in_flight=request.in_flight, module_kb=module_kb, load=(load, os.getloadavg()[0]),
            largest_payload=payload_bytes(largest[1]),
            largest_what=f"{largest[0]}: {EventType.Name(largest[1].event_type).removeprefix('EVENT_TYPE_').lower()}",
            continued_max=max(continued, default=0),
        )
        return result
    finally:
        server.stop()
        await env.shutdown()
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def table(r: dict) -> str:
    n = r["n"]
    overhead = r["fixing"] - r["test"] - r["llm_server"]
    temporal = r["fixing"] - r["test"] - r["llm_act"] - r["other_act"]
    rows = [
        ("tests driven to FIXED", f"{n}", ""),
        ("whole run (start → summary)", f"{r['wall']:.1f} s", f"{r['wall'] / n:.3f} s"),
        ("  setup: prepare, plan, initial + flaky-check suites, analysis", f"{r['setup']:.1f} s", ""),
        ("  finish: final suite, report, patch, branch", f"{r['finish']:.1f} s", ""),
        ("fixing phase (first child start → last result recorded)", f"{r['fixing']:.1f} s",
         f"{r['fixing'] / n:.3f} s"),
        ("  test-run activities (single + full suite)", f"{r['test']:.1f} s", f"{r['test'] / n:.3f} s"),
        ("    of which the sandboxed test process", f"{r['sandbox']:.1f} s", f"{r['sandbox'] / n:.3f} s"),
        ("  LLM activities (analyzer_turn + fixer_turn)", f"{r['llm_act']:.1f} s", f"{r['llm_act'] / n:.3f} s"),
        ("    of which the scripted LLM server", f"{r['llm_server']:.2f} s", f"{r['llm_server'] / n:.4f} s"),
        ("  other activities (apply_edits, record_result)", f"{r['other_act']:.1f} s", f"{r['other_act'] / n:.3f} s"),
        ("  Temporal (scheduling, workflow tasks, child starts)", f"{temporal:.1f} s", f"{temporal / n:.3f} s"),
        ("**orchestration overhead** (fixing − test runs − LLM server)", f"{overhead:.1f} s",
         f"**{overhead / n:.3f} s**"),
        ("history events: parent runs / children", f"{r['events_parent']} / {r['events_child']}",
         f"{(r['events_parent'] + r['events_child']) / n:.1f}"),
        ("history bytes: parent runs / children", f"{r['bytes_parent'] / 1e6:.2f} MB / {r['bytes_child'] / 1e6:.2f} MB",
         f"{(r['bytes_parent'] + r['bytes_child']) / n / 1e3:.1f} kB"),
        ("heaviest event types (bytes)", ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in r["heavy"]), ""),
        ("largest parent run: events / bytes", f"{r['max_parent_events']} / {r['max_parent_bytes'] / 1e6:.2f} MB", ""),
        (f"parent runs (continue-as-new every {FixRequest.model_fields['tests_per_run'].default} tests)",
         f"{r['runs']} ({'continued as new' if r['runs'] > 1 else 'no continue-as-new'})", ""),
        ("full-suite runs (all / validating fixes) / single-test runner invocations",
         f"{r['suites']} / {r['validation_suites']} / {r['singles']}",
         f"{r['suites'] / n:.3f} / {r['validation_suites'] / n:.3f}"),
        ("batch checks (validation queue)", f"{r['batches']}", ""),
        ("final verdict", "the last accepted batch's suite run (same files)" if r["reused"] else "its own suite run", ""),
        ("one plain suite run (the run's first, same bench run)", f"{r['plain_suite']:.2f} s", ""),
        ("**suite-equivalents** (whole run / one plain suite run)", f"**{r['wall'] / r['plain_suite']:.1f}**", ""),
        ("LLM requests", f"{r['llm_calls']}", f"{r['llm_calls'] / n:.1f}"),
        ("workflow tasks (parent runs and children)", f"{r['workflow_tasks']}", f"{r['workflow_tasks'] / n:.1f}"),
        ("activities (all types)", f"{r['activities']}", f"{r['activities'] / n:.1f}"),
        ("the six that take longest (scheduled → completed): count × mean = total",
         "; ".join(f"{k} {len(v)}× {sum(v) / len(v):.2f} s = {sum(v):.1f} s" for k, v in r["dominant"]), ""),
        ("largest payload in the histories (parent runs and children)",
         f"{r['largest_payload'] / 1e3:.1f} kB ({r['largest_what']})", ""),
        ("largest continue-as-new input", f"{r['continued_max'] / 1e3:.1f} kB" if r["continued_max"] else "none", ""),
    ]
    if r["delay_s"]:
        ideal = r["llm_calls"] * r["delay_s"] / r["in_flight"]
        rows += [("**model-bound ideal** (model calls × latency ÷ concurrency)",
                  f"{r['llm_calls']} × {r['delay_s']:g} s ÷ {r['in_flight']} = {ideal:.1f} s", ""),
                 ("**time to green ÷ ideal**", f"**{r['wall'] / ideal:.2f}**", "")]
    of = f" of {r['suite']}" if r["suite"] != n else ""
    extra = (f", model latency {r['delay_s']:g} s" if r["delay_s"] else "") + (
        f", {r['module_kb']} kB modules" if r["module_kb"] else "")
    head = (f"### {n}{of} failing tests, {r['suite_kind']} suite, sandbox `{r['backend']}`"
            f"{' (--fast)' if r['fast'] else ''}, validation `{r['validation']}`, concurrency {r['in_flight']}"
            f"{extra} (load average {r['load'][0]:.2f} at start, {r['load'][1]:.2f} at end)\n\n"
            "| measure | total | per test |\n|---|---|---|\n")
    return head + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)


def main() -> None:
    try:
        _main()
    finally:
        if os.environ.get(SNAPSHOT):  # the copy run_from_snapshot made
            shutil.rmtree(Path(os.environ[SNAPSHOT]).parent, ignore_errors=True)
    sys.stdout.flush()
    # The Temporal SDK's native threads can abort the interpreter at exit (sdk-python issue 300).
    os._exit(0)


def _main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tests", type=int, default=500)
    p.add_argument("--fix", type=int, default=None, help="drive only this many of the failing tests")
    p.add_argument("--sandbox", default="bwrap", choices=["bwrap", "local", "docker", "auto"])
    p.add_argument("--fast", action="store_true", help="a lean pytest command for the suite runs")
    p.add_argument("--keep", action="store_true", help="keep the generated project and run directory")
    p.add_argument("--validation", default="queue", choices=["queue", "each"], help="FixRequest.validation")
    p.add_argument("--concurrency", type=int, default=None,
                   help="FixRequest.concurrency (default: the product's, from the model's request limit)")
    p.add_argument("--suite", default="light", choices=["light", "heavy"],
                   help=f"heavy: every pytest session pays {HEAVY_SETUP_S:g} s of setup")
    p.add_argument("--delay-s", type=float, default=0.0, help="the scripted model's latency per call")
    p.add_argument("--module-kb", type=int, default=0, help="pad each generated module to about this many kB")
    p.add_argument("--in-place", action="store_true", help="run the checkout's code, not a snapshot of it")
    p.add_argument("--progress-s", type=float, default=0.0,
                   help="print the run's progress (to stderr) this often, read from the live parent histories")
    args = p.parse_args()
    fix = min(args.fix or args.tests, args.tests)
    r = asyncio.run(bench(args.tests, fix, args.sandbox, args.fast, args.keep, args.validation, args.concurrency,
                          args.suite == "heavy", args.delay_s, args.module_kb, args.progress_s))
    print(table(r))
    if args.keep:
        print(f"\n(kept in {r['tmp']})")


if __name__ == "__main__":
    main()
