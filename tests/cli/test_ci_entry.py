"""From a failed CI run to a fix, end to end: `greenloop ci` in a CI job's checkout (GitHub Actions
or GitLab CI variables), a real bare repository as `origin`, the scripted LLM, and `gh`/`glab`
stand-ins at the forge boundary (GitHub and GitLab are unreachable here) that record their calls."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from tests.cli.test_publish import git
from tests.cli.test_run import DEMO, GREENLOOP, SCENARIO, cli_env

# gh and glab as the forge boundary: each call's arguments go to $FORGE_CALLS (one line each), the
# pull request's body file to $FORGE_BODY; they answer as gh/glab do (auth status, the new URL).
GH = """#!/bin/sh
printf 'gh %s\\n' "$*" >> "$FORGE_CALLS"
case "$1 $2" in
  "auth status") exit 0 ;;
  "pr create") while [ $# -gt 0 ]; do [ "$1" = "--body-file" ] && cp "$2" "$FORGE_BODY"; shift; done
               echo "https://github.com/acme/shop/pull/7" ;;
esac
"""
GLAB = """#!/bin/sh
printf 'glab %s\\n' "$*" >> "$FORGE_CALLS"
case "$1 $2" in
  "auth status") exit 0 ;;
  "mr create") while [ $# -gt 0 ]; do [ "$1" = "--description" ] && printf '%s' "$2" > "$FORGE_BODY"; shift; done
               echo "https://gitlab.com/acme/shop/-/merge_requests/3" ;;
esac
"""
COMMIT = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet")


def failing_project(tmp_path):
    """A bare `origin` whose `main` is a README and whose `feature` adds the demo (3 failing tests),
    and the CI job's checkout of it: a fresh clone of `main` only (the failing commit is not in it)."""
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    git("init", "--quiet", "--bare", str(remote), cwd=tmp_path)
    work.mkdir()
    git("init", "--quiet", "-b", "main", cwd=work)
    (work / "README.md").write_text("the shop\n")
    git("add", "-A", cwd=work)
    git(*COMMIT, "-m", "readme", cwd=work)
    git("checkout", "--quiet", "-b", "feature", cwd=work)
    shutil.copytree(DEMO, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    git("add", "-A", cwd=work)
    git(*COMMIT, "-m", "the demo", cwd=work)
    git("push", "--quiet", str(remote), "main", "feature", cwd=work)
    checkout = tmp_path / "checkout"
    git("clone", "--quiet", "--single-branch", "--branch", "main", str(remote), str(checkout), cwd=tmp_path)
    return remote, checkout, git("rev-parse", "feature", cwd=work)


def greenloop_ci(checkout, tmp_path, address, ci_vars: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`greenloop ci` in the CI job: its variables, gh and glab first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, script in (("gh", GH), ("glab", GLAB)):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in cli_env(tmp_path).items() if not k.startswith(("GITHUB_", "GITLAB_", "CI_"))}
    env.update(ci_vars, PATH=f"{bin_dir}:{os.environ['PATH']}", FORGE_CALLS=str(tmp_path / "calls"),
               FORGE_BODY=str(tmp_path / "body.md"))
    return subprocess.run([*GREENLOOP, "ci", "--scripted", str(SCENARIO), "--address", address, *args],
                          cwd=checkout, capture_output=True, text=True, timeout=280, env=env)


def github_vars(tmp_path, head_sha: str, head_branch: str, main_sha: str) -> dict[str, str]:
    """A `workflow_run` job after the failing test workflow (it checked out main, the default branch)."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "completed", "workflow_run": {
        "head_sha": head_sha, "head_branch": head_branch, "conclusion": "failure"}}))
    return {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/shop", "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_EVENT_PATH": str(event), "GITHUB_SHA": main_sha, "GITHUB_REF_NAME": "main"}


def assert_fix_pushed(remote, branch: str, failing_sha: str) -> None:
    """The remote has greenloop/<run>: the failing commit plus one commit of the fixes."""
    assert branch in git("branch", "--list", "--format=%(refname:short)", cwd=remote).split()
    assert git("log", "--format=%s", "-1", branch, cwd=remote) == "greenloop: fix 3 failing test(s)"
    assert git("rev-parse", f"{branch}^", cwd=remote) == failing_sha
    assert sorted(git("diff", "--name-only", f"{failing_sha}..{branch}", cwd=remote).split()) == \
        ["shop/cart.py", "shop/money.py"]


async def test_github_workflow_run_failure_is_fixed_pushed_and_proposed(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    remote, checkout, failing = failing_project(tmp_path)
    ci_vars = github_vars(tmp_path, failing, "feature", git("rev-parse", "HEAD", cwd=checkout))

    done = greenloop_ci(checkout, tmp_path, address, ci_vars, "--json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    summary = json.loads(done.stdout)
    branch = summary["branch"]
    assert branch == f"greenloop/{summary['run_id']}" and len(summary["fixed"]) == 3
    assert_fix_pushed(remote, branch, failing)
    assert summary["pr_url"] == "https://github.com/acme/shop/pull/7"
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == ["gh auth status",
                     f"gh pr create --head {branch} --title Greenloop: fix 3 failing test(s) in checkout "
                     f"--body-file {summary['pr_markdown']} --base feature --repo acme/shop"]
    body = (tmp_path / "body.md").read_text()  # the report is the pull request's body
    assert "## `tests/test_cart.py::test_discount`: FIXED" in body and "```diff" in body
    assert git("rev-parse", "HEAD", cwd=checkout) == ci_vars["GITHUB_SHA"]  # the job's checkout is left as it was


async def test_gitlab_job_opens_a_merge_request(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    remote, checkout, failing = failing_project(tmp_path)
    ci_vars = {"GITLAB_CI": "true", "CI_PROJECT_PATH": "acme/shop", "CI_COMMIT_SHA": failing,
               "CI_COMMIT_REF_NAME": "feature", "CI_PIPELINE_SOURCE": "push"}

    done = greenloop_ci(checkout, tmp_path, address, ci_vars)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "pr: https://gitlab.com/acme/shop/-/merge_requests/3" in done.stdout
    branch = next(line.split()[-1] for line in done.stdout.splitlines() if line.strip().startswith("branch:"))
    assert_fix_pushed(remote, branch, failing)
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0] == "glab auth status"
    assert calls[1].startswith(f"glab mr create --source-branch {branch} --title Greenloop: fix 3 failing test(s) "
                               "in checkout --description ")
    assert calls[-1].endswith("--yes --target-branch feature --repo acme/shop")
    assert "## `tests/test_cart.py::test_discount`: FIXED" in (tmp_path / "body.md").read_text()


def test_its_own_branches_and_succeeded_runs_are_left_alone(tmp_path):
    """A CI run on greenloop/... (Greenloop's own pull request) or one that did not fail starts nothing:
    exit 0 and one line saying why (no server is needed: the address is never reached)."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    own = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/shop", "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_HEAD_REF": "greenloop/greenloop-shop-1", "GITHUB_REF_NAME": "7/merge", "GITHUB_SHA": "0" * 40}
    done = greenloop_ci(checkout, tmp_path, "localhost:1", own)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("greenloop ci: branch greenloop/greenloop-shop-1 is one of Greenloop's own: "
                                   "its runs are never fixed by Greenloop")
    gitlab_own = {"GITLAB_CI": "true", "CI_COMMIT_SHA": "0" * 40, "CI_COMMIT_REF_NAME": "greenloop/x"}
    done = greenloop_ci(checkout, tmp_path, "localhost:1", gitlab_own, "--json")
    assert done.returncode == 0 and "greenloop/x is one of Greenloop's own" in json.loads(done.stdout)["skipped"]
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"workflow_run": {"head_sha": "1" * 40, "head_branch": "main",
                                                  "conclusion": "success"}}))
    passed = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(event)}
    done = greenloop_ci(checkout, tmp_path, "localhost:1", passed)
    assert done.returncode == 0 and "ended success, not failure: nothing to fix" in done.stdout
    assert not (tmp_path / "calls").exists()  # neither gh nor glab was called


def test_outside_ci_or_without_the_failing_commit_it_says_so(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git("init", "--quiet", "-b", "main", cwd=checkout)
    outside = greenloop_ci(checkout, tmp_path, "localhost:1", {})
    assert outside.returncode == 2 and "neither GITHUB_ACTIONS nor GITLAB_CI is set" in outside.stderr
    missing = greenloop_ci(checkout, tmp_path, "localhost:1", {"GITLAB_CI": "true", "CI_COMMIT_SHA": "2" * 40,
                                                               "CI_COMMIT_REF_NAME": "main"})
    assert missing.returncode == 2 and f"the failing commit {'2' * 40} is not in" in missing.stderr
    for done in (outside, missing):
        assert "Traceback" not in done.stderr


def test_the_ci_templates_are_valid_and_call_greenloop_ci_with_its_options():
    """deploy/github-action/action.yml and deploy/gitlab/greenloop.gitlab-ci.yml parse, and the commands
    they run are `greenloop ci` with options it has (a renamed option would break every user's CI)."""
    import re

    import typer
    import yaml

    from greenloop.cli.main import app
    from tests.cli.test_run import REPO

    ci = typer.main.get_command(app).commands["ci"]  # type: ignore[attr-defined]
    known = {opt for p in ci.params for opt in (*p.opts, *p.secondary_opts)}

    def called(script: str) -> set[str]:
        lines = [line for line in script.replace("\n      ", " ").splitlines() if "greenloop ci" in line]
        assert lines, script
        return {opt for line in lines for opt in re.findall(r"(?<![\w-])--[a-z][\w-]*", line.split("greenloop ci", 1)[1])}

    action = yaml.safe_load((REPO / "deploy" / "github-action" / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert {"anthropic-api-key", "model", "budget-usd", "args"} <= set(action["inputs"])
    steps = action["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    run = next(s for s in steps if "greenloop ci" in s.get("run", ""))
    assert run["env"]["ANTHROPIC_API_KEY"] == "${{ inputs.anthropic-api-key }}"
    used = called(run["run"]) | set(re.findall(r"opts\+=\((--[\w-]+)", run["run"]))
    assert used and used <= known, used - known
    # The example workflow in its comments: a workflow_run on failure that may push and open pull requests.
    example = yaml.safe_load("\n".join(line.removeprefix("#").removeprefix(" ") for line in
                                       (REPO / "deploy" / "github-action" / "action.yml").read_text().splitlines()
                                       if line.startswith("#  ") or line == "#"))
    trigger = example.get("on", example.get(True))  # YAML 1.1 reads a bare `on` as true; GitHub as "on"
    assert trigger["workflow_run"]["types"] == ["completed"]
    assert example["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert example["jobs"]["fix"]["if"] == "github.event.workflow_run.conclusion == 'failure'"

    gitlab = yaml.safe_load((REPO / "deploy" / "gitlab" / "greenloop.gitlab-ci.yml").read_text())
    job = gitlab["greenloop"]
    assert job["rules"][-1] == {"when": "on_failure"} and "when" not in job  # GitLab refuses `when` beside `rules`
    assert job["rules"][0]["when"] == "never" and "greenloop" in job["rules"][0]["if"]
    used = called("\n".join(job["script"]))
    assert used and used <= known, used - known
