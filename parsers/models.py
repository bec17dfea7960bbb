"""The normalized test report every parser produces.

These models cross activity, CLI and file boundaries, so they are pydantic
models with bounded text fields: a multi-megabyte traceback never travels
whole, only its head and tail.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

MAX_MESSAGE_CHARS = 2_000
MAX_DETAILS_CHARS = 8_000
TRUNCATION_MARK = "\n...[truncated {n} chars]...\n"


class Status(StrEnum):
    """Normalized outcome of one test (see shared/corpus/README.md)."""

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"


def bound_text(text: str | None, limit: int) -> str | None:
    """Keep the head and the tail of ``text`` within ``limit`` characters."""
    if text is None or len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return text[:half] + TRUNCATION_MARK.format(n=cut) + text[-half:]


class Totals(BaseModel):
    """Count of tests per status; always derived from the tests themselves."""

    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    xfailed: int = 0
    xpassed: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errored + self.skipped + self.xfailed + self.xpassed

    @property
    def problems(self) -> int:
        """Tests that need fixing: failures, errors and strict surprises."""
        return self.failed + self.errored


class TestResult(BaseModel):
    """One test as the framework reported it, normalized."""

    __test__ = False  # not a pytest test class

    model_config = ConfigDict(extra="forbid")

    id: str
    status: Status
    file: str | None = None
    line: int | None = None
    message: str | None = None
    details: str | None = None
    duration_s: float | None = None
    timed_out: bool = False
    native_status: str | None = None
    # Where the test came from when the id alone does not say it: a cargo test
    # binary, a Go package, a JUnit class. Used to select the test again.
    suite: str | None = None
    # The id the runner printed, when it printed it for several distinct tests (the
    # first keeps it as its id, the next are numbered apart: ``merge.repeats``): what selects it.
    printed: str | None = None

    @field_validator("message")
    @classmethod
    def _bound_message(cls, v: str | None) -> str | None:
        return bound_text(v, MAX_MESSAGE_CHARS)

    @field_validator("details")
    @classmethod
    def _bound_details(cls, v: str | None) -> str | None:
        return bound_text(v, MAX_DETAILS_CHARS)


class TestReport(BaseModel):
    """Everything Greenloop knows about one run of a test command."""

    __test__ = False

    framework: str
    command: str = ""
    exit_code: int | None = None
    tests: list[TestResult] = Field(default_factory=list)
    build_error: bool = False
    timed_out: bool = False
    warnings: list[str] = Field(default_factory=list)
    # False for the exit-code-only fallback: no per-test results are known.
    per_test: bool = True
    # Which inputs the tests came from ("console", "junit-xml:reports/x.xml"...).
    sources: list[str] = Field(default_factory=list)
    # Why this framework was chosen, when it was detected rather than given.
    detection: str | None = None
    # The end of the output, kept for a human when nothing could be parsed.
    output_tail: str | None = None
    # What the framework's own summary counted ("5 passed, 2 failed"), in
    # per-test terms: a status ("passed"), statuses joined with "+"
    # ("failed+errored") or "total", to a count. The normalizer checks the
    # tests against it and warns where they differ.
    summary_counts: dict[str, int] = Field(default_factory=dict)
    # How the per-test results disagree with that summary, when they do: the
    # run's counts are not the runner's, which every view of the run says.
    miscount: str | None = None
    # Why tests error at import when a file the project's build generates is missing from the
    # checkout (git ignores it): set by the runner (``projectenv.generated.explain``).
    setup_explains: str | None = None
    # The output cap the run's output passed, in bytes, when the sandbox cut it
    # there and stopped the run (the parser read what came before).
    output_cut_bytes: int | None = None
    # Where the output places a test without naming its definition (a
    # failure's line, a stack frame), by id: the normalizer uses it only for
    # a test its framework's ``locate`` cannot find in the sources. Working
    # state of one parse, left out of the report's serialized form.
    output_locations: dict[str, tuple[str, int | None]] = Field(default_factory=dict, exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def totals(self) -> Totals:
        counts: dict[str, int] = {}
        for t in self.tests:
            counts[t.status.value] = counts.get(t.status.value, 0) + 1
        return Totals(**counts)

    @property
    def failing(self) -> list[TestResult]:
        """Tests that need a fix (failed or errored)."""
        return [t for t in self.tests if t.status in (Status.FAILED, Status.ERRORED)]

    def find(self, test_id: str) -> TestResult | None:
        return next((t for t in self.tests if t.id == test_id), None)
