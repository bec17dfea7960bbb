"""The fixer's and the analyzer's conversations as runs drive them (one activity per model
call, the loop in the workflow: ``tests/llm/conversing.py`` runs one on the test dev server)
against the scripted Anthropic-compatible server, through the real ``anthropic`` client:
tokens and cost per call and in total, prompt caching requested for the stable context, the
budget stop, malformed or empty tool calls as a failed attempt with the reason, the
missing-key error, and provider faults classified for Temporal's retries."""

from __future__ import annotations

import socket
from datetime import timedelta
from pathlib import Path

import anthropic
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from greenloop.activities.conversation import Conversation, TurnInput, fixer_turn, load_conversation, start_fix
from greenloop.activities.fixing import FixInput
from greenloop.activities.llm_errors import provider_errors
from greenloop.analysis.note import AnalysisNote
from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.domain.llm import LLMSettings
from greenloop.domain.workspace import Workspace
from greenloop.llm.agent import model_turn
from greenloop.llm.client import make_client, price_for, usage_of
from greenloop.llm.scenario import Scenario
from greenloop.llm.scripted_server import ScriptedLLMServer
from greenloop.parsers.models import Status, TestReport, TestResult, Totals
from greenloop.runner.plan import SuitePlan as PlanRef
from greenloop.runner.runs import SuiteRun
from tests.llm.conversing import Conversed, converse

MODEL = "claude-sonnet-4-6"  # $3 / $15 per million tokens
CART = "def total(items):\n    return sum(items) - 1\n"


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "cart.py").write_text(CART)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_cart.py").write_text(
        "from shop.cart import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n")
    return tmp_path


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "scripted")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def scenario(*rules, default=None) -> Scenario:
    return Scenario.model_validate({"name": "agent", "rules": list(rules),
                                    **({"default": default} if default else {})})


def settings(server: ScriptedLLMServer, **kw) -> LLMSettings:
    return LLMSettings(model=MODEL, base_url=server.base_url, **kw)


async def fixer(env, server, repo, tmp_path_factory, **kw) -> tuple[Conversed, Conversation]:
    """The fixer's conversation for the cart's failing test, run to its end as a test's workflow
    runs it; what the workflow got, and the conversation as its host kept it."""
    fix = fix_input(repo, tmp_path_factory, settings(server, **kw))
    out = await converse(env, fix=fix)
    [ref] = (Path(fix.workspace.run_dir) / "conversations").glob("*/attempt-1.json")
    return out, load_conversation(str(ref))


READ = {"trigger": {"turn": 1}, "response": {
    "text": "Let me look.", "tool_calls": [{"name": "read_file", "input": {"path": "shop/cart.py"}}],
    "input_tokens": 1200, "output_tokens": 80}}
EDIT = {"trigger": {"turn": 2, "last": "sum\\(items\\) - 1"}, "response": {
    "tool_calls": [{"name": "replace_in_file",
                    "input": {"path": "shop/cart.py", "old_text": "sum(items) - 1", "new_text": "sum(items)"}}],
    "input_tokens": 1500, "output_tokens": 60}}
DONE = {"trigger": {"turn": 3}, "response": {"text": "total() subtracted 1; removed it.",
                                            "input_tokens": 1700, "output_tokens": 20}}


async def test_a_scenario_with_the_native_editor_commands_fixes_like_the_old_names(
        temporal_env, repo, api_key, tmp_path_factory):
    """The same conversation in Anthropic's text-editor commands: view, then str_replace."""
    name = "str_replace_based_edit_tool"
    view = {"trigger": {"turn": 1}, "response": {"tool_calls": [
        {"name": name, "input": {"command": "view", "path": "shop/cart.py"}}]}}
    edit = {"trigger": {"turn": 2, "last": "sum\\(items\\) - 1"}, "response": {"tool_calls": [
        {"name": name, "input": {"command": "str_replace", "path": "shop/cart.py", "old_str": "sum(items) - 1",
                                 "new_str": "sum(items)"}}]}}
    with ScriptedLLMServer(scenario(view, edit, DONE)) as server:
        out, conv = await fixer(temporal_env, server, repo, tmp_path_factory)
        second = server.requests[1].body["messages"][2]["content"][0]
    assert (conv.turns[-1].stop, conv.calls) == ("end_turn", [name, name])
    assert second["content"].startswith("Here's the result of running `cat -n` on shop/cart.py:")
    assert [c.path for c in out.proposal.changes] == ["shop/cart.py"]
    assert "-    return sum(items) - 1\n+    return sum(items)\n" in out.proposal.diff


async def test_tokens_and_cost_are_counted_per_call_and_summed(temporal_env, repo, api_key, tmp_path_factory):
    with ScriptedLLMServer(scenario(READ, EDIT, DONE)) as server:
        out, conv = await fixer(temporal_env, server, repo, tmp_path_factory)
    proposal = out.proposal
    assert (conv.turns[-1].stop, len(conv.turns), conv.calls) == ("end_turn", 3, ["read_file", "replace_in_file"])
    assert proposal.rationale == "total() subtracted 1; removed it."
    assert [c.path for c in proposal.changes] == ["shop/cart.py"]
    assert "-    return sum(items) - 1\n+    return sum(items)\n" in proposal.diff
    per_call = [usage_of(MODEL, anthropic.types.Usage.model_validate(r.response["usage"])) for r in server.requests]
    assert out.calls == per_call  # each call's usage reached the workflow as it completed
    assert [(u.input_tokens, u.output_tokens) for u in per_call] == [(1200, 80), (1500, 60), (1700, 20)]
    # the system prompt was written to the cache once, then read
    cache = [(u.cache_creation_input_tokens, u.cache_read_input_tokens) for u in per_call]
    written = cache[0][0]
    assert written > 0 and cache == [(written, 0), (0, written), (0, written)]
    u = proposal.usage
    assert (u.calls, u.input_tokens, u.output_tokens) == (3, 4400, 160)
    assert (u.cache_creation_input_tokens, u.cache_read_input_tokens) == (written, 2 * written)
    expected = (4400 * 3 + 160 * 15 + written * 3 * 1.25 + 2 * written * 3 * 0.1) / 1e6
    assert u.cost_usd == pytest.approx(expected, abs=3e-6)
    assert u.cost_usd == pytest.approx(sum(p.cost_usd for p in per_call), abs=3e-6)


async def test_conversations_share_one_connection_pool_but_say_who_is_asking(repo, api_key):
    # The scripted endpoint answers by role and test: each conversation's requests must carry its own.
    with ScriptedLLMServer(scenario({"trigger": {"role": "analyzer"}, "response": {"text": "analysed"}},
                                    {"trigger": {"role": "fixer"}, "response": {"text": "no fix"}})) as server:
        s = settings(server)
        analyzer = make_client(s, role="analyzer", context="run-1/a")
        fixing = make_client(s, role="fixer", context="run-1/b")
        answers = [await model_turn(c, s, "sys", [{"role": "user", "content": "u"}]) for c in (analyzer, fixing, analyzer)]
        other_key = make_client(s.model_copy(update={"base_url": server.base_url + "/"}), role="fixer", context="c")
    assert [a.text for a in answers] == ["analysed", "no fix", "analysed"]
    assert [(r.role, r.context) for r in server.requests] == [
        ("analyzer", "run-1/a"), ("fixer", "run-1/b"), ("analyzer", "run-1/a")]
    assert analyzer._client is fixing._client  # one httpx pool (and TLS context) for the worker
    assert other_key._client is not fixing._client  # another endpoint, another pool


def test_prices_follow_the_model_family():
    assert price_for("claude-sonnet-4-5") == (3.0, 15.0)
    assert price_for("claude-opus-4-1-20250805") == (15.0, 75.0)
    assert price_for("claude-opus-4.5") == (5.0, 25.0)
    assert price_for("claude-3-5-haiku-20241022") == (0.8, 4.0)
    assert price_for("claude-3-haiku-20240307") == (0.25, 1.25)
    assert price_for("claude-haiku-4-5") == (1.0, 5.0)
    assert price_for("some-new-model") == (3.0, 15.0)


async def test_prompt_caching_is_requested_for_the_stable_context(temporal_env, repo, api_key, tmp_path_factory):
    with ScriptedLLMServer(scenario(READ, EDIT, DONE)) as server:
        await fixer(temporal_env, server, repo, tmp_path_factory)
    first, second = server.requests[0].body, server.requests[1].body

    def marks(body):
        out = [("tools", t["name"]) for t in body["tools"] if "cache_control" in t]
        out += [("system", i) for i, b in enumerate(body["system"]) if "cache_control" in b]
        for i, m in enumerate(body["messages"]):
            blocks = m["content"] if isinstance(m["content"], list) else []
            out += [(f"message {i} {m['role']}", b["type"]) for b in blocks if "cache_control" in b]
        return out

    # tools + system prompt + the failure context (the first user message)
    assert marks(first) == [("tools", "search"), ("system", 0), ("message 0 user", "text")]
    assert all(b.get("cache_control") == {"type": "ephemeral"} for b in first["system"])
    assert first["messages"][0]["content"][0]["text"].startswith("Failing test: `tests/test_cart.py::test_total`")
    # next turn: the context stays marked and the tail (the tool results) moves
    assert marks(second) == [("tools", "search"), ("system", 0), ("message 0 user", "text"),
                             ("message 2 user", "tool_result")]
    assert len(marks(server.requests[2].body)) == 4  # the provider's maximum, never more
    assert "cache_control" not in str(server.requests[2].body["messages"][2])  # the old tail is unmarked


LOOP = {"trigger": {}, "response": {
    "text": "Still looking.", "tool_calls": [{"name": "search", "input": {"pattern": "total"}}],
    "input_tokens": 10_000, "output_tokens": 1_000}}  # $0.045 a call


async def test_the_budget_stops_a_runaway_tool_loop(temporal_env, repo, api_key, tmp_path_factory):
    with ScriptedLLMServer(scenario(LOOP)) as server:
        out, conv = await fixer(temporal_env, server, repo, tmp_path_factory, left_usd=0.10, max_tool_turns=20)
    usage = out.proposal.usage
    assert out.proposal.failure_reason == "the LLM budget left for this test ($0.1000) was used up"
    assert len(conv.turns) == 3 and len(server.requests) == 3  # 0.045, 0.09, 0.135 >= 0.10
    assert usage.cost_usd >= 0.10 and usage.calls == 3
    assert conv.text == "Still looking."
    # without a budget the same loop runs to the turn limit
    with ScriptedLLMServer(scenario(LOOP)) as server:
        out, conv = await fixer(temporal_env, server, repo, tmp_path_factory, max_tool_turns=5)
    assert out.proposal.failure_reason == "no fix within 5 model turns"
    assert (len(conv.turns), out.proposal.usage.calls, len(server.requests)) == (5, 5, 5)


# --- the fixer's proposal ----------------------------------------------------------------------


def fix_input(repo, tmp_path_factory, llm: LLMSettings) -> FixInput:
    run_dir = tmp_path_factory.mktemp("run")
    test = TestResult(id="tests/test_cart.py::test_total", status=Status.FAILED, file="tests/test_cart.py", line=4,
                      message="AssertionError: assert 2 == 3")
    report_path = run_dir / "report.json"
    report_path.write_text(TestReport(framework="pytest", tests=[test]).model_dump_json())
    run = SuiteRun(label="initial", report_path=str(report_path), statuses_path=str(run_dir / "statuses.json"),
                   totals=Totals(failed=1), build_error=False, timed_out=False, exit_code=1,
                   per_test=True)
    return FixInput(
        run_id="run-1", workspace=Workspace(path=str(repo), run_dir=str(run_dir), repo=str(repo)),
        plan=PlanRef(language="python", framework="pytest", test_command="python -m pytest"),
        test_id=test.id, attempt=1, failure_run=run,
        analysis=AnalysisNote(kind="assertion", evidence="AssertionError: assert 2 == 3", suggestion="compare"),
        attempts=[], llm=llm,
    )


@pytest.mark.parametrize("calls, reason", [
    # empty tool input: the required arguments are missing
    ([{"name": "replace_in_file", "input": {}}], "malformed tool call(s): replace_in_file: "),
    # a tool that does not exist, and one with the wrong argument names
    ([{"name": "patch_file", "input": {"diff": "-1"}},
      {"name": "create_file", "input": {"file": "x.py", "text": ""}}],
     "malformed tool call(s): unknown tool 'patch_file'; create_file: "),
])
async def test_malformed_or_empty_tool_calls_fail_the_attempt_with_the_reason(
        temporal_env, repo, api_key, tmp_path_factory, calls, reason):
    sc = scenario({"trigger": {"role": "fixer", "turn": 1}, "response": {"tool_calls": calls}},
                  {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "Done."}})
    with ScriptedLLMServer(sc) as server:
        proposal = (await fixer(temporal_env, server, repo, tmp_path_factory))[0].proposal
        results = server.requests[1].body["messages"][-1]["content"]
    assert not proposal.changes and not proposal.escalate
    assert proposal.failure_reason.startswith(reason), proposal.failure_reason
    assert proposal.usage.calls == 2
    # the model was told each call failed, and why
    assert [r["is_error"] for r in results] == [True] * len(calls)
    assert all(r["content"].startswith("error: ") for r in results)
    assert (repo / "shop" / "cart.py").read_text() == CART


async def test_an_empty_answer_fails_the_attempt(temporal_env, repo, api_key, tmp_path_factory):
    sc = scenario({"trigger": {"role": "fixer"}, "response": {"raw_content": []}})
    with ScriptedLLMServer(sc) as server:
        proposal = (await fixer(temporal_env, server, repo, tmp_path_factory))[0].proposal
    assert not proposal.changes and proposal.failure_reason == "the fixer proposed no edit"


async def test_the_fixer_reports_a_used_up_budget(temporal_env, repo, api_key, tmp_path_factory):
    with ScriptedLLMServer(scenario(LOOP)) as server:
        proposal = (await fixer(temporal_env, server, repo, tmp_path_factory, left_usd=0.05))[0].proposal
    assert proposal.failure_reason == "the LLM budget left for this test ($0.0500) was used up"
    assert proposal.usage.calls == 2 and proposal.usage.cost_usd >= 0.05


async def test_a_good_fix_comes_back_as_changes_with_a_diff(temporal_env, repo, api_key, tmp_path_factory):
    with ScriptedLLMServer(scenario(READ, EDIT, DONE)) as server:
        proposal = (await fixer(temporal_env, server, repo, tmp_path_factory))[0].proposal
    assert proposal.failure_reason is None
    assert proposal.files == ["shop/cart.py"]
    assert "-    return sum(items) - 1\n+    return sum(items)\n" in proposal.diff
    assert proposal.rationale == "total() subtracted 1; removed it."
    assert (repo / "shop" / "cart.py").read_text() == CART  # applied later, by the workflow


# --- no key, provider faults -------------------------------------------------------------------


def test_no_api_key_is_a_clear_typed_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(GreenloopError) as err:
        make_client(LLMSettings(), role="fixer", context="run-1/t")
    assert err.value.kind is ErrorKind.VALIDATION_ERROR and not err.value.retryable
    assert "ANTHROPIC_API_KEY" in err.value.message and "--scripted" in err.value.message


async def test_no_api_key_reaches_temporal_as_a_non_retryable_validation_error(
        repo, monkeypatch, tmp_path_factory):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fix = fix_input(repo, tmp_path_factory, LLMSettings())
    env = ActivityEnvironment()
    start = await env.run(start_fix, fix)  # the conversation begins without the provider
    assert start.ref is not None
    with pytest.raises(ApplicationError) as err:
        await env.run(fixer_turn, TurnInput(workspace=fix.workspace, ref=start.ref, turn=1, llm=fix.llm))
    assert (err.value.type, err.value.non_retryable) == ("validation_error", True)
    assert "ANTHROPIC_API_KEY" in err.value.message


@provider_errors
async def ask(base_url: str) -> str:
    client = anthropic.AsyncAnthropic(api_key="scripted", base_url=base_url, max_retries=0, timeout=10)
    response = await client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "x"}])
    return response.content[0].text


async def test_retry_after_sets_the_next_retry_delay():
    """A rate limit that says how long to wait is retried after that long, not on the policy's backoff."""
    sc = scenario({"response": {"error": {"status": 429, "message": "slow down", "retry_after_s": 7}}})
    with ScriptedLLMServer(sc) as server:
        with pytest.raises(ApplicationError) as err:
            await ask(server.base_url)
    assert err.value.next_retry_delay == timedelta(seconds=7) and not err.value.non_retryable
    assert "retry after 7 s" in err.value.message
    sc = scenario({"response": {"error": {"status": 529}}})  # retry-after: 0 -> the policy's own backoff
    with ScriptedLLMServer(sc) as server:
        with pytest.raises(ApplicationError) as err:
            await ask(server.base_url)
    assert err.value.next_retry_delay is None


def test_retry_after_forms():
    from greenloop.activities.llm_errors import MAX_RETRY_AFTER, retry_after

    assert retry_after({"retry-after-ms": "1500"}) == timedelta(milliseconds=1500)
    assert retry_after({"retry-after": "2.5"}) == timedelta(seconds=2.5)
    assert retry_after({"retry-after": "86400"}) == MAX_RETRY_AFTER
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None  # in the past
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None


@pytest.mark.parametrize("status, error_type, retryable", [
    (429, "rate_limit_error", True),
    (529, "overloaded_error", True),
    (500, "api_error", True),
    (503, "api_error", True),
    (400, "invalid_request_error", False),
    (401, "authentication_error", False),
    (403, "permission_error", False),
    (413, "request_too_large", False),
])
async def test_provider_faults_are_classified_for_retries(status, error_type, retryable):
    sc = scenario({"response": {"error": {"status": status, "message": f"scripted {status}"}}})
    with ScriptedLLMServer(sc) as server:
        with pytest.raises(ApplicationError) as err:
            await ask(server.base_url)
    assert (err.value.type, err.value.non_retryable) == (error_type, not retryable)
    assert f"LLM provider answered {status}" in err.value.message and f"scripted {status}" in err.value.message


async def test_an_unreachable_provider_is_retryable():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ApplicationError) as err:
        await ask(f"http://127.0.0.1:{port}")
    assert (err.value.type, err.value.non_retryable) == ("provider_unreachable", False)


async def test_a_good_answer_passes_through_the_error_mapping():
    with ScriptedLLMServer(scenario(default={"text": "hello"})) as server:
        assert await ask(server.base_url) == "hello"


# --- the analyzer's conversation and the prompts ------------------------------------------------


async def test_the_analyzer_gets_the_pattern_analysis_and_source_context(
        temporal_env, repo, api_key, tmp_path_factory):
    from greenloop.activities.analysis import AnalyzeInput
    from greenloop.domain.attempts import AttemptRecord

    sc = scenario({"trigger": {"role": "analyzer", "turn": 1}, "response": {
        "text": "## Root Cause\ntotal() subtracts 1.", "input_tokens": 900, "output_tokens": 30}})
    fix = fix_input(repo, tmp_path_factory, LLMSettings())
    earlier = AttemptRecord(number=1, reason="the test is still failed: assert 1 == 3", diff="-a\n+b\n")
    with ScriptedLLMServer(sc) as server:
        inp = AnalyzeInput(run_id="run-1", workspace=fix.workspace, test_id=fix.test_id, failure_run=fix.failure_run,
                           attempts=[earlier], llm=settings(server))
        note = (await converse(temporal_env, analyze=inp)).note
        request = server.requests[0]
    assert (note.kind, note.expected, note.actual) == ("assertion", "3", "2")
    assert note.llm_analysis == "## Root Cause\ntotal() subtracts 1."
    assert (note.usage.calls, note.usage.input_tokens, note.usage.output_tokens) == (1, 900, 30)
    assert "### tests/test_cart.py lines 4-5 (the failing test)" in note.context_markdown
    assert ("### shop/cart.py lines 1-2 (suspect: total — called by the test; named by the test's name)"
            in note.context_markdown)
    assert [(s.file, s.function) for s in note.suspects] == [("shop/cart.py", "total")]
    prompt = request.body["messages"][0]["content"][0]["text"]
    assert request.role == "analyzer" and "You cannot edit files" in request.body["system"][0]["text"]
    # Anthropic's text-editor tool (its edit commands refused for the analyzer) and the search tool
    assert [(t.get("type"), t["name"]) for t in request.body["tools"]] == [
        ("text_editor_20250728", "str_replace_based_edit_tool"), (None, "search")]
    for part in ("Greenloop's pattern analysis: assertion", note.context_markdown, "Attempt 1: not validated",
                 "the test is still failed: assert 1 == 3", "DIFFERENT approach"):
        assert part in prompt


def test_the_fixer_prompt_says_whether_production_code_may_change():
    from greenloop.llm import prompts

    assert "You may change production code as well as tests" in prompts.fixer_system(True)
    assert "NOT in this run: edit test code only" in prompts.fixer_system(False)
    note = AnalysisNote(kind="key_error", evidence="KeyError: 'kiwi'", suggestion="check the key",
                        error_site="shop/cart.py:5", llm_analysis="## Root Cause\nno kiwi price")
    user = prompts.fixer_user("t", "tests/test_cart.py", 9, "KeyError: 'kiwi'", "x" * 10_000, note, [])
    assert "Failing test: `t` (tests/test_cart.py:9)" in user and "Error site: shop/cart.py:5" in user
    assert "Analyzer's findings:\n## Root Cause\nno kiwi price" in user
    assert "Expected:" not in user  # no compared values for a KeyError
    assert user.count("x") <= 6_000 + 10  # long details are cut to their end


async def test_a_fix_that_writes_more_than_a_fix_may_change_is_refused(temporal_env, repo, api_key, tmp_path_factory):
    # Every payload of a run is bounded; a fix is bounded by what it may change, not by what the model writes.
    big = "".join(f"VALUE_{i} = {i}  # a generated table, line after line\n" for i in range(4000))  # 217 kB
    create = {"trigger": {"turn": 1}, "response": {"tool_calls": [
        {"name": "create_file", "input": {"path": "shop/table.py", "content": big}}]}}
    with ScriptedLLMServer(scenario(create, {"trigger": {"turn": 2}, "response": {"text": "Done."}})) as server:
        proposal = (await fixer(temporal_env, server, repo, tmp_path_factory))[0].proposal
    assert not proposal.changes and not proposal.escalate
    assert proposal.failure_reason == "the fix writes 217 kB of new lines, over the 128 kB a fix may change: " \
                                      "make a smaller one", proposal.failure_reason
