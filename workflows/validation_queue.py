"""The validation queue's data and pure rules (no I/O: the workflows use them).

A test's child proposes a fix and sends it to the run as a ``Candidate``
(its edit set: pure data, already in the child's history). The run validates
candidates in batches on top of the accepted state: one runner invocation for
the batch's own tests, then one full-suite run (``activities/batch.py``). A
passing batch is accepted whole; a failing one is bisected, and the verdict
goes back to each candidate's child (``QueueVerdict``).

The rules here decide what goes into a batch (edits to disjoint files, none
written on files an accepted fix changed since), how results are reused (a
content is the ordered edit sets on top of the accepted state, keyed by their
hashes) and how the batch size adapts (doubles while batches pass, halves
after a failure, within ``1..FixRequest.max_batch``).
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, Field

from ..domain.edits import EditSet
from ..runner.plan import SuitePlan
from ..sandbox.models import SandboxSettings
from .models import SuiteRun, Verdict, Workspace

# The run's signal a child sends its candidate with (by name: the run's module imports the child's).
CANDIDATE_SIGNAL = "candidate"
# How long a batch waits to fill while children are still proposing (a suite run is not started
# for one fix when more are a model call away).
GATHER_S = 3.0


class Candidate(BaseModel):
    """A fix waiting for validation: one attempt's edit set for one test."""

    test_id: str
    attempt: int
    edit_set: EditSet
    # When the attempt began reading the workspace (its child's clock): an accepted fix
    # that changed one of its files after that makes it stale (its whole-file edits would undo it).
    started_at: float

    @property
    def files(self) -> list[str]:
        return [e.path for e in self.edit_set.edits]

    def key(self) -> str:
        """The edit set's hash (with the test and attempt it belongs to)."""
        body = f"{self.test_id}\0{self.attempt}\0" + "\0".join(
            f"{e.path}\0{'-' if e.content is None else e.content}" for e in self.edit_set.edits)
        return hashlib.sha256(body.encode()).hexdigest()[:16]


class QueueVerdict(BaseModel):
    """What the run tells a child about its candidate."""

    test_id: str
    attempt: int
    verdict: Verdict
    reason: str = ""
    batch: int | None = None
    # Written on files an accepted fix changed meanwhile: the attempt is made again on the
    # current files (it does not count as a failed attempt).
    stale: bool = False


class CheckInput(BaseModel):
    """One content to check: the accepted state (the run workspace's files) plus ``candidates``."""

    workspace: Workspace  # the run's workspace: the accepted state
    plan: SuitePlan
    baseline: SuiteRun  # what passed on the accepted state
    failure_run: SuiteRun  # where the candidates' tests come from (their files, for selectors)
    candidates: list[Candidate]
    sandbox: SandboxSettings
    label: str  # names the scratch worktree and the artifacts: "batch-<n>-<k>"
    singles: bool = True  # check the candidates' own tests first (one runner invocation)
    # Tests whose fix was rolled back by hand since the baseline was taken: they are expected to fail.
    rolled_back: list[str] = Field(default_factory=list)
    impact: str | None = None  # the run's test-impact map (``ImpactResult.path``), when there is one


class CheckResult(BaseModel):
    """How one content did. ``ok``: every candidate's test passes and nothing that
    passed on the accepted state fails (a failure that passes on a re-run of the
    same content is flaky, not a regression)."""

    label: str
    ok: bool
    # A candidate's test that fails (alone, or in the full suite) -> why: its own fix does not work.
    still_failing: dict[str, str] = Field(default_factory=dict)
    regressions: list[str] = Field(default_factory=list)  # passed on the accepted state, fail here (the first 20)
    regression_count: int = 0
    broken: str | None = None  # the content breaks the build, or the suite cannot be read
    flaky: list[str] = Field(default_factory=list)  # failed, then passed on the re-run of the same content
    suite: SuiteRun | None = None  # the clean full-suite run (the next baseline when accepted)
    suite_runs: int = 0
    single_runs: int = 0
    # Test impact: candidates whose files none of the regressing tests ran (judged first on a failure).
    innocent: list[str] = Field(default_factory=list)
    impacted: int = 0  # tests the quick check ran because the candidates' files are theirs

    def why(self) -> str:
        """The regression, as a failed attempt's reason (what the next attempt is told)."""
        if self.broken:
            return self.broken
        shown = ", ".join(self.regressions[:5])
        more = f" and {self.regression_count - 5} more" if self.regression_count > 5 else ""
        return f"{self.regression_count} test(s) that passed now fail: {shown}{more}"


class AcceptInput(BaseModel):
    workspace: Workspace
    candidates: list[Candidate]


def content_key(candidates: list[Candidate]) -> tuple[str, ...]:
    """What a check's result is known by: the edit-set hashes (on the current accepted state). Their
    order does not matter: the candidates of one batch edit disjoint files, so any order gives the same files."""
    return tuple(sorted(c.key() for c in candidates))


def take_batch(pending: list[Candidate], size: int) -> tuple[list[Candidate], list[Candidate]]:
    """Up to ``size`` candidates in arrival order whose edits touch disjoint files
    (whole-file edits to one file would undo each other); the rest stay queued, in order."""
    batch: list[Candidate] = []
    rest: list[Candidate] = []
    files: set[str] = set()
    for c in pending:
        if len(batch) < size and not files & set(c.files):
            batch.append(c)
            files |= set(c.files)
        else:
            rest.append(c)
    return batch, rest


def stale_file(candidate: Candidate, touched: dict[str, float]) -> str | None:
    """A file of ``candidate`` that an accepted fix changed after its attempt began
    (``touched``: file -> when the fix that last changed it was accepted), or None."""
    return next((f for f in candidate.files if touched.get(f, float("-inf")) >= candidate.started_at), None)


def first_size(concurrency: int, largest: int) -> int:
    """The first batch's size: as many fixes as can be proposed side by side."""
    return max(1, min(largest, max(2, concurrency)))


def next_size(size: int, passed: bool, largest: int) -> int:
    """The next batch size: doubled after a batch that passed, halved after one that did not."""
    return max(1, min(largest, size * 2 if passed else size // 2))


def halves(candidates: list[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    middle = (len(candidates) + 1) // 2
    return candidates[:middle], candidates[middle:]
