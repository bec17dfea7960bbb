"""A project's ``package.json``, read: what the JavaScript parsers and script following look up in it."""

from __future__ import annotations

import json
from pathlib import Path


def package_json(root: Path) -> dict:
    """The parsed ``package.json`` of ``root``, ``{}`` when missing or bad."""
    try:
        data = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def dependencies(pkg: dict) -> set[str]:
    out: set[str] = set()
    for key in ("devDependencies", "dependencies", "peerDependencies", "optionalDependencies"):
        deps = pkg.get(key)
        if isinstance(deps, dict):
            out.update(str(k) for k in deps)
    return out
