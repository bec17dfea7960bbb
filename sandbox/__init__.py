"""Sandboxed execution of untrusted commands.

``run`` is the one entry point; every backend module (``sandbox.docker``,
``sandbox.bwrap``, ``sandbox.local``) exposes the same two functions,
``available() -> (ok, why)`` and ``async run(command, workdir, env, limits,
out_dir, heartbeat) -> ExecResult``. Backends:

- ``docker``: a container per run (see ``sandbox.docker``);
- ``bwrap``: bubblewrap namespaces, read-only host, no network, no secrets;
- ``local``: a process group with rlimits, for development only; it does not
  isolate (``sandbox.local.UNCONTAINED``) and says so in every result;
- ``auto``: docker when an engine answers, else bwrap; it fails closed with
  a permission error when neither works (``local`` runs only when asked for
  by name).
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from ..domain.errors import ErrorKind, GreenloopError
from .environment import is_secret, sandbox_env
from .models import ExecResult, Limits, Mount

BACKENDS = ("docker", "bwrap", "local")

__all__ = ["BACKENDS", "ExecResult", "Limits", "Mount", "backend_module", "choose_backend", "run", "shutdown"]


def backend_module(name: str) -> tuple[ModuleType | None, str]:
    """The backend's module, imported on first use (docker's SDK is heavy
    and optional), or None and why."""
    if name not in BACKENDS:
        raise GreenloopError(f"unknown sandbox backend {name!r} (choose from auto, {', '.join(BACKENDS)})",
                             kind=ErrorKind.VALIDATION_ERROR)
    try:
        return importlib.import_module(f"greenloop.sandbox.{name}"), ""
    except ImportError as exc:
        return None, f"{name} backend not installed ({exc})"


def _probe(name: str) -> tuple[ModuleType | None, str]:
    module, why = backend_module(name)
    if module is None:
        return None, why
    ok, why = module.available()
    return (module if ok else None), why


def choose_backend(name: str) -> tuple[ModuleType, str, str]:
    """(module, backend name, reason) for a requested backend; fails closed:
    ``auto`` never falls back to ``local``."""
    if name == "auto":
        reasons = []
        for candidate in ("docker", "bwrap"):
            module, why = _probe(candidate)
            if module is not None:
                return module, candidate, f"auto: {why}" + (f" (docker: {reasons[0]})" if reasons else "")
            reasons.append(why)
        raise GreenloopError(
            f"no isolating sandbox is available (docker: {reasons[0]}; bwrap: {reasons[1]}); start a Docker "
            "engine or install bubblewrap, or run unisolated with --sandbox local",
            kind=ErrorKind.PERMISSION_ERROR)
    module, why = _probe(name)
    if module is None:
        raise GreenloopError(f"the {name} sandbox is not available here: {why}", kind=ErrorKind.PERMISSION_ERROR)
    return module, name, f"asked for by name; {why}"


async def run(command: str, workdir: Path, env: dict[str, str] | None = None, limits: Limits | None = None, *,
              backend: str = "auto", out_dir: Path,
              heartbeat: Callable[[str], None] = lambda _: None, mounts: Sequence[Mount] = ()) -> ExecResult:
    """Run ``bash -c command`` in ``workdir`` under ``limits`` on a backend.

    ``env`` adds to the sandbox's allow-listed environment
    (``sandbox.environment.sandbox_env``); names that look like secrets are
    dropped, so the worker's credentials never enter. Output streams to
    ``out_dir/stdout.txt`` and ``stderr.txt``; the result keeps a head and a
    tail of each. ``mounts`` shows more host directories at their own paths
    (read-only unless a mount says writable).
    """
    # Probing may take a moment (a docker engine that does not answer): keep the event loop free.
    module, name, reason = await asyncio.to_thread(choose_backend, backend)
    limits = limits or Limits()
    out_dir.mkdir(parents=True, exist_ok=True)
    dropped = sorted(k for k in (env or {}) if is_secret(k))
    result = await module.run(command, Path(workdir), sandbox_env("/tmp", env), limits, out_dir, heartbeat,
                              **({"mounts": list(mounts)} if mounts else {}))
    result.backend, result.backend_reason = name, reason
    if dropped:
        result.warnings.append("kept out of the sandbox (named like secrets): " + ", ".join(dropped))
    return result


def shutdown() -> None:
    """Release what backends keep between runs (docker's warm containers).
    Processes that leave through ``os._exit`` skip atexit, so they call this."""
    if "greenloop.sandbox.docker" in sys.modules:  # never import the docker SDK just to find nothing to release
        sys.modules["greenloop.sandbox.docker"].shutdown()
