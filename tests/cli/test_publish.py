"""A branch people can use: `greenloop run --push REMOTE --pr` pushes greenloop/<run> to a real bare
repository (the repository's own remote) and writes pr.md; without gh it says exactly what to run."""

from __future__ import annotations

import json
import os
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


GH = """#!/bin/sh
# A gh stand-in at the GitHub boundary (GitHub is unreachable here): it records each call
# and answers as gh does: `auth status` by its exit code, `pr create` with the new PR's URL.
printf '%s\\n' "$*" >> "$GH_CALLS"
case "$1 $2" in
  "auth status") exit "${GH_AUTH_EXIT:-0}" ;;
  "pr create") [ -n "$GH_FAIL" ] && { echo "$GH_FAIL" >&2; exit 1; }
               echo "Creating pull request"; echo "https://github.com/acme/shop/pull/7" ;;
esac
"""


def test_gh_opens_the_pull_request_or_says_why_not(tmp_path, monkeypatch):
    from greenloop.workspace.publish import open_pull_request

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH)
    (bin_dir / "gh").chmod(0o755)
    calls = tmp_path / "calls"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("GH_CALLS", str(calls))
    ws, run_dir = tmp_path / "ws", tmp_path / "run"
    ws.mkdir()
    run_dir.mkdir()
    report = "# Greenloop run\n\n## `t::a`: FIXED\n"

    def opened():
        return open_pull_request(ws, run_dir, "greenloop/r1", report, 1, "https://github.com/acme/shop.git",
                                 "git@github.com:acme/shop.git")

    pr = opened()
    assert pr.url == "https://github.com/acme/shop/pull/7" and pr.instead is None
    assert calls.read_text().splitlines() == [
        "auth status",
        f"pr create --head greenloop/r1 --title Greenloop: fix 1 failing test(s) in shop --body-file {run_dir}/pr.md "
        "--repo acme/shop"]
    assert (run_dir / "pr.md").read_text().startswith("# Greenloop: fix 1 failing test(s) in shop\n\n## `t::a`")

    monkeypatch.setenv("GH_AUTH_EXIT", "1")
    pr = opened()
    assert pr.url is None and "gh is not logged in" in pr.instead and "gh pr create --head greenloop/r1" in pr.instead
    monkeypatch.setenv("GH_AUTH_EXIT", "0")
    monkeypatch.setenv("GH_FAIL", "a pull request for branch greenloop/r1 already exists")
    pr = opened()
    assert pr.url is None and "already exists" in pr.instead and "fix that, then run" in pr.instead
