"""The phase-testing protocol: the JSON input and output schemas of `greenloop test`.

``PhaseTestInput`` rejects unknown fields (``additionalProperties: false``)
and out-of-range values with a ``validation_error``; ``PhaseTestOutput`` is
exactly the output schema, with the typed error kinds.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..domain.errors import ErrorKind, GreenloopError
from ..parsers.language import LANGUAGE_ALIASES


class PhaseTestInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    working_directory: str = Field(pattern=r"^/")
    language: str | None = None
    test_command: str | None = None
    build_command: str | None = None
    max_retries: int = Field(default=3, ge=0, le=10)
    retry_backoff_ms: list[int] = Field(default_factory=lambda: [5000, 10000, 15000])
    run_build: bool | None = None
    timeout_seconds: int = Field(default=300, ge=1)

    @field_validator("language")
    @classmethod
    def _known_language(cls, v: str | None) -> str | None:
        if v is not None and v.lower() not in LANGUAGE_ALIASES:
            raise ValueError(f"unknown language {v!r}")
        return v

    @field_validator("retry_backoff_ms")
    @classmethod
    def _non_negative(cls, v: list[int]) -> list[int]:
        if any(x < 0 for x in v):
            raise ValueError("backoff delays must be >= 0")
        return v

    def backoff_s(self, attempt: int) -> float:
        """Delay before retry number ``attempt`` (1-based); the last delay repeats."""
        if not self.retry_backoff_ms:
            return 0.0
        return self.retry_backoff_ms[min(attempt, len(self.retry_backoff_ms)) - 1] / 1000


def parse_input(raw: str | bytes | dict[str, Any]) -> PhaseTestInput:
    """Validate protocol input; errors become one ``validation_error``."""
    try:
        if isinstance(raw, dict):
            return PhaseTestInput.model_validate(raw)
        return PhaseTestInput.model_validate_json(raw)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()]
        raise GreenloopError(
            "invalid input: " + "; ".join(problems), kind=ErrorKind.VALIDATION_ERROR, problems=problems,
        ) from None


class FailingTest(BaseModel):
    name: str
    file: str | None = None
    error: str


class ProtocolError(BaseModel):
    type: ErrorKind
    message: str
    context: dict[str, Any] = Field(default_factory=dict)


class PhaseTestOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["pass", "fail"]
    execution_time_ms: int = Field(ge=0)
    retry_count: int = Field(ge=0)
    tests_run: int = Field(ge=0)
    tests_passed: int = Field(ge=0)
    tests_failed: int = Field(ge=0)
    build_status: Literal["pass", "fail", "skipped"]
    failing_tests: list[FailingTest]
    language: str
    test_command: str | None
    build_command: str | None = None
    errors: list[ProtocolError] | None = None
    # Set when a person chose to skip failing tests after escalation.
    user_override: bool | None = None

    def to_json(self) -> str:
        # errors and user_override are present only when they apply ;
        # test_command and build_command are always present, possibly null.
        absent = {k for k in ("errors", "user_override") if getattr(self, k) is None}
        return self.model_dump_json(indent=2, exclude=absent)


def error_output(error: GreenloopError, *, language: str = "unknown", test_command: str | None = None,
                 build_command: str | None = None, elapsed_ms: int = 0) -> PhaseTestOutput:
    """The protocol's answer for a run that could not start or finish."""
    return PhaseTestOutput(
        status="fail", execution_time_ms=elapsed_ms, retry_count=0, tests_run=0, tests_passed=0,
        tests_failed=0, build_status="skipped", failing_tests=[], language=language,
        test_command=test_command, build_command=build_command,
        errors=[ProtocolError(type=error.kind, message=error.message, context=_jsonable(error.context))],
    )


def _jsonable(context: dict[str, Any]) -> dict[str, Any]:
    return {k: (v if isinstance(v, (str, int, float, bool, list, dict, type(None))) else str(v))
            for k, v in context.items()}
