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
from ..parsers import npm_scripts, setuptools_suite
from ..parsers.command import raw_words
from ..parsers.invocation import insert_options
from ..parsers.language import LANGUAGE_ALIASES, LanguageDetection, detect_language
from ..parsers.plugin import plugin
from ..parsers.registry import BY_NAME, canonical
from ..projectenv.models import ProjectEnvironment

REPORT_DIR = ".greenloop/reports"

# Language -> framework when nothing more specific is known.
DEFAULT_FRAMEWORK = {
    "python": "pytest", "javascript": "jest", "typescript": "jest", "go": "go", "ruby": "rspec",
    "rust": "cargo-test", "java": "maven-surefire", "php": "phpunit", "cpp": "ctest",
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


def _language_of(framework: str | None) -> str:
    """The language of a framework, as its row in the framework table says; ``unknown`` for none."""
    row = BY_NAME.get(framework or "")
    return LANGUAGE_ALIASES.get(row.language, "unknown") if row else "unknown"


def _family(language: str) -> str:
    return "javascript" if language == "typescript" else language


def package_manager(root: Path) -> str:
    """npm, yarn or pnpm, from the lockfile."""
    if (root / "pnpm-lock.yaml").exists():
        return "pnpm"
    if (root / "yarn.lock").exists():
        return "yarn"
    return "npm"


def with_options(framework: str, command: str, options: str) -> str:
    """``options`` added to ``command``'s call of the framework's runner where
    the runner reads them: at the end, or right after the runner's words for
    one that reads options only before its paths (``OPTIONS_BEFORE_PATHS``)."""
    if options.strip() and plugin(framework).options_before_paths:
        p = plugin(framework)
        put = insert_options(command, npm_scripts.runner_end_for(framework), p.value_options, raw_words(options))
        if put is not None:
            return put
    return command + options


def with_reports(framework: str, command: str) -> str:
    """Add a machine-readable report to a command Greenloop built, keeping the
    console output (parsers cross-check the two): the framework module's
    ``REPORT_OPTIONS`` (``parsers/plugin.py``)."""
    return with_options(framework, command, plugin(framework).report_options(REPORT_DIR)) \
        if framework in BY_NAME else command


def _is_js(framework: str | None) -> bool:
    return framework in BY_NAME and BY_NAME[framework].language == "javascript"


def _js_command(root: Path, framework: str) -> tuple[str, list[str]]:
    """The suite command of a JavaScript project: the runner invocation its
    package.json scripts make, run directly (``parsers/npm_scripts.py``), with
    Greenloop's reports; ``npm run --ignore-scripts <script>`` (the script
    without its pre/post hooks) and ``npm test`` as fallbacks."""
    pm = package_manager(root)
    js = npm_scripts.plan_js_tests(root)
    script = js.npm_script if js is not None else (
        "test" if "test" in npm_scripts.scripts(npm_scripts.package_json(root)) else None)
    fallbacks = [f"{pm} test"]
    if script and pm == "npm":
        # npm >= 7: --ignore-scripts skips the pre/post hooks, never the script named.
        fallbacks.insert(0, f"npm run --ignore-scripts {script}")
    if js is not None and js.command and (js.framework == framework or framework == "generic"):
        command = js.command
        if js.framework in BY_NAME:
            command = with_options(js.framework, command, plugin(js.framework).suite_options(command, root))
        return with_reports(framework, command), fallbacks
    suite = plugin(framework).suite_command(root) if _is_js(framework) else None
    if suite is None:
        return fallbacks[0], fallbacks[1:]
    return with_reports(framework, suite[0]), fallbacks


def _unittest_only(root: Path) -> bool:
    """A Python project guessed from its ``test_*.py`` files alone whose tests
    are plain ``unittest``: under pytest they would be counted differently
    (an exception is ``failed``, not ``errored``; an unexpected success is
    ``failed``), and pytest may not even be installed."""
    tests = [p for p in [*root.glob("test_*.py"), *root.glob("test*/**/test_*.py")] if p.is_file()][:200]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in tests]
    return any(re.search(r"^\s*(?:import|from)\s+unittest\b", t, re.M) for t in texts) and \
        not any("pytest" in t for t in texts) and not setuptools_suite.names_pytest(root)


def _build_command(root: Path, language: str) -> str | None:
    """Build detection: JS/TS build scripts, tsc, CMake configure+build."""
    if language in ("javascript", "typescript"):
        scripts = npm_scripts.scripts(npm_scripts.package_json(root))
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
    language_name = _language_of(fw)
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
    runner = npm_scripts.runner_command(root, command, fw) if _is_js(fw) and not default else None
    return SuitePlan(
        language=language_name, framework=fw, test_command=command, build_command=build,
        fallback_commands=fallbacks, default_command=default, reason="; ".join(reasons), runner_command=runner,
    )


def _js_without_parser(root: Path, reasons: list[str]) -> str | None:
    """``generic`` for a JavaScript project whose runner Greenloop has no
    parser for (uvu, jasmine) or whose test script names no runner (it
    is run as the user would, without its pre/post hooks); None when
    package.json has neither, so the language's default applies."""
    js = npm_scripts.plan_js_tests(root)
    if js is not None:
        reasons.append(js.reason)
        reasons.append(f"Greenloop has no {js.framework} parser (its reporter names failing tests only): "
                       "results are read from TAP or JUnit output if it writes any, else from the exit code")
        return "generic"
    test = npm_scripts.scripts(npm_scripts.package_json(root)).get("test")
    if test and "no test specified" not in test:
        reasons.append(f"package.json's test script `{test}` names no test runner Greenloop knows: "
                       "it runs as a script, without its pre/post hooks")
        return "generic"
    return None


def _default_test_command(root: Path, framework: str, language: str) -> tuple[str, list[str]]:
    if _is_js(framework) or (framework == "generic" and _family(language) == "javascript"):
        return _js_command(root, framework)
    suite = plugin(framework).suite_command(root) if framework in BY_NAME else None
    if suite is not None:
        command, fallbacks = suite
        return with_reports(framework, command), fallbacks
    if language == "java" and ((root / "build.gradle").exists() or (root / "build.gradle.kts").exists()):
        return ("./gradlew test" if (root / "gradlew").exists() else "gradle test"), ["gradle test"]
    raise GreenloopError(
        f"no default test command for framework {framework!r}; give test_command",
        kind=ErrorKind.VALIDATION_ERROR, framework=framework,
    )
