"""Live runs of the corpus's sample projects through Greenloop's runner.

Each case's ``project/`` is copied to ``tmp_path`` (the shared corpus is never
written), its dependencies are prepared OUTSIDE the sandbox (npm from the
registry, Debian's jars for Java), and then the runner runs the tests inside
the sandbox with the network off, exactly as a fix run would.

A toolchain that is missing skips a test on a developer machine; under
``CI`` it fails the test: ``.ci/setup-toolchains.sh`` must have installed it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import shared_dir

CORPUS = shared_dir() / "corpus"
# npm downloads are cached here so reruns (and CI with a warm cache) are fast.
CACHE = Path(os.environ.get("GREENLOOP_LIVE_CACHE", Path.home() / ".cache" / "greenloop-live"))
# Debian's jar directory (package junit5, junit4, libhamcrest-java) and its offline Maven repository.
JAVA_LIBS = Path("/usr/share/java")
MAVEN_REPO = Path("/usr/share/maven-repo")
SETUP_TIMEOUT_S = 240


def in_ci() -> bool:
    return bool(os.environ.get("CI"))


def require(*tools: str, paths: tuple[Path, ...] = ()) -> None:
    """Skip (developer machine) or fail (CI) when a toolchain piece is missing."""
    missing = [t for t in tools if shutil.which(t) is None] + [str(p) for p in paths if not p.exists()]
    if missing:
        msg = f"missing toolchain: {', '.join(missing)} (run .ci/setup-toolchains.sh)"
        if in_ci():
            pytest.fail(msg)
        pytest.skip(msg)


def sandbox_backend() -> str:
    return os.environ.get("GREENLOOP_TEST_SANDBOX", "bwrap")


def _sh(command: str | list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(command, cwd=cwd, shell=isinstance(command, str), env=env, capture_output=True,
                          text=True, timeout=SETUP_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"setup step failed ({command!r}, exit {proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def make_writable(root: Path) -> None:
    """Give the owner write access to a copied tree (directories and files)."""
    for path in (root, *root.rglob("*")):
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)


def npm_install(ws: Path) -> None:
    """Install a JS project's devDependencies from the npm registry (cached)."""
    require("npm")
    pkg = json.loads((ws / "package.json").read_text())
    if not (pkg.get("dependencies") or pkg.get("devDependencies")):
        return
    command = ["npm", "ci"] if (ws / "package-lock.json").exists() else ["npm", "install"]
    _sh([*command, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error",
         "--cache", str(CACHE / "npm")], ws)


def link_junit_jars(ws: Path) -> None:
    """The JUnit console cases' own setup: lib/ links to Debian's jars."""
    require("java", "javac", paths=(JAVA_LIBS / "junit-platform-console-standalone.jar",
                                    JAVA_LIBS / "junit4.jar", JAVA_LIBS / "hamcrest-core.jar"))
    _sh(["sh", "setup_lib.sh"], ws, env={**os.environ, "JAVA_LIBS": str(JAVA_LIBS)})


def offline_maven(ws: Path, pre_cmd: str | None) -> None:
    """Point the project's Maven settings at Debian's offline repository and
    warm the project-local repository (the case's pre_cmd), so the sandboxed
    run needs no network. ``.mvn/maven.config`` makes the same settings apply
    to a plain ``mvn -B test`` (what the planner chooses)."""
    require("mvn", "java", paths=(MAVEN_REPO / "org/apache/maven/plugins/maven-surefire-plugin",))
    settings = ws / "ci-settings.xml"
    settings.write_text(settings.read_text().replace("&lt;MAVEN_REPO&gt;", str(MAVEN_REPO)))
    (ws / ".mvn").mkdir(exist_ok=True)
    (ws / ".mvn" / "maven.config").write_text("-s\nci-settings.xml\n-Dmaven.repo.local=.m2repo\n")
    if pre_cmd:
        subprocess.run(pre_cmd, cwd=ws, shell=True, capture_output=True, timeout=SETUP_TIMEOUT_S, check=False)
    if not (ws / ".m2repo" / "org" / "junit").is_dir():
        raise AssertionError(f"warming the Maven repository from {MAVEN_REPO} resolved no JUnit jars")


class Case:
    """One corpus case: its command, the recorded results, and a prepared copy of its project.

    ``drop`` names project files to delete before the run; the recorded
    results are then narrowed to the tests of the remaining files, and
    ``exit_code`` gives the exit status those tests produce."""

    def __init__(self, name: str, drop: tuple[str, ...] = (), exit_code: int | None = None) -> None:
        self.name = name
        self.dir = CORPUS / name
        if not self.dir.is_dir():
            pytest.fail(f"corpus case {name} is missing at {self.dir} (set GREENLOOP_SHARED)")
        self.framework = name.split("/")[0]
        self.command = (self.dir / "cmd.txt").read_text().strip()
        pre = self.dir / "pre_cmd.txt"
        self.pre_cmd = pre.read_text().strip() if pre.exists() else None
        self.expected = json.loads((self.dir / "expected.json").read_text())
        self.drop = drop
        self.tests = [t for t in self.expected["tests"] if t.get("file") not in drop]
        self.exit_code = self.expected["exit_code"] if exit_code is None else exit_code
        self.timed_out = self.expected["timed_out"] if not drop else any(t.get("timed_out") for t in self.tests)
        self.build_error = self.expected["build_error"]

    @property
    def totals(self) -> dict[str, int]:
        if not self.drop:
            return self.expected["totals"]
        counts = dict.fromkeys(self.expected["totals"], 0)
        for t in self.tests:
            counts[t["status"]] += 1
        return counts

    def prepare(self, dest: Path) -> Path:
        """Copy the project to ``dest`` and add its dependencies."""
        ws = dest / "project"
        shutil.copytree(self.dir / "project", ws, symlinks=True)
        make_writable(ws)  # the shared corpus is read-only; copytree keeps its modes
        for name in self.drop:
            (ws / name).unlink()
        if (ws / "package.json").exists():
            npm_install(ws)
        if (ws / "setup_lib.sh").exists():
            link_junit_jars(ws)
        if (ws / "pom.xml").exists():
            offline_maven(ws, self.pre_cmd)
        return ws


def tool_for(framework: str) -> tuple[str, ...]:
    """The executables a framework's runs need on the host."""
    return {
        "pytest": (), "unittest": (), "jest": ("node", "npm"), "vitest": ("node", "npm"),
        "mocha": ("node", "npm"), "node-test": ("node",), "cargo-test": ("cargo", "rustc"),
        "junit-console": ("java", "javac"), "maven-surefire": ("mvn", "java"),
    }[framework]
