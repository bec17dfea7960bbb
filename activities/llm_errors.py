"""Provider faults as Temporal sees them: rate limits, overload, 5xx,
timeouts and connection errors are retryable (the activity retry policy
backs off); authentication and invalid requests are not."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar, cast

from temporalio.exceptions import ApplicationError

P = ParamSpec("P")
R = TypeVar("R")


def provider_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Map ``anthropic`` exceptions to typed ``ApplicationError``s."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        import anthropic

        try:
            return await fn(*args, **kwargs)
        except anthropic.APIStatusError as exc:
            body = getattr(exc, "body", None)
            error = cast("dict[str, object]", body).get("error") if isinstance(body, dict) else None
            kind = cast("dict[str, object]", error).get("type") if isinstance(error, dict) else None
            kind = kind if isinstance(kind, str) and kind else f"http_{exc.status_code}"
            retryable = exc.status_code in (408, 409, 429, 529) or exc.status_code >= 500
            raise ApplicationError(f"LLM provider answered {exc.status_code}: {exc.message}", type=kind,
                                   non_retryable=not retryable) from exc
        except (anthropic.APITimeoutError, anthropic.APIConnectionError) as exc:
            raise ApplicationError(f"LLM provider unreachable: {exc}", type="provider_unreachable") from exc

    return wrapper
