"""Running git: one function, with a fixed identity and typed errors.

Every part of Greenloop that runs a git command through ``git()`` (the
workspace, worktrees, the project environment's attach step) gets the same
author, the same environment and the same error. It imports nothing of
Greenloop but the typed errors, so any layer can use it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .domain.errors import ErrorKind, GreenloopError

GIT_ENV = {"GIT_AUTHOR_NAME": "Greenloop", "GIT_AUTHOR_EMAIL": "greenloop@localhost",
           "GIT_COMMITTER_NAME": "Greenloop", "GIT_COMMITTER_EMAIL": "greenloop@localhost",
           "GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/local/bin:/usr/bin:/bin"}


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    """Run git in ``cwd`` with a fixed identity (plus ``env``); stdout, or a typed error."""
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          env={**GIT_ENV, **(env or {})}, timeout=600, check=False)
    if check and proc.returncode != 0:
        raise GreenloopError(f"git {' '.join(args[:2])} failed: {proc.stderr.strip()[-500:]}",
                             kind=ErrorKind.VALIDATION_ERROR, args=list(args))
    return proc.stdout.strip()
