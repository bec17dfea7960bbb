"""The test suite a setuptools project declares, and the ``python -m unittest`` call that runs it.

``test_suite`` names what ``setup.py test`` ran (setuptools' ``ScanningLoader``, a unittest loader):
in ``setup.py`` (read with ``ast``, never run: a keyword of the ``setup()`` call, or a key of the
dict literal it is given as ``**arguments``) or in ``setup.cfg``'s ``[options]``. ``setup.py test``
is gone from setuptools, so Greenloop runs the same suite with unittest's own loader:

- a package (``tests``): every test module under it, ``python -m unittest discover -v -s tests -t .``
  (the ``ScanningLoader`` walked the package's modules; discovery does, for ``test*.py``);
- a module, a class or a callable returning a suite (``pkg.test.test_suite``): loaded by name,
  ``python -m unittest -v pkg.test.test_suite`` (unittest's loader calls a callable it is named).

A declaration is not honoured when the project names pytest in its manifests or requirements (it
runs its tests with pytest: ``tests_require``, pytest-runner's alias, a tox or nox command), nor
when it names another runner's collector (``nose.collector``).
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
from pathlib import Path

from pydantic import BaseModel

# Files where a project that runs pytest would name it.
PYTEST_MENTIONS = ("requirements*.txt", "setup.py", "setup.cfg", "tox.ini", "pyproject.toml", "Pipfile", "noxfile.py")
OTHER_RUNNERS = re.compile(r"^(?:nose2?|pytest|py\.test|green|trial)(?:\.|$)")
DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


class DeclaredSuite(BaseModel):
    name: str    # the dotted name ``test_suite`` gives
    source: str  # where: setup.py or setup.cfg


def names_pytest(root: Path) -> bool:
    """Whether the project's manifests or requirement files name pytest."""
    return any("pytest" in p.read_text(encoding="utf-8", errors="replace")
               for pattern in PYTEST_MENTIONS for p in root.glob(pattern) if p.is_file())


def declared(root: Path) -> DeclaredSuite | None:
    """The unittest suite the project at ``root`` declares, when one is declared and honoured."""
    found = _from_setup_py(root / "setup.py") or _from_setup_cfg(root / "setup.cfg")
    if found is None or not DOTTED.match(found.name) or OTHER_RUNNERS.match(found.name) or names_pytest(root):
        return None
    return found


def _from_setup_py(path: Path) -> DeclaredSuite | None:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None
    dicts = _dict_literals(tree)
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _called(call) == "setup"):
            continue
        for kw in call.keywords:
            if kw.arg == "test_suite":
                value = _text(kw.value)
            elif kw.arg is None:  # setup(**arguments): the dict literal it names, or the literal itself
                literal = dicts.get(kw.value.id) if isinstance(kw.value, ast.Name) else kw.value
                value = _key(literal, "test_suite")
            else:
                continue
            if value:
                return DeclaredSuite(name=value, source="setup.py")
    return None


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _dict_literals(tree: ast.AST) -> dict[str, ast.expr]:
    """The names assigned a dict literal (``{...}`` or ``dict(...)``) anywhere in the module."""
    out: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and (isinstance(node.value, ast.Dict) or (
                isinstance(node.value, ast.Call) and _called(node.value) == "dict")):
            out.update((t.id, node.value) for t in node.targets if isinstance(t, ast.Name))
    return out


def _key(literal: ast.expr | None, key: str) -> str | None:
    if isinstance(literal, ast.Dict):
        return next((_text(v) for k, v in zip(literal.keys, literal.values, strict=True)
                     if k is not None and _text(k) == key), None)
    if isinstance(literal, ast.Call):
        return next((_text(kw.value) for kw in literal.keywords if kw.arg == key), None)
    return None


def _text(node: ast.expr) -> str | None:
    return node.value.strip() if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _from_setup_cfg(path: Path) -> DeclaredSuite | None:
    config = configparser.ConfigParser(interpolation=None)
    try:
        config.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, configparser.Error):
        return None
    value = config.get("options", "test_suite", fallback="").strip()
    return DeclaredSuite(name=value, source="setup.cfg") if value else None


def command(root: Path, suite: DeclaredSuite) -> str:
    """The ``python -m unittest`` call that runs ``suite`` in the project at ``root``."""
    parts = suite.name.split(".")
    top = next((base for base in (root, root / "src")
                if (base / parts[0]).is_dir() or (base / f"{parts[0]}.py").is_file()), None)
    folder = top.joinpath(*parts) if top is not None else None
    if top is None or folder is None or not folder.is_dir():
        return f"python -m unittest -v {shlex.quote(suite.name)}"
    start = shlex.quote(folder.relative_to(root).as_posix())
    if not (folder / "__init__.py").is_file():  # a plain folder of test modules, imported by their own names
        return f"python -m unittest discover -v -s {start}"
    return f"python -m unittest discover -v -s {start} -t {shlex.quote(top.relative_to(root).as_posix())}"
