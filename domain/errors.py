"""Typed errors with the error kinds of the Phase Testing Agent protocol
(the phase-testing protocol's kinds). Every layer raises these so the CLI, the workflows and the
protocol output can say what went wrong and whether retrying can help."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorKind(StrEnum):
    TEST_FAILURE = "test_failure"
    BUILD_FAILURE = "build_failure"
    VALIDATION_ERROR = "validation_error"
    LANGUAGE_DETECTION_FAILED = "language_detection_failed"
    COMMAND_NOT_FOUND = "command_not_found"
    TIMEOUT = "timeout"
    PERMISSION_ERROR = "permission_error"
    OUT_OF_MEMORY = "out_of_memory"
    USER_ABORT = "user_abort"
    # The project's environment (its dependencies, its interpreter) could not be built.
    SETUP_FAILED = "setup_failed"
    # A run's workspace or one of its files is not on the worker that should hold it
    # (the worker lost its disk, or the run moved): the run rebuilds it from its history.
    WORKSPACE_LOST = "workspace_lost"
    # The run's repository cannot be reached from this worker (a local path it cannot see).
    REPOSITORY_UNREACHABLE = "repository_unreachable"


# Kinds that another try cannot fix.
NON_RETRYABLE = {
    ErrorKind.BUILD_FAILURE,
    ErrorKind.VALIDATION_ERROR,
    ErrorKind.LANGUAGE_DETECTION_FAILED,
    ErrorKind.COMMAND_NOT_FOUND,
    ErrorKind.PERMISSION_ERROR,
    ErrorKind.OUT_OF_MEMORY,
    ErrorKind.USER_ABORT,
    ErrorKind.SETUP_FAILED,
    ErrorKind.WORKSPACE_LOST,  # the same worker will not find it on a retry: the workflow rebuilds it
}


class GreenloopError(Exception):
    """An error a user can act on: a kind, a message and some context."""

    kind: ErrorKind = ErrorKind.VALIDATION_ERROR

    def __init__(self, message: str, *, kind: ErrorKind | None = None, **context: Any) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.message = message
        self.context = context

    @property
    def retryable(self) -> bool:
        return self.kind not in NON_RETRYABLE


class Refused(ValueError):
    """A request a person made of a run (an Update's or a signal's input) that the run turns down:
    its message says why and what to type instead; it is shown without a stack trace."""


class UnknownFrameworkError(GreenloopError):
    kind = ErrorKind.VALIDATION_ERROR
