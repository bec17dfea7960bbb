"""A branch people can use: push the run's ``greenloop/<run>`` branch to a remote
of the repository (``--push REMOTE``), and describe it as a pull request
(``--pr``: ``pr.md``, opened with ``gh pr create`` when ``gh`` is installed and
logged in; otherwise the exact command to run is said). On GitLab (``greenloop ci``
in a GitLab job) the same is a merge request opened with ``glab mr create``.

Pushing, ``gh`` and ``glab`` use the worker's own environment (its git credentials,
SSH agent, ``GH_TOKEN``/``GITLAB_TOKEN``), never anything from the run's sandbox."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ..domain.errors import ErrorKind, GreenloopError

GITHUB = re.compile(r"github\.com[:/]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


class PullRequest(BaseModel):
    """What ``--pr`` did: pr.md written, and the pull request opened, or the command to open it."""

    markdown: str  # pr.md's path
    url: str | None = None
    instead: str | None = None  # why it was not opened, and exactly what to run


def _env() -> dict[str, str]:
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0"}


def remote_url(workspace: Path, remote: str) -> str:
    """The URL of ``remote``: a remote of the repository (the workspace keeps its
    remotes), else ``remote`` itself when it is a URL or a path."""
    proc = subprocess.run(["git", "-C", str(workspace), "remote", "get-url", remote], capture_output=True,
                          text=True, env=_env(), timeout=60, check=False)
    if proc.returncode == 0 and proc.stdout.strip():
        return proc.stdout.strip()
    if "/" in remote or ":" in remote:
        return remote
    raise GreenloopError(f"the repository has no remote named {remote!r}", kind=ErrorKind.VALIDATION_ERROR,
                         suggestion="give a remote it has (`git remote -v` lists them) or a URL to push to")


def push_branch(workspace: Path, remote: str, branch: str) -> str:
    """Push ``branch`` to ``remote``; the URL pushed to. A rejected push is a typed error with git's words."""
    url = remote_url(workspace, remote)
    proc = subprocess.run(["git", "-C", str(workspace), "push", "--quiet", url, f"{branch}:refs/heads/{branch}"],
                          capture_output=True, text=True, env=_env(), timeout=600, check=False)
    if proc.returncode != 0:
        raise GreenloopError(f"git push of {branch} to {url} failed: {proc.stderr.strip()[-500:]}",
                             kind=ErrorKind.PERMISSION_ERROR if "denied" in proc.stderr.lower()
                             else ErrorKind.VALIDATION_ERROR)
    return url


def pr_text(report_markdown: str, fixed: int, repo: str) -> tuple[str, str]:
    """The pull request's title and body, from the run's Markdown report."""
    name = Path(repo.rstrip("/")).name.removesuffix(".git") or repo
    title = f"Greenloop: fix {fixed} failing test(s) in {name}"
    body = report_markdown.split("\n", 1)[1].lstrip() if report_markdown.startswith("# ") else report_markdown
    return title, body


Forge = Literal["github", "gitlab"]

# The most of the report a merge request's description takes (glab has no body file: it is an argument).
GLAB_BODY_CHARS = 60_000


def gh_command(branch: str, title: str, body_file: Path, url: str | None, base: str | None = None,
               project: str | None = None) -> list[str]:
    cmd = ["gh", "pr", "create", "--head", branch, "--title", title, "--body-file", str(body_file)]
    if base:
        cmd += ["--base", base]
    if project:
        cmd += ["--repo", project]
    elif url and (m := GITHUB.search(url)):
        cmd += ["--repo", f"{m.group(1)}/{m.group(2)}"]
    return cmd


def glab_command(branch: str, title: str, body: str, base: str | None = None,
                 project: str | None = None) -> list[str]:
    if len(body) > GLAB_BODY_CHARS:
        body = body[:GLAB_BODY_CHARS] + "\n\n(the report goes on: see the run's report.md)"
    cmd = ["glab", "mr", "create", "--source-branch", branch, "--title", title, "--description", body, "--yes"]
    if base:
        cmd += ["--target-branch", base]
    if project:
        cmd += ["--repo", project]
    return cmd


def open_pull_request(workspace: Path, run_dir: Path, branch: str, report_markdown: str, fixed: int, repo: str,
                      pushed_to: str | None, forge: Forge = "github", base: str | None = None,
                      project: str | None = None) -> PullRequest:
    """Write pr.md; open the pull request (``gh``; ``glab``'s merge request on GitLab) when it can,
    else say what to run. ``base``: the branch it goes into (default: the project's default branch);
    ``project``: OWNER/REPO (default: told from the remote)."""
    title, body = pr_text(report_markdown, fixed, repo)
    path = run_dir / "pr.md"
    path.write_text(f"# {title}\n\n{body}", encoding="utf-8")
    tool, site, verb = (("gh", "https://cli.github.com", "pr create") if forge == "github" else
                        ("glab", "https://gitlab.com/gitlab-org/cli", "mr create"))
    cmd = (gh_command(branch, title, path, pushed_to, base, project) if forge == "github" else
           glab_command(branch, title, body, base, project))
    shown = cmd if forge == "github" else [*cmd[:cmd.index("--description") + 1], f"$(cat {path})",
                                           *cmd[cmd.index("--description") + 2:]]
    by_hand = f"cd {shlex.quote(str(workspace))} && {shlex.join(shown)}"
    if pushed_to is None:
        return PullRequest(markdown=str(path), instead=f"the branch was not pushed (give --push REMOTE); "
                           f"push it, then run: {by_hand}")
    if shutil.which(tool, path=_env().get("PATH")) is None:
        return PullRequest(markdown=str(path), instead=f"{tool} is not installed ({site}); "
                           f"install it, `{tool} auth login`, then run: {by_hand}")
    auth = subprocess.run([tool, "auth", "status"], capture_output=True, text=True, env=_env(), timeout=60,
                          check=False)
    if auth.returncode != 0:
        return PullRequest(markdown=str(path), instead=f"{tool} is not logged in; run `{tool} auth login`, "
                           f"then: {by_hand}")
    proc = subprocess.run(cmd, cwd=workspace, capture_output=True, text=True, env=_env(), timeout=300, check=False)
    if proc.returncode != 0:
        return PullRequest(markdown=str(path), instead=f"{tool} {verb} failed ({proc.stderr.strip()[-300:]}); "
                           f"fix that, then run: {by_hand}")
    urls = [w for w in proc.stdout.split() if w.startswith("https://")]
    return PullRequest(markdown=str(path), url=urls[-1] if urls else None)
