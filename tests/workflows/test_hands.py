"""The fixer runs tests and commands mid-conversation (llm/sandbox_tools.py), in
real runs: the dev server, the sandbox, the scripted LLM (samples/scenarios/
hands*.yaml). What the model was answered is read from the scripted LLM's
request log; the counts from the attempt records and the reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.domain.llm import LLMSettings
from greenloop.domain.states import Verdict
from greenloop.llm.scripted_server import ScriptedLLMServer
from greenloop.sandbox.models import SandboxSettings
from tests.workflows.conftest import BACKEND, DEMO, drive, fix_request, replays
from tests.workflows.test_scenarios import FIXED_LINE, TARGET, child_attempts, workspace_cart

SCENARIOS = DEMO.parent / "scenarios"


def tool_results(server: ScriptedLLMServer, turn: int) -> list[tuple[str, bool]]:
    """The fixer's tool results sent with its model turn ``turn`` (text, is_error)."""
    request = next(r for r in server.requests if r.role == "fixer" and r.turn == turn)
    blocks = request.body["messages"][-1]["content"]
    return [(b["content"], bool(b.get("is_error"))) for b in blocks if b.get("type") == "tool_result"]


async def test_the_fixer_runs_the_test_edits_again_runs_it_green_then_proposes(temporal_env, demo_repo, scripted,
                                                                               tmp_path):
    server = scripted(SCENARIOS / "hands.yaml")
    request = fix_request(demo_repo, tmp_path, select=[TARGET])
    summary, handle = await drive(temporal_env, request)
    assert summary.fixed == [TARGET] and summary.attempts == 1
    assert FIXED_LINE in workspace_cart(f"{request.run_dir}/workspace")
    # The scenario's rules fired in order: each later turn was triggered by the test's status it saw.
    assert [r.rule for r in server.requests if r.role == "fixer"] == ["first-edit", "edit-again", "propose"]
    (edited, _), (first_run, error) = tool_results(server, 2)
    assert not error and f"{TARGET}: failed" in first_run and "assert" in first_run and "ran: " in first_run
    (_, _), (second_run, error) = tool_results(server, 3)
    assert not error and f"{TARGET}: passed" in second_run
    # The fixer's tool list held both sandboxed tools (Anthropic's bash tool by type).
    tools = server.requests[-1].body["tools"]
    assert {"type": "bash_20250124", "name": "bash"} in [{k: t[k] for k in ("type", "name") if k in t} for t in tools]
    assert any(t.get("name") == "run_tests" for t in tools)
    attempts = await child_attempts(temporal_env, handle)
    assert [a.verdict for a in attempts] == [Verdict.PASS] and attempts[0].test_runs == 2
    assert attempts[0].commands == 0
    markdown = Path(summary.report_markdown or "").read_text()
    assert "Ran mid-conversation: 2 test runs." in markdown
    page = Path(summary.report_html or "").read_text()
    assert "Ran mid-conversation: 2 test runs." in page
    await replays(temporal_env.client, handle, keep="hands")  # the sandboxed calls' activities replay
    assert page.count("the fixer ran the failing test: failed") == 1
    assert page.count("tests/test_cart.py::test_discount: passed") >= 1  # the timeline's second run


@pytest.mark.parametrize("backend", sorted({BACKEND, "local"}))
async def test_commands_fail_in_the_sandbox_or_are_refused_and_the_test_run_bound_holds(
        temporal_env, demo_repo, scripted, tmp_path, backend):
    server = scripted(SCENARIOS / "hands-bounds.yaml")
    request = fix_request(demo_repo, tmp_path, select=[TARGET], sandbox=SandboxSettings(backend=backend, timeout_s=120),
                          llm=LLMSettings(model="claude-scripted", max_tool_turns=8, max_test_runs=1))
    summary, handle = await drive(temporal_env, request)
    assert summary.fixed == [TARGET] and summary.attempts == 1  # the run went on
    (network, network_error), (outside, outside_error), (first_run, run_error) = tool_results(server, 2)
    if backend == "local":
        assert network_error and outside_error
        assert "refused under the `local` sandbox backend" in network and "refused" in outside
    else:
        assert not network_error and "exit code 1" in network and "Network is unreachable" in network
        assert not outside_error and "exit code 1" in outside and "Read-only file system" in outside
    assert not Path("/etc/greenloop-probe").exists()
    assert not run_error and f"{TARGET}: failed" in first_run
    # The analyzer's command ran on a scratch copy: what it wrote is gone.
    analyzer = next(r for r in server.requests if r.role == "analyzer" and r.turn == 2)
    (probe,) = [b for b in analyzer.body["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert ("refused" in probe["content"]) if backend == "local" else probe["content"].startswith("exit code 0\n")
    assert not Path(request.run_dir, "workspace", "probe.txt").exists()
    (_, edit_error), (beyond, beyond_error) = tool_results(server, 3)
    assert not edit_error and beyond_error and "limit of 1 test runs" in beyond
    attempts = await child_attempts(temporal_env, handle)
    assert attempts[0].test_runs == 1 and attempts[0].commands == (0 if backend == "local" else 3)
    markdown = Path(summary.report_markdown or "").read_text()
    ran = "1 test run" + ("" if backend == "local" else " and 3 commands")
    assert f"Ran mid-conversation: {ran}." in markdown
    if backend != "local":  # each command is a step of the test's timeline
        page = Path(summary.report_html or "").read_text()
        assert "the fixer ran `echo x &gt; /etc/greenloop-probe`: exit code 1" in page
        assert "the analyzer ran `echo analyzer &gt; probe.txt &amp;&amp; cat probe.txt`: exit code 0" in page
