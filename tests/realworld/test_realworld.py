"""Published projects with injected bugs, driven to green by ``greenloop run`` as a
new user would: the project as it was published (a git checkout, no environment
built, no flag but the scripted LLM), the real dev server, the real sandbox.

Each run must end ``completed`` with every test the bugs broke FIXED, and its
patch, applied to the buggy checkout, must give back the published files byte
for byte. The material itself (see ``projects.py``) is checked first: the
archive is the pinned one, ships its tests, and the scenario proposes exactly
the published code for every bug.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from greenloop.llm.scenario import Scenario
from tests.conftest import REPO
from tests.realworld.projects import (
    PROJECTS,
    Project,
    buggy_checkout,
    cache_dir,
    differences,
    git,
    inject,
    matching,
    unpack,
)

IDS = [p.id for p in PROJECTS]
# A cold environment cache installs every project's test dependencies from its registry.
RUN_TIMEOUT_S = 840


def data_home() -> Path:
    """The runs' XDG data directory. It outlives the session, as a user's does, so
    Greenloop's environment cache in it makes reruns warm; each passing run's own
    directory is removed afterwards (a failing one is kept to look at)."""
    return cache_dir() / "data-home"


def greenloop_run(repo, scenario, address: str, data_home: Path) -> subprocess.CompletedProcess:
    """``greenloop run REPO --scripted SCENARIO --json`` as a user starts it: no key,
    no environment of Greenloop's own, no option but the scripted LLM."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "GREENLOOP_", "VIRTUAL_ENV", "PYTHON"))}
    env["XDG_DATA_HOME"] = str(data_home)
    return subprocess.run([sys.executable, "-m", "greenloop.cli.main", "run", str(repo), "--scripted", str(scenario),
                           "--address", address, "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env)


def scripted_fixes(p: Project) -> set[tuple[str, str, str]]:
    """(path, old, new) of every replace_in_file the scenario's rules propose."""
    return {(c.input["path"], c.input["old_text"], c.input["new_text"])
            for rule in Scenario.load(p.scenario).rules for c in rule.response.tool_calls
            if c.name == "replace_in_file"}


@pytest.mark.parametrize("p", PROJECTS, ids=IDS)
def test_the_material_is_the_published_project_with_its_bugs(p: Project, tmp_path):
    pristine = unpack(p, tmp_path / "pristine")  # pinned sha256, ships its tests
    buggy = unpack(p, tmp_path / "buggy")
    inject(p, buggy)
    changed = {d.removeprefix("differs: ") for d in differences(pristine, buggy)}
    assert changed == {b.path for b in p.bugs}
    # A checkout lacks what the build generates (the project's .gitignore excludes it).
    assert [f for f in p.absent if (pristine / f).exists()] == []
    # The scripted LLM proposes the published code for every bug, and nothing else.
    assert scripted_fixes(p) == {(b.path, b.injected, b.original) for b in p.bugs}


@pytest.mark.timeout(RUN_TIMEOUT_S + 60)
@pytest.mark.parametrize("p", PROJECTS, ids=IDS)
async def test_greenloop_drives_the_published_project_back_to_green(p: Project, temporal_env, tmp_path):
    pristine = unpack(p, tmp_path / "pristine")
    repo = buggy_checkout(p, tmp_path / p.name)
    head = git(repo, "rev-parse", "HEAD")

    done = greenloop_run(repo, p.scenario, temporal_env.client.service_client.config.target_host, data_home())
    try:
        summary = json.loads(done.stdout)
    except ValueError as exc:  # --json prints the summary and nothing else on stdout
        pytest.fail(f"greenloop run exited {done.returncode}; its stdout is not one JSON summary ({exc})\n"
                    f"stdout starts: {done.stdout[:1500]}\n...\nstdout ends: {done.stdout[-1500:]}\n"
                    f"stderr: {done.stderr[-3000:]}")
    story = json.dumps({k: summary.get(k) for k in ("state", "reason", "framework", "fixed", "escalated",
                                                     "skipped", "flaky", "still_failing", "initial", "final", "notes")},
                       indent=1)
    assert summary["state"] == "completed", story
    assert done.returncode == 0, f"exit {done.returncode}\n{story}\n{done.stderr[-3000:]}"

    # Every test an injected bug broke failed at first and ends FIXED (fixed itself, or along with
    # another test of the same bug); no other test is touched and nothing is left failing.
    for bug in p.bugs:
        assert matching(bug.breaks, summary["fixed"]), f"no FIXED test matches {bug.breaks!r}\n{story}"
    assert [t for t in summary["fixed"] if not any(matching(b.breaks, [t]) for b in p.bugs)] == [], story
    assert len(summary["fixed"]) == summary["initial"]["failed"] + summary["initial"]["errored"], story
    assert not (summary["still_failing"] or summary["escalated"] or summary["skipped"] or summary["flaky"]), story
    assert summary["final"]["failed"] == 0 and summary["final"]["errored"] == 0, story
    assert summary["final"]["passed"] >= summary["initial"]["passed"] + len(p.bugs), story
    if p.runner_total is not None:  # every test counted: tests printing one name are distinct tests
        for run in ("initial", "final"):
            assert sum(summary[run].values()) == p.runner_total, story
    if p.model_requests is not None:  # the scripted server answers each request the run makes
        assert summary["usage"]["calls"] == p.model_requests, f"usage {summary['usage']}\n{story}"

    # The user's checkout is untouched: same commit, nothing modified or added.
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all") == ""

    # The run's patch turns the buggy checkout back into the published project, byte for byte.
    patched = tmp_path / "patched"
    shutil.copytree(repo, patched, symlinks=True)
    git(patched, "apply", "--verbose", summary["patch"])
    assert differences(patched, pristine) == []
    run_dir = Path(summary["patch"]).parent
    assert data_home() in run_dir.parents
    shutil.rmtree(run_dir)  # the run's own directory; the environment cache stays
