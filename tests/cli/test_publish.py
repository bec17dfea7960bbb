"""A branch people can use: `greenloop run --push REMOTE --pr` pushes greenloop/<run> to a real bare
repository (the repository's own remote) and writes pr.md; without gh it says exactly what to run."""

from __future__ import annotations

import json
import shutil
import subprocess

from tests.cli.test_run import DEMO, SCENARIO, greenloop


def git(*args: str, cwd) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


async def test_push_and_pull_request(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", str(remote), cwd=tmp_path)
    repo = tmp_path / "project"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    git("init", "--quiet", "-b", "main", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "empty", cwd=repo)
    git("add", "-A", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "the demo", cwd=repo)
    git("remote", "add", "origin", str(remote), cwd=repo)
    git("push", "--quiet", "origin", "main", cwd=repo)
    assert shutil.which("gh") is None  # this machine has no gh: the run says what to run instead

    done = greenloop("run", str(repo), "--scripted", str(SCENARIO), "--address", address, "--push", "origin", "--pr",
                     "--json", data_home=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    branch = summary["branch"]
    assert branch == f"greenloop/{summary['run_id']}" and summary["pushed"] == f"{remote} {branch}"
    # The remote has the branch: main plus the fixes, the user's files as they were before.
    assert git("branch", "--list", "--format=%(refname:short)", cwd=remote).split() == sorted(["main", branch])
    assert git("log", "--format=%s", "-1", branch, cwd=remote) == "greenloop: fix 3 failing test(s)"
    assert git("merge-base", "--is-ancestor", "main", branch, cwd=remote) == ""
    changed = git("diff", "--name-only", f"main..{branch}", cwd=remote).split()
    assert sorted(changed) == ["shop/cart.py", "shop/money.py"]

    pr = open(summary["pr_markdown"]).read()
    assert pr.startswith("# Greenloop: fix 3 failing test(s) in project\n")
    assert "## `tests/test_cart.py::test_discount`: FIXED" in pr and "```diff" in pr
    assert summary["pr_url"] is None
    note = next(n for n in summary["notes"] if n.startswith("pull request not opened"))
    assert "gh is not installed" in note and "gh auth login" in note
    assert f"gh pr create --head {branch} --title 'Greenloop: fix 3 failing test(s) in project' --body-file " \
           f"{summary['pr_markdown']}" in note


async def test_a_remote_that_is_not_there_is_said(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    no_push = greenloop("run", str(DEMO), "--scripted", str(SCENARIO), "--address", address, "--pr",
                        data_home=tmp_path)
    assert no_push.returncode == 2 and "--pr needs --push REMOTE" in no_push.stderr
    assert "Traceback" not in no_push.stderr
    done = greenloop("run", str(DEMO), "--scripted", str(SCENARIO), "--address", address, "--push", "upstream",
                     data_home=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    # The run's fixes stand; the push that could not happen is said in the last lines.
    assert "note: branch not pushed: the repository has no remote named 'upstream'" in done.stdout
