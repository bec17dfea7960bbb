"""The scripted LLM answers the real anthropic client by its scenario rules."""

from __future__ import annotations

import textwrap

import anthropic
import pytest
import yaml

from greenloop.domain.errors import GreenloopError
from greenloop.llm import scenario as scenario_module
from greenloop.llm.scenario import ApiError, Response, Rule, Scenario, ToolCall, Trigger
from greenloop.llm.scripted_server import ScriptedLLMServer
from tests.conftest import REPO

TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]


def client(server: ScriptedLLMServer, role: str, context: str = "run-1/test-a") -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="scripted", base_url=server.base_url, max_retries=0,
        default_headers={"x-greenloop-role": role, "x-greenloop-context": context},
    )


def ask(c: anthropic.Anthropic, messages, **kw):
    return c.messages.create(model="claude-test", max_tokens=256, tools=TOOLS, messages=messages, **kw)


@pytest.fixture
def scenario() -> Scenario:
    return Scenario.model_validate({
        "name": "unit",
        "rules": [
            {"name": "read", "priority": 10, "trigger": {"role": "fixer", "turn": 1},
             "response": {"text": "Let me look.", "tool_calls": [{"name": "read_file", "input": {"path": "a.py"}}]}},
            {"name": "second-attempt", "priority": 20, "trigger": {"role": "fixer", "iteration": 2, "turn": 1,
                                                                    "user": "previous attempt"},
             "response": {"text": "A different approach."}},
            {"name": "after-read", "trigger": {"role": "fixer", "turn": 2, "last": "def broken"},
             "response": {"text": "Found it."}},
            {"name": "limited", "priority": 50, "times": 2, "trigger": {"role": "analyzer"},
             "response": {"error": {"status": 529}}},
            {"name": "after-analyzer", "trigger": {"role": "fixer", "previous_role": "analyzer"},
             "response": {"text": "I follow the analysis."}, "priority": 30},
        ],
        "default": {"text": "default answer"},
    })


def test_tool_use_loop_follows_turns_and_tool_results(scenario):
    with ScriptedLLMServer(scenario) as server:
        c = client(server, "fixer")
        first = ask(c, [{"role": "user", "content": "fix test_x"}])
        assert first.stop_reason == "tool_use"
        call = next(b for b in first.content if b.type == "tool_use")
        assert (call.name, call.input) == ("read_file", {"path": "a.py"})
        second = ask(c, [
            {"role": "user", "content": "fix test_x"},
            {"role": "assistant", "content": first.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "def broken():"}]},
        ])
        assert second.stop_reason == "end_turn"
        assert second.content[0].text == "Found it."
        assert [r.rule for r in server.requests] == ["read", "after-read"]
        assert [r.turn for r in server.requests] == [1, 2]


def test_iteration_counts_conversations_per_role_and_context(scenario):
    with ScriptedLLMServer(scenario) as server:
        c = client(server, "fixer")
        ask(c, [{"role": "user", "content": "fix"}])
        again = ask(c, [{"role": "user", "content": "previous attempt failed: fix differently"}])
        assert again.content[0].text == "A different approach."
        other = ask(client(server, "fixer", context="run-1/test-b"), [{"role": "user", "content": "previous attempt"}])
        assert other.content[0].text == "Let me look."  # iteration 1 in its own context
        assert [r.iteration for r in server.requests] == [1, 2, 1]


def test_candidates_are_told_apart_and_count_their_own_iterations():
    """With --candidates K, each fixer conversation sends its number: a trigger's ``candidate``
    picks its answer, and each candidate's conversations count apart (without the header: candidate 1)."""
    scenario = Scenario.model_validate({"name": "candidates", "rules": [
        {"trigger": {"role": "fixer", "candidate": 2}, "response": {"text": "second"}},
        {"trigger": {"role": "fixer", "iteration": 2}, "response": {"text": "again"}},
        {"trigger": {"role": "fixer"}, "response": {"text": "first"}}]})
    with ScriptedLLMServer(scenario) as server:
        first = client(server, "fixer")
        second = anthropic.Anthropic(api_key="scripted", base_url=server.base_url, max_retries=0, default_headers={
            "x-greenloop-role": "fixer", "x-greenloop-context": "run-1/test-a", "x-greenloop-candidate": "2"})
        assert ask(first, [{"role": "user", "content": "fix"}]).content[0].text == "first"
        assert ask(second, [{"role": "user", "content": "fix"}]).content[0].text == "second"
        assert ask(first, [{"role": "user", "content": "fix"}]).content[0].text == "again"
        assert [(r.candidate, r.iteration) for r in server.requests] == [(1, 1), (2, 1), (1, 2)]


def test_errors_fire_a_limited_number_of_times_then_previous_role_matches(scenario):
    with ScriptedLLMServer(scenario) as server:
        a = client(server, "analyzer")
        for _ in range(2):
            with pytest.raises(anthropic.InternalServerError) as err:
                a.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}])
            assert err.value.status_code == 529
        assert a.messages.create(model="m", max_tokens=10,
                                 messages=[{"role": "user", "content": "x"}]).content[0].text == "default answer"
        fixed = ask(client(server, "fixer"), [{"role": "user", "content": "fix"}])
        assert fixed.content[0].text == "I follow the analysis."
        assert server.requests[-1].previous_role == "analyzer"


def test_rate_limit_is_a_typed_client_error():
    sc = Scenario.model_validate({"name": "rl", "rules": [{"response": {"error": {"status": 429}}}]})
    with ScriptedLLMServer(sc) as server:
        with pytest.raises(anthropic.RateLimitError):
            client(server, "fixer").messages.create(model="m", max_tokens=5,
                                                     messages=[{"role": "user", "content": "x"}])


def test_prompt_caching_is_reported_as_creation_then_read():
    sc = Scenario(name="cache")
    system = [{"type": "text", "text": "You are Greenloop's fixer. " * 40, "cache_control": {"type": "ephemeral"}}]
    with ScriptedLLMServer(sc) as server:
        c = client(server, "fixer")
        u1 = c.messages.create(model="m", max_tokens=5, system=system, messages=[{"role": "user", "content": "a"}]).usage
        u2 = c.messages.create(model="m", max_tokens=5, system=system, messages=[{"role": "user", "content": "b"}]).usage
        assert u1.cache_creation_input_tokens > 0 and u1.cache_read_input_tokens == 0
        assert u2.cache_read_input_tokens == u1.cache_creation_input_tokens and u2.cache_creation_input_tokens == 0


def test_scenario_files_reject_unknown_trigger_fields(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nrules:\n  - trigger: {agent: fixer}\n    response: {text: hi}\n")
    with pytest.raises(GreenloopError, match=r"rules\.0\.trigger\.agent: Extra inputs are not permitted"):
        Scenario.load(path)


def _readme_scenarios() -> str:
    text = (REPO / "README.md").read_text()
    return text.split("### Scenario files", 1)[1].split("\n## ", 1)[0]


def test_the_scenario_examples_are_scenarios():
    """The README's example and the module's own load as they are written."""
    section = _readme_scenarios()
    readme_example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    docstring_example = textwrap.dedent(scenario_module.__doc__.split("::\n", 1)[1].split("\n\n", 1)[0])
    for example in (readme_example, docstring_example):
        scenario = Scenario.model_validate(yaml.safe_load(example))
        assert scenario.rules and any(r.response.tool_calls for r in scenario.rules)


def test_the_readme_names_every_key_of_a_scenario():
    section = _readme_scenarios()
    models = (Scenario, Rule, Trigger, Response, ApiError, ToolCall)
    missing = [f"{m.__name__}.{key}" for m in models for key in m.model_fields if f"`{key}`" not in section]
    assert not missing, missing
