"""Batches are cut by weight as well as by count (``MOST_BATCH_BYTES``,
``workflows/validation_queue.py``): large fixes are split over several batches,
each checked with an input far under the payload limits, and every fix is
accepted; on the real dev server, the real sandbox and the scripted LLM, with
the tests' converter refusing any payload over 256 KiB."""

from __future__ import annotations

from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.contrib.pydantic import pydantic_data_converter

from greenloop.activities.batch import CheckInput
from greenloop.server.history import run_chain
from greenloop.workflows.validation_queue import MOST_BATCH_BYTES, weight
from tests.payload_bound import MOST_TEST_PAYLOAD_BYTES
from tests.workflows.conftest import drive, fix_request, replays
from tests.workflows.test_merge_queue import events, make_project, scenario

N = 8
# A fix that writes ~58 kB of new lines (a generated table beside the one-line fix): under the
# 128 kB a fix may write (MOST_FIX_BYTES), but three of them fill a batch's weight.
TABLE = "\n\n\nTABLE = (\n" + "".join(f"    'row {r:05d} of a generated table, kept in the module',\n"
                                      for r in range(1000)) + ")"


def large_fix(i: int) -> dict:
    return {"name": "replace_in_file", "input": {"path": f"calc/m{i:02d}.py", "old_text": "return 0  # bug",
                                                 "new_text": "return 1" + TABLE}}


def large_fixes(n: int) -> dict:
    """The merge-queue scenario, each test's fix writing the table as well."""
    sc = scenario(n)
    for rule in sc["rules"]:
        calls = rule["response"].get("tool_calls")
        if calls:
            i = int(rule["trigger"]["context"].removeprefix("::test_value_").removesuffix("$"))
            rule["response"]["tool_calls"] = [large_fix(i)]
    return sc


async def test_large_fixes_are_split_over_several_batches_and_every_one_is_accepted(temporal_env, scripted, tmp_path):
    # Eight fixes of ~58 kB side by side, batches of up to eight: by count one batch (~470 kB in one
    # check's input, over the tests' bound), by weight at most three a check (speculation included).
    failing = make_project(tmp_path / "p", N)
    scripted(large_fixes(N))
    assert 55_000 < len(TABLE) < 60_000
    request = fix_request(tmp_path / "p", tmp_path, concurrency=N, max_batch=N, validation="queue",
                          test_impact=False)
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)

    assert summary.state == "completed", summary.reason
    assert sorted(summary.fixed) == failing and summary.final is not None and summary.final.failed == 0
    assert not summary.escalated and not summary.skipped
    run_dir = Path(request.run_dir)
    accepted = [e["tests"] for e in events(run_dir, "batch_accepted")]
    assert sorted(t for batch in accepted for t in batch) == failing  # each accepted once
    assert len(accepted) >= 3 and max(len(b) for b in accepted) <= 3, accepted

    # Every check's candidates (with the batch in flight's, when checked on top of it) stay under the
    # bound, and its whole input under the tests' bound on any payload.
    histories = await run_chain(temporal_env.client, handle.id, handle.first_execution_run_id or "")
    checks = [e.activity_task_scheduled_event_attributes for h in histories for e in h.events
              if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
              and e.activity_task_scheduled_event_attributes.activity_type.name == "check_batch"]
    assert len(checks) >= len(accepted)
    for attrs in checks:
        [inp] = pydantic_data_converter.payload_converter.from_payloads(list(attrs.input.payloads), [CheckInput])
        assert inp.candidates and weight(inp.candidates + inp.ahead) <= MOST_BATCH_BYTES, inp.label
        assert attrs.input.ByteSize() < MOST_TEST_PAYLOAD_BYTES
    workspace = run_dir / "workspace" / "calc"
    assert all((workspace / f"m{i:02d}.py").read_text() == f"def value():\n    return 1{TABLE}\n" for i in range(N))
