"""The environment a sandboxed command gets: an allow-list, never the
worker's secrets (ANTHROPIC_API_KEY and everything else stays outside)."""

from __future__ import annotations

import os
import re
import sys

from ..settings import settings

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Credential files that may sit inside toolchain trees a sandbox shows (~/.cargo, a venv...):
# every backend hides them.
MASKED_IN_ROOTS = ("credentials", "credentials.toml", ".credentials", ".netrc", ".pypirc", ".npmrc")
# Names that look like credentials never enter, even when a caller passes them.
SECRET_NAME = re.compile(r"(^|_)KEY($|_)|TOKEN|SECRET|PASSW|CREDENTIAL|(^|_)AUTH($|_)|COOKIE|"
                         r"^ANTHROPIC_|^AWS_|^GH_|^GITHUB_", re.I)


def rustup_home() -> str:
    """Where rustup's cargo/rustc proxies look for toolchains (not under a sandbox's private HOME)."""
    return os.environ.get("RUSTUP_HOME") or os.path.expanduser("~/.rustup")


def extra_ro() -> list[str]:
    """Host trees to show read-only in every sandbox (GREENLOOP_SANDBOX_RO, colon-separated)."""
    return settings().sandbox_ro


def is_secret(name: str) -> bool:
    """Whether a variable name looks like a credential."""
    return SECRET_NAME.search(name) is not None


def project_path(first: list[str]) -> str:
    """PATH for a project's own environment: ``first``, then the worker's
    toolchains without Greenloop's interpreter (its directory, and any
    virtualenv's ``bin``), so ``python``/``pytest`` resolve to the project's
    environment, never to Greenloop's. GREENLOOP_SANDBOX_PATH replaces the rest."""
    own = os.path.dirname(sys.executable)
    rest = (settings().sandbox_path or os.environ.get("PATH", DEFAULT_PATH)).split(":")
    kept = [p for p in rest if p and p != own and not os.path.isfile(os.path.join(os.path.dirname(p), "pyvenv.cfg"))]
    return ":".join(dict.fromkeys([*first, *kept]))


def sandbox_env(home: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """PATH (the worker's toolchains, its own Python first), a private HOME,
    and fixed settings only, plus ``extra`` less anything named like a
    secret (``is_secret``). GREENLOOP_SANDBOX_PATH replaces PATH."""
    path = settings().sandbox_path or (
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
        "RUSTUP_HOME": rustup_home(),
    }
    env.update({k: v for k, v in (extra or {}).items() if not is_secret(k)})
    return env
