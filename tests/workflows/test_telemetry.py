"""Telemetry of a real worker process (`greenloop worker --metrics-port`, OTLP configured by the standard
variables) during a real run: its Prometheus endpoint is scraped while the run goes and the counters move;
a small OTLP/HTTP receiver on 127.0.0.1 receives the spans of sandbox runs and model calls."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
import uuid
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from greenloop.domain.answers import Answer, AnswerChoice
from greenloop.domain.states import FixState
from greenloop.llm.scenario import Scenario
from greenloop.llm.scripted_server import ScriptedLLMServer
from greenloop.reports.record import RunSummary
from greenloop.telemetry import ESCALATED_QUERY
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from tests.conftest import REPO
from tests.workflows.conftest import DEMO, fix_request, wait_for_view

SCENARIO = DEMO.parent / "scenarios" / "demo-python.yaml"
FAILING = {"tests/test_cart.py::test_add_same_sku_merges_quantities", "tests/test_cart.py::test_discount",
           "tests/test_money.py::test_format_whole_euros"}
TARGET = "tests/test_cart.py::test_discount"
SAMPLE = re.compile(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OTLPReceiver:
    """An OTLP/HTTP trace receiver (protobuf) on 127.0.0.1: every span it was sent."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/v1/traces":
                    receiver.requests.append(ExportTraceServiceRequest.FromString(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list[tuple[str, dict]]:
        out = []
        for req in self.requests:
            for rs in req.resource_spans:
                for ss in rs.scope_spans:
                    for sp in ss.spans:
                        attrs = {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in sp.attributes}
                        out.append((sp.name, attrs))
        return out


def scrape(port: int) -> dict[str, float]:
    """The endpoint's samples summed over their labels except the ones named in the key: name{k="v"}."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    samples: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if not m or line.startswith("#"):
            continue
        name, labels, value = m.group(1), m.group(2) or "", float(m.group(3))
        samples[name] += value
        for label in ("state", "kind", "run", "role"):
            if lm := re.search(rf'{label}="([^"]*)"', labels):
                samples[f'{name}{{{label}="{lm.group(1)}"}}'] += value
    return dict(samples)


async def start_worker(address: str, queue: str, port: int, env: dict[str, str]) -> subprocess.Popen:
    """`greenloop worker --metrics-port`, once its endpoint answers."""
    worker = subprocess.Popen([sys.executable, "-m", "greenloop.cli.main", "worker", "--address", address,
                               "--task-queue", queue, "--metrics-port", str(port)], cwd=REPO, env={**os.environ, **env},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for _ in range(150):
        try:
            scrape(port)
            return worker
        except OSError:
            await asyncio.sleep(0.2)
    worker.kill()
    raise AssertionError(f"the metrics endpoint never answered: {worker.communicate()[0][-2000:]}")


def queue_checks(run_dir: str) -> list[dict]:
    """The validation queue's checks, as the run logged them."""
    lines = Path(run_dir, "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event_type"] == "batch_checked"]


@pytest.mark.parametrize("validation", ["queue", "each"])
async def test_worker_metrics_move_during_a_run_and_spans_reach_otlp(temporal_env, demo_repo, tmp_path, validation):
    receiver = OTLPReceiver()
    llm = ScriptedLLMServer(Scenario.load(SCENARIO)).start()
    port, queue = free_port(), f"tel-{uuid.uuid4().hex[:6]}"
    address = temporal_env.client.service_client.config.target_host
    env = {"ANTHROPIC_BASE_URL": llm.base_url, "ANTHROPIC_API_KEY": "scripted-test-key",
           "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "200",
           "OTEL_SERVICE_NAME": "greenloop-test-worker", "GREENLOOP_HOME": str(tmp_path / "home")}
    worker = await start_worker(address, queue, port, env)
    try:
        request = fix_request(demo_repo, tmp_path, validation=validation)
        handle = await temporal_env.client.start_workflow(FixSuiteWorkflow.run, request,
                                                          id=f"tel-{uuid.uuid4().hex[:6]}", task_queue=queue,
                                                          result_type=RunSummary)
        result = asyncio.ensure_future(handle.result())
        during: list[float] = []  # sandbox runs counted, read while the run was going
        while not result.done():
            during.append(scrape(port).get("greenloop_sandbox_seconds_count", 0.0))
            await asyncio.wait({result}, timeout=0.5)
        summary = await result
        final = scrape(port)
    finally:
        worker.send_signal(signal.SIGTERM)  # a graceful stop flushes the spans still buffered
        output = worker.communicate(timeout=60)[0]
        llm.stop()
        receiver.server.shutdown()
    assert summary.state == "completed" and len(summary.fixed) == 3, output[-3000:]

    # Counters moved while the run went: more sandbox runs counted at a later look than at an earlier one.
    moving = [x for x in during if 0 < x < final["greenloop_sandbox_seconds_count"]]
    assert moving, (during, final["greenloop_sandbox_seconds_count"])
    assert final['greenloop_tests_finished_total{state="FIXED"}'] == 3
    assert final['greenloop_fix_attempts_total{state="FIXED"}'] == 3
    singles = final['greenloop_validation_runs_total{kind="single"}']
    # The final verdict reuses the last accepted batch's suite run when it ran on the same files (queue mode).
    reused = any(n.startswith("the final verdict is the suite run") for n in summary.notes)
    assert not (reused and validation == "each")
    if validation == "each":
        assert singles == 3 and final['greenloop_validation_runs_total{kind="suite"}'] == 3
        # initial, flaky check, 3 suite validations, final: 6 suite runs; 3 tests alone.
        assert final['greenloop_sandbox_seconds_count{run="suite"}'] == 6
    else:  # the full-suite runs the queue's checks logged, no more: at most one per fix
        suites = sum(e["suite_runs"] for e in queue_checks(request.run_dir))
        assert 1 <= suites <= 3 and final['greenloop_validation_runs_total{kind="suite"}'] == suites
        # with initial, flaky check, and the final run unless it reused the last batch's
        assert final['greenloop_sandbox_seconds_count{run="suite"}'] == 2 + suites + (not reused)
        # the batches' own tests are judged from their suite runs: a single run only where a check logged one
        assert singles == sum(e["single_runs"] for e in queue_checks(request.run_dir))
    assert final['greenloop_sandbox_seconds_count{run="single"}'] == singles  # every single run validated a fix
    assert final["greenloop_sandbox_seconds_sum"] > 0
    assert final['greenloop_llm_tokens_total{kind="input"}'] == summary.usage.input_tokens
    assert final['greenloop_llm_tokens_total{kind="output"}'] == summary.usage.output_tokens
    assert abs(final["greenloop_llm_cost_usd_sum"] - summary.usage.cost_usd) < 1e-6
    assert final["greenloop_llm_cost_usd_count"] == summary.usage.calls  # one per model call
    # One analysis per test, and one more for each attempt the validation queue had made again on
    # the current files (two fixes change shop/cart.py: one proposed while the other was validated
    # is stale once that one is accepted; the run says so).
    remade = sum("made again on the current files" in h for v in summary.tests for h in v.history)
    assert final['greenloop_llm_cost_usd_count{role="analyzer"}'] == 3 + remade
    assert "greenloop_escalations_waiting" in final
    assert any(k.startswith("temporal_") for k in final)  # the SDK's own metrics on the same endpoint
    assert final.get("temporal_workflow_completed_total", 0) >= 1
    # The Grafana dashboard asks only for Greenloop metrics the worker serves.
    dashboard = (REPO / "deploy" / "grafana-dashboard.json").read_text()
    wanted = set(re.findall(r"greenloop_\w+", dashboard))
    assert len(wanted) >= 8 and wanted <= set(final), wanted - set(final)

    spans = receiver.spans()
    sandbox_runs = [a for n, a in spans if n == "greenloop.sandbox.run"]
    singles_run = [a for a in sandbox_runs if a.get("greenloop.label", "").endswith("single")]
    assert len(singles_run) == singles  # every run counted has its span
    alone = [a for a in singles_run if "greenloop.attempt" in a]  # a fix's own test, alone: its attempt named
    if validation == "each":
        assert {a["greenloop.test_id"] for a in alone} == FAILING and {a["greenloop.attempt"] for a in alone} == {1}
    else:  # alone, or with the tests its files are run by in one run (a span of its own, no single test)
        assert {a["greenloop.test_id"] for a in alone} <= FAILING and {a["greenloop.attempt"] for a in alone} <= {1}
        assert all(a["greenloop.label"] == "validate-batch-single" for a in singles_run if a not in alone)
    labels = {a["greenloop.label"] for a in sandbox_runs}
    assert labels >= {"initial", "flaky-check"} | ({"validate-batch-suite"} if validation == "queue" else set())
    assert ("final" in labels) == (not reused)
    calls = [a for n, a in spans if n == "greenloop.llm.call"]
    assert len(calls) == summary.usage.calls
    assert {a["greenloop.test_id"] for a in calls} == FAILING
    assert {a["greenloop.role"] for a in calls} == {"analyzer", "fixer"} and {a["greenloop.attempt"] for a in calls} == {1}
    assert sum(a["greenloop.llm.input_tokens"] for a in calls) == summary.usage.input_tokens
    assert sum(a["greenloop.llm.output_tokens"] for a in calls) == summary.usage.output_tokens
    assert any(n.startswith("RunActivity:run_suite") for n, _ in spans)  # Temporal's interceptor spans too
    resource = receiver.requests[0].resource_spans[0].resource
    assert any(a.key == "service.name" and a.value.string_value == "greenloop-test-worker"
               for a in resource.attributes)


async def test_escalations_waiting_counts_a_test_until_a_person_answers(private_temporal_env, demo_repo, tmp_path):
    # Its own server: the gauge counts the whole namespace, which tests running beside it would move.
    temporal_env = private_temporal_env
    llm = ScriptedLLMServer(Scenario.load(DEMO.parent / "scenarios" / "unfixable.yaml")).start()
    port, queue = free_port(), f"esc-{uuid.uuid4().hex[:6]}"
    address = temporal_env.client.service_client.config.target_host
    client = temporal_env.client
    before = (await client.count_workflows(ESCALATED_QUERY)).count  # other tests' runs may wait too
    worker = await start_worker(address, queue, port, {
        "ANTHROPIC_BASE_URL": llm.base_url, "ANTHROPIC_API_KEY": "scripted-test-key",
        "GREENLOOP_HOME": str(tmp_path / "home"), "GREENLOOP_ESCALATIONS_POLL_S": "0.3"})

    async def waiting_becomes(n: int) -> None:
        for _ in range(200):
            if scrape(port).get("greenloop_escalations_waiting") == n:
                return
            await asyncio.sleep(0.3)
        raise AssertionError(f"greenloop_escalations_waiting never became {n}: {scrape(port)}")

    try:
        await waiting_becomes(before)
        request = fix_request(demo_repo, tmp_path, select=[TARGET], max_attempts=1)
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=f"esc-{uuid.uuid4().hex[:6]}",
                                             task_queue=queue, result_type=RunSummary)
        await wait_for_view(client, child_id(handle.id, TARGET), lambda v: v.state == FixState.ESCALATED,
                            "ESCALATED")
        await waiting_becomes(before + 1)
        await client.get_workflow_handle(child_id(handle.id, TARGET)).execute_update(
            "answer", Answer(choice=AnswerChoice.SKIP, by="tester"), result_type=str)
        await waiting_becomes(before)
        assert (await handle.result()).skipped == [TARGET]
        assert scrape(port)['greenloop_tests_finished_total{state="SKIPPED"}'] == 1
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=60)
        llm.stop()
