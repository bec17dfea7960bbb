"""Provider faults as Temporal sees them: rate limits, overload, 5xx,
timeouts and connection errors are retryable (the activity retry policy
backs off, or waits as long as the provider's ``retry-after`` says);
authentication and invalid requests are not."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import ParamSpec, TypeVar, cast

from temporalio.exceptions import ApplicationError

P = ParamSpec("P")
R = TypeVar("R")


MAX_RETRY_AFTER = timedelta(minutes=10)


def retry_after(headers: Mapping[str, str]) -> timedelta | None:
    """How long the provider asks us to wait (``retry-after-ms``, ``retry-after`` in seconds or as an
    HTTP date), at most ``MAX_RETRY_AFTER``; None when it does not say (the retry policy backs off)."""
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            wait = timedelta(milliseconds=float(ms))
        elif (value := headers.get("retry-after")) is None:
            return None
        elif value.strip().replace(".", "", 1).isdigit():
            wait = timedelta(seconds=float(value))
        else:
            wait = parsedate_to_datetime(value) - datetime.now(timezone.utc)
    except (ValueError, TypeError, OverflowError):
        return None
    if wait <= timedelta(0):
        return None
    return min(wait, MAX_RETRY_AFTER)


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
            wait = retry_after(exc.response.headers) if retryable else None
            raise ApplicationError(
                f"LLM provider answered {exc.status_code}: {exc.message}"
                + (f" (it asks to retry after {wait.total_seconds():g} s)" if wait else ""),
                type=kind, non_retryable=not retryable, next_retry_delay=wait) from exc
        except (anthropic.APITimeoutError, anthropic.APIConnectionError) as exc:
            raise ApplicationError(f"LLM provider unreachable: {exc}", type="provider_unreachable") from exc

    return wrapper
