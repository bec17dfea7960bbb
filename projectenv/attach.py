"""How a test run uses a project's environment: the workspace (or worktree)
being tested gets its links (``node_modules`` showing the cached one), and the
sandboxed command gets the environment's PATH, the workspace's import roots
first on PYTHONPATH (so the code under test is always that workspace's,
whatever is installed), its variables, and the environment read-only.

A link is a folder of the workspace's own whose entries link to the cached
folder's, not one link to it: the environment stays shared and read-only,
and a runner still writes where it always writes (vitest's and Vite's
``node_modules/.vite``, Babel's ``node_modules/.cache``), in the workspace."""

from __future__ import annotations

import fcntl
import itertools
import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ..git_command import git
from ..sandbox.environment import project_path
from ..sandbox.models import Mount
from . import generated
from .models import ProjectEnvironment
from .toolchains import ON_ANOTHER_CHECKOUT, ONE_WRITER


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


# In a folder of links: the environment folder it shows.
SHOWS = ".greenloop-shows"


def shows(here: Path) -> str | None:
    """The environment folder ``here`` is a folder of links to, None when it is not one."""
    mark = here / SHOWS
    return mark.read_text() if not here.is_symlink() and mark.is_file() else None


def link(environment: ProjectEnvironment, workspace: Path) -> None:
    """Make the environment's links in ``workspace``: each a folder whose
    entries link to the target's (what a runner writes there stays the
    workspace's); one already there for the same target is brought up to
    date, anything else there is replaced (it is the run's copy of what the
    setup judged untrustworthy). The workspace's own folder, when it is the
    target, is left as it is; a target the setup did not make (a workspace
    member's node_modules when everything was hoisted) is skipped. Files the
    build generated into the sources (``projectenv.generated``) are copied in
    where they are missing."""
    generated.place(environment.generated, workspace)
    staged = Path(environment.root) / "project" if environment.root else None
    for name, target in environment.links.items():
        here = workspace / name
        if os.path.realpath(here) == os.path.realpath(target) or not os.path.isdir(target):
            continue
        if shows(here) != target:
            if here.is_symlink() or here.is_file():
                here.unlink()
            elif here.is_dir():
                shutil.rmtree(here)
            here.mkdir(parents=True)
            (here / SHOWS).write_text(target)
        _fill(here, Path(target), workspace, staged)
        _exclude(workspace, name)


def _own(entry: os.DirEntry[str], workspace: Path, staged: Path | None) -> Path | None:
    """Where in ``workspace`` an entry of the environment that links into the staged project
    (a workspace member, ``node_modules/@scope/lib -> ../../packages/lib``) points: the run
    tests the workspace's own member, never the staged copy (its manifest alone)."""
    if staged is None or not entry.is_symlink():
        return None
    real = Path(os.path.realpath(entry.path))
    if not real.is_relative_to(staged.resolve()):
        return None
    rel = real.relative_to(staged.resolve())
    # pnpm's links into its own store (node_modules/.pnpm/...) stay the environment's.
    return None if "node_modules" in rel.parts else workspace / rel


def _members_inside(folder: str, staged: Path | None) -> bool:
    """Whether a scope folder (``node_modules/@scope``) holds links to workspace members."""
    if staged is None or not os.path.basename(folder).startswith("@"):
        return False
    return any(_own(e, Path("/"), staged) is not None for e in os.scandir(folder))


def _fill(here: Path, target: Path, workspace: Path, staged: Path | None) -> None:
    """Link every entry of ``target`` from ``here`` (what ``here`` has of its own is kept);
    drop links to entries ``target`` no longer has. Links to workspace members point to
    the workspace's own (``_own``); a scope folder holding some is a folder of links too."""
    for entry in os.scandir(here):
        if entry.is_symlink() and not os.path.exists(entry.path):
            os.unlink(entry.path)
    for entry in os.scandir(target):
        mine = here / entry.name
        own = _own(entry, workspace, staged)
        if own is not None:
            if os.path.lexists(mine) and os.path.realpath(mine) != str(own.resolve()):
                mine.unlink() if mine.is_symlink() or mine.is_file() else shutil.rmtree(mine)
            if not os.path.lexists(mine):
                mine.symlink_to(os.path.relpath(own, here), target_is_directory=True)
        elif entry.is_dir(follow_symlinks=False) and _members_inside(entry.path, staged):
            if mine.is_symlink():
                mine.unlink()
            mine.mkdir(exist_ok=True)
            _fill(mine, Path(entry.path), workspace, staged)
        elif not os.path.lexists(mine):
            mine.symlink_to(entry.path, target_is_directory=entry.is_dir())


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


@contextmanager
def caches(environment: ProjectEnvironment, backend: str,
           workspace: Path) -> Iterator[tuple[dict[str, str], list[Mount]]]:
    """The environment's toolchain caches for a test run in ``workspace`` on
    ``backend``, held while the run lasts: their variables and writable
    mounts. They live beside the environment, keyed like it, one set per
    backend (each runs as its own user), so every run, worktree and batch of
    the project starts warm. A cache its toolchain lets one writer use at a
    time (``toolchains.ONE_WRITER``) is a copy no other run holds; one that
    another checkout used last is made safe for this one first
    (``toolchains.ON_ANOTHER_CHECKOUT``)."""
    if not environment.caches or not environment.root:
        yield {}, []
        return
    root = Path(f"{environment.root}.caches-{backend}")
    env: dict[str, str] = {}
    with ExitStack() as held:
        for var, name in environment.caches.items():
            folder = root / name
            if name in ONE_WRITER:
                folder = held.enter_context(_free_copy(folder))
                _hand_over(folder, name, workspace, environment)
            folder.mkdir(parents=True, exist_ok=True)
            env[var] = str(folder)
        yield env, [Mount(path=str(root), writable=True)]


def _hand_over(folder: Path, name: str, workspace: Path, environment: ProjectEnvironment) -> None:
    """Record that ``workspace`` uses the copy ``folder`` now; when another checkout used it last,
    do what the toolchain needs first (``ON_ANOTHER_CHECKOUT``)."""
    last = folder.parent / f"{folder.name}.checkout"
    here = str(workspace.resolve())
    if folder.is_dir() and (not last.is_file() or last.read_text() != here) and name in ON_ANOTHER_CHECKOUT:
        ON_ANOTHER_CHECKOUT[name](folder, environment.env)
    last.write_text(here)


@contextmanager
def _free_copy(folder: Path) -> Iterator[Path]:
    """The first of ``folder/0``, ``folder/1``... that no run holds, held (a file lock, so runs of
    other workers on this machine see it too) until the run ends."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in itertools.count():
        with open(folder / f"{i}.lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            try:
                yield folder / str(i)
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
            return


def mounts(environment: ProjectEnvironment) -> list[Mount]:
    return [Mount(path=p) for p in environment.mounts if os.path.isdir(p)]
