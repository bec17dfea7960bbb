"""Greenloop's layers point one way: every module imports only its own layer or those below it,
and no modules import each other in a circle.

The order, bottom to top (``LAYERS``):

    domain, git_command, settings, telemetry, parsers, sandbox, projectenv, runner, workspace,
    reports, analysis, llm, server, run_request, run_settings, project_config, activities,
    workflows, worker, cli

Why: each layer is the machinery the ones above it drive. Shared types and one-purpose helpers
at the bottom; reading test output, then running it isolated (sandbox), in the project's own
environment (projectenv), as a test run (runner), on the run's working copy (workspace); the
run's record and its reports (reports: the finalize activity writes them, the workflows build
the summary); failure analysis and the LLM; the Temporal client; the run's request, the table of its
settings and the repository's greenloop.toml that fills it; the activities (all I/O),
the workflows that orchestrate them, and the worker and the CLI that host and start them.

Every module of the installed package (pyproject's package list) is parsed with ``ast``;
relative and ``greenloop.`` imports are resolved, wherever they are written (inside functions
and under ``TYPE_CHECKING`` too).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS = ["domain", "git_command", "settings", "telemetry", "parsers", "sandbox", "projectenv", "runner",
          "workspace", "reports", "analysis", "llm", "server", "run_request", "run_settings", "project_config",
          "activities", "workflows", "worker", "cli"]

KNOWN_CYCLES: list[list[str]] = []  # none: keep it so


CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
PACKAGE_ROOT = ROOT / CONFIG["package-dir"]["greenloop"]
NOT_PACKAGE = {"tests", "bench", "samples", "scripts", "docs", "deploy"}  # in the checkout, not installed


def package_modules() -> dict[str, Path]:
    """Module name -> file, for every package pyproject installs."""
    root = PACKAGE_ROOT
    modules = {}
    for package in CONFIG["packages"]:
        folder = root.joinpath(*package.split(".")[1:])
        for path in sorted(folder.glob("*.py")):
            parts = package.split(".") + ([] if path.stem == "__init__" else [path.stem])
            modules[".".join(parts)] = path
    return modules


MODULES = package_modules()


def imports_of(name: str, path: Path) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its file."""
    package = name.split(".") if path.stem == "__init__" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                module = node.module or ""
            # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name``, mod.
            candidates = [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names]
        else:
            continue
        for target in candidates:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


EDGES = {name: imports_of(name, path) for name, path in MODULES.items()}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "greenloop"


def upward() -> set[tuple[str, str]]:
    return {(a, b) for a, targets in EDGES.items() for b in targets
            if LAYERS.index(layer(b)) > LAYERS.index(layer(a))}


def cycles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(EDGES[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(EDGES):
        if module not in index:
            visit(module)
    return found


def test_every_module_is_in_a_layer():
    assert len(MODULES) > 100  # the whole package was found
    unplaced = sorted({layer(m) for m in MODULES} - set(LAYERS))
    assert not unplaced, f"top-level packages or modules missing from LAYERS: {unplaced}"


def subpackages() -> set[str]:
    """The package's folders: each one's __init__.py reached through folders that have one too
    (so build/ or a virtualenv never counts), outside the checkout-only folders."""
    found = set()
    for init in PACKAGE_ROOT.rglob("__init__.py"):
        parts = init.parent.relative_to(PACKAGE_ROOT).parts
        if parts and parts[0] not in NOT_PACKAGE and all(
                (PACKAGE_ROOT.joinpath(*parts[:n]) / "__init__.py").is_file() for n in range(1, len(parts))):
            found.add(".".join(("greenloop", *parts)))
    return found


def test_every_package_folder_is_installed_and_checked():
    folders = subpackages()
    assert "greenloop.parsers.source" in folders
    missing = sorted(folders - set(CONFIG["packages"]))
    assert not missing, f"packages missing from pyproject's package list (neither installed nor checked): {missing}"


def test_no_import_points_upward():
    wrong = sorted(upward())
    assert not wrong, "imports against the layer order (LAYERS, bottom to top):\n" + "\n".join(
        f"  {a} ({layer(a)}) imports {b} ({layer(b)})" for a, b in wrong)


def test_known_cycles_still_exist():
    gone = [group for group in KNOWN_CYCLES if group not in cycles()]
    assert not gone, f"no longer a circle: remove from KNOWN_CYCLES: {gone}"


def test_no_import_cycle_between_modules():
    found = [group for group in cycles() if group not in KNOWN_CYCLES]
    assert not found, "modules that import each other in a circle:\n" + "\n".join(
        "  " + ", ".join(group) + "\n    edges: " + "; ".join(
            f"{a} -> {b}" for a in group for b in sorted(EDGES[a]) if b in group) for group in found)


@pytest.mark.parametrize("source, expected", [
    ("from ..workflows.models import FixRequest", "greenloop.workflows.models"),
    ("from .. import telemetry", "greenloop.telemetry"),
    ("import greenloop.runner.plan", "greenloop.runner.plan"),
    ("def f():\n    from ..workflows import search\n", "greenloop.workflows.search"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..reports.record import RunSummary\n",
     "greenloop.reports.record"),
])
def test_imports_are_resolved_wherever_written(tmp_path, source, expected):
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert expected in imports_of("greenloop.activities.probe", path)
