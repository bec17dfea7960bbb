"""Language detection from a project's indicator files.

High-confidence indicators beat medium ones; between equals, the more
specific file wins (a test configuration beats a bare manifest). When two
languages still tie, detection refuses with ``language_detection_failed``
rather than guess: the user names the language instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ..domain.errors import ErrorKind, GreenloopError
from . import npm_scripts

Confidence = Literal["high", "medium"]

# Accepted spellings, mapped to one name per language.
LANGUAGE_ALIASES = {
    "javascript": "javascript", "js": "javascript", "typescript": "typescript", "ts": "typescript",
    "python": "python", "py": "python", "go": "go", "golang": "go", "ruby": "ruby", "rb": "ruby",
    "rust": "rust", "rs": "rust", "java": "java", "php": "php", "cpp": "cpp", "c++": "cpp", "c": "cpp",
}
CHECKED_FILES = [
    "package.json", "tsconfig.json", "pyproject.toml", "pytest.ini", "setup.py", "requirements.txt",
    "setup.cfg", "go.mod", "go.work", "Gemfile", "*.gemspec", "Cargo.toml", "pom.xml", "build.gradle",
    "build.gradle.kts", "composer.json", "phpunit.xml", "CMakeLists.txt",
]


class Indicator(BaseModel):
    language: str
    file: str
    confidence: Confidence
    # 3: a test configuration, 2: a manifest that says how to test, 1: a bare manifest.
    specificity: int


class LanguageDetection(BaseModel):
    language: str
    confidence: Confidence
    indicators: list[Indicator]
    reason: str


def normalize_language(name: str) -> str:
    """Language names and aliases to one canonical name."""
    try:
        return LANGUAGE_ALIASES[name.strip().lower()]
    except KeyError:
        raise GreenloopError(
            f"unknown language {name!r}; use one of {sorted(set(LANGUAGE_ALIASES.values()))}",
            kind=ErrorKind.VALIDATION_ERROR, language=name,
        ) from None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def indicators(root: Path) -> list[Indicator]:
    """Every indicator file present in ``root``."""
    found: list[Indicator] = []

    def add(lang: str, file: str, conf: Confidence, spec: int) -> None:
        found.append(Indicator(language=lang, file=file, confidence=conf, specificity=spec))

    if (root / "package.json").is_file():
        try:
            pkg = json.loads(_text(root / "package.json"))
        except ValueError:
            pkg = {}
        scripts = pkg.get("scripts") if isinstance(pkg, dict) else None
        has_test = isinstance(scripts, dict) and isinstance(scripts.get("test"), str) \
            and "no test specified" not in scripts["test"]
        # A test runner among the dependencies says how to test, as a test script does.
        has_test = has_test or (isinstance(pkg, dict) and npm_scripts.framework_from_dependencies(pkg) is not None)
        add("javascript", "package.json", "high" if has_test else "medium", 2 if has_test else 1)
    if (root / "tsconfig.json").is_file():
        add("typescript", "tsconfig.json", "high", 2)
    if (root / "pyproject.toml").is_file():
        if re.search(r"^\[tool\.pytest", _text(root / "pyproject.toml"), re.M):
            add("python", "pyproject.toml", "high", 3)
        else:
            add("python", "pyproject.toml", "medium", 1)
    for f, spec in (("pytest.ini", 3), ("setup.py", 2)):
        if (root / f).is_file():
            add("python", f, "high", spec)
    for f in ("requirements.txt", "setup.cfg"):
        if (root / f).is_file():
            add("python", f, "medium", 1)
    if (root / "go.mod").is_file():
        add("go", "go.mod", "high", 2)
    elif (root / "go.work").is_file():
        add("go", "go.work", "high", 2)
    if (root / "Gemfile").is_file():
        if re.search(r"\b(rspec|minitest)\b", _text(root / "Gemfile")):
            add("ruby", "Gemfile", "high", 2)
        else:
            add("ruby", "Gemfile", "medium", 1)
    if (root / ".rspec").is_file():
        add("ruby", ".rspec", "high", 3)
    for spec_file in sorted(root.glob("*.gemspec"))[:1]:
        add("ruby", spec_file.name, "medium", 1)
    if (root / "Cargo.toml").is_file():
        add("rust", "Cargo.toml", "high", 2)
    for f in ("pom.xml", "build.gradle", "build.gradle.kts"):
        if (root / f).is_file():
            add("java", f, "high", 2)
    if (root / "phpunit.xml").is_file() or (root / "phpunit.xml.dist").is_file():
        add("php", "phpunit.xml", "high", 3)
    if (root / "composer.json").is_file():
        add("php", "composer.json", "medium", 1)
    if (root / "CMakeLists.txt").is_file():
        add("cpp", "CMakeLists.txt", "high", 2)
    return found


def detect_language(root: Path, explicit: str | None = None) -> LanguageDetection:
    """The project's language, or a typed error saying why it cannot be told."""
    if explicit:
        lang = normalize_language(explicit)
        return LanguageDetection(language=lang, confidence="high", indicators=[], reason="given explicitly")
    found = indicators(root)
    if not found:
        raise GreenloopError(
            "Cannot detect programming language. Please provide explicit 'language' parameter.",
            kind=ErrorKind.LANGUAGE_DETECTION_FAILED,
            working_directory=str(root), files_checked=CHECKED_FILES, found=[],
        )
    # TypeScript is JavaScript with a compiler: the two indicators agree.
    if {i.language for i in found} == {"javascript", "typescript"}:
        found = [i.model_copy(update={"language": "typescript"}) for i in found]
    rank = {"high": 2, "medium": 1}
    best: dict[str, tuple[int, int]] = {}
    for i in found:
        key = (rank[i.confidence], i.specificity)
        best[i.language] = max(best.get(i.language, key), key)
    ordered = sorted(best.items(), key=lambda kv: kv[1], reverse=True)
    if len(ordered) > 1 and ordered[0][1] == ordered[1][1]:
        tied = [lang for lang, key in ordered if key == ordered[0][1]]
        raise GreenloopError(
            f"Ambiguous project: indicators for {', '.join(tied)} are equally strong. "
            "Please provide explicit 'language' parameter.",
            kind=ErrorKind.LANGUAGE_DETECTION_FAILED,
            working_directory=str(root), files_checked=CHECKED_FILES, found=[i.file for i in found],
        )
    lang = ordered[0][0]
    mine = [i for i in found if i.language == lang]
    conf: Confidence = "high" if any(i.confidence == "high" for i in mine) else "medium"
    return LanguageDetection(
        language=lang, confidence=conf, indicators=found,
        reason=f"{', '.join(i.file for i in mine)} ({conf} confidence)",
    )
