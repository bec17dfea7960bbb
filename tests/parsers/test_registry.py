"""The framework table: every row has a parser that satisfies the Parser
protocol, names resolve through aliases, unknown names fail typed, and the
C++ parsers import without a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from greenloop.domain.errors import UnknownFrameworkError
from greenloop.parsers import registry
from greenloop.parsers.registry import FRAMEWORKS, Format, Parser


@pytest.mark.parametrize("row", FRAMEWORKS, ids=[f.name for f in FRAMEWORKS])
def test_every_row_has_a_parser_of_its_name(row: registry.Framework) -> None:
    parser = registry.parser(row.name)
    assert isinstance(parser, Parser)
    assert parser.FRAMEWORK == row.name
    assert row.formats and len(set(row.formats)) == len(row.formats)
    assert all(isinstance(f, Format) for f in row.formats)
    for alias in row.aliases:
        assert registry.canonical(alias.upper()) == row.name


def test_unknown_framework_is_a_typed_error() -> None:
    with pytest.raises(UnknownFrameworkError) as err:
        registry.canonical("nunit")
    assert "pytest" in str(err.value)


def test_names_and_aliases_are_unique() -> None:
    names = [f.name for f in FRAMEWORKS] + [a for f in FRAMEWORKS for a in f.aliases]
    assert len(names) == len(set(names))


def _imports(path: Path) -> set[str]:
    """Parser modules a module imports anywhere (function-level imports too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module in ("greenloop.parsers", "greenloop.parsers.source"):
                prefix = node.module.removeprefix("greenloop.parsers").lstrip(".")
                out.update(f"{prefix}.{a.name}".lstrip(".") for a in node.names)
            elif node.module.startswith("greenloop.parsers."):
                out.add(node.module.removeprefix("greenloop.parsers."))
    return out


def test_parser_modules_import_each_other_without_a_cycle() -> None:
    pkg = Path(registry.__file__).parent
    graph = {".".join(p.relative_to(pkg).with_suffix("").parts): _imports(p) for p in pkg.rglob("*.py")
             if p.stem != "__init__"}
    assert {"source.js", "source.python", "command", "ctest", "googletest"} <= graph.keys()
    # the registry imports every parser on demand, by design; the rest must form a DAG
    graph["registry"] = set()
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"import cycle: {' -> '.join((*path, name))}"
        if name in done or name not in graph:
            return
        for dep in graph[name] - {name}:
            visit(dep, (*path, name))
        done.add(name)

    for name in graph:
        visit(name, ())


def test_the_table_is_cheap_to_import() -> None:
    """Workflow code imports the table through the runner's plan: no parser module comes with it."""
    code = ("import sys; import greenloop.parsers.registry; "
            "print(sorted(m for m in sys.modules if m.startswith('greenloop.parsers.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout
    assert "greenloop.parsers.pytest" not in loaded and "greenloop.parsers.mocha" not in loaded


def test_every_parsers_subpackage_ships_in_the_wheel() -> None:
    """pyproject lists packages one by one: a parsers subpackage missing there
    imports from a checkout but not from the installed wheel."""
    import tomllib

    pkg = Path(registry.__file__).parent
    listed = set(tomllib.loads((pkg.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    subpackages = {"greenloop." + ".".join(p.parent.relative_to(pkg.parent).parts) for p in pkg.rglob("__init__.py")}
    assert "greenloop.parsers.source" in subpackages
    assert subpackages <= listed, sorted(subpackages - listed)


def _package_imports(path: Path) -> set[str]:
    """The greenloop subpackages a module imports (relative imports resolved)."""
    pkg = Path(registry.__file__).parent.parent
    here = path.relative_to(pkg).parent.parts
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[:len(here) - node.level + 1] if node.level > 1 else here
            parts = (*base, *(node.module or "").split("."))
            out.add(next((p for p in parts if p), ""))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("greenloop."):
            out.add(node.module.split(".")[1])
    return out


@pytest.mark.parametrize("layer", ["parsers", "sandbox"])
def test_the_lower_layers_do_not_import_the_runner(layer: str) -> None:
    """parsers/ and sandbox/ are below runner/: the runner calls the framework modules, never the other way."""
    folder = Path(registry.__file__).parent.parent / layer
    importers = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.py") if "runner" in _package_imports(p))
    assert importers == []


def test_selection_and_crash_resume_name_no_framework() -> None:
    """What a framework does is its module's: runner/select.py and runner/crash.py branch on no framework name."""
    runner = Path(registry.__file__).parent.parent / "runner"
    names = ({f.name for f in FRAMEWORKS} | {a for f in FRAMEWORKS for a in f.aliases}) - {"generic"}
    for module in ("select.py", "crash.py"):
        literals = {n.value for n in ast.walk(ast.parse((runner / module).read_text()))
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert literals & names == set(), module
