"""A module that fails to load (a syntax error, the simplest injected bug): pytest reports
one errored entry named after the test file and runs nothing else. Its fix is judged by the
tests the file holds once it loads; the failing tests the error hid come to light in the final
suite run and are fixed in a second round, never counted green before."""

from __future__ import annotations

from pathlib import Path

import yaml

from greenloop.domain.states import Verdict
from greenloop.workflows import fix_one_test
from greenloop.workflows.fix_suite import child_id
from tests.conftest import REPO
from tests.workflows.conftest import drive, fix_request

MODULE = "tests/test_money.py"
BROKEN = 'return f"{cents // 100}.{cents % 100} EUR" +'  # a syntax error, beside the padding bug


def _fixer(turn_iteration: int, old: str, new: str) -> list[dict]:
    return [
        {"trigger": {"role": "fixer", "context": "test_money", "iteration": turn_iteration, "turn": 1},
         "response": {"tool_calls": [{"name": "replace_in_file",
                                      "input": {"path": "shop/money.py", "old_text": old, "new_text": new}}]}},
        {"trigger": {"role": "fixer", "context": "test_money", "iteration": turn_iteration, "turn": 2},
         "response": {"text": "done"}},
    ]


def _cart_fixes() -> list[dict]:
    """The demo scenario's fixes of the two cart bugs."""
    demo = yaml.safe_load((REPO / "samples" / "scenarios" / "demo-python.yaml").read_text())
    return [r for r in demo["rules"] if r["name"].startswith(("merge-quantities", "discount"))]


async def test_a_module_that_no_longer_loads_is_fixed_by_what_its_tests_say(temporal_env, scripted, demo_repo,
                                                                             tmp_path):
    repo = demo_repo
    money = Path(repo, "shop/money.py")
    money.write_text(money.read_text().replace('return f"{cents // 100}.{cents % 100} EUR"', BROKEN))
    server = scripted({"name": "load-error", "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "shop/money.py does not parse."}},
        # Attempt 1 repairs the syntax only: the module loads, and its test of the padding fails.
        *_fixer(1, 'EUR" +', 'EUR"'),
        # Attempt 2 repairs both.
        *_fixer(2, BROKEN, 'return f"{cents // 100}.{cents % 100:02d} EUR"'),
        *_cart_fixes(),
    ]})
    request = fix_request(repo, tmp_path)
    summary, handle = await drive(temporal_env, request)

    assert summary.initial.errored == 1 and summary.initial.total == 1  # pytest stopped at the collection error
    assert summary.fixed[0] == MODULE
    child = temporal_env.client.get_workflow_handle_for(fix_one_test.FixOneTestWorkflow.run,
                                                        child_id(handle.id, MODULE))
    attempts = (await child.result()).attempts
    assert [a.verdict for a in attempts] == [Verdict.FAIL, Verdict.PASS]
    assert (f"{MODULE} loads now, but its test {MODULE}::test_format_whole_euros is failed"
            in attempts[0].reason), attempts[0].reason
    # The demo's two cart bugs were hidden by the collection error: they come to light in the
    # final suite run and are fixed in a second round.
    hidden = ["tests/test_cart.py::test_add_same_sku_merges_quantities", "tests/test_cart.py::test_discount"]
    assert any(n.startswith("round 2: 2 failing test(s) came to light") for n in summary.notes), summary.notes
    assert sorted(summary.fixed[1:]) == hidden and summary.still_failing == []
    assert summary.final.failed == 0 and summary.final.errored == 0 and summary.state == "completed"
    assert {v.test_id: v.state.value for v in summary.tests} == {t: "FIXED" for t in [MODULE, *hidden]}
    money_asks = [r for r in server.requests if r.role == "fixer" and "test_money" in r.context]
    assert len(money_asks) == 4
