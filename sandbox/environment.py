"""The environment a sandboxed command gets: an allow-list, never the
worker's secrets (ANTHROPIC_API_KEY and everything else stays outside)."""

from __future__ import annotations

import os
import sys

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def sandbox_env(home: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """PATH (the worker's toolchains, its own Python first), a private HOME,
    and fixed settings only. GREENLOOP_SANDBOX_PATH replaces PATH."""
    path = os.environ.get("GREENLOOP_SANDBOX_PATH") or (
        os.path.dirname(sys.executable) + ":" + os.environ.get("PATH", DEFAULT_PATH))
    env = {
        "PATH": path,
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "CI": "true",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "NO_COLOR": "1",
        "TMPDIR": "/tmp",
    }
    env.update(extra or {})
    return env
