"""How a test run uses a project's environment: the workspace (or worktree)
being tested gets its links (``node_modules`` -> the cached one), and the
sandboxed command gets the environment's PATH, the workspace's import roots
first on PYTHONPATH (so the code under test is always that workspace's,
whatever is installed), its variables, and the environment read-only."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..git_command import git
from ..sandbox.environment import project_path
from ..sandbox.models import Mount
from .models import ProjectEnvironment


def _exclude(workspace: Path, name: str) -> None:
    """Keep a link Greenloop made out of git (``node_modules/`` in a .gitignore matches directories, not links)."""
    if not (workspace / ".git").exists():
        return
    rel = git(workspace, "rev-parse", "--git-path", "info/exclude", check=False)
    if not rel:
        return
    path = Path(rel) if Path(rel).is_absolute() else workspace / rel
    line = f"/{name}"
    text = path.read_text() if path.is_file() else ""
    if line not in text.splitlines():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as f:
            f.write(("\n" if text and not text.endswith("\n") else "") + line + "\n")


def link(environment: ProjectEnvironment, workspace: Path) -> None:
    """Make the environment's links in ``workspace``; a directory already there
    is replaced (it is the run's copy of what the setup judged untrustworthy)."""
    for name, target in environment.links.items():
        here = workspace / name
        if os.path.realpath(here) == os.path.realpath(target):
            continue
        if here.is_symlink() or here.is_file():
            here.unlink()
        elif here.is_dir():
            shutil.rmtree(here)
        here.symlink_to(target, target_is_directory=True)
        _exclude(workspace, name)


def test_env(environment: ProjectEnvironment, workspace: Path) -> dict[str, str]:
    """The variables a sandboxed test run in ``workspace`` gets."""
    env = dict(environment.env)
    if environment.path_first:
        env["PATH"] = project_path(environment.path_first)
    if environment.ecosystem == "python":
        env["PYTHONPATH"] = os.pathsep.join(str((workspace / r).resolve()) for r in environment.import_roots)
        env["PYTHONNOUSERSITE"] = "1"
        venv = next((str(Path(p).parent) for p in environment.path_first if p.endswith("/bin")), None)
        if venv:
            env["VIRTUAL_ENV"] = venv
    return env


def mounts(environment: ProjectEnvironment) -> list[Mount]:
    return [Mount(path=p) for p in environment.mounts if os.path.isdir(p)]
