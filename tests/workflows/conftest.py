"""Helpers to run the real workflows on the real dev server with a real
worker, the real sandbox, and the scripted LLM at the provider boundary."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

from llm.scenario import Scenario
from llm.scripted_server import ScriptedLLMServer
from workflows.models import FixRequest, LLMSettings, SandboxSettings

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
    base = dict(repo=str(repo), run_dir=str(tmp_path / f"run-{uuid.uuid4().hex[:6]}"),
                sandbox=SandboxSettings(backend=BACKEND, timeout_s=120),
                llm=LLMSettings(model="claude-scripted", max_tool_turns=8), escalation_deadline_s=3600)
    base.update(overrides)
    return FixRequest(**base)
