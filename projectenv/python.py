"""A Python project's environment: a virtualenv of its own (never Greenloop's
interpreter or site-packages) holding the project and its test dependencies.

What is installed, from the project's manifests:

- the project itself (when it is a package: ``pyproject.toml`` with a build
  system or ``[project]``, or ``setup.py``), with its extras named
  test/tests/testing (``[project.optional-dependencies]``, ``setup.cfg``'s
  ``extras_require``, ``setup.py``);
- PEP 735 ``[dependency-groups]`` with those names (``include-group`` followed);
- Poetry's and PDM's test groups; ``uv.lock`` exported as exact pins;
- tox's ``[testenv] deps``;
- a uv workspace's members (``[tool.uv.workspace]``), each with its import
  roots on ``PYTHONPATH`` too;
- the base requirements files (``requirements.txt``, ``requirements/base.txt``...)
  and those named for tests (``requirements-test*.txt``, ``requirements/test*.txt``);
- pytest, when the suite runs under pytest and nothing above brought it.

``dev`` extras, groups and requirement files are the fallback: installed only
when the project names nothing for tests (a ``dev`` extra often pulls linters,
type checkers and release tools the tests never use). Documentation and lint
requirement files are never installed.

The interpreter is the newest system one (``python3.X`` on PATH, or the one
behind Greenloop) that satisfies the project's ``requires-python``; when none
does, the setup fails and says which versions were found.

The project is installed from a copy staged in the environment's directory,
never editable from the workspace: the environment is shared by every run,
worktree and validation of the project, so it must not record any of their
paths. The code under test comes from the workspace being tested instead:
its import roots (``src/`` or the top level) go first on ``PYTHONPATH``.
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ..domain.errors import ErrorKind, GreenloopError
from .models import Recipe

TEST_NAMES = ("test", "tests", "testing")
DEV_NAMES = ("dev",)  # installed only when nothing is named for tests
LOCKFILES = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock")
MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "Pipfile", *LOCKFILES)
SCM_PLUGINS = re.compile(r"setuptools[_-]scm|hatch-vcs|pdm-backend.*scm|versioningit|dunamai", re.IGNORECASE)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject(root: Path) -> dict:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


@cache
def uv_binary() -> str | None:
    """The ``uv`` executable that ships with Greenloop (the PyPI ``uv`` package), if any."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return None


@cache
def base_python() -> str:
    """The interpreter new virtualenvs are made from: the system one behind
    Greenloop's own virtualenv (never the virtualenv itself)."""
    return str(Path(getattr(sys, "_base_executable", sys.executable)).resolve())


PYTHON_NAME = re.compile(r"^python3\.\d+$")


@cache
def interpreters() -> tuple[tuple[str, str], ...]:
    """The system interpreters a project's virtualenv can be made from, as
    (version, path): every ``python3.X`` on PATH and the one behind Greenloop,
    newest first; virtualenvs' links resolve to the interpreter behind them."""
    paths = [base_python()]
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        paths += [os.path.join(folder, n) for n in sorted(names) if PYTHON_NAME.match(n)]
    found: dict[str, str] = {}
    for path in dict.fromkeys(str(Path(p).resolve()) for p in paths):
        version = _version((path, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"))
        if re.fullmatch(r"\d+\.\d+\.\d+", version) and os.access(path, os.X_OK):
            found.setdefault(version, path)
    return tuple(sorted(found.items(), key=lambda vp: Version(vp[0]), reverse=True))


def requires_python(root: Path, data: dict) -> tuple[str, str] | None:
    """The project's Python constraint and where it says it: ``requires-python``,
    Poetry's ``python`` dependency, ``python_requires`` of setup.cfg/setup.py."""
    spec = data.get("project", {}).get("requires-python")
    if isinstance(spec, str) and spec.strip():
        return spec.strip(), "pyproject.toml's requires-python"
    poetry = (data.get("tool", {}).get("poetry", {}).get("dependencies") or {}).get("python")
    if isinstance(poetry, str) and poetry.strip() and "||" not in poetry:
        return ",".join(poetry_constraint(p) for p in poetry.split(",")), "Poetry's python dependency"
    for name, pattern in (("setup.cfg", r"^python_requires\s*=\s*(.+?)\s*$"),
                          ("setup.py", r"python_requires\s*=\s*['\"]([^'\"]+)['\"]")):
        f = root / name
        if f.is_file():
            m = re.search(pattern, f.read_text(encoding="utf-8", errors="replace"), re.MULTILINE)
            if m:
                return m.group(1), f"{name}'s python_requires"
    return None


def choose_interpreter(constraint: tuple[str, str] | None,
                       found: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    """The newest of ``found`` (version, path) that satisfies ``constraint``
    (specifier, where it is said); a ``setup_failed`` error naming what was
    found when none does."""
    if constraint is None:  # the interpreter behind Greenloop
        return next(((v, p) for v, p in found if p == base_python()), (found or (("unknown", base_python()),))[0])
    spec_text, where = constraint
    try:
        spec = SpecifierSet(spec_text)
    except InvalidSpecifier:
        raise GreenloopError(f"the project's Python requirement `{spec_text}` ({where}) is not a valid "
                             "version specifier", kind=ErrorKind.SETUP_FAILED, requires_python=spec_text,
                             suggestion="correct it (e.g. `>=3.9`), then run again") from None
    for version, path in found:
        if spec.contains(version, prereleases=True):
            return version, path
    have = ", ".join(f"{v} ({p})" for v, p in found) or "none"
    raise GreenloopError(
        f"no Python here satisfies the project's `{spec_text}` ({where}); this worker has: {have}",
        kind=ErrorKind.SETUP_FAILED, requires_python=spec_text, found=[v for v, _ in found],
        suggestion="install a python3.X that satisfies it on the worker's PATH, or relax the requirement")


@cache
def _version(argv: tuple[str, ...]) -> str:
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False).stdout.strip()
    except OSError:
        return ""


def toolchain(interpreter: tuple[str, str] | None = None) -> str:
    """What the environment is built with: the interpreter's version and path, and uv's (or pip)."""
    version, path = interpreter or choose_interpreter(None, interpreters())
    uv = uv_binary()
    return f"python {version} ({path}); " + (_version((uv, "--version")) if uv else "pip")


# Words in a requirements file's name that say what it is for.
BASE_FILES = {"requirements", "base", "common", "main", "core", "default", "install", "runtime", "prod",
              "production"}
TEST_FILE_WORDS = {"test", "tests", "testing", "ci"}
DEV_FILE_WORDS = {"dev", "develop", "development"}
NEVER_FILE_WORDS = {"doc", "docs", "documentation", "lint", "linting", "linters", "typing", "mypy", "style",
                    "release", "publish"}


def _file_words(rel: str) -> set[str]:
    stem = rel.lower().removesuffix(".txt").replace("/", "-")
    return set(re.split(r"[-_.]+", stem)) - {""}


def requirement_files(root: Path) -> list[str]:
    """The requirements files the tests need: the base ones and those named for
    tests; the ``dev`` ones when none is; every other one (but documentation
    and lint) when none is named either way."""
    found = sorted({p.relative_to(root).as_posix() for p in
                    [*root.glob("*requirements*.txt"), *root.glob("requirements/*.txt")] if p.is_file()})
    found = [f for f in found if not _file_words(f) & NEVER_FILE_WORDS]
    base = [f for f in found if f == "requirements.txt" or
            (f.startswith("requirements/") and _file_words(f) - {"requirements"} <= BASE_FILES)]
    for words in (TEST_FILE_WORDS, DEV_FILE_WORDS):
        chosen = [f for f in found if f not in base and _file_words(f) & words]
        if chosen:
            return sorted(base + chosen)
    return found


def workspace_members(root: Path, data: dict) -> list[str]:
    """The members of a uv workspace (``[tool.uv.workspace]`` ``members`` globs, less
    ``exclude``): folders with a ``pyproject.toml``, relative to the root, sorted."""
    table = data.get("tool", {}).get("uv", {}).get("workspace", {})
    include = [p for p in table.get("members") or [] if isinstance(p, str)] if isinstance(table, dict) else []
    exclude = [p for p in table.get("exclude") or [] if isinstance(p, str)] if isinstance(table, dict) else []
    found: set[str] = set()
    for pattern in include:
        pattern = pattern.strip().removeprefix("./").rstrip("/")
        if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
            continue
        for folder in root.glob(pattern):
            rel = folder.relative_to(root).as_posix()
            if rel != "." and (folder / "pyproject.toml").is_file() and not any(
                    Path(rel).match(x.strip().removeprefix("./").rstrip("/")) for x in exclude):
                found.add(rel)
    return sorted(found)


def manifests(root: Path) -> list[str]:
    members = workspace_members(root, pyproject(root))
    return [m for m in MANIFESTS if (root / m).is_file()] + requirement_files(root) + [
        f"{m}/pyproject.toml" for m in members]


def installable(root: Path, data: dict) -> bool:
    """Whether the project is a package pip can install (rather than a folder of scripts and tests)."""
    if (root / "setup.py").is_file():
        return True
    poetry = data.get("tool", {}).get("poetry", {})
    if poetry.get("package-mode") is False:
        return False
    return "build-system" in data or "project" in data


def all_extras(root: Path, data: dict) -> set[str]:
    """Every extra the project declares (pyproject, setup.cfg, setup.py)."""
    names: set[str] = set(data.get("project", {}).get("optional-dependencies", {}) or {})
    cfg = root / "setup.cfg"
    if cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(cfg, encoding="utf-8")
            if parser.has_section("options.extras_require"):
                names |= set(parser.options("options.extras_require"))
        except configparser.Error:
            pass
    setup = root / "setup.py"
    if setup.is_file():
        text = setup.read_text(encoding="utf-8", errors="replace")
        if "extras_require" in text:
            names |= set(re.findall(r"""['"]([\w.-]+)['"]\s*:\s*\[""", text))
    return names


def all_groups(data: dict) -> set[str]:
    """Every dependency group: PEP 735's, Poetry's (its old ``dev-dependencies`` is ``dev``), PDM's."""
    tool = data.get("tool", {})
    poetry = tool.get("poetry", {})
    return {*(data.get("dependency-groups") or {}), *(poetry.get("group") or {}),
            *(["dev"] if poetry.get("dev-dependencies") else []), *(tool.get("pdm", {}).get("dev-dependencies") or {})}


def wanted_names(root: Path, data: dict) -> tuple[str, ...]:
    """The extra and group names whose dependencies the tests need: test/tests/testing,
    or dev when the project names none of its extras or groups for tests."""
    declared = {_normalize(n) for n in all_extras(root, data) | all_groups(data)}
    return TEST_NAMES if declared & set(TEST_NAMES) else DEV_NAMES


def extras(root: Path, data: dict) -> list[str]:
    """The project's extras the tests need (``wanted_names``)."""
    wanted = wanted_names(root, data)
    return sorted(n for n in all_extras(root, data) if _normalize(n) in wanted)


def dependency_groups(data: dict, wanted: tuple[str, ...] = TEST_NAMES) -> list[str]:
    """Requirements of the PEP 735 groups named ``wanted`` (includes followed)."""
    groups = {_normalize(k): v for k, v in (data.get("dependency-groups") or {}).items()}
    out: list[str] = []

    def walk(name: str, seen: tuple[str, ...]) -> None:
        for item in groups.get(name, []):
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and "include-group" in item:
                inc = _normalize(item["include-group"])
                if inc not in seen:
                    walk(inc, (*seen, inc))

    for g in wanted:
        walk(g, (g,))
    return list(dict.fromkeys(out))


def poetry_constraint(spec: str) -> str:
    """A Poetry version constraint as a PEP 440 specifier (``^1.2`` -> ``>=1.2,<2.0``)."""
    spec = spec.strip()
    if spec in ("", "*"):
        return ""
    if spec[0] in "^~" and not spec.startswith("~="):
        op, ver = spec[0], spec[1:].strip()
        parts = [int(p) for p in re.findall(r"\d+", ver)[:3]] or [0]
        if op == "^":
            i = next((k for k, p in enumerate(parts) if p != 0), len(parts) - 1)
        else:
            i = min(1, len(parts) - 1) if len(parts) > 1 else 0
        upper = parts[:i] + [parts[i] + 1]
        return f">={ver},<{'.'.join(map(str, upper))}"
    if re.match(r"^\d", spec):
        return f"=={spec}"
    return spec


def poetry_groups(data: dict, wanted: tuple[str, ...] = TEST_NAMES) -> list[str]:
    """Poetry's dependency groups named ``wanted`` (its old ``dev-dependencies`` is
    ``dev``) as PEP 508 requirements (path and git ones left out)."""
    poetry = data.get("tool", {}).get("poetry", {})
    tables = [poetry.get("dev-dependencies") or {}] if "dev" in wanted else []
    tables += [(poetry.get("group", {}).get(g) or {}).get("dependencies") or {}
               for g in poetry.get("group", {}) if _normalize(g) in wanted]
    out = []
    for table in tables:
        for name, spec in table.items():
            if name == "python":
                continue
            extras_ = ""
            if isinstance(spec, dict):
                if not {"version"} & set(spec) and set(spec) & {"path", "git", "url"}:
                    continue
                extras_ = f"[{','.join(spec['extras'])}]" if spec.get("extras") else ""
                spec = spec.get("version", "*")
            if isinstance(spec, str):
                out.append(f"{name}{extras_}{poetry_constraint(spec)}")
    return out


def pdm_groups(data: dict, wanted: tuple[str, ...] = TEST_NAMES) -> list[str]:
    groups = data.get("tool", {}).get("pdm", {}).get("dev-dependencies") or {}
    return [r for g, reqs in groups.items() if _normalize(g) in wanted for r in reqs
            if isinstance(r, str) and not r.startswith("-e")]


def tox_deps(root: Path) -> list[str]:
    """The ``deps`` of tox's ``[testenv]`` (what many small projects test with), less
    substitutions and options (``-r`` files are installed as requirement files anyway)."""
    ini = root / "tox.ini"
    if not ini.is_file():
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(ini, encoding="utf-8")
        raw = parser.get("testenv", "deps", fallback="")
    except configparser.Error:
        return []
    out = []
    for line in raw.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r") and "{" not in line:
            out.append(line)  # "-r requirements-test.txt": relative to the project, where pip runs
        elif line and not line.startswith("-") and "{" not in line and ":" not in line.split("[")[0]:
            out.append(line)
    return out


def import_roots(root: Path, data: dict) -> list[str]:
    """Where the project's importable code lives, relative to its root: the
    folder its build configuration names, ``src/`` (the src layout), else the top level."""
    tool = data.get("tool", {})
    roots: list[str] = []
    setuptools = tool.get("setuptools", {})
    pkg_dir = setuptools.get("package-dir") or {}
    if isinstance(pkg_dir.get(""), str):
        roots.append(pkg_dir[""])
    find = (setuptools.get("packages") or {}) if isinstance(setuptools.get("packages"), dict) else {}
    roots += list((find.get("find") or {}).get("where", []))
    for pkg in tool.get("poetry", {}).get("packages", []) or []:
        if isinstance(pkg, dict) and pkg.get("from"):
            roots.append(pkg["from"])
    for pkg in tool.get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {}).get("packages", []) or []:
        if isinstance(pkg, str) and "/" in pkg.strip("/"):
            roots.append(pkg.strip("/").rsplit("/", 1)[0])
    cfg = root / "setup.cfg"
    if cfg.is_file():
        text = cfg.read_text(encoding="utf-8", errors="replace")
        m = re.search(r"^package_dir\s*=\s*\n?\s*=\s*(\S+)", text, re.MULTILINE)
        if m:
            roots.append(m.group(1))
    src = root / "src"
    if src.is_dir() and any(p.suffix == ".py" or (p / "__init__.py").is_file() or p.is_dir() for p in src.iterdir()):
        roots.append("src")
    roots = [r.strip("/") or "." for r in roots if (root / r).is_dir()]
    return list(dict.fromkeys(roots)) or ["."]


def recipe(root: Path, framework: str) -> Recipe:
    """How to build the virtualenv for the project at ``root``."""
    data = pyproject(root)
    found = manifests(root)
    constraint = requires_python(root, data)
    version, interpreter = choose_interpreter(constraint, interpreters())
    wanted = wanted_names(root, data)
    uv = uv_binary()
    q = shlex.quote
    if uv:
        make = f"{q(uv)} venv --quiet --python {q(interpreter)} venv"
        install = f"{q(uv)} pip install --python ../venv/bin/python"
    else:
        make = f"{q(interpreter)} -m venv venv"
        install = "../venv/bin/python -m pip install --disable-pip-version-check"
    said: list[str] = []
    on = f"; Python {version}" + (f", the newest here that satisfies `{constraint[0]}`" if constraint else "")
    lines = [make, "cd project"]
    project_extras = extras(root, data)
    package = installable(root, data)
    # A uv workspace's members are installed (from the staged copy, as the project is) beside it:
    # each satisfies the others' requirements of it by name.
    members = workspace_members(root, data)
    if uv and (root / "uv.lock").is_file() and (package or members):
        groups = [g for g in (data.get("dependency-groups") or {}) if _normalize(g) in wanted]
        flags = " ".join([*(f"--extra {q(e)}" for e in project_extras), *(f"--group {q(g)}" for g in groups)])
        emit = "--no-emit-workspace" if members else "--no-emit-project"
        lines.append(f"{q(uv)} export --frozen --no-hashes {emit} --quiet {flags} -o ../locked.txt")
        lines.append(f"{install} -r ../locked.txt")
        local = [*(["."] if package else []), *(q(f"./{m}") for m in members)]
        lines.append(f"{install} --no-deps {' '.join(local)}")
        said.append("uv.lock (exact pins)" + (f" with extras {', '.join(project_extras)}" if project_extras else "")
                    + (f" and groups {', '.join(groups)}" if groups else ""))
    else:
        args: list[str] = []
        if package:
            args.append(q(f".[{','.join(project_extras)}]" if project_extras else "."))
            said.append("the project" + (f" with extras {', '.join(project_extras)}" if project_extras else ""))
        args += [q(f"./{m}") for m in members]
        for f in requirement_files(root):
            args.append(f"-r {q(f)}")
            said.append(f)
        extra_reqs = dependency_groups(data, wanted) + poetry_groups(data, wanted) + pdm_groups(data, wanted) + [
            r for r in tox_deps(root) if not r.startswith("-r")]
        tox_files = [r.split(None, 1)[-1].removeprefix("-r").strip() for r in tox_deps(root) if r.startswith("-r")]
        for f in tox_files:
            if f not in requirement_files(root) and (root / f).is_file():
                args.append(f"-r {q(f)}")
                said.append(f)
        if extra_reqs:
            args += [q(r) for r in extra_reqs]
            said.append(f"{len(extra_reqs)} {'/'.join(wanted)} group requirement(s)")
        if args:
            lines.append(f"{install} {' '.join(args)}")
    if framework == "pytest":
        lines.append(f"../venv/bin/python -c 'import pytest' 2>/dev/null || {install} pytest")
        said.append("pytest (when none of these brings it)")
        # Per-test coverage for test impact (runner/impact.py): wanted, never required.
        lines.append(f"../venv/bin/python -c 'import coverage' 2>/dev/null || {install} coverage "
                     "|| echo 'greenloop: coverage.py not installed: no test impact'")
        said.append("coverage.py (for test impact)")
    # Bytecode compiled once, here: every suite run imports pytest and the project's
    # dependencies, and sandboxed runs write no .pyc (PYTHONDONTWRITEBYTECODE), so without
    # it each run compiled them all again (pytest alone: 0.2 s of CPU a run instead of 0.9 s).
    # pip compiles by default.
    env = {"PIP_NO_INPUT": "1", "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1", "UV_LINK_MODE": "copy",
           "UV_COMPILE_BYTECODE": "1"}
    texts = " ".join((root / m).read_text(encoding="utf-8", errors="replace") for m in found
                     if m in ("pyproject.toml", "setup.py", "setup.cfg"))
    if SCM_PLUGINS.search(texts) and not (root / "PKG-INFO").is_file():
        env["SETUPTOOLS_SCM_PRETEND_VERSION"] = "0.0.0"  # the staged copy has no VCS history to read
    if members:
        said.append(f"the workspace's {len(members)} members ({', '.join(members)})")
    roots = import_roots(root, data) + [
        f"{m}/{r}".removesuffix("/.") for m in members for r in import_roots(root / m, pyproject(root / m))]
    return Recipe(ecosystem="python", manifests=found, toolchain=toolchain((version, interpreter)), script=lines,
                  stage_tree=True,
                  env=env, path_first=["venv/bin"], import_roots=roots,
                  reason="a virtualenv with " + (", ".join(said) or "nothing but the interpreter") + on)
