"""Helpers to run the real workflows on the real dev server with a real
worker, the real sandbox, and the scripted LLM at the provider boundary."""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from greenloop.domain.llm import LLMSettings
from greenloop.llm.scenario import Scenario
from greenloop.llm.scripted_server import ScriptedLLMServer
from greenloop.reports.record import FixStatusView, RunSummary
from greenloop.run_request import FixRequest
from greenloop.sandbox.models import SandboxSettings
from greenloop.server.history import run_chain
from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from tests.histories import kept as kept_histories
from tests.payload_bound import BOUND

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "samples" / "demo-python"
# The light sandbox keeps workflow tests fast; tests/sandbox covers every backend.
BACKEND = os.environ.get("GREENLOOP_TEST_SANDBOX", "bwrap")


@pytest.fixture
def demo_repo(tmp_path) -> Path:
    dest = tmp_path / "demo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return dest


@pytest.fixture
def scripted(monkeypatch):
    """Start a scripted LLM for a scenario (dict or YAML path) and point the worker at it."""
    servers: list[ScriptedLLMServer] = []

    def start(scenario: dict | Path) -> ScriptedLLMServer:
        sc = Scenario.load(scenario) if isinstance(scenario, Path) else Scenario.model_validate(scenario)
        server = ScriptedLLMServer(sc).start()
        servers.append(server)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "scripted-test-key")
        return server

    yield start
    for s in servers:
        s.stop()


def fix_request(repo: Path, tmp_path: Path, **overrides) -> FixRequest:
    """A request for ``repo`` that fixes one test at a time unless ``concurrency`` says otherwise:
    these tests follow one test's steps in order (the default, several at once as the model's
    request limit allows, is driven by the CLI's tests and test_merge_queue.py)."""
    base = dict(repo=str(repo), run_dir=str(tmp_path / f"run-{uuid.uuid4().hex[:6]}"), concurrency=1,
                sandbox=SandboxSettings(backend=BACKEND, timeout_s=120),
                llm=LLMSettings(model="claude-scripted", max_tool_turns=8), escalation_deadline_s=3600)
    base.update(overrides)
    return FixRequest(**base)


async def drive(env, request: FixRequest, run_id: str | None = None) -> tuple[RunSummary, WorkflowHandle]:
    """Run ``FixSuiteWorkflow`` for ``request`` to its end, with a fresh worker on its own task queue;
    a payload over the tests' bound (``tests/payload_bound.py``) fails it at once (the run would
    otherwise retry the workflow task that made it forever)."""
    queue = f"q-{uuid.uuid4().hex[:6]}"
    async with build_worker(env.client, task_queue=queue):
        handle = await env.client.start_workflow(FixSuiteWorkflow.run, request, id=run_id or f"run-{uuid.uuid4().hex[:6]}",
                                                 task_queue=queue)
        return await within_bound(handle.result()), handle


async def within_bound(result: Awaitable[T]) -> T:
    """``result``, or an AssertionError as soon as a payload over the tests' bound was refused."""
    seen = len(BOUND.over)
    task = asyncio.ensure_future(result)
    while not task.done():
        await asyncio.wait([task], timeout=0.5)
        if len(BOUND.over) > seen and not task.done():
            task.cancel()
            raise AssertionError("a payload over the tests' bound: " + BOUND.over[seen])
    return task.result()


async def replays(client: Client, handle: WorkflowHandle, keep: str | None = None) -> int:
    """The run's recorded histories (every run, across continue-as-new) replay
    deterministically; how many runs there were. ``keep``: the name under which
    ``RECORD_HISTORIES=DIR`` saves them with the children's (``tests/histories/``,
    replayed by ``test_kept_histories.py``)."""
    replayer = Replayer(workflows=[FixSuiteWorkflow], data_converter=pydantic_data_converter)
    histories = await run_chain(client, handle.id, handle.first_execution_run_id or handle.run_id or "")
    for history in histories:
        await replayer.replay_workflow(history)
    if keep and os.environ.get("RECORD_HISTORIES"):
        await kept_histories.save(client, histories, Path(os.environ["RECORD_HISTORIES"]) / keep)
    return len(histories)


async def wait_for_view(client: Client, workflow_id: str, reached: Callable[[FixStatusView], bool], what: str,
                        timeout_s: float = 120) -> FixStatusView:
    """Poll a ``FixOneTestWorkflow``'s status query until ``reached`` says so; its view."""
    child = client.get_workflow_handle(workflow_id)
    for _ in range(int(timeout_s / 0.2)):
        try:
            view = await child.query("status", result_type=FixStatusView)
            if reached(view):
                return view
        except Exception:  # noqa: BLE001 - not started yet
            pass
        await asyncio.sleep(0.2)
    raise AssertionError(f"{workflow_id} never reached {what}")
