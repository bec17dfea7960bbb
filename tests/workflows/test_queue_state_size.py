"""The run's state stays bounded: accepted fixes travel as compact changes, never
as whole files, so no payload grows with the number of accepted fixes times the
size of their files; and a payload that grows anyway fails loudly, named and
measured, long before Temporal's 2 MiB limit (which would wedge the run)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from greenloop.activities.workspace import AcceptedChange
from greenloop.domain.changes import change_between
from greenloop.domain.edits import Edit, EditSet
from greenloop.server.history import run_chain
from greenloop.workflows.fix_suite import FixSuiteWorkflow
from greenloop.workflows.payloads import MOST_PAYLOAD_BYTES, STATE_TOO_LARGE, StateTooLarge, guarded
from tests.histories.kept import child_ids
from tests.payload_bound import BOUND, MOST_TEST_PAYLOAD_BYTES, TEST_CONVERTER, PayloadOverBound
from tests.workflows.conftest import drive, fix_request, replays
from tests.workflows.test_merge_queue import scenario, tid

FILLER = "".join(f"def helper_{i}():\n    return {i}  # filler line of a large module\n\n\n" for i in range(1600))
MODULE = FILLER + "def value():\n    return 0  # bug\n"  # ~110 KB, the bug at its end


def accepted(n: int, whole: bool) -> list[AcceptedChange]:
    fixed = MODULE.replace("return 0  # bug", "return 1")
    return [AcceptedChange(test_id=tid(i), attempt=1, edit_set=EditSet(edits=[Edit(path=f"calc/m{i:03d}.py",
                                                                                   content=fixed)]))
            if whole else AcceptedChange(test_id=tid(i), attempt=1,
                                         changes=[change_between(f"calc/m{i:03d}.py", MODULE, fixed)])
            for i in range(n)]


def test_accepted_fixes_weigh_what_they_change_not_their_files():
    # The run: 200 fixes accepted in large modules. As whole files they weighed far over 2 MiB.
    whole = sum(len(c.model_dump_json()) for c in accepted(200, whole=True))
    compact = sum(len(c.model_dump_json()) for c in accepted(200, whole=False))
    assert whole > 2 * 1024 * 1024 * 4
    assert compact < 100 * 1024, compact


def test_a_payload_over_the_limit_fails_loudly_before_temporal_refuses_it():
    payload = AcceptedChange(test_id="t", attempt=1, edit_set=EditSet(edits=[Edit(path="m.py", content=MODULE * 12)]))
    with pytest.raises(StateTooLarge) as caught:
        guarded("the state the run continues as new with", payload)
    assert caught.value.type == STATE_TOO_LARGE and caught.value.non_retryable
    assert re.match(r"the state the run continues as new with would be 1\.\d\d MiB, over the run's limit of 1\.00 MiB",
                    caught.value.message), caught.value.message
    assert MOST_PAYLOAD_BYTES < 2 * 1024 * 1024
    small = AcceptedChange(test_id="t", attempt=1)
    assert guarded("small", small) is small


def make_project(root: Path, n: int) -> list[str]:
    (root / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "calc" / "__init__.py").write_text("")
    for i in range(n):
        (root / "calc" / f"m{i:02d}.py").write_text(MODULE)
    (root / "tests" / "test_values.py").write_text(
        "".join(f"from calc import m{i:02d}\n" for i in range(n))
        + "".join(f"\n\ndef test_value_{i:02d}():\n    assert m{i:02d}.value() == 1\n" for i in range(n)))
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n\n'
                                         '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    return [tid(i) for i in range(n)]


async def test_a_run_whose_fixes_in_large_files_once_outgrew_the_limit_completes(temporal_env, scripted, tmp_path):
    # 24 fixes in ~110 KB modules: carried as whole files, the accepted fixes alone were 2.6 MB.
    failing = make_project(tmp_path / "p", 24)
    scripted(scenario(24))
    request = fix_request(tmp_path / "p", tmp_path, concurrency=8, max_batch=8, validation="queue", tests_per_run=8,
                          test_impact=False)
    summary, handle = await drive(temporal_env, request)
    assert await replays(temporal_env.client, handle) >= 3  # it continued as new, carrying its accepted fixes

    assert summary.state == "completed" and sorted(summary.fixed) == failing and summary.final.failed == 0
    histories = await run_chain(temporal_env.client, handle.id, handle.first_execution_run_id or "")
    largest = max(e.ByteSize() for h in histories for e in h.events)
    assert largest < 256 * 1024, largest  # every event: a batch check's input, the continued state...
    # The children's too: a one-line fix to a ~110 kB module travels as what it changes (finish_fix's
    # result once held the whole file: 117 kB), and so does everything else a child hands Temporal.
    children = [await temporal_env.client.get_workflow_handle(c).fetch_history()
                for c in dict.fromkeys(c for h in histories for c in child_ids(h))]
    assert len(children) >= 24
    largest_child = max(e.ByteSize() for h in children for e in h.events)
    assert largest_child < 16 * 1024, largest_child
    ws = Path(request.run_dir) / "workspace" / "calc"
    assert all((ws / f"m{i:02d}.py").read_text() == MODULE.replace("return 0  # bug", "return 1") for i in range(24))


async def test_a_state_too_large_to_continue_ends_the_run_with_its_report_and_patch(
        temporal_env, scripted, tmp_path, monkeypatch):
    """When the state a run would continue as new with is over the guard's limit, the
    run does not fail without a word: it stops driving tests and ends with its report
    and patch, the fixes made so far in them and the tests left skipped with the reason."""
    from greenloop.workflows import payloads

    # A limit above every activity input of this run (under 5 kB) and below the state it
    # continues as new with after two tests (about 8 kB): only that guard trips.
    monkeypatch.setattr(payloads, "MOST_PAYLOAD_BYTES", 6000)
    failing = make_project(tmp_path / "p", 4)
    scripted(scenario(4))
    request = fix_request(tmp_path / "p", tmp_path, concurrency=2, max_batch=2, validation="queue", tests_per_run=2,
                          test_impact=False)
    summary, handle = await drive(temporal_env, request)
    assert await replays(temporal_env.client, handle) == 1  # it did not continue as new

    assert summary.state == "completed" and summary.final is not None
    assert re.match(r"the state the run continues as new with would be 0\.0\d MiB, over the run's limit", summary.reason)
    assert summary.reason.endswith("2 test(s) were left undriven")
    assert len(summary.fixed) == 2 and sorted(summary.fixed + summary.skipped) == failing
    assert summary.final.failed == 2 and sorted(summary.still_failing) == sorted(summary.skipped)
    views = {v.test_id: v for v in summary.tests}
    assert all(views[t].history[-1] == "not driven: the run's state grew too large to go on" for t in summary.skipped)
    # The report and the patch hold the fixes made before it stopped.
    assert "2 test(s) were left undriven" in Path(summary.report_html or "").read_text()
    patch = Path(summary.patch or "").read_text()
    fixed_modules = {f"calc/m{int(t[-2:]):02d}.py" for t in summary.fixed}
    assert {m for m in fixed_modules if m in patch} == fixed_modules
    assert all(f"calc/m{int(t[-2:]):02d}.py" not in patch for t in summary.skipped)


async def test_the_tests_converter_refuses_a_payload_over_its_bound(temporal_env, tmp_path):
    # Every test on the dev server encodes through it: a payload that grows past the bound fails its test.
    request = fix_request(tmp_path, tmp_path, test_command="x" * (MOST_TEST_PAYLOAD_BYTES + 1))
    with BOUND.expecting_over() as refused, pytest.raises(
            PayloadOverBound, match=r"a payload of 25\d\.\d KiB, over the tests' bound of 256 KiB: \{"):
        await temporal_env.client.start_workflow(FixSuiteWorkflow.run, request, id=f"over-{uuid.uuid4().hex[:6]}",
                                                 task_queue="nobody")
    assert len(refused) == 1
    small = fix_request(tmp_path, tmp_path)
    assert len(await BOUND.encode(TEST_CONVERTER.payload_converter.to_payloads([small]))) == 1
