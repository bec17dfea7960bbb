"""How to build and test a project: the language, the framework, the build
and test commands (defaults and fallbacks), and the machine-
readable reports Greenloop adds where that is safe.

Reports are written under ``.greenloop/reports/`` inside the workspace, by
relative paths, so the same command works on the host, in bubblewrap and in
a container where the workspace is mounted elsewhere.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from pydantic import BaseModel, Field

from ..domain.errors import ErrorKind, GreenloopError
from ..parsers import detect as fw_detect
from ..parsers.registry import canonical
from ..projectenv.models import ProjectEnvironment
from . import js_project
from ..parsers.language import LanguageDetection, detect_language

REPORT_DIR = ".greenloop/reports"

# Language -> framework when nothing more specific is known.
DEFAULT_FRAMEWORK = {
    "python": "pytest", "javascript": "jest", "typescript": "jest", "go": "go", "ruby": "rspec",
    "rust": "cargo-test", "java": "maven-surefire", "php": "phpunit", "cpp": "ctest",
}
FRAMEWORK_LANGUAGE = {
    "pytest": "python", "unittest": "python", "go": "go", "jest": "javascript", "vitest": "javascript",
    "mocha": "javascript", "node-test": "javascript", "tape": "javascript", "node-tap": "javascript",
    "ava": "javascript",
    "cargo-test": "rust", "junit-console": "java",
    "maven-surefire": "java", "rspec": "ruby", "phpunit": "php", "googletest": "cpp", "ctest": "cpp",
}


class SuitePlan(BaseModel):
    """Everything needed to run a project's tests and read the results."""

    language: str
    framework: str
    test_command: str
    build_command: str | None = None
    # Tried in order when the command before them is not found.
    fallback_commands: list[str] = Field(default_factory=list)
    # True when Greenloop chose the command (so it may add reporters and selectors).
    default_command: bool = True
    reason: str = ""
    # The runner's own invocation when ``test_command`` reaches it through a
    # package script (``npm test``): single-test runs build on it.
    runner_command: str | None = None
    # The project's own environment, once the setup phase built it: every
    # test run uses it (None: the worker's tools, as found on PATH).
    environment: ProjectEnvironment | None = None
    # The repository's own command for one test (greenloop.toml), with {id}, {file} and {name}.
    single_test_command: str | None = None


def fill_single_test(template: str, test_id: str, file: str | None) -> str:
    """The configured single-test command for one test: {id}, {file} and {name}
    (the id's last ``::``/space-separated part) filled in, shell-quoted."""
    name = re.split(r"::| > | ", test_id)[-1]
    return template.replace("{id}", shlex.quote(test_id)).replace("{file}", shlex.quote(file or "")).replace(
        "{name}", shlex.quote(name))


def _family(language: str) -> str:
    return "javascript" if language == "typescript" else language


def package_manager(root: Path) -> str:
    """npm, yarn or pnpm, from the lockfile."""
    if (root / "pnpm-lock.yaml").exists():
        return "pnpm"
    if (root / "yarn.lock").exists():
        return "yarn"
    return "npm"


def with_reports(framework: str, command: str) -> str:
    """Add a machine-readable report to a command Greenloop built, keeping the
    console output (parsers cross-check the two)."""
    r = REPORT_DIR
    extra = {
        "pytest": f" --junitxml={r}/pytest.xml",
        "jest": f" --json --outputFile={r}/jest.json --testLocationInResults",
        "vitest": f" --reporter=default --reporter=junit --outputFile.junit={r}/vitest.xml",
        "node-test": f" --test-reporter=spec --test-reporter-destination=stdout"
                     f" --test-reporter=junit --test-reporter-destination={r}/node.xml",
        "rspec": f" --format progress --format json --out {r}/rspec.json",
        "phpunit": f" --log-junit {r}/phpunit.xml",
        "ctest": f" --output-junit ../{r}/ctest.xml",
    }.get(framework, "")
    return command + extra


JS_FRAMEWORKS = ("jest", "vitest", "mocha", "node-test", "tape", "node-tap", "ava")


def _node_tap_no_coverage(root: Path) -> str:
    """node-tap fails a run whose coverage is below 100% (from version 18) or
    below its check level: coverage is not what Greenloop tests. The flag
    is spelled per major version (``--disable-coverage`` from 18 on,
    ``--no-coverage`` before); nothing when the version is unknown."""
    version = str(js_project.package_json(root / "node_modules" / "tap").get("version") or "")
    if not version:
        deps = js_project.package_json(root)
        version = str({**(deps.get("dependencies") or {}), **(deps.get("devDependencies") or {})}.get("tap", ""))
    m = re.search(r"(\d+)", version)
    if not m:
        return ""
    return " --disable-coverage" if int(m.group(1)) >= 18 else " --no-coverage"


def _js_command(root: Path, framework: str) -> tuple[str, list[str]]:
    """The suite command of a JavaScript project: the runner invocation its
    package.json scripts make, run directly (``runner/js_project.py``), with
    Greenloop's reports; ``npm run --ignore-scripts <script>`` (the script
    without its pre/post hooks) and ``npm test`` as fallbacks."""
    pm = package_manager(root)
    js = js_project.plan_js_tests(root)
    script = js.npm_script if js is not None else (
        "test" if "test" in js_project.scripts(js_project.package_json(root)) else None)
    fallbacks = [f"{pm} test"]
    if script and pm == "npm":
        # npm >= 7: --ignore-scripts skips the pre/post hooks, never the script named.
        fallbacks.insert(0, f"npm run --ignore-scripts {script}")
    if js is not None and js.command and (js.framework == framework or framework == "generic"):
        command = js.command
        if js.framework == "jest" and "--ci" not in command.split():
            command += " --ci"
        elif js.framework == "node-tap" and re.search(r"(?:^|\s)npx tap(?=\s|$)", command):
            command += " --reporter=tap" + _node_tap_no_coverage(root)
        elif js.framework == "ava" and "--tap" not in command.split():
            command += " --tap"
        return with_reports(framework, command), fallbacks
    direct = {
        "jest": "npx jest --ci",
        "vitest": "npx vitest run",
        "mocha": "npx mocha",
        "node-test": "node --test",
        "tape": "npx tape 'test/**/*.js'",
        "node-tap": "npx tap --reporter=tap",
        "ava": "npx ava --tap",
    }.get(framework)
    if direct is None:
        return fallbacks[0], fallbacks[1:]
    return with_reports(framework, direct), fallbacks


# Files where a project that runs pytest would name it.
PYTEST_MENTIONS = ("requirements*.txt", "setup.py", "setup.cfg", "tox.ini", "pyproject.toml", "Pipfile", "noxfile.py")


def _unittest_only(root: Path) -> bool:
    """A Python project guessed from its ``test_*.py`` files alone whose tests
    are plain ``unittest``: under pytest they would be counted differently
    (an exception is ``failed``, not ``errored``; an unexpected success is
    ``failed``), and pytest may not even be installed."""
    tests = [p for p in [*root.glob("test_*.py"), *root.glob("test*/**/test_*.py")] if p.is_file()][:200]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in tests]
    texts += [p.read_text(encoding="utf-8", errors="replace") for pat in PYTEST_MENTIONS for p in root.glob(pat)
              if p.is_file()]
    return any(re.search(r"^\s*(?:import|from)\s+unittest\b", t, re.M) for t in texts) and \
        not any("pytest" in t for t in texts)


def _build_command(root: Path, language: str) -> str | None:
    """Build detection: JS/TS build scripts, tsc, CMake configure+build."""
    if language in ("javascript", "typescript"):
        scripts = js_project.scripts(js_project.package_json(root))
        if isinstance(scripts, dict) and "build" in scripts:
            return f"{package_manager(root)} run build"
        if language == "typescript":
            return "npx tsc --noEmit"
    if language == "cpp" and (root / "CMakeLists.txt").exists():
        return "cmake -S . -B build && cmake --build build"
    return None


def plan_tests(
    root: Path,
    *,
    language: str | None = None,
    framework: str | None = None,
    test_command: str | None = None,
    build_command: str | None = None,
    run_build: bool | None = None,
) -> SuitePlan:
    """Decide how to test the project at ``root``.

    Explicit values win; otherwise the framework comes from the command, then
    the project's files, then the language's default.
    """
    if not root.is_dir():
        raise GreenloopError(
            f"working_directory {root} does not exist", kind=ErrorKind.VALIDATION_ERROR,
            working_directory=str(root), checked=True, exists=False,
        )
    reasons: list[str] = []
    fw = canonical(framework) if framework else None
    if fw is None and test_command:
        found = fw_detect.from_command(test_command, root)
        if found:
            fw, _ = found.framework, reasons.append(found.reason)
    if fw is None:
        found = fw_detect.from_project(root)
        if found and found.framework != "generic":
            fw, _ = found.framework, reasons.append(found.reason)
            if fw == "pytest" and found.confidence != "high" and _unittest_only(root):
                fw, _ = "unittest", reasons.append("its test files import unittest and nothing names pytest")
    language_name = FRAMEWORK_LANGUAGE.get(fw or "", "unknown")
    try:
        lang: LanguageDetection | None = detect_language(root, language)
    except GreenloopError:
        if language or fw is None:
            raise
        lang = None  # the framework already says enough
    # The detected language refines the framework's (JavaScript -> TypeScript)
    # but never contradicts it (a Python repo with a package.json for tooling).
    if lang and (fw is None or language or _family(lang.language) == _family(language_name)):
        language_name = lang.language
        reasons.append(f"language {lang.language}: {lang.reason}")
    if fw is None and _family(language_name) == "javascript" and not test_command:
        fw = _js_without_parser(root, reasons)
    if fw is None:
        fw = DEFAULT_FRAMEWORK.get(language_name, "generic")
        reasons.append(f"{fw} is the default for {language_name}")

    fallbacks: list[str] = []
    if test_command:
        command, default = test_command, False
    else:
        default = True
        command, fallbacks = _default_test_command(root, fw, language_name)
    if run_build is False:
        build = None
    else:
        build = build_command or _build_command(root, language_name)
        if run_build and build is None:
            raise GreenloopError(
                "run_build is true but no build command is known; give build_command",
                kind=ErrorKind.VALIDATION_ERROR,
            )
    runner = js_project.runner_command(root, command, fw) if fw in JS_FRAMEWORKS and not default else None
    return SuitePlan(
        language=language_name, framework=fw, test_command=command, build_command=build,
        fallback_commands=fallbacks, default_command=default, reason="; ".join(reasons), runner_command=runner,
    )


def _js_without_parser(root: Path, reasons: list[str]) -> str | None:
    """``generic`` for a JavaScript project whose runner Greenloop has no
    parser for (uvu, jasmine) or whose test script names no runner (it
    is run as the user would, without its pre/post hooks); None when
    package.json has neither, so the language's default applies."""
    js = js_project.plan_js_tests(root)
    if js is not None:
        reasons.append(js.reason)
        reasons.append(f"Greenloop has no {js.framework} parser (its reporter names failing tests only): "
                       "results are read from TAP or JUnit output if it writes any, else from the exit code")
        return "generic"
    test = js_project.scripts(js_project.package_json(root)).get("test")
    if test and "no test specified" not in test:
        reasons.append(f"package.json's test script `{test}` names no test runner Greenloop knows: "
                       "it runs as a script, without its pre/post hooks")
        return "generic"
    return None


def _default_test_command(root: Path, framework: str, language: str) -> tuple[str, list[str]]:
    if framework in JS_FRAMEWORKS or (framework == "generic" and _family(language) == "javascript"):
        return _js_command(root, framework)
    if framework == "pytest":
        return with_reports("pytest", "python -m pytest"), ["pytest", "python -m unittest discover -v"]
    if framework == "unittest":
        return "python -m unittest discover -v", []
    if framework == "go":
        # -race needs cgo and a C toolchain; the fallback is plain go test.
        return "go test -json -race ./...", ["go test -json ./..."]
    if framework == "cargo-test":
        return "cargo test --no-fail-fast", ["cargo test --all-features --no-fail-fast"]
    if framework == "maven-surefire":
        if (root / "mvnw").exists():
            return "./mvnw -B test", ["mvn -B test"]
        return "mvn -B test", ["mvn -B verify"]
    if framework == "rspec":
        base = "bundle exec rspec" if (root / "Gemfile").exists() else "rspec"
        return with_reports("rspec", base), ["rspec", "rake test"]
    if framework == "phpunit":
        base = "vendor/bin/phpunit" if (root / "vendor/bin/phpunit").exists() else "phpunit"
        return with_reports("phpunit", base), []
    if framework == "ctest":
        return with_reports("ctest", "ctest --test-dir build --output-on-failure"), []
    if language == "java" and ((root / "build.gradle").exists() or (root / "build.gradle.kts").exists()):
        return ("./gradlew test" if (root / "gradlew").exists() else "gradle test"), ["gradle test"]
    raise GreenloopError(
        f"no default test command for framework {framework!r}; give test_command",
        kind=ErrorKind.VALIDATION_ERROR, framework=framework,
    )
