"""The run's request: what ``greenloop run`` (or a schedule, or an API call) asks
for (``FixRequest``, the run workflow's input), and the part of it the workspace,
plan and setup activities read (``ProjectRequest``, which ``FixRequest``
extends): where the repository is, its commands and variables and the sandbox.

It sits below everything that reads it: the run settings' table
(``run_settings.py``) and the repository's ``greenloop.toml``
(``project_config.py``) describe and fill its fields, the activities get
``ProjectRequest.of(request)`` (these fields alone, under the same names), the
workflows and the CLI the whole request.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .domain.answers import AnswerChoice
from .domain.llm import LLMSettings, concurrency_for
from .sandbox.models import SandboxSettings


class ProjectRequest(BaseModel):
    """The repository, its commands and its sandbox, as a run asks for them."""

    repo: str  # a local path or a git URL
    ref: str | None = None
    test_command: str | None = None
    build_command: str | None = None
    framework: str | None = None
    language: str | None = None
    # From the repository's greenloop.toml / [tool.greenloop] (flags override it): the setup
    # phase's extra command, the command that runs one test ({id}, {file}, {name}), variables
    # every setup and test run gets, and the file the configuration came from.
    setup_command: str | None = None
    single_test_command: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    config_file: str | None = None
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    run_dir: str | None = None  # where artifacts go; defaults under the user's data dir

    @classmethod
    def of(cls, request: ProjectRequest) -> ProjectRequest:
        """Just these fields of ``request`` (a ``FixRequest``), as they are."""
        return cls.model_validate({name: getattr(request, name) for name in cls.model_fields})


class FixRequest(ProjectRequest):
    """What ``greenloop run`` asks for: the repository, its commands and sandbox
    (``ProjectRequest``, what the activities read) and how the run goes."""

    model_config = ConfigDict(extra="forbid")

    select: list[str] = Field(default_factory=list)   # glob patterns over test ids
    exclude: list[str] = Field(default_factory=list)
    max_attempts: int = Field(default=3, ge=1, le=10)
    # Independent fixes asked for at each attempt, in parallel; the smallest that passes is kept.
    candidates: int = Field(default=1, ge=1, le=8)
    per_test_budget_s: int = Field(default=3600, ge=60)
    run_budget_s: int = Field(default=3600, ge=10)
    # Tests fixed at once; None: derived from the model's request limit (``in_flight``).
    concurrency: int | None = Field(default=None, ge=1, le=16)
    # How fixes are validated: "queue", the default (candidates validated in batches, one full-suite
    # run per batch, a failing batch bisected: workflows/merge_queue.py), or "each" (every attempt
    # runs its test alone and the full suite itself). Batches hold at most ``max_batch`` fixes.
    validation: Literal["queue", "each"] = "queue"
    max_batch: int = Field(default=32, ge=1, le=64)
    # Queue: map which tests run which files once (per-test coverage, where the framework gives it)
    # to add the tests a batch's files are run by to its quick check, and to order its bisection.
    test_impact: bool = True
    # Tests driven per workflow run before it continues as new, keeping each run's history
    # small (the server may suggest continuing sooner).
    tests_per_run: int = Field(default=100, ge=1, le=1000)
    escalation_deadline_s: int = Field(default=24 * 3600, ge=1)
    escalation_default: AnswerChoice = AnswerChoice.SKIP
    # How soon a lost worker is noticed in any activity it runs (its activities are then retried).
    heartbeat_timeout_s: int = Field(default=30, ge=2)
    # How long an activity for the worker holding the run's workspace (its host queue) may wait for
    # that worker to poll before the host counts as lost and the run moves to another worker, which
    # rebuilds the workspace from the history (schedule-to-start timeout of host-queue activities).
    host_timeout_s: int = Field(default=60, ge=2)
    # How many times a run may move to another worker before it fails.
    max_rebuilds: int = Field(default=5, ge=0, le=100)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    push: str | None = None  # push the run's branch to this remote of the repository (or URL) when tests were fixed
    pull_request: bool = False  # write pr.md and open a pull request with gh (needs push)

    @property
    def in_flight(self) -> int:
        """Tests fixed at once: ``concurrency`` as asked, else as many as the model's
        request limit keeps busy (``domain.llm.concurrency_for``)."""
        return self.concurrency or concurrency_for(self.llm.requests_per_minute)
