"""A Go workspace (``go.work``): the module folders its ``use`` directives
name, and the package patterns that cover them (``go test ./...`` at a
workspace root that is no module itself matches nothing before Go 1.20)."""

from __future__ import annotations

import re
from pathlib import Path

_USE_BLOCK = re.compile(r"^\s*use\s*\(\s*\n(.*?)^\s*\)", re.M | re.S)
_USE_LINE = re.compile(r"^\s*use\s+(\S+)", re.M)


def members(root: Path) -> list[str]:
    """The workspace's module folders, relative to ``root`` (``.`` for the root's own module), in
    ``go.work``'s order; [] when there is no ``go.work``."""
    try:
        text = (root / "go.work").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    text = re.sub(r"//.*", "", text)
    found = [line.strip() for block in _USE_BLOCK.findall(text) for line in block.splitlines() if line.strip()]
    found += [m for m in _USE_LINE.findall(text) if m != "("]
    out: list[str] = []
    for path in found:
        rel = path.strip('"').removeprefix("./").rstrip("/") or "."
        if not rel.startswith(("/", "..")) and (root / rel / "go.mod").is_file() and rel not in out:
            out.append(rel)
    return out


def patterns(root: Path) -> str:
    """``./...``, or one pattern per workspace module when ``go.work`` names them."""
    found = members(root)
    return " ".join("./..." if m == "." else f"./{m}/..." for m in found) if found else "./..."
