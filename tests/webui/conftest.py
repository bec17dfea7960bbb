"""The real Temporal Web UI (served by the dev server) and a headless Chromium
to drive it: Debian's ``chromium`` through Playwright (no browser downloads).
Under CI=true a missing browser or Playwright fails the test; elsewhere it is
skipped with the command that installs it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import pytest_asyncio

from tests.conftest import REPO
from tests.workflows.conftest import demo_repo, scripted  # noqa: F401 - fixtures the browser test uses

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# Where CI keeps the screenshots (git ignores it).
ARTIFACTS = REPO / "test-artifacts" / "webui"


def missing(what: str, install: str) -> None:
    message = f"{what} is missing: {install}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebUIServer:
    """A dev server with its Web UI on, on free ports, with its own database."""

    def __init__(self, proc: subprocess.Popen, port: int, ui_port: int) -> None:
        self.proc, self.port, self.ui_port = proc, port, ui_port
        self.address = f"127.0.0.1:{port}"
        self.ui = f"http://127.0.0.1:{ui_port}"


@pytest.fixture(scope="session")
def webui_server(tmp_path_factory):
    from greenloop.server.dev import command, listening

    port, ui_port = free_port(), free_port()
    tmp = tmp_path_factory.mktemp("webui-server")
    log = (tmp / "server.log").open("wb")
    proc = subprocess.Popen(command(port, ui_port, tmp / "temporal.db"), stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the dev server exited at start: {(tmp / 'server.log').read_text()[-2000:]}")
            if listening(port) and listening(ui_port):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/", timeout=2) as page:
                        if page.status == 200:
                            break
                except OSError:
                    pass
            if time.monotonic() > deadline:
                pytest.fail("the dev server's Web UI did not answer within 60s")
            time.sleep(0.3)
        yield WebUIServer(proc, port, ui_port)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest_asyncio.fixture(loop_scope="session")
async def webui_client(webui_server):
    from temporalio.client import Client
    from temporalio.contrib.pydantic import pydantic_data_converter

    return await Client.connect(webui_server.address, data_converter=pydantic_data_converter)


@pytest_asyncio.fixture(loop_scope="session")
async def browser_page():
    """A page in headless Chromium (1280x900)."""
    if not CHROMIUM.exists():
        missing("Debian's chromium", "apt-get install -y chromium (scripts/setup.sh test does it)")
    try:
        from playwright.async_api import async_playwright, expect
    except ImportError:
        missing("Playwright", "pip install -e '.[dev]'")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            # A loaded CI machine serves the Web UI slowly: every wait (pages opened from links too,
            # and expect()'s assertions) gets 30 s, not Playwright's 5 s.
            context = await browser.new_context(viewport={"width": 1280, "height": 900})
            context.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            yield await context.new_page()
        finally:
            await browser.close()


@pytest.fixture
def screenshots(tmp_path, request):
    """Where a test's screenshots go: its tmp dir, copied at the end to
    test-artifacts/webui/<test>/ for CI to keep."""
    folder = tmp_path / "screenshots"
    folder.mkdir()
    yield folder
    dest = ARTIFACTS / request.node.name
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(folder, dest)
