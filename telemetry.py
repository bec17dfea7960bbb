"""Traces and metrics of the worker.

Traces: the Temporal tracing interceptor (server.client.connect) and
Greenloop's own spans (sandbox runs, model calls; each carrying the test id,
the fix attempt and, for model calls, the tokens) are exported over OTLP/HTTP
when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)
is set; the standard ``OTEL_*`` variables (headers, service name, resource
attributes, batch delays) apply.

Metrics: with ``greenloop worker --metrics-port PORT`` the Temporal runtime
serves Prometheus metrics on that port: the SDK's own (``temporal_*``) and
Greenloop's (``greenloop_*``: tests by final state, attempts, validation runs,
sandbox seconds, LLM tokens and dollars, escalations waiting), recorded
through the Temporal metric meter of the activity that did the work.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import re
from collections.abc import Iterator
from typing import Any

from opentelemetry import trace
from temporalio import activity
from temporalio.client import Client
from temporalio.common import MetricMeter
from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    PrometheusConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)

from .domain.llm import Usage

TRACER = trace.get_tracer("greenloop")
_subject: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("greenloop_subject", default={})
_provider: Any = None
_ATTEMPT = re.compile(r"validate-(\d+)-")


# --- traces -----------------------------------------------------------------------


def otlp_configured() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def setup_tracing() -> bool:
    """Export spans over OTLP/HTTP when the standard variables ask for it (once per process); whether they do."""
    global _provider
    if _provider is not None:
        return True
    if not otlp_configured():
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "greenloop-worker")})
    _provider = TracerProvider(resource=resource)
    _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(_provider)
    return True


def flush_traces() -> None:
    """Send the spans still buffered (before the process exits)."""
    if _provider is not None:
        _provider.force_flush(timeout_millis=5000)


@contextlib.contextmanager
def span(name: str, **attrs: Any) -> Iterator[trace.Span]:
    """A span named ``name``; its attributes (``greenloop.<key>``) also go to the spans opened inside it."""
    merged = {**_subject.get(), **{f"greenloop.{k}": v for k, v in attrs.items() if v is not None}}
    token = _subject.set(merged)
    try:
        with TRACER.start_as_current_span(name, attributes=merged) as current:
            yield current
    finally:
        _subject.reset(token)


def attempt_of(label: str) -> int | None:
    """The fix attempt a validation's label names (``validate-2-single`` -> 2)."""
    m = _ATTEMPT.match(label)
    return int(m.group(1)) if m else None


# --- metrics ----------------------------------------------------------------------


def core_logging() -> LoggingConfig:
    """The SDK core's own log lines (its Rust side: "workflow task duration exceeded",
    retried polls) forwarded to Python's logger ``temporalio.core``, so they go where the
    process sends its logs (stderr, or nowhere below ERROR in the CLI): by default the core
    prints them on stdout, into the middle of ``greenloop run --json``'s summary."""
    return LoggingConfig(filter=TelemetryFilter(core_level="WARN", other_level="ERROR"),
                         forwarding=LogForwardingConfig(logger=logging.getLogger("temporalio.core")))


def forward_core_logs() -> None:
    """Make the process's default Temporal runtime one whose core logs are forwarded
    (``core_logging``); call it before the first client is made."""
    Runtime.set_default(Runtime(telemetry=TelemetryConfig(logging=core_logging())), error_if_already_set=False)


def metrics_runtime(port: int, host: str = "0.0.0.0") -> Runtime:
    """A Temporal runtime serving Prometheus metrics on ``host:port`` (core logs forwarded)."""
    return Runtime(telemetry=TelemetryConfig(logging=core_logging(), metrics=PrometheusConfig(
        bind_address=f"{host}:{port}", counters_total_suffix=True)))


def _meter() -> MetricMeter:
    return activity.metric_meter() if activity.in_activity() else MetricMeter.noop


def record_suite_run(label: str, seconds: float) -> None:
    """A run of tests in the sandbox (the suite, or one test alone)."""
    meter = _meter()
    meter.create_histogram_float("greenloop_sandbox_seconds", "Time spent running tests in the sandbox", "s") \
        .record(max(seconds, 0.0), {"run": "single" if "single" in label else "suite"})
    if label.startswith("validate-"):
        meter.create_counter("greenloop_validation_runs", "Validations of a fix (the test alone, the whole suite)") \
            .add(1, {"kind": "single" if label.endswith("single") else "suite"})


def record_model_call(current: trace.Span, usage: Usage) -> None:
    """One model call's tokens and dollars: on its span, and in the metrics (by the role asking)."""
    current.set_attributes({"greenloop.llm.input_tokens": usage.input_tokens,
                            "greenloop.llm.output_tokens": usage.output_tokens,
                            "greenloop.llm.cache_read_tokens": usage.cache_read_input_tokens,
                            "greenloop.llm.cost_usd": usage.cost_usd})
    record_llm(usage, str(_subject.get().get("greenloop.role", "")))


def record_llm(usage: Usage, role: str) -> None:
    """One model call's tokens and dollars."""
    meter = _meter()
    tokens = meter.create_counter("greenloop_llm_tokens", "LLM tokens", "tokens")
    for kind, n in (("input", usage.input_tokens), ("output", usage.output_tokens),
                    ("cache_read", usage.cache_read_input_tokens), ("cache_write", usage.cache_creation_input_tokens)):
        if n:
            tokens.add(n, {"kind": kind, "role": role})
    meter.create_histogram_float("greenloop_llm_cost_usd", "LLM cost per call, US dollars", "USD") \
        .record(usage.cost_usd, {"role": role})


def record_test_result(state: str, attempts: int) -> None:
    """A test the run drove reached its final state."""
    meter = _meter()
    meter.create_counter("greenloop_tests_finished", "Tests driven to a final state").add(1, {"state": state})
    if attempts:
        meter.create_counter("greenloop_fix_attempts", "Fix attempts").add(attempts, {"state": state})


ESCALATED_QUERY = "WorkflowType = 'FixOneTestWorkflow' AND GreenloopState = 'ESCALATED' AND ExecutionStatus = 'Running'"


async def report_escalations(client: Client, meter: MetricMeter, every_s: float = 10.0) -> None:
    """Keep ``greenloop_escalations_waiting`` at the namespace's number of tests waiting for a person."""
    gauge = meter.create_gauge("greenloop_escalations_waiting", "Tests waiting in ESCALATED for a person's answer")
    while True:
        try:
            gauge.set((await client.count_workflows(ESCALATED_QUERY)).count)
        except Exception:  # noqa: BLE001 - a server hiccup skips one reading, the next one says it
            pass
        await asyncio.sleep(every_s)
