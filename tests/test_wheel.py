"""The built wheel owns one import name, `greenloop`, and lives beside other packages.

A fresh virtualenv gets PyPI's `llm` package first (a name Greenloop's own LLM
layer once shadowed), then Greenloop's wheel with its dependencies: `llm`'s files
must be byte-identical afterwards, the wheel may add only `greenloop/` (plus its
dist-info and console script), and the installed `greenloop` command must work.
"""

from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import REPO


def _run(*cmd: str | Path, cwd: Path | None = None) -> str:
    # Outside the checkout by default, so the current folder never shadows what is installed.
    done = subprocess.run([str(c) for c in cmd], cwd=cwd or Path("/"), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, REPO)
    wheels = list(out.glob("greenloop-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_the_wheel_installs_one_top_level_package_beside_pypis_llm(wheel, tmp_path):
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    py = env / "bin" / "python"
    _run(py, "-m", "pip", "install", "-q", "llm")
    site = Path(_run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    llm_before = _tree_digest(site / "llm")
    assert llm_before, "PyPI's llm package did not install an llm/ folder"

    _run(py, "-m", "pip", "install", "-q", wheel)

    assert _tree_digest(site / "llm") == llm_before, "installing Greenloop changed files of PyPI's llm package"
    record = next(site.glob("greenloop-*.dist-info")) / "RECORD"
    with record.open() as f:
        tops = {Path(row[0]).parts[0] for row in csv.reader(f)}
    tops = {t for t in tops if not t.endswith(".dist-info") and t != ".."}  # ../../bin/greenloop: the script
    assert tops == {"greenloop"}, f"the wheel installs more than one top-level name: {sorted(tops)}"

    ours = _run(py, "-c", "import greenloop.llm.client as c; print(c.__file__)").strip()
    assert Path(ours).is_relative_to(site / "greenloop"), ours
    theirs = _run(py, "-c", "import llm; print(llm.__file__)").strip()
    assert Path(theirs).resolve() == (site / "llm" / "__init__.py").resolve()
    help_text = _run(env / "bin" / "greenloop", "--help")
    assert "Drive a repository with failing tests back to green" in help_text
    assert "run" in help_text and "worker" in help_text
