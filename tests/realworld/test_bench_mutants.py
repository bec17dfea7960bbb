"""`greenloop bench mutants` on a published project (humanize, as published on PyPI): a few
mutants of its own source, each driven by an ordinary run with the scripted LLM answering the
reverse mutation (--scripted-oracle), the real dev server and the bwrap sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.realworld.projects import PROJECTS, commit_all, git, unpack
from tests.realworld.test_realworld import RUN_TIMEOUT_S, data_home

HUMANIZE = next(p for p in PROJECTS if p.name == "humanize")


@pytest.mark.timeout(2 * RUN_TIMEOUT_S + 60)
async def test_the_oracle_fixes_the_kept_mutants_of_a_published_project(temporal_env, tmp_path):
    repo = unpack(HUMANIZE, tmp_path / "humanize")
    commit_all(repo, f"{HUMANIZE.spec} as published")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "GREENLOOP_", "VIRTUAL_ENV", "PYTHON"))}
    env["XDG_DATA_HOME"] = str(data_home())  # the projects' environment cache, warm on reruns
    done = subprocess.run(
        [sys.executable, "-m", "greenloop.cli.main", "bench", "mutants", str(repo), "--count", "3", "--seed", "1",
         "--scripted-oracle", "--json", "--out", str(tmp_path / "bench"),
         "--address", temporal_env.client.service_client.config.target_host],
        cwd=REPO, capture_output=True, text=True, timeout=2 * RUN_TIMEOUT_S, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    kept = [r for r in result["results"] if r["kept"]]
    assert kept, result["results"]
    for r in kept:
        assert r["file"].startswith("src/humanize/") and r["failing"] >= 1 and r["tests"], r
        assert isinstance(r["in_message"], bool) and r["chars"] > 500, r
        assert r["fixed"] is True and r["state"] == "completed" and r["attempts"] >= 1, r
    for r in result["results"]:
        if not r["kept"]:
            assert r["why_not"] == "no test fails" and r["fixed"] is None, r
    assert result["totals"]["kept"] == len(kept) and result["totals"]["fixed"] == len(kept)
    assert git(repo, "status", "--porcelain") == ""  # the published checkout is never edited
