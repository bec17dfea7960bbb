"""Files a project's build writes into its source tree and git ignores: a
version file from hatch-vcs or setuptools-scm (``src/pkg/_version.py``), one
a ``setup.py`` or build hook writes, an extension module built from the
sources. No checkout has them (every clone of such a project lacks them), yet
the tests import the workspace's sources first, so without them every test
module errors at import.

Where they come from: the distribution the setup installed, not a second run
of the generator. The environment's build produced exactly these files (its
wheel's ``RECORD`` lists them), whichever generator wrote them, whether the
build ran in the staged copy or uv took the wheel from its cache, and with
none of the build's dependencies needed again: each workspace, worktree and
batch checkout gets a copy in microseconds. A file the workspace already has,
or one git does not ignore (the project's own, missing on purpose), is never
touched; copies stay out of commits because git ignores them.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

from ..git_command import git


def _installed(folder: Path) -> tuple[Path, list[str]] | None:
    """The project's own distribution in the environment at ``folder`` (the one installed from
    its staged copy, ``folder/project``): its site-packages and the files its RECORD lists."""
    staged = os.path.realpath(folder / "project")
    for direct in (folder / "venv").glob("lib/python*/site-packages/*.dist-info/direct_url.json"):
        try:
            url = urlparse(str(json.loads(direct.read_text()).get("url", "")))
        except (OSError, ValueError, AttributeError):
            continue
        if url.scheme != "file" or os.path.realpath(unquote(url.path)) != staged:
            continue
        try:
            with open(direct.parent / "RECORD", newline="") as f:
                return direct.parent.parent, [row[0] for row in csv.reader(f) if row]
        except OSError:
            return None
    return None


def find(folder: Path, workspace: Path, import_roots: list[str]) -> dict[str, str]:
    """What the build of the environment at ``folder`` generated into the sources that
    ``workspace`` lacks and git ignores there: workspace path -> the installed file."""
    found = _installed(folder)
    if found is None:
        return {}
    site, files = found
    missing: dict[str, str] = {}
    for name in files:
        path = PurePosixPath(name)
        if (path.is_absolute() or ".." in path.parts or len(path.parts) < 2 or "__pycache__" in path.parts
                or path.parts[0].endswith((".dist-info", ".data")) or path.suffix == ".pyc"):
            continue
        for root in import_roots:
            # Only inside a package the workspace has: the build's copy of its own folder.
            if (workspace / root / path.parts[0]).is_dir():
                rel = os.path.normpath(os.path.join(root, name))
                if not os.path.lexists(workspace / rel):
                    missing[rel] = str(site / name)
                break
    if not missing:
        return {}
    ignored = set(git(workspace, "check-ignore", "--", *missing, check=False).splitlines())
    return {rel: src for rel, src in missing.items() if rel in ignored}


def place(generated: dict[str, str], workspace: Path) -> None:
    """Copy each generated file the workspace (or worktree) lacks into it."""
    for rel, src in generated.items():
        dst = workspace / rel
        if not os.path.lexists(dst) and dst.parent.is_dir() and os.path.isfile(src):
            shutil.copy2(src, dst)


MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")


def explain(errors: list[str], workspace: Path, import_roots: list[str]) -> str | None:
    """Why tests that errored with ``errors`` (their messages and details) could not import:
    a module of the workspace's packages missing from this checkout because git ignores it
    (the project's build generates it, and the environment's build did not provide it); None
    when that is not the reason."""
    seen: dict[str, int] = {}
    for text in errors:
        for module in dict.fromkeys(MISSING_MODULE.findall(text)):
            seen[module] = seen.get(module, 0) + 1
    for module, count in sorted(seen.items(), key=lambda mc: -mc[1]):
        *package, name = module.split(".")
        if not package:
            continue
        for root in import_roots:
            folder = workspace / root / Path(*package)
            rel = os.path.normpath(os.path.join(root, *package, f"{name}.py"))
            if folder.is_dir() and not (workspace / rel).exists() and _ignored(workspace, rel):
                return (f"{count} test(s) cannot import {module}: {rel} is not in this checkout (git ignores it: "
                        "the project's build generates it) and the environment's build did not make it; give a "
                        "setup command in greenloop.toml that generates it (e.g. the project's build step)")
    return None


def _ignored(workspace: Path, rel: str) -> bool:
    return rel in git(workspace, "check-ignore", "--", rel, check=False).splitlines()
