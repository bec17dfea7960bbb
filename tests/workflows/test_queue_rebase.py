"""Validation queue: a fix written on a file that a fix accepted meanwhile changed
is rebased by a three-way merge, not asked again of the model; only a real
conflict goes back to the model, with the conflict shown. Real runs on the dev
server, the real sandbox and the scripted LLM (its requests are counted)."""

from __future__ import annotations

from pathlib import Path

from tests.workflows.test_merge_queue import events, queue_run, results, verdicts

A, B = "tests/test_both.py::test_a", "tests/test_both.py::test_b"
FILLER = "".join(f"\n\ndef helper_{i}():\n    return {i}\n" for i in range(4))


def make_project(root: Path, module: str) -> None:
    """Two failing tests whose fixes both edit ``calc/both.py`` (``module``)."""
    (root / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "calc" / "__init__.py").write_text("")
    (root / "calc" / "both.py").write_text(module)
    (root / "tests" / "test_both.py").write_text(
        "from calc import both\n\n\ndef test_a():\n    assert both.a() == 1\n\n\ndef test_b():\n    assert both.b() == 1\n")
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n\n'
                                         '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')


def replace(old: str, new: str) -> dict:
    return {"name": "replace_in_file", "input": {"path": "calc/both.py", "old_text": old, "new_text": new}}


def scenario(rules: list[dict]) -> dict:
    return {"name": "rebase", "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\nthe function returns 0."}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "fixed."}},
        *rules], "default": {"text": "no script"}}


def asked(server, role: str, test: str, turn: int = 1) -> list:
    return [r for r in server.requests if r.role == role and r.context.endswith(test) and r.turn == turn]


async def test_a_fix_on_a_file_changed_meanwhile_is_rebased_without_a_model_call(temporal_env, scripted, tmp_path):
    make_project(tmp_path / "p", "def a():\n    return 0  # bug a\n" + FILLER + "\n\ndef b():\n    return 0  # bug b\n")
    server = scripted(scenario([
        {"trigger": {"role": "fixer", "turn": 1, "context": "::test_a$"},
         "response": {"tool_calls": [replace("return 0  # bug a", "return 1")]}},
        {"trigger": {"role": "fixer", "turn": 1, "context": "::test_b$"},
         "response": {"tool_calls": [replace("return 0  # bug b", "return 1")]}},
    ]))
    summary, run_dir = await queue_run(temporal_env, tmp_path, concurrency=2, max_batch=2)

    assert summary.state == "completed" and sorted(summary.fixed) == [A, B] and summary.final.failed == 0
    # Both fixes were written on the starting file; the one validated second was rebased, not asked again.
    assert summary.rebased == 1 and summary.reasked == 0
    for test in (A, B):
        assert len(asked(server, "analyzer", test)) == 1 and len(asked(server, "fixer", test)) == 1
        assert verdicts(results(run_dir)[test]) == ["PASS"]
    assert [e["rebased"] for e in events(run_dir, "batch_rebased")] in ([[A]], [[B]])
    text = (run_dir / "workspace" / "calc" / "both.py").read_text()
    assert text == "def a():\n    return 1\n" + FILLER + "\n\ndef b():\n    return 1\n"
    views = {v.test_id: v for v in summary.tests}
    assert any("fix rebased (three-way merge)" in line for v in views.values() for line in v.history)
    assert "fixes rebased 1, re-asked after a conflict 0" in Path(summary.report_markdown or "").read_text()


async def test_a_real_conflict_goes_back_to_the_model_with_the_conflict_shown(temporal_env, scripted, tmp_path):
    # Both fixes rewrite the same line: the second cannot be merged.
    make_project(tmp_path / "p", "LIMITS = (0, 0)  # bug\n\n\ndef a():\n    return LIMITS[0]\n\n\n"
                                  "def b():\n    return LIMITS[1]\n")
    server = scripted(scenario([
        {"trigger": {"role": "fixer", "turn": 1, "context": "::test_a$"},
         "response": {"tool_calls": [replace("LIMITS = (0, 0)  # bug", "LIMITS = (1, 0)")]}},
        {"priority": 10, "trigger": {"role": "fixer", "turn": 1, "context": "::test_b$", "iteration": 1},
         "response": {"tool_calls": [replace("LIMITS = (0, 0)  # bug", "LIMITS = (0, 1)")], "delay_s": 1.0}},
        {"trigger": {"role": "fixer", "turn": 1, "context": "::test_b$"},  # asked again: on the accepted file
         "response": {"tool_calls": [replace("LIMITS = (1, 0)", "LIMITS = (1, 1)")]}},
    ]))
    summary, run_dir = await queue_run(temporal_env, tmp_path, concurrency=2, max_batch=2)

    assert summary.state == "completed" and sorted(summary.fixed) == [A, B] and summary.final.failed == 0
    assert summary.rebased == 0 and summary.reasked == 1
    [first] = [t for t in (A, B) if len(asked(server, "fixer", t)) == 1]
    [second] = [t for t in (A, B) if t != first]
    assert first == A  # A's fix was accepted first: B's conflicted and B was asked again
    again = asked(server, "fixer", B)
    assert len(again) == 2
    prompt = str(again[1].body["messages"][0]["content"])
    assert "conflict" in prompt and "<<<<<<< accepted now" in prompt and "LIMITS = (1, 0)" in prompt
    # Made again, not counted as a failed attempt.
    assert verdicts(results(run_dir)[second]) == ["PASS"]
    assert (run_dir / "workspace" / "calc" / "both.py").read_text().startswith("LIMITS = (1, 1)\n")
