"""Heartbeat while awaiting something long (a model call, a test run), so a
lost worker is noticed within the heartbeat timeout and cancellation reaches
the activity promptly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from temporalio import activity

INTERVAL_S = 5.0


@asynccontextmanager
async def heartbeating(what: str, interval_s: float = INTERVAL_S) -> AsyncGenerator[None, None]:
    """Heartbeat ``what`` every ``interval_s`` seconds (or a third of the activity's
    heartbeat timeout, when that is shorter) while the block runs."""
    timeout = activity.info().heartbeat_timeout
    if timeout:
        interval_s = min(interval_s, max(timeout.total_seconds() / 3, 0.2))

    async def beat() -> None:
        while True:
            activity.heartbeat(what)
            await asyncio.sleep(interval_s)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
