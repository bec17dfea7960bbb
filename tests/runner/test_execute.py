"""What a finished command says, in the real bwrap sandbox: a command the
shell did not find (exit 127) gives way to the next fallback; a runner that
reported its tests and then failed on a word like ``ENOENT`` is kept; a run
whose output passed the cap says so (and the cap is the run's setting)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers.models import Status
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.runner.readable import caveats, unreadable_reason
from greenloop.sandbox.models import SandboxSettings

TESTS = """
import unittest


class T(unittest.TestCase):
    def test_ok(self):
        self.assertTrue(True)

    def test_bad(self):
        self.assertEqual(1, 2)
"""
UNITTEST = f"{sys.executable} -m unittest -v test_t"
SETTINGS = SandboxSettings(backend="bwrap", timeout_s=120)


def project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "test_t.py").write_text(textwrap.dedent(TESTS))
    return root


def statuses(report) -> dict[str, Status]:
    return {t.id: t.status for t in report.tests}


async def test_a_command_the_shell_does_not_find_gives_way_to_the_next_fallback(tmp_path):
    root = project(tmp_path / "p")
    plan = plan_tests(root, framework="unittest", test_command="no-such-runner-here -v")
    plan = plan.model_copy(update={"fallback_commands": [UNITTEST]})
    done = await run_tests(plan, root, tmp_path / "out", SETTINGS)
    assert done.report.command == UNITTEST
    assert statuses(done.report) == {"test_t.T.test_ok": Status.PASSED, "test_t.T.test_bad": Status.FAILED}
    plan = plan.model_copy(update={"fallback_commands": []})
    with pytest.raises(GreenloopError) as err:
        await run_tests(plan, root, tmp_path / "out2", SETTINGS)
    assert err.value.kind is ErrorKind.COMMAND_NOT_FOUND


async def test_a_runner_that_reported_its_tests_then_failed_with_enoent_is_kept(tmp_path):
    # What vitest did when it could not make its cache folder: every result read, then ENOENT and exit 1.
    root = project(tmp_path / "p")
    command = (f"{UNITTEST}; echo \"Error: ENOENT: no such file or directory, mkdir 'node_modules/.vite'\" >&2; "
               "exit 1")
    plan = plan_tests(root, framework="unittest", test_command=command)
    plan = plan.model_copy(update={"fallback_commands": ["echo 'no test script' >&2; exit 1"]})
    done = await run_tests(plan, root, tmp_path / "out", SETTINGS)
    assert done.report.command == command
    assert statuses(done.report) == {"test_t.T.test_ok": Status.PASSED, "test_t.T.test_bad": Status.FAILED}
    assert unreadable_reason(done.report) is None


async def test_a_command_that_ran_and_read_nothing_is_kept_with_its_output(tmp_path):
    # It was found: its output (not another runner's "Ran 0 tests") says what the suite's state is.
    root = project(tmp_path / "p")
    plan = plan_tests(root, framework="unittest", test_command=f"{sys.executable} -m no_such_module_here")
    done = await run_tests(plan.model_copy(update={"fallback_commands": [UNITTEST]}), root, tmp_path / "o1", SETTINGS)
    assert done.report.command == plan.test_command and not done.report.tests
    assert "No module named" in (done.report.output_tail or "")


async def test_output_past_the_cap_says_so_instead_of_blaming_the_command(tmp_path):
    root = project(tmp_path / "p")
    # it never stops printing by itself: only the cap stops it, before the tests
    noisy = f"{sys.executable} -c \"while True: print('x' * 1000)\" && {UNITTEST}"
    plan = plan_tests(root, framework="unittest", test_command=noisy)
    settings = SETTINGS.model_copy(update={"output_bytes": 64 * 1024})
    done = await run_tests(plan, root, tmp_path / "out", settings)
    assert done.report.output_cut_bytes == settings.output_bytes
    reason = unreadable_reason(done.report)
    assert reason is not None and reason.startswith(
        f"`{noisy}` printed more than the output cap (65536 bytes, setting output_bytes, --output-bytes) "
        "and was stopped there, before any test reported"), reason
    assert "exited" not in reason.split("; the output ends with")[0]
    # a suite under the cap is read whole
    plan = plan_tests(root, framework="unittest", test_command=f"{sys.executable} -c \"print('x' * 200_000)\" && {UNITTEST}")
    done = await run_tests(plan, root, tmp_path / "out2", SETTINGS)
    assert done.report.output_cut_bytes is None and len(done.report.tests) == 2 and not caveats(done.report)
