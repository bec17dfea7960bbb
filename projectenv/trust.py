"""Whether a user's own environment in the workspace (``.venv``,
``node_modules``) can be used as it is. Only what is provably
self-contained is: nothing in it may point outside itself (an editable
install records the checkout it came from — under ``--sandbox local`` the
tests would import that checkout's unfixed code), and it must match what
the project asks for. Anything else is rebuilt by the setup."""

from __future__ import annotations

import configparser
import json
import os
import sys
from pathlib import Path

VENV_NAMES = (".venv", "venv")
# Interpreter homes every sandbox shows (a venv's base must be visible inside).
VISIBLE_HOMES = ("/usr/", "/opt/", os.path.realpath(sys.base_prefix) + "/")


def _inside(path: str, root: Path) -> bool:
    real = os.path.realpath(path)
    return real == str(root) or real.startswith(str(root) + os.sep)


def venv_problem(venv: Path, framework: str) -> str | None:
    """Why the virtualenv at ``venv`` cannot be reused as it is (None: it can)."""
    cfg = venv / "pyvenv.cfg"
    parser = configparser.ConfigParser()
    try:
        parser.read_string("[venv]\n" + cfg.read_text(encoding="utf-8", errors="replace"))
    except (OSError, configparser.Error) as exc:
        return f"its pyvenv.cfg cannot be read ({exc})"
    conf = parser["venv"]
    if conf.get("include-system-site-packages", "false").strip().lower() == "true":
        return "it includes the system's site-packages"
    home = conf.get("home", "").strip()
    if not home or not os.path.realpath(home).startswith(VISIBLE_HOMES):
        return f"its interpreter ({home or 'unknown'}) is not a system one every sandbox shows"
    sites = list(venv.glob("lib/python3*/site-packages"))
    if not sites:
        return "it has no site-packages"
    root = venv.resolve()
    for site in sites:
        for entry in site.iterdir():
            name = entry.name
            if name.startswith("__editable__") or (name.endswith(".egg-link")):
                return f"it holds an editable install ({name}) that points outside it"
            if name.endswith(".pth"):
                for line in entry.read_text(encoding="utf-8", errors="replace").splitlines():
                    line = line.strip()
                    if line.startswith("/") and not _inside(line, root):
                        return f"{name} puts {line} on the path"
            if name.endswith(".dist-info") and (entry / "direct_url.json").is_file():
                try:
                    url = json.loads((entry / "direct_url.json").read_text())
                except ValueError:
                    continue
                if url.get("dir_info", {}).get("editable"):
                    return f"{name} is an editable install of {url.get('url')}"
        if framework == "pytest" and not (site / "pytest").is_dir() and not (site / "_pytest").is_dir():
            return "it has no pytest"
    return None


def workspace_venv(workspace: Path, framework: str) -> tuple[Path | None, str]:
    """The workspace's own virtualenv when it can be reused, and what was found either way."""
    for name in VENV_NAMES:
        venv = workspace / name
        if (venv / "pyvenv.cfg").is_file():
            problem = venv_problem(venv, framework)
            if problem is None:
                return venv, f"reused the workspace's own {name}: self-contained"
            return None, f"the workspace's own {name} was not reused: {problem}"
    return None, ""


def node_modules_problem(workspace: Path) -> str | None:
    """Why the workspace's ``node_modules`` cannot be reused (None: it can): it
    must have been installed from the project's ``package-lock.json`` exactly
    (npm's hidden lockfile lists the same packages) and hold no link out of it."""
    modules = workspace / "node_modules"
    lock = workspace / "package-lock.json"
    hidden = modules / ".package-lock.json"
    if not lock.is_file() or not hidden.is_file():
        return "it cannot be matched with a package-lock.json"
    try:
        want = {k: v.get("version") for k, v in json.loads(lock.read_text()).get("packages", {}).items() if k}
        have = {k: v.get("version") for k, v in json.loads(hidden.read_text()).get("packages", {}).items() if k}
    except (ValueError, AttributeError):
        return "its lockfiles cannot be read"
    if want != have:
        return "it does not match package-lock.json"
    root = modules.resolve()
    for top, dirs, files in os.walk(modules):
        for name in (*dirs, *files):
            p = os.path.join(top, name)
            if os.path.islink(p) and not _inside(p, root):
                return f"{os.path.relpath(p, workspace)} links outside it"
    return None
