"""A Python project's environment: a virtualenv of its own (never Greenloop's
interpreter or site-packages) holding the project and its test dependencies.

What is installed, from the project's manifests:

- the project itself (when it is a package: ``pyproject.toml`` with a build
  system or ``[project]``, or ``setup.py``), with its extras named
  test/tests/testing/dev (``[project.optional-dependencies]``, ``setup.cfg``'s
  ``extras_require``, ``setup.py``);
- PEP 735 ``[dependency-groups]`` with those names (``include-group`` followed);
- Poetry's and PDM's dev/test groups; ``uv.lock`` exported as exact pins;
- tox's ``[testenv] deps``;
- ``requirements*.txt`` and ``requirements/*.txt`` (documentation ones left out);
- pytest, when the suite runs under pytest and nothing above brought it.

The project is installed from a copy staged in the environment's directory,
never editable from the workspace: the environment is shared by every run,
worktree and validation of the project, so it must not record any of their
paths. The code under test comes from the workspace being tested instead:
its import roots (``src/`` or the top level) go first on ``PYTHONPATH``.
"""

from __future__ import annotations

import configparser
import re
import shlex
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

from greenloop.projectenv.models import Recipe

TEST_NAMES = ("test", "tests", "testing", "dev")
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


@cache
def _version(argv: tuple[str, ...]) -> str:
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False).stdout.strip()
    except OSError:
        return ""


def toolchain() -> str:
    uv = uv_binary()
    return f"python {_version((base_python(), '-c', 'import sys; print(sys.version.split()[0])'))}; " + (
        _version((uv, "--version")) if uv else "pip")


def requirement_files(root: Path) -> list[str]:
    found = [*root.glob("*requirements*.txt"), *root.glob("requirements/*.txt")]
    return sorted({p.relative_to(root).as_posix() for p in found
                   if p.is_file() and "doc" not in p.name.lower()})


def manifests(root: Path) -> list[str]:
    return [m for m in MANIFESTS if (root / m).is_file()] + requirement_files(root)


def installable(root: Path, data: dict) -> bool:
    """Whether the project is a package pip can install (rather than a folder of scripts and tests)."""
    if (root / "setup.py").is_file():
        return True
    poetry = data.get("tool", {}).get("poetry", {})
    if poetry.get("package-mode") is False:
        return False
    return "build-system" in data or "project" in data


def extras(root: Path, data: dict) -> list[str]:
    """The project's extras named like test dependencies."""
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
    return sorted(n for n in names if _normalize(n) in TEST_NAMES)


def dependency_groups(data: dict) -> list[str]:
    """Requirements of the PEP 735 groups named like test dependencies (includes followed)."""
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

    for g in TEST_NAMES:
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


def poetry_groups(data: dict) -> list[str]:
    """Poetry's dev/test dependency groups as PEP 508 requirements (path and git ones left out)."""
    poetry = data.get("tool", {}).get("poetry", {})
    tables = [poetry.get("dev-dependencies") or {}]
    tables += [(poetry.get("group", {}).get(g) or {}).get("dependencies") or {}
               for g in poetry.get("group", {}) if _normalize(g) in TEST_NAMES]
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


def pdm_groups(data: dict) -> list[str]:
    groups = data.get("tool", {}).get("pdm", {}).get("dev-dependencies") or {}
    return [r for g, reqs in groups.items() if _normalize(g) in TEST_NAMES for r in reqs
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
    uv = uv_binary()
    q = shlex.quote
    if uv:
        make = f"{q(uv)} venv --quiet --python {q(base_python())} venv"
        install = f"{q(uv)} pip install --python ../venv/bin/python"
    else:
        make = f"{q(base_python())} -m venv venv"
        install = "../venv/bin/python -m pip install --disable-pip-version-check"
    said: list[str] = []
    lines = [make, "cd project"]
    project_extras = extras(root, data)
    package = installable(root, data)
    if uv and (root / "uv.lock").is_file() and package:
        groups = [g for g in (data.get("dependency-groups") or {}) if _normalize(g) in TEST_NAMES]
        flags = " ".join([*(f"--extra {q(e)}" for e in project_extras), *(f"--group {q(g)}" for g in groups)])
        lines.append(f"{q(uv)} export --frozen --no-hashes --no-emit-project --quiet {flags} -o ../locked.txt")
        lines.append(f"{install} -r ../locked.txt")
        lines.append(f"{install} --no-deps .")
        said.append("uv.lock (exact pins)" + (f" with extras {', '.join(project_extras)}" if project_extras else "")
                    + (f" and groups {', '.join(groups)}" if groups else ""))
    else:
        args: list[str] = []
        if package:
            args.append(q(f".[{','.join(project_extras)}]" if project_extras else "."))
            said.append("the project" + (f" with extras {', '.join(project_extras)}" if project_extras else ""))
        for f in requirement_files(root):
            args.append(f"-r {q(f)}")
            said.append(f)
        extra_reqs = dependency_groups(data) + poetry_groups(data) + pdm_groups(data) + [
            r for r in tox_deps(root) if not r.startswith("-r")]
        tox_files = [r.split(None, 1)[-1].removeprefix("-r").strip() for r in tox_deps(root) if r.startswith("-r")]
        for f in tox_files:
            if f not in requirement_files(root) and (root / f).is_file():
                args.append(f"-r {q(f)}")
                said.append(f)
        if extra_reqs:
            args += [q(r) for r in extra_reqs]
            said.append(f"{len(extra_reqs)} test/dev group requirement(s)")
        if args:
            lines.append(f"{install} {' '.join(args)}")
    if framework == "pytest":
        lines.append(f"../venv/bin/python -c 'import pytest' 2>/dev/null || {install} pytest")
        said.append("pytest (when none of these brings it)")
    env = {"PIP_NO_INPUT": "1", "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1", "UV_LINK_MODE": "copy"}
    texts = " ".join((root / m).read_text(encoding="utf-8", errors="replace") for m in found
                     if m in ("pyproject.toml", "setup.py", "setup.cfg"))
    if SCM_PLUGINS.search(texts) and not (root / "PKG-INFO").is_file():
        env["SETUPTOOLS_SCM_PRETEND_VERSION"] = "0.0.0"  # the staged copy has no VCS history to read
    return Recipe(ecosystem="python", manifests=found, toolchain=toolchain(), script=lines, stage_tree=True,
                  env=env, path_first=["venv/bin"], import_roots=import_roots(root, data),
                  reason="a virtualenv with " + (", ".join(said) or "nothing but the interpreter"))
