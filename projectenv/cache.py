"""The environment cache: one directory per project environment under
Greenloop's data directory, named by a key that hashes the manifests' and
lockfiles' content and the toolchain's version, so every run, validation and
worktree of a project with the same dependencies finds the same one.

An environment is ready when its marker file exists (written last, after a
build succeeded); builds of the same key are serialised by a file lock, so
two workers on one machine never build one environment twice.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from ..settings import settings
from .models import ProjectEnvironment, Recipe

# Bump when what a recipe builds changes in a way the key does not see.
RECIPE_VERSION = 2
MARKER = "greenloop-environment.json"


def envs_root() -> Path:
    """$GREENLOOP_HOME/envs, or the user's data directory's."""
    return settings().home / "envs"


def key(workspace: Path, recipe: Recipe, extra: str = "") -> str:
    """The cache key: the recipe (its script and toolchain) and every manifest's content."""
    h = hashlib.sha256()
    h.update(json.dumps([RECIPE_VERSION, recipe.ecosystem, recipe.toolchain, recipe.script, recipe.env,
                         recipe.stage, recipe.stage_tree, extra]).encode())
    for rel in sorted(recipe.manifests):
        h.update(b"\0" + rel.encode() + b"\0")
        h.update(hashlib.sha256((workspace / rel).read_bytes()).digest())
    return h.hexdigest()


def directory(recipe: Recipe, cache_key: str) -> Path:
    return envs_root() / f"{recipe.ecosystem}-{cache_key[:20]}"


def load(folder: Path) -> ProjectEnvironment | None:
    """The environment ready in ``folder``, or None."""
    try:
        return ProjectEnvironment.model_validate_json((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None


def save(folder: Path, environment: ProjectEnvironment) -> None:
    tmp = folder / (MARKER + ".tmp")
    tmp.write_text(environment.model_dump_json(indent=1))
    os.replace(tmp, folder / MARKER)


@asynccontextmanager
async def locked(folder: Path, heartbeat: Callable[[str], None] = lambda _: None) -> AsyncIterator[None]:
    """Hold the build lock of ``folder``; while another build holds it, wait
    (off the event loop, heartbeating, so the activity is not taken for lost)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(str(folder) + ".lock", "w") as fh:  # noqa: ASYNC230 - opening a lock file does not block
        waited = 0.0
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if waited % 5 == 0:
                    heartbeat(f"waiting {waited:.0f}s for another build of this environment")
                await asyncio.sleep(0.5)
                waited += 0.5
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
