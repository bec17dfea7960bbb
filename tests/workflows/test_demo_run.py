"""End to end on the demo repository: three real failing pytest tests fixed by
the real workflows through the scripted LLM, validated in the real sandbox."""

from __future__ import annotations

import subprocess

from tests.workflows.conftest import DEMO, drive, fix_request, replays

SCENARIO = DEMO.parent / "scenarios" / "demo-python.yaml"
FAILING = ["tests/test_cart.py::test_add_same_sku_merges_quantities", "tests/test_cart.py::test_discount",
           "tests/test_money.py::test_format_whole_euros"]


async def test_demo_repository_is_driven_to_green(temporal_env, demo_repo, scripted, tmp_path):
    server = scripted(SCENARIO)
    request = fix_request(demo_repo, tmp_path)
    summary, handle = await drive(temporal_env, request)

    assert summary.state == "completed"
    assert sorted(summary.fixed) == sorted(FAILING)
    assert summary.initial.failed == 3 and summary.final.failed == 0 and summary.final.passed == 7
    assert summary.still_failing == [] and summary.flaky == []
    # The user's repository is untouched; the fixes are in the run's patch and branch.
    assert "(price, qty)  # bug" in (demo_repo / "shop/cart.py").read_text()
    patch = open(summary.patch).read()
    assert "+        self.lines[sku] = (price, old + qty)" in patch
    assert "+    return f\"{cents // 100}.{cents % 100:02d} EUR\"" in patch
    ws = f"{request.run_dir}/workspace"
    log = subprocess.run(["git", "-C", ws, "log", "--format=%s", "-1"], capture_output=True, text=True).stdout
    assert log.startswith("greenloop: fix 3 failing test(s)")
    # Every test: analyzer then fixer, with the fixer's tool calls in order.
    roles = [(r.context.split("/", 1)[1], r.role, r.turn) for r in server.requests]
    merges = [x for x in roles if x[0] == FAILING[0]]
    assert merges == [(FAILING[0], "analyzer", 1), (FAILING[0], "fixer", 1), (FAILING[0], "fixer", 2),
                      (FAILING[0], "fixer", 3)]
    # Two fixes edit shop/cart.py side by side: one written before the other was accepted is rebased
    # onto it (a three-way merge), never asked again: one analysis and one proposal per test.
    assert summary.reasked == 0
    for test in FAILING:
        asked = [x for x in roles if x[0] == test and x[2] == 1]
        assert asked == [(test, "analyzer", 1), (test, "fixer", 1)], asked
    assert len(server.requests) == 10
    report = open(summary.report_markdown).read()
    assert "## `tests/test_cart.py::test_discount`: FIXED" in report
    # The recorded history replays deterministically.
    await replays(temporal_env.client, handle, keep="queue-run")
