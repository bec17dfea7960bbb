"""Which parser handles which framework.

Framework names are the corpus folder names (``pytest``, ``cargo-test``...).
Each parser module exposes ``FRAMEWORK``, ``parse(run) -> TestReport``,
``COMMAND_RE`` (how its command looks) and ``OUTPUT_RE`` (lines only its
output has), which detection uses.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from greenloop.domain.errors import UnknownFrameworkError

# Order matters only to break ties in detection: more specific first.
MODULES: dict[str, str] = {
    "pytest": "greenloop.parsers.pytest",
    "unittest": "greenloop.parsers.unittest",
    "go": "greenloop.parsers.go",
    "jest": "greenloop.parsers.jest",
    "vitest": "greenloop.parsers.vitest",
    "mocha": "greenloop.parsers.mocha",
    "tape": "greenloop.parsers.tape",
    "node-tap": "greenloop.parsers.node_tap",
    "ava": "greenloop.parsers.ava",
    "node-test": "greenloop.parsers.node_test",
    "cargo-test": "greenloop.parsers.cargo",
    "junit-console": "greenloop.parsers.junit_console",
    "maven-surefire": "greenloop.parsers.surefire",
    "rspec": "greenloop.parsers.rspec",
    "phpunit": "greenloop.parsers.phpunit",
    "googletest": "greenloop.parsers.googletest",
    "ctest": "greenloop.parsers.ctest",
    "generic": "greenloop.parsers.generic",
}

ALIASES: dict[str, str] = {
    "py.test": "pytest",
    "python-unittest": "unittest",
    "golang": "go",
    "go-test": "go",
    "node": "node-test",
    "node:test": "node-test",
    "cargo": "cargo-test",
    "rust": "cargo-test",
    "libtest": "cargo-test",
    "junit": "junit-console",
    "junit5": "junit-console",
    "maven": "maven-surefire",
    "mvn": "maven-surefire",
    "surefire": "maven-surefire",
    "gtest": "googletest",
    "cmake": "ctest",
    "tap": "generic",
    "nodetap": "node-tap",
    "node_tap": "node-tap",
    "xunit": "generic",
}


def canonical(name: str) -> str:
    """The canonical framework name for ``name`` or an alias of it."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in MODULES:
        known = ", ".join(sorted(MODULES))
        raise UnknownFrameworkError(
            f"unknown framework {name!r}; known frameworks: {known}", framework=name, known=sorted(MODULES)
        )
    return key


def module(name: str) -> ModuleType:
    """The parser module for a framework (canonical name or alias)."""
    return importlib.import_module(MODULES[canonical(name)])


def available() -> list[str]:
    """Frameworks whose parser module is importable."""
    out = []
    for name, mod in MODULES.items():
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise
            continue
        out.append(name)
    return out
