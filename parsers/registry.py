"""Which parser handles which framework: one table.

Every framework parser is a module that satisfies :class:`Parser` (see
``parsers/README.md`` for the recipe): ``parse`` reads a run's output,
``locate`` says where the tests it named are defined (the normalizer asks it
for every result the output left without a file or a line). The same module
says how its tests are run: selection of one test, report flags, crash resume
and npm-script following are optional members with one default each
(``plugin.py``), which ``runner/`` reaches through ``plugin.plugin(name)``. The table below says, per framework,
its canonical name (the corpus folder name), the names people also use for
it, its language (whose source indexer finds file and line) and the output
formats its parser reads. Detection reads each parser's ``COMMAND_RE`` and
``OUTPUT_RE``; ties go to the row listed first, so more specific rows come
first.

The parser modules are imported on first use, not when this table is:
workflow code reaches the table through the runner's plan and must stay
cheap to import.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from ..domain.errors import UnknownFrameworkError
from .locate import Location, SourceIndex
from .models import TestReport, TestResult
from .run_output import RunOutput


@runtime_checkable
class Parser(Protocol):
    """What a framework parser provides (a module with these names). The
    members that run its tests (``select``, ``REPORT_OPTIONS``,
    ``rerun_command``, ``RUNNER_BINS``...) are optional: ``plugin.py`` lists
    them with the default a module without them gets."""

    FRAMEWORK: str
    # How the framework's command looks (``npx jest``, ``go test``): detection.
    COMMAND_RE: Sequence[re.Pattern[str]]
    # Lines only this framework's output has: detection when the command says nothing.
    OUTPUT_RE: Sequence[re.Pattern[str]]

    def parse(self, run: RunOutput) -> TestReport:
        """One finished run -> a report; never raises on bad output (warnings say what was odd)."""
        ...

    def locate(self, run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
        """Where ``tests`` are defined, by id: the framework's way from a test
        id (and the ``suite``/``file`` the output gave) to its definition,
        read from the project's sources (``sources``, rooted where the run
        ran) through the language's indexer in ``source/``; ``run`` is there
        for what the command says about the sources (build tags, spec
        globs). ``tests`` are the results the output left without a file or
        a line; an id it cannot place is left out (the normalizer then takes
        an id that is a project file as its file)."""
        ...


class Format(StrEnum):
    """Output formats a parser reads (``TestReport.sources`` names the ones a run had)."""

    CONSOLE = "console"          # the runner's own human-readable output
    JUNIT_XML = "junit-xml"      # JUnit/xUnit XML (parsers/junit_xml.py)
    TAP = "tap"                  # Test Anything Protocol (parsers/tap.py)
    JSON = "json"                # one JSON report document (Jest, Vitest, Mocha, RSpec, gtest, pytest-json-report)
    JSON_STREAM = "json-stream"  # one JSON event a line (go test -json, libtest --format json, Mocha json-stream)


@dataclass(frozen=True)
class Framework:
    """One row of the table."""

    name: str
    language: str
    formats: tuple[Format, ...]
    aliases: tuple[str, ...] = ()


C, X, T, J, S = Format.CONSOLE, Format.JUNIT_XML, Format.TAP, Format.JSON, Format.JSON_STREAM

# Order matters only to break ties in detection: more specific first.
FRAMEWORKS: tuple[Framework, ...] = (
    Framework("pytest", "python", (C, X, J), ("py.test",)),
    Framework("unittest", "python", (C,), ("python-unittest",)),
    Framework("go", "go", (C, S), ("golang", "go-test")),
    Framework("jest", "javascript", (C, X, J)),
    Framework("vitest", "javascript", (C, X, J, T)),
    Framework("mocha", "javascript", (C, X, J, T, S)),
    Framework("tape", "javascript", (T,)),
    Framework("node-tap", "javascript", (C, T), ("nodetap", "node_tap")),
    Framework("ava", "javascript", (C, T)),
    Framework("node-test", "javascript", (C, X, T), ("node", "node:test")),
    Framework("cargo-test", "rust", (C, X, S), ("cargo", "rust", "libtest")),
    Framework("junit-console", "java", (C, X), ("junit", "junit5")),
    Framework("maven-surefire", "java", (C, X), ("maven", "mvn", "surefire")),
    Framework("rspec", "ruby", (C, J)),
    Framework("phpunit", "php", (C, X)),
    Framework("googletest", "c++", (C, X, J), ("gtest",)),
    Framework("ctest", "c++", (C, X), ("cmake",)),
    Framework("generic", "any", (C, X, T), ("tap", "xunit")),
)
BY_NAME: dict[str, Framework] = {f.name: f for f in FRAMEWORKS}
MODULES = BY_NAME  # the name detection reads the known frameworks by
ALIASES: dict[str, str] = {a: f.name for f in FRAMEWORKS for a in f.aliases}


@functools.cache
def _parsers() -> dict[str, Parser]:
    from . import (
        ava,
        cargo,
        ctest,
        generic,
        go,
        googletest,
        jest,
        junit_console,
        mocha,
        node_tap,
        node_test,
        phpunit,
        pytest,
        rspec,
        surefire,
        tape,
        unittest,
        vitest,
    )

    modules: tuple[Parser, ...] = (ava, cargo, ctest, generic, go, googletest, jest, junit_console, mocha, node_tap,
                                   node_test, phpunit, pytest, rspec, surefire, tape, unittest, vitest)
    return {m.FRAMEWORK: m for m in modules}


def canonical(name: str) -> str:
    """The canonical framework name for ``name`` or an alias of it."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in BY_NAME:
        known = sorted(BY_NAME)
        raise UnknownFrameworkError(
            f"unknown framework {name!r}; known frameworks: {', '.join(known)}", framework=name, known=known
        )
    return key


def parser(name: str) -> Parser:
    """The parser of a framework (canonical name or alias)."""
    return _parsers()[canonical(name)]


# The names detection uses.
module = parser


def available() -> list[str]:
    """Every framework of the table, in detection order."""
    return [f.name for f in FRAMEWORKS]
