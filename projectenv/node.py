"""A Node project's environment: its ``node_modules``, installed from its
lockfile (``npm ci``, ``pnpm install --frozen-lockfile``, ``yarn install
--immutable``; ``npm install`` without one) into the environment's own
directory and linked into each workspace being tested.

Only the manifests (a workspace's root and every member's ``package.json``)
and the lockfile are staged (and a workspace's members, for the dependencies
that require one by name), with the project's own lifecycle scripts taken
out (a ``prepare`` that builds the project needs its
sources; the dependencies' install scripts still run, in the sandbox).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import cache
from pathlib import Path

from ..domain.errors import ErrorKind, GreenloopError
from ..parsers import js_workspaces
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


def staged_manifest(folder: Path) -> str:
    """A ``package.json`` (the root's or a member's) without its lifecycle scripts (they belong to the
    project, not its dependencies)."""
    data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data.pop("scripts", None)
    return json.dumps(data, indent=2)


DEPENDENCY_KEYS = ("dependencies", "devDependencies", "optionalDependencies")


def recipe(root: Path) -> Recipe | None:
    """How to install the project's ``node_modules`` (a workspace's: every member's
    dependencies and the links to the members); None when it depends on nothing."""
    data = json.loads((root / "package.json").read_text(encoding="utf-8") or "{}")
    found_members = js_workspaces.members(root)
    packages = [data, *(m.pkg for m in found_members)]
    if not found_members and not any(isinstance(p, dict) and any(p.get(k) for k in DEPENDENCY_KEYS)
                                     for p in packages):
        return None
    command, manager = install_command(root)
    lock = lockfile(root)
    found = ["package.json", *(f"{m.path}/package.json" for m in found_members)] + ([lock] if lock else [])
    stage = [f for f in (lock, ".npmrc", ".yarnrc.yml", ".yarnrc", "pnpm-workspace.yaml") if f and (root / f).is_file()]
    # Each member whole, too: a dependency that requires a member by name (tape requires minimist)
    # resolves it from inside the environment, where a manifest alone would be no module. That copy
    # is the one of the setup's time (the key is the manifests'); the tests get the workspace's own.
    stage += [m.path for m in found_members]
    toolchain = f"node {_version('node')}; {manager} {_version(manager)}"
    # A member's own node_modules (what could not be hoisted) is linked where it would be;
    # test runs skip those the install did not make (``attach.link``).
    links = {"node_modules": "project/node_modules",
             **{f"{m.path}/node_modules": f"project/{m.path}/node_modules" for m in found_members}}
    what = f"node_modules by `{command}`" + (f" from {lock}" if lock else " (no lockfile)")
    if found_members:
        what += f", for the workspace's {len(found_members)} members ({', '.join(m.path for m in found_members)})"
    return Recipe(ecosystem="node", manifests=found, toolchain=toolchain,
                  script=[f"cd project && {command}"], stage=stage, path_first=["project/node_modules/.bin"],
                  links=links, reason=what)
