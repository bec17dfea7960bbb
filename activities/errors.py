"""Typed errors across the activity boundary: a ``GreenloopError`` becomes an
``ApplicationError`` whose type is its error kind, non-retryable when no
retry can help (the workflows' retry policies list the same kinds)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from temporalio.exceptions import ApplicationError

from ..domain.errors import GreenloopError

P = ParamSpec("P")
R = TypeVar("R")


def typed_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Wrap an async activity so its ``GreenloopError``s reach the workflow typed."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except GreenloopError as exc:
            raise ApplicationError(
                exc.message, {k: str(v) for k, v in exc.context.items()},
                type=exc.kind.value, non_retryable=not exc.retryable,
            ) from exc

    return wrapper
