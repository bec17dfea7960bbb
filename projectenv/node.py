"""A Node project's environment: its ``node_modules``, installed from its
lockfile (``npm ci``, ``pnpm install --frozen-lockfile``, ``yarn install
--immutable``; ``npm install`` without one) into the environment's own
directory and linked into each workspace being tested.

Only the manifest and the lockfile are staged, with the project's own
lifecycle scripts taken out (a ``prepare`` that builds the project needs its
sources; the dependencies' install scripts still run, in the sandbox).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import cache
from pathlib import Path

from ..domain.errors import ErrorKind, GreenloopError
from .models import Recipe

LOCKFILES = {"package-lock.json": "npm", "npm-shrinkwrap.json": "npm", "pnpm-lock.yaml": "pnpm", "yarn.lock": "yarn"}


@cache
def _version(tool: str) -> str:
    exe = shutil.which(tool)
    if exe is None:
        return ""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30, check=False)
        return out.stdout.strip()
    except OSError:
        return ""


def lockfile(root: Path) -> str | None:
    return next((name for name in LOCKFILES if (root / name).is_file()), None)


def _yarn_berry(root: Path) -> bool:
    return (root / ".yarnrc.yml").is_file() or "__metadata:" in (root / "yarn.lock").read_text(errors="replace")[:2000]


def install_command(root: Path) -> tuple[str, str]:
    """(the install command, the package manager), from the lockfile."""
    lock = lockfile(root)
    manager = LOCKFILES.get(lock or "", "npm")
    if manager != "npm" and not shutil.which(manager):
        raise GreenloopError(f"{lock} needs {manager}, which is not installed here",
                             kind=ErrorKind.SETUP_FAILED, suggestion=f"install {manager}, or give a setup command")
    if lock is None:
        return "npm install --no-audit --no-fund", "npm"
    if manager == "npm":
        return "npm ci --no-audit --no-fund", "npm"
    if manager == "pnpm":
        return "pnpm install --frozen-lockfile", "pnpm"
    return ("yarn install --immutable" if _yarn_berry(root) else "yarn install --frozen-lockfile"), "yarn"


def staged_manifest(root: Path) -> str:
    """``package.json`` without its lifecycle scripts (they belong to the project, not its dependencies)."""
    data = json.loads((root / "package.json").read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data.pop("scripts", None)
    return json.dumps(data, indent=2)


def recipe(root: Path) -> Recipe | None:
    """How to install the project's ``node_modules``; None when it depends on nothing."""
    data = json.loads((root / "package.json").read_text(encoding="utf-8") or "{}")
    if not isinstance(data, dict) or not any(data.get(k) for k in ("dependencies", "devDependencies",
                                                                    "optionalDependencies")):
        return None
    command, manager = install_command(root)
    lock = lockfile(root)
    found = ["package.json"] + ([lock] if lock else [])
    stage = [f for f in (lock, ".npmrc", ".yarnrc.yml", ".yarnrc") if f and (root / f).is_file()]
    toolchain = f"node {_version('node')}; {manager} {_version(manager)}"
    return Recipe(ecosystem="node", manifests=found, toolchain=toolchain,
                  script=[f"cd project && {command}"], stage=stage, path_first=["project/node_modules/.bin"],
                  links={"node_modules": "project/node_modules"},
                  reason=f"node_modules by `{command}`" + (f" from {lock}" if lock else " (no lockfile)"))
