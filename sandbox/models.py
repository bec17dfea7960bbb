"""What every sandbox backend takes and gives back.

``Limits`` is what a run may use; ``ExecResult`` is what it did. Both cross
activity boundaries, so they are pydantic models; output itself stays in
files (``stdout_path``/``stderr_path``) and only a bounded head and tail
travel in memory.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

MAX_OUTPUT_BYTES = 50 * 1024 * 1024
EXCERPT_BYTES = 8 * 1024
TRUNCATION_MARKER = "\n...[greenloop: output truncated]...\n"


class Limits(BaseModel):
    """Resource bounds for one run. Every backend enforces what it claims to."""

    timeout_s: float = Field(default=600, gt=0)
    memory_mb: int = Field(default=4096, ge=16)
    cpus: float = Field(default=2.0, gt=0)
    pids: int = Field(default=512, ge=8)
    output_bytes: int = Field(default=MAX_OUTPUT_BYTES, ge=1024)
    tmpfs_mb: int = Field(default=1024, ge=1)
    network: bool = False  # loopback always works; this opens the outside world
    # How far the workspace's filesystem may fill during the run (also the
    # largest file a command may write); the run is killed past it.
    disk_mb: int = Field(default=10_240, ge=1)


class Mount(BaseModel):
    """A host directory shown inside the sandbox at the same path, beside the
    workspace: read-only unless ``writable`` (a project environment that a
    setup builds, then every test run reads)."""

    path: str
    writable: bool = False


class SandboxSettings(Limits):
    """What a run asks of the sandbox: a backend and the limits of every command it runs."""

    backend: Literal["auto", "docker", "bwrap", "local"] = "auto"
    # The setup phase (the project's environment) may reach package registries; test runs never do
    # unless ``network`` says so.
    setup_network: bool = True
    setup_timeout_s: int = Field(default=1800, ge=1)
    # The docker backend's image (a local one: no registry is reached); None: Greenloop's own,
    # which shows the host's toolchains. Other backends run on the host's root and ignore it.
    image: str | None = None


class ExecResult(BaseModel):
    """One finished command: how it ended and where its output is."""

    command: str
    backend: str  # the backend that ran it: docker | bwrap | local
    backend_reason: str  # why that backend (auto's choice, or asked for by name)
    exit_code: int | None  # None when killed by the time limit
    stdout_path: str
    stderr_path: str
    stdout_head: str = ""
    stdout_tail: str = ""
    stderr_head: str = ""
    stderr_tail: str = ""
    truncated: bool = False  # output passed ``Limits.output_bytes``; the files end with the marker
    duration_s: float = 0.0
    timed_out: bool = False
    killed_by_signal: int | None = None
    out_of_memory: bool = False
    peak_memory_mb: float | None = None  # where the backend can tell
    cpu_s: float | None = None
    peak_pids: int | None = None  # most processes alive at once, where the backend can tell
    disk_exceeded: bool = False  # killed for filling the workspace's filesystem past ``Limits.disk_mb``
    warnings: list[str] = Field(default_factory=list)
