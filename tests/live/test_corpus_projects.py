"""The corpus's sample projects, run for real through the runner in the sandbox.

One representative case per framework (two for mocha, see CASES), run
with the case's own command and with the command the planner chooses, plus
``greenloop test --json`` on one project. Every chosen case is deterministic:
the tests that time out sleep far longer than their framework-level timeout
(pytest-timeout 1 s vs sleep 5 s, JUnit @Timeout 500 ms vs 3 s, ...), so the
outcome does not depend on machine speed. Left out on purpose: the
``runner_timeout_kill`` cases (unittest, cargo), where coreutils ``timeout``
kills the whole run and which tests finished first depends on timing, and the
xdist cases (worker scheduling, and plugins the venv does not carry).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.sandbox.models import SandboxSettings
from tests.conftest import REPO
from tests.live.conftest import Case, require, sandbox_backend, tool_for

# (case, project files to drop, exit status of what remains): the mocha
# sample's module under test (lib/auth.js) is missing from the corpus (its
# builder left out every lib/ folder), so test/auth.spec.js cannot load; the
# rest of that project still runs as recorded. Mocha exits with the number
# of failures: the two hook failures of test/ldap.spec.js.
CASES: list[tuple[str, tuple[str, ...], int | None]] = [
    ("pytest/console_default", (), None),
    ("unittest/verbose", (), None),
    ("jest/console_default", (), None),
    ("vitest/verbose_nocolor", (), None),
    ("mocha/spec_default", ("test/auth.spec.js",), 2),
    ("mocha/syntax_error", ("test/auth.spec.js",), None),
    ("node-test/spec", (), None),
    ("cargo-test/human_no_fail_fast", (), None),
    ("junit-console/console_flat_nocolor", (), None),
    ("maven-surefire/mvn_test_junit5", (), None),
]
IDS = [name.replace("/", ":") for name, _, _ in CASES]
# Generous: a cold Maven or cargo build on a loaded 2-core CI machine.
RUN_TIMEOUT_S = 240


def _settings() -> SandboxSettings:
    return SandboxSettings(backend=sandbox_backend(), timeout_s=RUN_TIMEOUT_S, network=False)


@pytest.fixture(scope="module")
def workspaces() -> dict[str, Path]:
    """Prepared projects, shared by the tests of this module: installing
    dependencies (npm, the Maven warm-up) is the slow part. A second run in
    the same workspace is what Greenloop does all the time."""
    return {}


@pytest.fixture
def live_case(request, workspaces, tmp_path_factory) -> tuple[Case, Path]:
    """The case named by the test's parameter and its prepared project."""
    case = Case(*request.param)
    require(*tool_for(case.framework), *(("bwrap",) if sandbox_backend() in ("bwrap", "auto") else ()))
    if case.name not in workspaces:
        workspaces[case.name] = case.prepare(tmp_path_factory.mktemp(case.name.replace("/", "-")))
    return case, workspaces[case.name]


def _statuses(tests) -> Counter:
    return Counter((t["id"] if isinstance(t, dict) else t.id,
                    t["status"] if isinstance(t, dict) else t.status.value) for t in tests)


@pytest.mark.parametrize("live_case", CASES, indirect=True, ids=IDS)
async def test_the_case_command_gives_the_recorded_totals(live_case, tmp_path):
    case, ws = live_case
    plan = plan_tests(ws, test_command=case.command)
    assert plan.framework == case.framework, plan.reason

    run = await run_tests(plan, ws, tmp_path / "out", _settings())

    _check(run, case, ws)

def _check(run, case: Case, ws: Path) -> None:
    report = run.report
    detail = f"{run.test.command} -> exit {report.exit_code}; see {run.artifacts}"
    assert run.test.backend.startswith(sandbox_backend()), run.test.backend
    assert not run.test.timed_out, detail  # the sandbox's time limit, not a test's own timeout
    assert report.exit_code == case.exit_code, detail
    assert report.timed_out == case.timed_out, detail
    assert report.build_error == case.build_error, detail
    assert report.totals.model_dump() == case.totals, detail
    # Ids too, where they do not hold the build machine's absolute path (node:test load errors).
    expected = {k: v for k, v in _statuses(case.tests).items() if "<ROOT>" not in k[0]}
    got = {k: v for k, v in _statuses(report.tests).items() if str(ws) not in k[0]}
    assert got == expected, detail


# The planner's own command for each project (no test_command given): the
# framework it detects and the reporters it adds must not change the results.
# The JUnit console project has no build file at all, so the language
# detection refuses it (checked below).
PLANNED = [c for c in CASES if not c[0].startswith("junit-console/")]


@pytest.mark.parametrize("live_case", PLANNED, indirect=True, ids=[n.replace("/", ":") for n, _, _ in PLANNED])
async def test_the_planned_default_command_gives_the_recorded_totals(live_case, tmp_path):
    case, ws = live_case
    plan = plan_tests(ws)
    assert plan.framework == case.framework, plan.reason
    assert plan.default_command

    run = await run_tests(plan, ws, tmp_path / "out", _settings())

    assert run.test.command == plan.test_command  # no fallback was needed
    _check(run, case, ws)


@pytest.mark.parametrize("live_case", [("junit-console/console_flat_nocolor", (), None)], indirect=True,
                         ids=["junit-console"])
def test_a_project_without_build_files_needs_a_command_or_language(live_case):
    _, ws = live_case
    with pytest.raises(GreenloopError) as err:
        plan_tests(ws)
    assert err.value.kind is ErrorKind.LANGUAGE_DETECTION_FAILED
    assert "pom.xml" in err.value.context["files_checked"]


PROTOCOL_FIELDS = {"status", "execution_time_ms", "retry_count", "tests_run", "tests_passed", "tests_failed",
                   "build_status", "failing_tests", "language", "test_command", "build_command", "errors"}


@pytest.mark.parametrize("live_case", [("unittest/verbose", (), None)], indirect=True, ids=["unittest"])
def test_greenloop_test_json_reports_the_project_in_seed_004s_schema(live_case, tmp_path):
    """``greenloop test PATH --json`` end to end: the CLI process, the
    planner, the sandbox, the parser and the retry loop (one retry, no
    backoff, so it stays fast)."""
    case, ws = live_case
    inp = tmp_path / "input.json"
    inp.write_text(json.dumps({"max_retries": 1, "retry_backoff_ms": [0], "timeout_seconds": RUN_TIMEOUT_S}))
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "greenloop"), "test", str(ws), "--json", "--input", str(inp),
         "--sandbox", sandbox_backend()],
        cwd=REPO, capture_output=True, text=True, timeout=2 * RUN_TIMEOUT_S, check=False,
        env={k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"},
    )
    assert proc.returncode == 1, proc.stderr  # the suite fails
    out = json.loads(proc.stdout)
    assert set(out) == PROTOCOL_FIELDS, out
    t = case.totals
    assert out["status"] == "fail" and out["retry_count"] == 1
    assert out["language"] == "python"
    assert out["test_command"] == "python -m unittest discover -v" and out["build_command"] is None
    assert out["build_status"] == "skipped"
    assert out["tests_run"] == sum(t.values()) - t["skipped"]
    assert out["tests_passed"] == t["passed"] + t["xfailed"]
    assert out["tests_failed"] == t["failed"] + t["errored"]
    assert isinstance(out["execution_time_ms"], int) and out["execution_time_ms"] > 0
    failing = {x["id"] for x in case.tests if x["status"] in ("failed", "errored")}
    assert {f["name"] for f in out["failing_tests"]} == failing
    assert all(set(f) == {"name", "file", "error"} and f["error"] for f in out["failing_tests"])
    assert [e["type"] for e in out["errors"]] == ["test_failure"]
    assert out["errors"][0]["context"]["failed_count"] == len(failing)
