"""What a setup built, as every test run needs to find it again.

``ProjectEnvironment`` travels inside the ``SuitePlan`` (workflow history,
every test-running activity), so it holds paths and names only: the
environment itself stays in the cache on the worker's disk.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Ecosystem = Literal["python", "node", "rust", "go", "java", "ruby", "php", "none"]


class ProjectEnvironment(BaseModel):
    """The environment a project's tests run in, and how it was made."""

    ecosystem: Ecosystem
    # What a test run does with it: directories first on PATH, the
    # workspace's import roots first on PYTHONPATH (relative to whichever
    # workspace or worktree is being tested), links made in that workspace
    # (``node_modules`` -> the cached one), variables, and read-only mounts.
    path_first: list[str] = Field(default_factory=list)
    import_roots: list[str] = Field(default_factory=list)
    links: dict[str, str] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    mounts: list[str] = Field(default_factory=list)
    # Toolchain build caches every test run keeps, beside the environment and keyed
    # like it (``attach.caches``): variable -> the cache's folder name (GOCACHE -> go-build).
    caches: dict[str, str] = Field(default_factory=dict)
    # Files the project's build generated into its sources and git ignores (a version file...),
    # copied into each workspace and worktree that lacks them (``generated``): workspace path ->
    # the environment's copy.
    generated: dict[str, str] = Field(default_factory=dict)
    # How it was made.
    key: str = ""  # the cache key: manifests' content and toolchain versions
    root: str | None = None  # the cached environment's directory (None: nothing to cache)
    source: Literal["built", "cache", "workspace", "none"] = "none"
    manifests: list[str] = Field(default_factory=list)  # the files the key hashes, relative to the workspace
    commands: list[str] = Field(default_factory=list)  # what the setup ran (or ran when it was built)
    reason: str = ""
    log_path: str | None = None  # the setup's output (None on a cache hit: nothing ran)
    duration_s: float = 0.0
    toolchain: str = ""  # interpreter/toolchain versions the key includes


# What a setup script that fell back to another way writes in the environment's
# folder: its first line says what it used (added to the environment's reason),
# then ``unset NAME`` lines name the variables test runs must not get.
FALLBACK_FILE = "fallback.txt"


class Recipe(BaseModel):
    """How to build one project's environment: the script the setup runs in
    the sandbox (with network), in the environment's own directory, and what
    the result looks like to test runs."""

    ecosystem: Ecosystem
    manifests: list[str]
    toolchain: str
    script: list[str]  # bash lines, run in order with ``set -e`` in the environment's directory
    stage: list[str] = Field(default_factory=list)  # workspace files (relative) copied into ``root/project``
    stage_tree: bool = False  # copy the whole project (less VCS and dependency folders) into ``root/project``
    env: dict[str, str] = Field(default_factory=dict)  # variables for the setup script
    path_first: list[str] = Field(default_factory=list)  # relative to the environment's root
    import_roots: list[str] = Field(default_factory=list)
    links: dict[str, str] = Field(default_factory=dict)  # workspace name -> path relative to the root
    # Host folders the setup may read (read-only), when they exist: packages installed on this
    # machine that it falls back on when the registry cannot be reached.
    host_ro: list[str] = Field(default_factory=list)
    reason: str = ""
