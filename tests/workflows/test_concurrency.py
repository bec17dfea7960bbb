"""``concurrency > 1`` with ``--validation each``: failing tests fixed side by
side, each in its own git worktree of the run workspace, their fixes merged
back only when they merge cleanly. Real workflows on the real dev server, real
git, the real sandbox, the scripted LLM.

Worktrees per test and three-way merges exist only when each attempt validates
itself, so every run here asks for ``validation="each"`` (the default, the
validation queue, is tested in test_merge_queue.py)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from temporalio.client import Client

from greenloop.domain.errors import GreenloopError
from greenloop.domain.states import FixState
from greenloop.reports.record import FixStatusView as StatusView  # (a Test* name pytest would try to collect)
from greenloop.reports.record import RunSummary
from greenloop.worker import build_worker
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from greenloop.workspace import worktree
from greenloop.workspace.backups import slug
from greenloop.workspace.prepare import prepare
from tests.workflows.conftest import DEMO, drive, fix_request, replays

SCENARIOS = DEMO.parent / "scenarios"
DEMO_FAILING = ["tests/test_cart.py::test_add_same_sku_merges_quantities", "tests/test_cart.py::test_discount",
                "tests/test_money.py::test_format_whole_euros"]

# A line of each demo test's fix, in the file the fix changes.
FIX_LINES = dict(zip(DEMO_FAILING, [("shop/cart.py", "self.lines[sku] = (price, old + qty)"),
                                    ("shop/cart.py", "return round(self.total() * (100 - percent) / 100, 2)"),
                                    ("shop/money.py", "{cents % 100:02d}")]))


def git(ws: str | Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(ws), *args], capture_output=True, text=True, check=True).stdout


async def spans(client: Client, run_id: str, tests: list[str]) -> list[tuple[float, float]]:
    """(start, close) of each test's child workflow."""
    out = []
    for t in tests:
        d = await client.get_workflow_handle(child_id(run_id, t)).describe()
        out.append((d.start_time.timestamp(), d.close_time.timestamp()))
    return out


def assert_no_worktree_left(run_dir: str) -> None:
    ws = Path(run_dir, "workspace")
    assert git(ws, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not list(Path(run_dir, "worktrees").glob("*/workspace"))


async def test_demo_fixed_in_parallel_worktrees(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIOS / "demo-python.yaml")
    client = temporal_env.client
    request = fix_request(demo_repo, tmp_path, concurrency=3, validation="each")
    run_id = f"conc-{uuid.uuid4().hex[:6]}"
    summary, handle = await drive(temporal_env, request, run_id)
    await replays(temporal_env.client, handle)

    assert summary.state == "completed" and sorted(summary.fixed) == sorted(DEMO_FAILING)
    assert summary.final.failed == 0 and summary.final.passed == 7 and summary.still_failing == []
    patch = Path(summary.patch).read_text()
    assert "+        self.lines[sku] = (price, old + qty)" in patch
    assert "+        return round(self.total() * (100 - percent) / 100, 2)" in patch
    assert "+    return f\"{cents // 100}.{cents % 100:02d} EUR\"" in patch
    # The three children really ran at the same time.
    times = await spans(client, run_id, DEMO_FAILING)
    assert max(start for start, _ in times) < min(close for _, close in times)
    # Each merge is kept as a patch a rollback can take back out; no worktree is left behind.
    assert len(list(Path(request.run_dir, "patches").glob("*.patch"))) == 3 + 3  # merged + the fixes as made
    assert_no_worktree_left(request.run_dir)
    for view in summary.tests:
        assert view.state == FixState.FIXED and view.history[-1] == "fix merged into the run workspace"


CONFLICT = DEMO.parent / "conflict-python"
CAPITALIZED, QUANTITY = "tests/test_label.py::test_name_is_capitalized", "tests/test_label.py::test_quantity_is_shown"


async def test_fix_that_does_not_merge_is_redone_in_the_run_workspace(temporal_env, scripted, tmp_path):
    repo = tmp_path / "conflict"
    shutil.copytree(CONFLICT, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    server = scripted(SCENARIOS / "concurrent-conflict.yaml")
    client = temporal_env.client
    request = fix_request(repo, tmp_path, concurrency=2, validation="each")
    run_id = f"conflict-{uuid.uuid4().hex[:6]}"
    summary, handle = await drive(temporal_env, request, run_id)
    await replays(temporal_env.client, handle)

    assert summary.state == "completed" and sorted(summary.fixed) == [CAPITALIZED, QUANTITY]
    assert summary.final.failed == 0 and summary.final.passed == 3 and summary.attempts == 3
    ws = Path(request.run_dir, "workspace")
    label = (ws / "shop/label.py").read_text()
    assert "def shown_name(name): return name.capitalize()\ndef shown_qty(qty): return qty\n" in label
    # Both fixes were made side by side; the one that finished first was merged.
    (s1, c1), (s2, c2) = await spans(client, run_id, [CAPITALIZED, QUANTITY])
    assert max(s1, s2) < min(c1, c2)
    first, second = (CAPITALIZED, QUANTITY) if c1 < c2 else (QUANTITY, CAPITALIZED)
    views = {v.test_id: v for v in summary.tests}
    assert views[first].history[-1] == "fix merged into the run workspace"
    assert Path(request.run_dir, "patches", f"{slug(first)}.patch").is_file()
    # The other's fix clashed: nothing of it was merged; it was fixed again, in the run workspace, afterwards.
    assert not Path(request.run_dir, "patches", f"{slug(second)}.patch").exists()
    notes = [h for h in views[second].history if "not merged" in h]
    assert len(notes) == 1 and "conflicts with fixes merged since it started, in shop/label.py" in notes[0]
    assert views[second].state == FixState.FIXED and views[second].workflow_id == child_id(run_id, second) + "/retry"
    retry = await client.get_workflow_handle(child_id(run_id, second) + "/retry").describe()
    assert retry.start_time.timestamp() >= max(c1, c2)
    assert Path(request.run_dir, "backups", slug(second)).is_dir()  # its edits were made in the run workspace
    assert not Path(request.run_dir, "backups", slug(first)).exists()  # (the first's, in its worktree)
    redo = [r for r in server.requests if r.role == "fixer" and second in r.context and r.iteration == 2]
    assert redo and redo[0].turn == 1
    assert_no_worktree_left(request.run_dir)


async def wait_until(check, what: str, timeout_s: float = 90) -> None:
    for _ in range(int(timeout_s / 0.25)):
        try:
            if await check():
                return
        except Exception:  # not started yet: queries fail until the workflow exists
            pass
        await asyncio.sleep(0.25)
    raise AssertionError(f"timed out waiting until {what}")


async def test_rollback_and_abort_during_a_concurrent_batch(temporal_env, demo_repo, scripted, tmp_path):
    scripted(SCENARIOS / "concurrent-abort.yaml")
    client = temporal_env.client
    queue = f"q-{uuid.uuid4().hex[:6]}"
    # A short heartbeat timeout, so a cancelled test run hears of it within seconds (the sandbox beats every 5 s).
    request = fix_request(demo_repo, tmp_path, concurrency=3, heartbeat_timeout_s=10, validation="each")
    run_id = f"abort-{uuid.uuid4().hex[:6]}"
    money, carts = DEMO_FAILING[2], DEMO_FAILING[:2]
    ws = Path(request.run_dir, "workspace")
    original = {p: (demo_repo / p).read_text() for p in ("shop/cart.py", "shop/money.py")}

    async def money_fixed() -> bool:
        # The child says FIXED as it ends (the run hears each state the test enters); the run then
        # merges its worktree: wait for both.
        views = await handle.query("status", result_type=list[StatusView])
        return any(v.test_id == money and v.state == FixState.FIXED and "fix merged into the run workspace" in v.history
                   for v in views)

    async def carts_validating() -> bool:
        states = [(await client.get_workflow_handle(child_id(run_id, t)).query("status", result_type=StatusView))
                  .state for t in carts]
        return states == [FixState.VALIDATING] * 2

    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
        await wait_until(money_fixed, "the money test's fix is merged")
        assert "{cents % 100:02d}" in (ws / "shop/money.py").read_text()
        await wait_until(carts_validating, "both cart fixes are being validated in their worktrees")
        # A merged fix comes back out by hand while the others are still in flight.
        assert await handle.execute_update("rollback", money, result_type=str) == f"rolled back {money}"
        assert (ws / "shop/money.py").read_text() == original["shop/money.py"]
        assert await handle.execute_update("abort", "enough", result_type=str) in ("finalizing", "finished")
        summary: RunSummary = await handle.result()
        await replays(temporal_env.client, handle)

    assert summary.state == "aborted" and sorted(summary.aborted) == sorted(carts)
    assert summary.fixed == [] and summary.skipped == [money] and "enough" in summary.notes
    # Nothing partial was merged: the run workspace is exactly the user's files.
    for path, text in original.items():
        assert (ws / path).read_text() == text
    assert summary.final.failed == 3 and summary.patch is None
    assert_no_worktree_left(request.run_dir)


async def test_a_concurrent_run_continues_as_new_and_keeps_what_it_fixed(temporal_env, demo_repo, scripted,
                                                                          tmp_path):
    # Two tests per workflow run, two at a time: the first run fixes a batch of two side by side and
    # continues as new; the next run fixes the third. A fix merged by the first run is rolled back
    # by hand while the second run works: what the first run merged travelled with it.
    data = yaml.safe_load((SCENARIOS / "demo-python.yaml").read_text())
    for rule in data["rules"]:
        if rule["trigger"].get("role") == "analyzer":
            rule["response"]["delay_s"] = 3  # time to roll back while the last test is in flight
    scripted(data)
    client = temporal_env.client
    queue = f"q-{uuid.uuid4().hex[:6]}"
    request = fix_request(demo_repo, tmp_path, concurrency=2, tests_per_run=2, validation="each")
    run_id = f"can-{uuid.uuid4().hex[:6]}"

    async def second_run_fixing() -> bool:
        if (await client.get_workflow_handle(run_id).describe()).run_id == handle.first_execution_run_id:
            return False
        views = await client.get_workflow_handle(run_id).query("status", result_type=list[StatusView])
        last = [v for v in views if v.state == FixState.PENDING]  # the parent's view; its child says more
        child = client.get_workflow_handle(child_id(run_id, last[0].test_id))
        return (await child.query("status", result_type=StatusView)).state == FixState.ANALYZING

    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue)
        await wait_until(second_run_fixing, "the second workflow run is fixing its test")
        latest = client.get_workflow_handle(run_id)
        views = {v.test_id: v for v in await latest.query("status", result_type=list[StatusView])}
        first_batch = sorted(t for t, v in views.items() if v.state == FixState.FIXED)
        assert len(first_batch) == 2 and all(views[t].history[-1] == "fix merged into the run workspace"
                                             for t in first_batch)
        undone = first_batch[0]
        assert await latest.execute_update("rollback", undone, result_type=str) == f"rolled back {undone}"
        summary: RunSummary = await handle.result()
        assert await replays(client, handle) == 2

    # The first run's two children ran side by side.
    (s1, c1), (s2, c2) = await spans(client, run_id, first_batch)
    assert max(s1, s2) < min(c1, c2)
    assert summary.state == "completed" and summary.skipped == [undone]
    assert sorted(summary.fixed) == sorted(set(DEMO_FAILING) - {undone})
    assert summary.still_failing == [undone] and summary.final.failed == 1
    assert {v.test_id: v.state for v in summary.tests} == {
        t: FixState.SKIPPED if t == undone else FixState.FIXED for t in DEMO_FAILING}
    ws = Path(request.run_dir, "workspace")
    for test_id, (path, line) in FIX_LINES.items():
        assert (line in (ws / path).read_text()) == (test_id != undone), test_id
    assert_no_worktree_left(request.run_dir)




# --- the git side on its own (workspace/worktree.py) ------------------------------------


def test_worktrees_start_from_the_current_files_and_merge_three_ways(tmp_path):
    src = tmp_path / "src"
    (src / "deps").mkdir(parents=True)
    (src / "a.txt").write_text("one\ntwo\nthree\nfour\nfive\nsix\nseven\n")
    (src / ".gitignore").write_text("deps/\n")
    (src / "deps" / "lib.txt").write_text("an ignored dependency\n")
    ws = tmp_path / "ws"
    prepare(str(src), None, "run", ws)
    (ws / "a.txt").write_text("ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n")  # an earlier merged fix, uncommitted
    (ws / "new.txt").write_text("untracked\n")
    t1, t2 = tmp_path / "wt" / "1", tmp_path / "wt" / "2"
    s1, s2 = worktree.create(ws, t1), worktree.create(ws, t2)
    assert (t1 / "a.txt").read_text().startswith("ONE\n") and (t1 / "new.txt").is_file()
    assert (t1 / "deps" / "lib.txt").is_file()  # what git ignores, the tests may still need
    assert git(ws, "status", "--porcelain") == " M a.txt\n?? new.txt\n"  # the run workspace is untouched

    # Fix 1: the last line, and a new binary file; fix 2: the same last line, differently.
    (t1 / "a.txt").write_text("ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n")
    (t1 / "blob.bin").write_bytes(bytes(range(256)))
    (t1 / "stray.pyc").write_bytes(b"left by a test run")
    (t2 / "a.txt").write_text("ONE\ntwo\nthree\nfour\nfive\nsix\nseven!\n")
    f1 = worktree.fix_commit(t1, s1, ["a.txt", "blob.bin", "never-existed.txt"])
    f2 = worktree.fix_commit(t2, s2, ["a.txt"])
    fix_patch = worktree.write_patch(t1, s1, f1, tmp_path / "1.fix.patch")
    assert "+SEVEN" in fix_patch and "GIT binary patch" in fix_patch and "stray.pyc" not in fix_patch

    out = worktree.merge(ws, s1, f1, tmp_path / "1.patch")
    assert out.merged and out.files == ["a.txt", "blob.bin"]
    assert (ws / "a.txt").read_text() == "ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n"
    assert (ws / "blob.bin").read_bytes() == bytes(range(256))
    before = (ws / "a.txt").read_text()
    clash = worktree.merge(ws, s2, f2, tmp_path / "2.patch")
    assert not clash.merged and clash.files == ["a.txt"] and "a.txt" in clash.reason
    assert (ws / "a.txt").read_text() == before and not (tmp_path / "2.patch").exists()  # nothing touched

    # A change far from another merges although the other came first (a real three-way merge).
    (t2 / "a.txt").write_text("ONE\ntwo\nthree\nFOUR\nfive\nsix\nseven\n")
    worktree.merge(ws, s2, worktree.fix_commit(t2, s2, ["a.txt"]), tmp_path / "3.patch")
    assert (ws / "a.txt").read_text() == "ONE\ntwo\nthree\nFOUR\nfive\nsix\nSEVEN\n"

    # Taking fix 1 back out leaves the later one, though it is within the patch's context; twice is harmless.
    assert worktree.unapply(ws, tmp_path / "1.patch") == ["a.txt", "blob.bin"]
    assert worktree.unapply(ws, tmp_path / "1.patch") == ["a.txt", "blob.bin"]
    assert (ws / "a.txt").read_text() == "ONE\ntwo\nthree\nFOUR\nfive\nsix\nseven\n" and not (ws / "blob.bin").exists()
    # A fix whose own lines were changed since cannot come out on its own: refused, nothing touched.
    worktree.merge(ws, s1, f1, tmp_path / "4.patch")
    (ws / "a.txt").write_text("ONE\ntwo\nthree\nFOUR\nfive\nsix\nSEVEN, reworded later\n")
    with pytest.raises(GreenloopError, match="cannot be taken back out on its own"):
        worktree.unapply(ws, tmp_path / "4.patch")
    assert (ws / "a.txt").read_text().endswith("SEVEN, reworded later\n") and (ws / "blob.bin").is_file()

    for t in (t1, t2):
        worktree.remove(ws, t)
        worktree.remove(ws, t)
    assert not t1.exists() and git(ws, "worktree", "list", "--porcelain").count("worktree ") == 1
