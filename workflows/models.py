"""Everything that crosses a workflow or activity boundary.

Payloads stay small: raw outputs and reports live in the run directory
(the artifact store) and travel as references plus bounded summaries.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..domain.edits import EditSet
from ..analysis.localize import Suspect
from ..domain.llm import LLMSettings, Usage
from ..parsers.models import Status, Totals
from ..runner.plan import SuitePlan
from ..sandbox.models import SandboxSettings


class FixState(StrEnum):
    """The per-test state machine, plus a person's last word."""

    PENDING = "PENDING"
    ANALYZING = "ANALYZING"
    FIXING = "FIXING"
    VALIDATING = "VALIDATING"
    FIXED = "FIXED"
    SKIPPED = "SKIPPED"
    ESCALATED = "ESCALATED"
    ABORTED = "ABORTED"


class RunOutcome(StrEnum):
    """How a run ended. ``completed`` only when the final suite ran and was read
    (every test passed, or was knowingly skipped, escalated or left flaky);
    otherwise the outcome names why the suite's state is not known."""

    RUNNING = "running"
    COMPLETED = "completed"
    ABORTED = "aborted"  # stopped by a person
    FAILED = "failed"  # the run itself failed (a workflow failure, not the suite's)
    SETUP_FAILED = "setup_failed"  # the project's environment could not be built
    SUITE_UNREADABLE = "suite_unreadable"  # no tests found, a crash before results, an exit code that lies
    SUITE_TIMED_OUT = "suite_timed_out"  # the suite was killed at its time limit


# Outcomes where the suite's state is unknown: nothing was (or could be) judged against it.
SUITE_NOT_READ = {RunOutcome.SETUP_FAILED, RunOutcome.SUITE_UNREADABLE, RunOutcome.SUITE_TIMED_OUT}


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    REGRESSION = "REGRESSION"


class AnswerChoice(StrEnum):
    RETRY = "retry"
    SKIP = "skip"
    ABORT = "abort"


class Answer(BaseModel):
    """A person's answer to an escalation (retry / skip / abort). Typed by hand in
    the Web UI too: a bare choice (``"skip"``) stands for ``{"choice": "skip"}``."""

    model_config = ConfigDict(extra="forbid")

    choice: AnswerChoice
    attempts: int = Field(default=3, ge=1, le=10)  # for retry: how many more attempts
    by: str = "unknown"
    note: str = ""

    @model_validator(mode="before")
    @classmethod
    def _typed_by_hand(cls, value: object) -> object:
        if isinstance(value, str):
            return {"choice": value.strip().lower()}
        if isinstance(value, dict):
            fields = cast("dict[str, object]", value)
            if isinstance(choice := fields.get("choice"), str):
                return {**fields, "choice": choice.strip().lower()}
            return fields
        return value






class FixRequest(BaseModel):
    """What ``greenloop run`` asks for."""

    model_config = ConfigDict(extra="forbid")

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
    select: list[str] = Field(default_factory=list)   # glob patterns over test ids
    exclude: list[str] = Field(default_factory=list)
    max_attempts: int = Field(default=3, ge=1, le=10)
    per_test_budget_s: int = Field(default=3600, ge=60)
    run_budget_s: int = Field(default=3600, ge=10)
    concurrency: int = Field(default=1, ge=1, le=16)
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
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    run_dir: str | None = None  # where artifacts go; defaults under the user's data dir
    push: str | None = None  # push the run's branch to this remote of the repository (or URL) when tests were fixed
    pull_request: bool = False  # write pr.md and open a pull request with gh (needs push)


class Workspace(BaseModel):
    """A worker-local copy of the repository that the run edits."""

    path: str
    run_dir: str
    repo: str
    branch: str | None = None
    base_commit: str | None = None
    # The task queue of the worker that holds this workspace (its host queue): every activity
    # that touches the run's files goes there. None: the workflow's own queue (one shared disk).
    host_queue: str | None = None
    base_tree: str | None = None  # the starting point's git tree: a rebuild must reproduce it exactly
    ref: str | None = None  # the ref the run started from (a rebuild checks it out again)




class SuiteRun(BaseModel):
    """One run of the whole suite, as a reference: the report and the per-test
    statuses stay on disk (they grow with the suite); counts travel, and of the
    ids only what the run was asked about (``focus``) and what changed against
    ``compare_to`` (regressions, bounded, and newly passing tests, which the
    run needs to spare tests fixed along with another)."""

    label: str
    report_path: str
    statuses_path: str
    totals: Totals
    build_error: bool
    timed_out: bool
    exit_code: int | None
    per_test: bool
    warnings: list[str] = Field(default_factory=list)
    # Why this run does not say the suite's state (runner.readable), None when it does.
    unreadable: str | None = None
    duration_s: float = 0.0
    focus: str | None = None  # the test this run validates, when it validates one
    focus_status: Status | None = None  # its status in this run (None: not in the output)
    impact: str | None = None  # the test-impact map this run wrote, on its host (``SuiteInput.impact``)
    # Against the run it was compared with (``compare_to``), when one was given:
    regressions: list[str] = Field(default_factory=list)  # passed before, not now (or gone); the first 20
    regression_count: int = 0
    newly_passing: list[str] = Field(default_factory=list)
    passed_before: int = 0
    passed_now: int = 0

    @property
    def focus_failing(self) -> bool:
        """Whether the test this run validates failed in it."""
        return self.focus_status in (Status.FAILED, Status.ERRORED)

    def as_baseline(self) -> SuiteRun:
        """This run as what later runs are compared with: its own comparison
        stays behind (it would otherwise travel with every later test)."""
        return self.model_copy(update={"focus": None, "focus_status": None, "regressions": [],
                                       "regression_count": 0, "newly_passing": []})

    def broken_since(self, baseline: SuiteRun, by: str, after: str) -> str | None:
        """Why this run says the build or the suite broke since ``baseline``: ``by``
        ("the fix") broke the build, or it cannot be read after ``after`` ("the fix");
        None when neither."""
        if self.build_error and not baseline.build_error:
            return f"{by} breaks the build" + (f": {self.unreadable}" if self.unreadable else "")
        if self.unreadable and not baseline.unreadable:
            return f"the suite cannot be read after {after}: {self.unreadable}"
        return None


class SingleRun(BaseModel):
    test_id: str
    status: Status | None  # None: the test was not found in the output
    passed: bool
    message: str | None = None
    output_path: str
    duration_s: float = 0.0

    def failure_reason(self) -> str:
        """Why a test that did not pass alone failed its check."""
        if self.status is None and self.message:  # it did not run: the message says why (e.g. the build)
            return f"the test did not run: {self.message}"
        status = self.status.value if self.status else "not found in the output"
        return f"the test is still {status}: {self.message or ''}".strip().rstrip(":")








class FixProposal(BaseModel):
    """What the fixer activity returns: edits, or why there are none."""

    edit_set: EditSet | None = None
    failure_reason: str | None = None  # malformed answer, rejected edit, no edit...
    escalate: bool = False  # the policy says a person must look (fake-fix policy "escalate")
    usage: Usage = Field(default_factory=Usage)


class AnalysisNote(BaseModel):
    kind: str
    evidence: str
    suggestion: str
    error_site: str | None = None
    expected: str | None = None
    actual: str | None = None
    context_markdown: str = ""
    # Fault localization's ranked suspects (analysis/localize.py), best first: the report shows them.
    suspects: list[Suspect] = Field(default_factory=list[Suspect])
    llm_analysis: str = ""
    usage: Usage = Field(default_factory=Usage)


class AttemptRecord(BaseModel):
    number: int
    analysis: str = ""
    rationale: str = ""
    diff: str = ""
    verdict: Verdict | None = None
    reason: str = ""
    files: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)  # what this attempt's model calls cost (analysis and fix)


class FixOneTestInput(BaseModel):
    run_id: str
    workspace: Workspace
    plan: SuitePlan
    test_id: str
    # The suite run the failure comes from (details are read from its report)
    # and the statuses every validation is compared with.
    failure_run: SuiteRun
    baseline: SuiteRun
    request: FixRequest
    deadline_unix: float | None = None
    # Validation queue: the child proposes and sends its candidate to the run, which validates it in a batch.
    queue: bool = False


class FixOneTestResult(BaseModel):
    test_id: str
    state: FixState
    attempts: list[AttemptRecord]
    usage: Usage = Field(default_factory=Usage)
    regressions_prevented: int = 0
    answer: Answer | None = None
    applied_attempt: int | None = None  # the attempt whose edits stay in the workspace
    suite_after: SuiteRun | None = None  # the full suite after the accepted fix
    applied_edit_set: EditSet | None = None  # the accepted attempt's edits (a rebuild replays them)
    # The worker holding the test's workspace was lost (why): nothing of this child stays, the run
    # rebuilds its workspace elsewhere and drives the test again.
    host_lost: str | None = None
    host_queue: str | None = None  # the lost worker's queue
    batch: int | None = None  # validation queue: the batch that accepted the fix
    # Validation queue: attempts made again on the current files (written on files a fix accepted
    # meanwhile changed; not counted as attempts), with what their model calls cost and why.
    remade: list[AttemptRecord] = Field(default_factory=list[AttemptRecord])


class FixStatusView(BaseModel):
    """What the ``status`` query shows for one test."""

    test_id: str
    state: FixState
    attempt: int = 0
    last_verdict: Verdict | None = None
    history: list[str] = Field(default_factory=list)
    workflow_id: str | None = None
    usage: Usage | None = None  # what the test's LLM calls cost so far (its own workflow's view)


class RunSummary(BaseModel):
    run_id: str
    repo: str
    state: RunOutcome = RunOutcome.RUNNING
    reason: str = ""  # why the run ended as it did, when it is not plainly completed
    baseline_read: bool = True  # False: the first suite run was not read, and the run stopped there
    framework: str | None = None
    fixed: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    escalated: list[str] = Field(default_factory=list)
    aborted: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    still_failing: list[str] = Field(default_factory=list)
    regressions_prevented: int = 0
    attempts: int = 0
    usage: Usage = Field(default_factory=Usage)
    initial: Totals | None = None
    final: Totals | None = None
    report_markdown: str | None = None
    report_json: str | None = None
    report_html: str | None = None  # the self-contained HTML report
    junit_before: str | None = None  # the suite before and after, as JUnit XML (for CI systems)
    junit_after: str | None = None
    patch: str | None = None
    branch: str | None = None
    pushed: str | None = None  # where the branch was pushed (--push REMOTE)
    pr_markdown: str | None = None  # pr.md: the pull request's title and body (--pr)
    pr_url: str | None = None  # the pull request, when `gh pr create` opened it
    notes: list[str] = Field(default_factory=list)
    tests: list[FixStatusView] = Field(default_factory=list[FixStatusView])  # every test's final state, set when the run ends




# --- Activity inputs and outputs -------------------------------------------------


class PrepareInput(BaseModel):
    run_id: str
    request: FixRequest


class PlanInput(BaseModel):
    workspace: Workspace
    request: FixRequest


class SetupInput(BaseModel):
    workspace: Workspace
    plan: SuitePlan
    request: FixRequest


class SuiteInput(BaseModel):
    workspace: Workspace
    plan: SuitePlan
    label: str  # names the artifacts: "initial", "flaky-check", "validate-<test>-<n>", "final"
    sandbox: SandboxSettings
    compare_to: SuiteRun | None = None
    focus: str | None = None  # a test whose own status the result should carry
    # Record which tests run which files (per-test coverage, where the framework gives it: runner/impact.py).
    impact: bool = False


class SingleInput(BaseModel):
    workspace: Workspace
    plan: SuitePlan
    test_id: str
    failure_run: SuiteRun
    sandbox: SandboxSettings
    label: str


class SuiteAnalysisInput(BaseModel):
    workspace: Workspace
    run: SuiteRun  # the failures to fix come from this run's statuses
    select: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    # The suite run again: a failure that passes there is flaky (reported, not fixed).
    recheck: SuiteRun | None = None


class GroupNote(BaseModel):
    root_test: str
    tests: list[str]
    reason: str
    kind: str


class SuiteAnalysis(BaseModel):
    order: list[str]  # the failures to fix, in the order to fix them: group roots first
    flaky: list[str] = Field(default_factory=list)  # failed, then passed when the suite ran again
    groups: list[GroupNote]
    root_cause: str


class AnalyzeInput(BaseModel):
    run_id: str
    workspace: Workspace
    test_id: str
    failure_run: SuiteRun
    attempts: list[AttemptRecord]
    llm: LLMSettings


class FixInput(BaseModel):
    run_id: str
    workspace: Workspace
    plan: SuitePlan
    test_id: str
    attempt: int
    failure_run: SuiteRun
    analysis: AnalysisNote
    attempts: list[AttemptRecord]
    llm: LLMSettings


class ApplyInput(BaseModel):
    workspace: Workspace
    test_id: str
    attempt: int
    edit_set: EditSet


class AppliedEdits(BaseModel):
    files: list[str]
    diff: str


class RollbackInput(BaseModel):
    workspace: Workspace
    test_id: str
    attempt: int
    # A fix merged from a worktree (concurrency > 1) is taken back out with this patch, not from backups.
    patch: str | None = None
    # Asked for by a person after the fix was accepted: refused when later fixes changed its files.
    by_hand: bool = False


class FinalizeInput(BaseModel):
    run_id: str
    workspace: Workspace
    summary: RunSummary
    # The last full run: the tests still failing are read from it (None: the suite never ran).
    final: SuiteRun | None
    initial: SuiteRun | None = None  # the first full run (the "before" of the JUnit export)
    push: str | None = None  # FixRequest.push
    pull_request: bool = False  # FixRequest.pull_request


class RecordInput(BaseModel):
    workspace: Workspace
    result: FixOneTestResult


class WorktreeInput(BaseModel):
    workspace: Workspace  # the run's workspace
    test_id: str


class Worktree(BaseModel):
    """A test's own copy of the run workspace (concurrency > 1): a git worktree
    started from the run workspace's files when the test started."""

    test_id: str
    workspace: Workspace  # what the test's child workflow edits and validates
    start: str  # the starting-point commit (the run workspace's files then)


class MergeInput(BaseModel):
    workspace: Workspace  # the run's workspace, which the fix is merged into
    worktree: Worktree
    files: list[str]  # the files the accepted attempt changed
    baseline: SuiteRun  # the statuses validations compare with now
    suite_after: SuiteRun | None = None  # the worktree's suite after the fix


class MergeResult(BaseModel):
    merged: bool
    reason: str = ""  # why not
    files: list[str] = Field(default_factory=list)
    patch: str | None = None  # the patch the merge applied, kept in the run directory
    patch_text: str | None = None  # its text: the history holds it, so a rebuild can apply it again
    # What validations compare with from now on: a test passes if it passed before or after the fix.
    baseline: SuiteRun | None = None


class RemoveWorktreeInput(BaseModel):
    workspace: Workspace
    worktree: Worktree


class ConversationStart(BaseModel):
    """A fixer conversation begun on the host (``ref``: its file there, with the
    messages and tool results, which never travel), or a proposal without one."""

    ref: str | None = None
    proposal: FixProposal | None = None


class TurnInput(BaseModel):
    workspace: Workspace
    ref: str
    turn: int
    llm: LLMSettings


class ModelTurnResult(BaseModel):
    """One model call of a conversation, as the workflow sees it: what it cost,
    why it stopped, the tools it asks for (names; their inputs stay on the host)."""

    usage: Usage
    stop: str
    tool_calls: list[str] = Field(default_factory=list)
    replayed: bool = False  # made earlier by a worker that died before reporting it: not asked again


class ToolsInput(BaseModel):
    workspace: Workspace
    ref: str
    turn: int


class FinishFixInput(BaseModel):
    fix: FixInput
    ref: str
    stop: str


class AnalysisStart(BaseModel):
    """The pattern analysis of a failure (no LLM) and, unless the run is analysis
    only, the analyzer's conversation begun on the host (``ref``: its file there)."""

    note: AnalysisNote
    ref: str | None = None


class FinishAnalysisInput(BaseModel):
    workspace: Workspace
    test_id: str
    note: AnalysisNote  # the pattern analysis, which the conversation's findings complete
    ref: str
    stop: str


class AcceptedChange(BaseModel):
    """One accepted fix as the history holds it, in the order it entered the run
    workspace: the edit set applied in place, or the patch a merge applied."""

    test_id: str
    attempt: int
    edit_set: EditSet | None = None
    patch_text: str | None = None


class RebuildInput(BaseModel):
    run_id: str
    request: FixRequest
    lost: Workspace  # the workspace on the lost worker
    plan: SuitePlan
    accepted: list[AcceptedChange]
    reason: str  # why the host counts as lost


class Rebuilt(BaseModel):
    """A workspace rebuilt on another worker from the history, and the suite run
    there that stands in for the lost reports (failures' details and the baseline)."""

    workspace: Workspace
    run: SuiteRun
    merged: dict[str, str] = Field(default_factory=dict)  # test -> its merge patch, written again
    plan: SuitePlan | None = None  # the plan with this worker's project environment (None: unchanged)


class SuiteProgress(BaseModel):
    """What a run carries across continue-as-new: where it is, not what it did
    (per-test results are recorded in the run directory as they finish)."""

    workspace: Workspace
    plan: SuitePlan
    initial: SuiteRun
    baseline: SuiteRun
    remaining: list[str]
    views: list[FixStatusView]
    summary: RunSummary
    deadline_unix: float
    applied: dict[str, int] = Field(default_factory=dict)  # fixed test -> its applied attempt
    # concurrency > 1: fixed test -> the patch its merge applied (how a rollback takes it back out)
    merged: dict[str, str] = Field(default_factory=dict)
    # concurrency > 1: tests whose fix did not merge, queued again to be fixed in the run workspace itself
    retrying: list[str] = Field(default_factory=list)
    # Queued tests that an accepted fix made pass too (they are not driven; they count as fixed).
    fixed_along: list[str] = Field(default_factory=list)
    # Every accepted fix, in order: with the repository source, all a rebuild on another worker needs.
    accepted: list[AcceptedChange] = Field(default_factory=list[AcceptedChange])
    rebuilds: int = 0  # times the run moved to another worker
    redriven: dict[str, int] = Field(default_factory=dict)  # test -> times it was driven again after a host loss
    batches: int = 0  # validation queue: batches validated so far (they are numbered across the whole run)
    batch_size: int = 0  # validation queue: the next batch's size (0: not started)
    # Validation queue: the test-impact map on the run's host (None: none; runner/impact.py).
    impact: str | None = None


class Continued(BaseModel):
    """A long run continuing as new: the request it was started with and where it is.
    The workflow takes one argument (``FixRequest | Continued``): Temporal drops
    type hints when the argument count differs from the hints."""

    model_config = ConfigDict(extra="forbid")

    request: FixRequest
    progress: SuiteProgress
