"""``greenloop ci``: from a failed CI run to a fix. In a GitHub Actions or GitLab CI job that runs
after a failing test job (or on a ``workflow_run`` that failed), it reads the CI's environment for
the failing commit and its branch, runs Greenloop on that commit (``greenloop run``'s machinery:
the embedded server by default, ``--address`` for a cluster, every run option), pushes
``greenloop/<run>`` and opens a pull request (``gh``) or merge request (``glab``) into the failing
branch with the report as its body. It never runs on a branch of its own (``greenloop/...``), so
its pull requests do not set it off again."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from ..domain.errors import ErrorKind, GreenloopError
from ..git_command import git
from ..reports.record import RunSummary
from ..workspace.publish import Forge, open_pull_request
from .exit_codes import ExitCode
from .output import JsonOpt, console, fail, finish
from .run_options import with_run_options
from .runs import AddressOpt, NamespaceOpt, ended, given_options, run_request, start_run

OWN_BRANCHES = "greenloop/"  # the branches Greenloop pushes: a CI run on one of them is never fixed


class CIContext(BaseModel):
    """What the CI's environment says about the failing run."""

    forge: Forge
    project: str | None = None  # OWNER/REPO (GitHub), GROUP/PROJECT (GitLab)
    sha: str | None = None  # the failing commit
    branch: str | None = None  # its branch: where the fix's pull request goes
    event: str | None = None
    conclusion: str | None = None  # a workflow_run's ("failure", "success"...); None: not told


def _event(env: Mapping[str, str]) -> dict[str, Any]:
    """The GitHub event's payload (GITHUB_EVENT_PATH), {} when there is none."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GreenloopError(f"cannot read the GitHub event payload {path}: {exc}",
                             kind=ErrorKind.VALIDATION_ERROR) from None
    return data if isinstance(data, dict) else {}


def read_context(env: Mapping[str, str]) -> CIContext:
    """The failing run as the CI's variables tell it: GitHub Actions (a ``workflow_run`` event's
    head commit and branch, a pull request's head, else the pushed commit) or GitLab CI."""
    if env.get("GITHUB_ACTIONS") == "true":
        event_name = env.get("GITHUB_EVENT_NAME")
        ctx = CIContext(forge="github", project=env.get("GITHUB_REPOSITORY"), event=event_name,
                        sha=env.get("GITHUB_SHA"), branch=env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME"))
        payload = _event(env)
        if event_name == "workflow_run" and isinstance(run := payload.get("workflow_run"), dict):
            ctx.sha = str(run.get("head_sha") or ctx.sha)
            ctx.branch = str(run.get("head_branch") or ctx.branch)
            ctx.conclusion = run.get("conclusion")
        elif event_name in ("pull_request", "pull_request_target") and isinstance(pr := payload.get("pull_request"),
                                                                                   dict):
            ctx.sha = str((pr.get("head") or {}).get("sha") or ctx.sha)  # GITHUB_SHA is the merge commit
        return ctx
    if env.get("GITLAB_CI") == "true":
        return CIContext(forge="gitlab", project=env.get("CI_PROJECT_PATH"),
                         event=env.get("CI_PIPELINE_SOURCE"),
                         sha=env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA") or env.get("CI_COMMIT_SHA"),
                         branch=env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") or env.get("CI_COMMIT_REF_NAME"))
    raise GreenloopError("greenloop ci runs in a CI job: neither GITHUB_ACTIONS nor GITLAB_CI is set",
                         kind=ErrorKind.VALIDATION_ERROR,
                         suggestion="run it in a GitHub Actions or GitLab CI job (deploy/github-action, "
                                    "deploy/gitlab); elsewhere `greenloop run --push origin --pr`")


def why_not(ctx: CIContext) -> str | None:
    """Why this CI run is none of Greenloop's business (None: it is)."""
    if ctx.branch and ctx.branch.startswith(OWN_BRANCHES):
        return f"branch {ctx.branch} is one of Greenloop's own: its runs are never fixed by Greenloop"
    if ctx.conclusion and ctx.conclusion != "failure":
        return f"the workflow run that triggered this one ended {ctx.conclusion}, not failure: nothing to fix"
    return None


def _has_commit(repo: Path, sha: str) -> bool:
    try:
        git(repo, "cat-file", "-e", f"{sha}^{{commit}}")
        return True
    except GreenloopError:
        return False


def have_commit(repo: Path, sha: str, remote: str) -> None:
    """Make sure the failing commit is in the checkout (a CI checkout may be shallow, or of another
    commit: a ``workflow_run`` job checks out the default branch), fetching it from ``remote``
    (with the job's own environment: its credentials, SSH keys)."""
    if _has_commit(repo, sha):
        return
    why = ""
    try:
        git(repo, "fetch", "--quiet", "--depth=50", remote, sha, env=dict(os.environ))
    except GreenloopError as e:
        why = e.message
    if not _has_commit(repo, sha):
        raise GreenloopError(f"the failing commit {sha} is not in {repo} and cannot be fetched from {remote}: "
                             f"{why[-300:]}", kind=ErrorKind.VALIDATION_ERROR,
                             suggestion="check the repository out first (actions/checkout, or GitLab's own "
                                        "checkout) with the failing commit, or give --ref")


def publish(summary: RunSummary, repo: Path, ctx: CIContext) -> bool:
    """Open the pull (merge) request of a run that pushed its fixes; False when it could not
    (the reason is one of the summary's notes)."""
    if not (summary.fixed and summary.pushed and summary.branch and summary.report_markdown):
        return False
    report = Path(summary.report_markdown)
    if not report.is_file():
        summary.notes.append(f"pull request not opened: the report {report} is not on this machine "
                             "(the run's worker is elsewhere); open it from the pushed branch")
        return False
    pr = open_pull_request(repo, report.parent, summary.branch, report.read_text(encoding="utf-8"),
                           len(summary.fixed), str(repo), summary.pushed.split(" ")[0], forge=ctx.forge,
                           base=ctx.branch, project=ctx.project)
    summary.pr_markdown, summary.pr_url = pr.markdown, pr.url
    if pr.instead:
        summary.notes.append(f"pull request not opened: {pr.instead}")
    return pr.url is not None


@with_run_options
def ci_command(
    ctx: typer.Context,
    repo: Annotated[str, typer.Argument(help="The CI job's checkout of the repository.")] = ".",
    scripted: Annotated[Path | None, typer.Option(help="Scripted LLM scenario (YAML) instead of Claude.")] = None,
    address: AddressOpt = None,
    namespace: NamespaceOpt = None,
    as_json: JsonOpt = False,
    options: dict | None = None,
) -> None:
    """In a CI job after failing tests: fix them on the failing commit, push greenloop/<run> and open a
    pull request (GitHub, gh) or merge request (GitLab, glab) with the report. Exits 0 only when every
    failing test was fixed and the request opened (or when there is nothing to do)."""
    options = dict(options or {})
    given = given_options(ctx)
    try:
        ci = read_context(os.environ)
        skip = why_not(ci)
        path = Path(repo).expanduser().resolve()
        if skip is None and ci.sha and "ref" not in given:
            have_commit(path, ci.sha, options.get("push") or "origin")
    except GreenloopError as exc:
        raise fail(exc) from None
    if skip is not None:
        print(json.dumps({"skipped": skip}) if as_json else f"greenloop ci: {skip}")
        raise typer.Exit(0)
    options["push"] = options.get("push") or "origin"
    options["pull_request"] = False  # opened here, into the failing branch, on the CI's forge
    if "ref" not in given and ci.sha:
        options["ref"] = ci.sha
    request = run_request(str(path), given | {"push", "ref"}, options, scripted, address=address)
    if not as_json:
        console.print(f"greenloop ci: fixing {ci.sha or 'the checked-out commit'}"
                      + (f" of {ci.branch}" if ci.branch else "") + f" ({ci.forge})")

    async def go() -> int:
        summary = await start_run(request, scripted, True, address, namespace, as_json)
        assert summary is not None  # followed to its end
        opened = publish(summary, path, ci)
        code = ended(summary, as_json)
        if code == 0 and summary.fixed and not opened:  # fixed, but no request to review it: not done
            return int(ExitCode.USAGE)
        return code

    finish(go())
