"""Framework detection when none is given (in priority order): the command
first, then the project's files, then patterns in the output. The reason is
recorded in the report so a wrong guess is easy to see and override."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from . import npm_scripts, registry, setuptools_suite
from .command import PACKAGE_RUNNER, SEGMENT_SPLIT
from .run_output import RunOutput


class Detection(BaseModel):
    framework: str
    reason: str
    confidence: Literal["high", "medium", "low"]


def _modules():
    for name in registry.available():
        if name != "generic":
            yield name, registry.module(name)


def _package_json(root: Path | None) -> dict:
    return npm_scripts.package_json(root) if root is not None else {}


def from_command(command: str, project_root: Path | None = None, _depth: int = 0) -> Detection | None:
    """Match the command's shell segments, last segment first (``build && test``)."""
    segments = [s for s in SEGMENT_SPLIT.split(command.strip()) if s]
    pkg = _package_json(project_root)
    for seg in reversed(segments):
        if pkg and (runner := npm_scripts.runner_in_segment(seg, npm_scripts.dependencies(pkg))) \
                and runner[0] in registry.MODULES:
            # A JavaScript runner, told apart by the project's dependencies
            # (``node test/index.js`` is tape in a tape project, not node:test).
            return Detection(framework=runner[0], reason=f"command {seg!r} runs {runner[0]}", confidence="high")
        for name, mod in _modules():
            if any(p.search(seg) for p in getattr(mod, "COMMAND_RE", ())):
                return Detection(framework=name, reason=f"command {seg!r} runs {name}", confidence="high")
        m = PACKAGE_RUNNER.match(seg)
        if m and _depth < 3:
            scripts = _package_json(project_root).get("scripts") or {}
            script = scripts.get(m.group(1)) if isinstance(scripts, dict) else None
            if isinstance(script, str):
                inner = from_command(script, project_root, _depth + 1)
                if inner:
                    return Detection(
                        framework=inner.framework,
                        reason=f"package.json script {m.group(1)!r} is {script!r}: {inner.reason}",
                        confidence=inner.confidence,
                    )
    return None


def _has_section(path: Path, pattern: str) -> bool:
    try:
        return re.search(pattern, path.read_text(encoding="utf-8", errors="replace"), re.M) is not None
    except OSError:
        return False


def from_project(root: Path | None) -> Detection | None:
    """Indicator files of the project (per framework)."""
    if root is None or not root.is_dir():
        return None

    def hit(name: str, why: str, conf: Literal["high", "medium", "low"] = "high") -> Detection:
        return Detection(framework=name, reason=f"project has {why}", confidence=conf)

    js = npm_scripts.plan_js_tests(root)
    if js is not None and js.framework in registry.MODULES:
        return Detection(framework=js.framework, reason=js.reason, confidence="high")
    if (root / "pytest.ini").exists() or (root / "conftest.py").exists():
        return hit("pytest", "pytest.ini/conftest.py")
    if (root / "pyproject.toml").exists() and _has_section(root / "pyproject.toml", r"^\[tool\.pytest"):
        return hit("pytest", "[tool.pytest] in pyproject.toml")
    for cfg, sec in (("setup.cfg", r"^\[tool:pytest\]"), ("tox.ini", r"^\[pytest\]")):
        if (root / cfg).exists() and _has_section(root / cfg, sec):
            return hit("pytest", f"a pytest section in {cfg}")
    if (declared := setuptools_suite.declared(root)) is not None:
        return hit("unittest", f"test_suite {declared.name!r} declared in {declared.source}")
    if (root / "go.mod").exists() or (root / "go.work").exists():
        return hit("go", "go.mod" if (root / "go.mod").exists() else "go.work")
    if (root / "Cargo.toml").exists():
        return hit("cargo-test", "Cargo.toml")
    if (root / "pom.xml").exists():
        return hit("maven-surefire", "pom.xml")
    if (root / ".rspec").exists() or (root / "spec").is_dir():
        return hit("rspec", ".rspec or spec/")
    if (root / "phpunit.xml").exists() or (root / "phpunit.xml.dist").exists():
        return hit("phpunit", "phpunit.xml")
    if (root / "CMakeLists.txt").exists():
        return hit("ctest", "CMakeLists.txt")
    if any(root.glob("test*/**/test_*.py")) or any(root.glob("test_*.py")):
        return hit("pytest", "Python test files test_*.py", "medium")
    return None


def from_output(run: RunOutput) -> Detection | None:
    """Count each framework's signature patterns in the head of the output."""
    head = run.head("stdout") + "\n" + run.head("stderr")
    best: tuple[int, str] | None = None
    for name, mod in _modules():
        score = sum(1 for p in getattr(mod, "OUTPUT_RE", ()) if p.search(head))
        if score and (best is None or score > best[0]):
            best = (score, name)
    if best is None:
        return None
    return Detection(
        framework=best[1], reason=f"output matches {best[0]} {best[1]} pattern(s)", confidence="medium"
    )


def detect(run: RunOutput) -> Detection:
    """The framework that most likely produced ``run``; ``generic`` when unknown."""
    return (
        from_command(run.command, run.sources_root)
        or from_project(run.sources_root)
        or from_output(run)
        or Detection(framework="generic", reason="no framework recognised", confidence="low")
    )

