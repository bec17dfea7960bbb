"""The other ecosystems' dependency downloads, where their toolchain exists:
Rust ``cargo fetch``, Go ``go mod download`` (a ``go.work`` workspace: ``go list -deps -test``
over its modules), Ruby ``bundle install``, PHP
``composer install``, Java's Maven (``mvn test`` once, into the environment's own local repository).
Each keeps what it fetched in the environment's directory and tells test
runs (offline) where it is."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path

from ..parsers import go_work
from .models import FALLBACK_FILE, Recipe

# Bundler exits 17 when it cannot reach its registry: then the gems installed on this machine
# may do (``--local``, without the environment's BUNDLE_PATH, under which Bundler sees none of
# them; what it would still install goes to the environment's GEM_HOME), the setup says so
# (``FALLBACK_FILE``), and test runs do not get BUNDLE_PATH.
BUNDLE_INSTALL = (
    'cd project && { bundle install || { code=$?; [ "$code" = 17 ] || exit "$code"; '
    'echo "greenloop: the gem registry cannot be reached; trying the gems installed here: '
    'bundle install --local" >&2; env -u BUNDLE_PATH GEM_HOME="$GREENLOOP_ENV/gems" bundle install --local; '
    f'printf "%s\\n" "gems installed on this machine by \\`bundle install --local\\` (the registry could not be '
    f'reached)" "unset BUNDLE_PATH" > "$GREENLOOP_ENV/{FALLBACK_FILE}"; }}; }}')

# Maven resolves a build's plugins and dependencies while it builds, and surefire its test provider
# only when tests run (``dependency:go-offline`` misses that one): the setup runs the suite once
# (failures ignored) with the environment's own local repository (``m2``), through a settings file
# in a ``user.home`` of its own (Maven 3.8 reads no arguments from the environment; MAVEN_OPTS can
# move ``user.home``). When the repositories cannot be reached, the artifacts installed on this
# machine (~/.m2/repository, shown read-only) stand in as a mirror of every repository, and the
# setup says so (``FALLBACK_FILE``). Test runs get a settings file that is the same plus
# ``<offline>``: the artifacts are the ones downloaded, and each is found under the repository id
# it came from.
MAVEN_HOST_REPOSITORY = os.path.expanduser("~/.m2/repository")
MAVEN_RESOLVE = (
    'settings() { mkdir -p "$GREENLOOP_ENV/$1/.m2"; '
    'printf "<settings>%s<localRepository>%s</localRepository>%s</settings>\\n" "$2" "$GREENLOOP_ENV/m2" '
    '"$mirror" > "$GREENLOOP_ENV/$1/.m2/settings.xml"; }; '
    'resolve() { (cd project && mvn -B -q test -Dmaven.test.failure.ignore=true -DfailIfNoTests=false '
    '-Dsurefire.failIfNoSpecifiedTests=false); }; '
    'mirror=""; settings maven-setup ""; '
    'if ! resolve; then [ -d "$GREENLOOP_HOST_M2" ] || exit 1; '
    'echo "greenloop: Maven\'s repositories cannot be reached; trying the artifacts installed here: '
    '$GREENLOOP_HOST_M2" >&2; '
    'mirror="<mirrors><mirror><id>host</id><mirrorOf>*</mirrorOf><url>file://$GREENLOOP_HOST_M2</url>'
    '</mirror></mirrors>"; settings maven-setup ""; resolve; '
    f'printf "%s\\n" "artifacts installed on this machine ($GREENLOOP_HOST_M2; Maven\'s repositories could not '
    f'be reached)" > "$GREENLOOP_ENV/{FALLBACK_FILE}"; fi; '
    'settings maven-test "<offline>true</offline>"')


@cache
def _version(argv: tuple[str, ...]) -> str:
    if shutil.which(argv[0]) is None:
        return ""
    try:
        out = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return ""
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else ""


def _cargo_dependencies(root: Path) -> bool:
    try:
        data = tomllib.loads((root / "Cargo.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    return any(data.get(t) for t in ("dependencies", "dev-dependencies", "build-dependencies"))


def recipe(root: Path, language: str) -> Recipe | None:
    """The download for ``language``'s project at ``root``; None when there is
    nothing to fetch or no toolchain to fetch it with."""
    if language == "rust" and (root / "Cargo.toml").is_file() and _version(("cargo", "--version")):
        # Without dependencies there is nothing to fetch, but the build is still kept (``BUILD_CACHES``).
        found = [f for f in ("Cargo.toml", "Cargo.lock") if (root / f).is_file()]
        fetch = _cargo_dependencies(root)
        return Recipe(ecosystem="rust", manifests=found, toolchain=_version(("cargo", "--version")),
                      script=["cd project && cargo fetch"] if fetch else [], stage_tree=fetch,
                      env={"CARGO_HOME": "{root}/cargo"},
                      reason="crates by `cargo fetch`" if fetch else "no crates to fetch; the build kept")
    if language == "go" and (root / "go.work").is_file() and _version(("go", "version")):
        # A workspace's modules need each other's sources to resolve (``use``, not a registry):
        # the whole project is staged, and what its packages and tests import is fetched.
        members = go_work.members(root)
        found = [f for f in ("go.work", "go.work.sum", *(f"{m}/{n}" for m in members for n in ("go.mod", "go.sum")))
                 if (root / f).is_file()]
        return Recipe(ecosystem="go", manifests=found, toolchain=_version(("go", "version")),
                      script=[f"cd project && go list -deps -test {go_work.patterns(root)} >/dev/null"],
                      stage_tree=True, env={"GOMODCACHE": "{root}/gomod", "GOFLAGS": "-modcacherw"},
                      reason=f"modules of the Go workspace's {len(members)} modules ({', '.join(members)}) "
                             "by `go list -deps -test`")
    if language == "go" and (root / "go.mod").is_file() and _version(("go", "version")):
        found = [f for f in ("go.mod", "go.sum") if (root / f).is_file()]
        return Recipe(ecosystem="go", manifests=found, toolchain=_version(("go", "version")),
                      script=["cd project && go mod download"], stage=found,
                      env={"GOMODCACHE": "{root}/gomod", "GOFLAGS": "-modcacherw"},
                      reason="modules by `go mod download`")
    if language == "ruby" and (root / "Gemfile").is_file() and _version(("bundle", "--version")):
        found = [f for f in ("Gemfile", "Gemfile.lock") if (root / f).is_file()]
        return Recipe(ecosystem="ruby", manifests=found, toolchain=_version(("bundle", "--version")),
                      script=[BUNDLE_INSTALL], stage_tree=True,
                      env={"BUNDLE_PATH": "{root}/bundle"}, reason="gems by `bundle install`")
    if language == "java" and (root / "pom.xml").is_file() and _version(("mvn", "--version")):
        poms = sorted(p.relative_to(root).as_posix() for p in root.rglob("pom.xml")
                      if not any(part.startswith(".") or part in ("target", "node_modules")
                                 for part in p.relative_to(root).parts[:-1]))
        return Recipe(ecosystem="java", manifests=poms,  # a multi-module build's every module
                      toolchain=_version(("mvn", "--version")), script=[MAVEN_RESOLVE], stage_tree=True,
                      env={"MAVEN_OPTS": "-Duser.home={root}/maven-setup", "GREENLOOP_HOST_M2": MAVEN_HOST_REPOSITORY},
                      host_ro=[MAVEN_HOST_REPOSITORY],
                      reason="plugins and dependencies by `mvn test` (once, failures ignored) into the "
                             "environment's local repository")
    if language == "php" and (root / "composer.json").is_file() and _version(("composer", "--version")):
        found = [f for f in ("composer.json", "composer.lock") if (root / f).is_file()]
        return Recipe(ecosystem="php", manifests=found, toolchain=_version(("composer", "--version")),
                      script=["cd project && composer install --no-interaction --no-scripts"], stage=found[1:],
                      links={"vendor": "project/vendor"}, reason="packages by `composer install`")
    return None


# The caches a toolchain keeps between test runs (variable -> folder name), beside the environment
# and keyed like it, mounted writable into every run, worktree and batch (``attach.caches``).
BUILD_CACHES = {
    "go": {"GOCACHE": "go-build"},
    "rust": {"CARGO_TARGET_DIR": "cargo-target"},
    "node": {"npm_config_cache": "npm", "npm_config_store_dir": "pnpm-store", "YARN_CACHE_FOLDER": "yarn"},
    "python": {"UV_CACHE_DIR": "uv", "PIP_CACHE_DIR": "pip"},
}
# Go's build cache, npm's and pnpm's content-addressed stores, uv's and pip's caches are safe for
# several writers at once. These are not: cargo locks its build directory for a whole build (a
# second run would wait for the first), and yarn 1's cache has no lock at all. Each run of theirs
# takes a copy no other run is using (``attach.caches``), warm from the run that used it last.
ONE_WRITER = frozenset({"cargo-target", "yarn"})

REGISTRY_CRATE = re.compile(r"^(.+?)-\d+\.\d+\.\d+")


def forget_checkout_builds(target: Path, cargo_home: str | None) -> None:
    """Make cargo build the checkout's own crates again in the kept ``target``, keeping the
    registry crates' builds. Cargo names a path crate's build alike wherever the checkout is,
    and trusts it while no source file is newer: another checkout's build (a fixed worktree's)
    would pass for this one's code. So when a copy changes hands between checkouts, the
    fingerprints of every crate that is not a downloaded one (its name is not in the
    environment's CARGO_HOME) go."""
    fetched = {m.group(1) for d in Path(cargo_home or "/nonexistent").glob("registry/src/*/*")
               if (m := REGISTRY_CRATE.match(d.name))}
    for fingerprint in [*target.glob("*/.fingerprint/*"), *target.glob("*/*/.fingerprint/*")]:
        if fingerprint.name.rsplit("-", 1)[0] not in fetched:
            shutil.rmtree(fingerprint, ignore_errors=True)


# What a one-writer cache needs when its copy was last used by another checkout (``attach.caches``).
ON_ANOTHER_CHECKOUT: dict[str, Callable[[Path, dict[str, str]], None]] = {
    "cargo-target": lambda folder, env: forget_checkout_builds(folder, env.get("CARGO_HOME")),
}


def test_env(ecosystem: str, root: str, manifests: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """What an offline test run needs to find the downloads (and not try the network). A Go
    workspace (``go.work`` among the ``manifests``) takes no ``-mod=mod``: workspace mode refuses it."""
    if ecosystem == "go" and "go.work" in manifests:
        return {"GOMODCACHE": f"{root}/gomod", "GOPROXY": "off"}
    return {
        "rust": {"CARGO_HOME": f"{root}/cargo", "CARGO_NET_OFFLINE": "true"},
        "go": {"GOMODCACHE": f"{root}/gomod", "GOFLAGS": "-mod=mod", "GOPROXY": "off"},
        "ruby": {"BUNDLE_PATH": f"{root}/bundle"},
        "java": {"MAVEN_OPTS": f"-Duser.home={root}/maven-test"},
    }.get(ecosystem, {})
