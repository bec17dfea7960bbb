"""Published projects with injected bugs: the material of the real-world suite.

Each project is a pinned release taken from its registry at test time (a PyPI
sdist through ``pip download``, an npm tarball through ``npm pack``, a Go module's
or a Rust crate's published source as Debian packages it, through ``apt-get download``), checked
against its sha256 and cached under ``~/.cache/greenloop-realworld`` (or
``$GREENLOOP_REALWORLD_CACHE``), so reruns need no network for the archives.
No third-party source is committed: only the pins, the bugs and the scenarios.

A ``Bug`` is a small edit of the project's own source (``original`` becomes
``injected``, each occurring exactly once) and the tests it breaks, named by a
regular expression on their ids. The project's scenario (``scenarios/NAME.yaml``)
is the scripted LLM's part: for a test that fails, it proposes the original code.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"

# Commits made by the suite never depend on the user's git configuration.
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "realworld", "GIT_AUTHOR_EMAIL": "realworld@greenloop.invalid",
                "GIT_COMMITTER_NAME": "realworld", "GIT_COMMITTER_EMAIL": "realworld@greenloop.invalid"}


class MaterialError(Exception):
    """The published material is not what the suite was written against."""


class Bug(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str       # file inside the project
    original: str   # the published code (occurs exactly once)
    injected: str   # what the suite puts in its place
    breaks: str     # regex on the ids of the tests it makes fail (each must end FIXED)
    what: str       # the bug in words (README)


class Archive(BaseModel):
    """Another published package a project's repository is made of (a monorepo's member)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str
    registry: Literal["pypi", "npm"]
    version: str
    archive: str
    sha256: str
    subdir: str  # where in the repository it is unpacked

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}" if self.registry == "pypi" else f"{self.package}@{self.version}"


class Project(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    registry: Literal["pypi", "npm", "debian"]
    version: str
    archive: str    # file name of the published archive
    sha256: str
    kind: str       # what this project stands for (README)
    tests_dir: str  # the archive must carry its tests here
    bugs: tuple[Bug, ...]
    # How the project's own docs/CI install and run its tests, used only by ``by_hand.py``
    # to check the material outside Greenloop (a throwaway venv first on PATH, or
    # node_modules); the test command prints a report it reads: pytest -rf, TAP, mocha JSON.
    hand_install: tuple[str, ...]
    hand_test: tuple[str, ...]
    # A monorepo made of published packages (small published monorepos do not ship as one
    # archive): the project's own archive (``package``, when its name is not the project's)
    # is unpacked at ``subdir``, each of ``beside`` at its own, and the suite writes the
    # workspace's root ``package.json`` (``root_manifest``). ``tests_dir`` and the bugs' paths
    # are then relative to the repository's root.
    package: str = ""
    subdir: str = ""
    beside: tuple[Archive, ...] = ()
    root_manifest: str = ""
    # A git checkout rather than the archive as published: committed as the project's git repository
    # tracks it (its .gitignore respected), so what its build generates (``absent``) is not there.
    checkout: bool = False
    absent: tuple[str, ...] = ()
    # A Debian package (``registry="debian"``, ``package`` its name, ``version`` Debian's): the
    # published source is the folder ``source`` inside the .deb (/usr/share/gocode/src/..., or
    # /usr/share/cargo/registry/...). Debian's Go packages carry no go.mod (GOPATH layout): the
    # suite writes one naming ``go_module``, the only file it adds.
    source: str = ""
    go_module: str = ""
    # How many requests the scripted LLM answers in the whole run, when the suite checks it (one bug
    # that breaks many tests must cost one fix, not one per test).
    model_requests: int | None = None
    # The runner's own count of the tests it ran (unittest's ``Ran N tests``), when the suite checks that
    # every test is counted (tests printing one name are distinct tests, never merged).
    runner_total: int | None = None

    @property
    def id(self) -> str:
        return f"{self.name}-checkout" if self.checkout else self.name

    @property
    def spec(self) -> str:
        name = self.package or self.name
        return {"pypi": f"{name}=={self.version}", "npm": f"{name}@{self.version}",
                "debian": f"{name}={self.version}"}[self.registry]

    @property
    def scenario(self) -> Path:
        return SCENARIOS / f"{self.name}.yaml"


HUMANIZE = Project(
    name="humanize", registry="pypi", version="4.11.0", archive="humanize-4.11.0.tar.gz",
    sha256="e66f36020a2d5a974c504bd2555cf770621dbdbb6d82f94a6857c0b1ea2608be",
    kind="Python, src/ layout, test extras in [project.optional-dependencies] (tests), hatch-vcs version, "
         "pytest with filterwarnings = error",
    tests_dir="tests",
    hand_install=("python", "-m", "pip", "install", "-e", ".[tests]"), hand_test=("python", "-m", "pytest", "-rf"),
    bugs=(
        Bug(path="src/humanize/lists.py",
            original='return ", ".join(str(item) for item in items[:-1])',
            injected='return ", ".join(str(item) for item in items[:-2])',
            breaks=r"test_lists\.py::test_natural_list",
            what="natural_list() drops the second-to-last item of lists of three or more (off by one)"),
        Bug(path="src/humanize/filesize.py",
            original="if abs_bytes == 1 and not gnu:",
            injected="if abs_bytes == 1 and gnu:",
            breaks=r"test_filesize\.py::test_naturalsize\[test_args\d+-1 Byte\]",
            what="naturalsize(1) says '1 Bytes' (negated condition)"),
    ),
)

PROJECTS: tuple[Project, ...] = (
    HUMANIZE,
    HUMANIZE.model_copy(update={
        "name": "humanize-separator", "model_requests": 3,
        "kind": "humanize 4.11.0 again, one bug in a helper shared by three modules: 31 tests fail across "
                "test_number.py, test_time.py and test_i18n.py, fixed by one model request, the rest pass along",
        "bugs": (
            Bug(path="src/humanize/i18n.py",
                original='sep = _THOUSANDS_SEPARATOR[_CURRENT.locale]\n    except (AttributeError, KeyError):\n'
                         '        sep = ","',
                injected='sep = _THOUSANDS_SEPARATOR[_CURRENT.locale]\n    except (AttributeError, KeyError):\n'
                         '        sep = "."',
                breaks=r"test_(number|time|i18n)\.py::",
                what='thousands_separator() defaults to "." instead of "," (wrong constant): intcomma, intword, '
                     "naturaldelta/precisedelta and the i18n tests, 31 tests in 3 files"),
        )}),
    HUMANIZE.model_copy(update={
        "checkout": True, "absent": ("src/humanize/_version.py",),
        "kind": "a git checkout of humanize (not the sdist): hatch-vcs writes src/humanize/_version.py at build "
                "time, the project's .gitignore excludes it, and humanize/__init__.py imports it"}),
    Project(
        name="structlog", registry="pypi", version="24.4.0", archive="structlog-24.4.0.tar.gz",
        sha256="b27bfecede327a6d2da5fbc96bd859f114ecc398a6389d664f62085ee7ae6fc4",
        kind="Python, src/ layout, test extras (tests) with pytest-asyncio, plugin-heavy pytest config: "
             "--strict-markers --strict-config, xfail_strict, asyncio_mode = auto, filterwarnings",
        tests_dir="tests",
        hand_install=("python", "-m", "pip", "install", "-e", ".[tests]"), hand_test=("python", "-m", "pytest", "-rf"),
        bugs=(
            Bug(path="src/structlog/processors.py",
                original="            if replace_by is not None:\n                event_dict[\"event\"] = replace_by",
                injected="            if replace_by is None:\n                event_dict[\"event\"] = replace_by",
                breaks=r"TestRenameKey::test_(rename_twice|replace_by_key_is_optional)",
                what="EventRenamer(replace_by=...) renames only when the key is missing (flipped comparison)"),
            Bug(path="src/structlog/_log_levels.py",
                original='        return "error"',
                injected='        return "exception"',
                breaks=r"test_log_level_alias_normalized\[exception-error\]|test_captures_log_level_mapping",
                what="the 'exception' log method is no longer reported as level 'error'"),
        ),
    ),
    Project(
        name="blinker", registry="pypi", version="1.9.0", archive="blinker-1.9.0.tar.gz",
        sha256="b4ce2265a7abece45e7cc896e98dbebe6cead56bcf805a3d23136d145f5445bf",
        kind="Python, src/ layout, test dependencies in requirements/tests.txt (pinned pytest-asyncio), "
             "filterwarnings = error, asyncio_mode = auto",
        tests_dir="tests",
        hand_install=("python", "-m", "pip", "install", "-e", ".", "-r", "requirements/tests.txt"), hand_test=("python", "-m", "pytest", "-rf"),
        bugs=(
            Bug(path="src/blinker/base.py",
                original="        if sender is ANY:\n            return False",
                injected="        if sender is ANY:\n            return True",
                breaks=r"test_signals\.py::test_has_receivers$",
                what="has_receivers_for(ANY) is True with no receiver for ANY (wrong constant)"),
            Bug(path="src/blinker/base.py",
                original="                result = await _sync_wrapper(receiver)(sender, **kwargs)",
                injected="                result = _sync_wrapper(receiver)(sender, **kwargs)",
                breaks=r"test_signals\.py::test_async_receiver",
                what="send_async() forgets to await wrapped sync receivers (an un-awaited coroutine, "
                     "an error under filterwarnings = error)"),
        ),
    ),
    Project(
        name="minimist", registry="npm", version="1.2.8", archive="minimist-1.2.8.tgz",
        sha256="350a76c115b393c19d24654834261e5dc9f0e8cc5e08f3937fa80140f3e4ce83",
        kind="JavaScript, tape (TAP) under nyc; `test` is wrapped in a `pretest` eslint hook and a `posttest` "
             "`aud` audit (needs the network); a `tests-only` script; no lockfile",
        tests_dir="test",
        hand_install=("npm", "install"), hand_test=("npx", "tape", "test/**/*.js"),
        bugs=(
            Bug(path="index.js",
                original="value = value !== 'false';",
                injected="value = value === 'false';",
                breaks=r"boolean --boool=(true|false)",
                what="--flag=true/--flag=false for a boolean flag are read inverted (flipped comparison)"),
            Bug(path="index.js",
                original="argv._.push.apply(argv._, args.slice(i + 1));",
                injected="argv._.push.apply(argv._, args.slice(i + 2));",
                breaks=r"stops parsing on the first non-option when stopEarly is set",
                what="stopEarly drops the argument after the first non-option (off by one)"),
        ),
    ),
    Project(
        name="json-schema-traverse", registry="npm", version="1.0.0", archive="json-schema-traverse-1.0.0.tgz",
        sha256="023222622df29fc274bde5d3590e47aa1d4a8e3c1d6e2aba029948ed79799b21",
        kind="JavaScript, mocha (spec/ folder, BDD) under nyc; `test` runs eslint before the tests; "
             "a `test-spec` script; no lockfile",
        tests_dir="spec",
        hand_install=("npm", "install"), hand_test=("npx", "mocha", "spec", "--reporter", "json"),
        bugs=(
            Bug(path="index.js",
                original="(opts.allKeys && !(key in traverse.skipKeywords))",
                injected="(opts.allKeys && (key in traverse.skipKeywords))",
                breaks=r"should traverse objects with allKeys: true option"
                       r"|should NOT travers objects in standard keywords which value is not a schema",
                what="allKeys traverses exactly the keywords it should skip (negation lost)"),
            Bug(path="index.js",
                original="  var post = cb.post || function() {};",
                injected="  var post = cb.pre || function() {};",
                breaks=r"should traverse schema in (pre-order|post-order|pre- and post-order at the same time)",
                what="the post-order callback is the pre-order one (wrong property)"),
        ),
    ),
    Project(
        name="flat", registry="npm", version="5.0.2", archive="flat-5.0.2.tgz",
        sha256="d772de42fa0c5e2b3d940c351873743d9149e5d343f11523dcfb6619f8feed42",
        kind="JavaScript, mocha with the TDD interface (suite/test); `test` runs `standard` lint after the "
             "tests; CLI tests spawn node; no lockfile",
        tests_dir="test",
        hand_install=("npm", "install"), hand_test=("npx", "mocha", "-u", "tdd", "--reporter", "json"),
        bugs=(
            Bug(path="index.js",
                original="(!opts.maxDepth || currentDepth < maxDepth)",
                injected="(!opts.maxDepth || currentDepth <= maxDepth)",
                breaks=r"Custom Depth",
                what="flatten({maxDepth}) goes one level too deep (off by one)"),
            Bug(path="index.js",
                original="const overwrite = opts.overwrite || false",
                injected="const overwrite = opts.overwrite && false",
                breaks=r"Overwrite|non-object keys \+ overwrite should be overwritten",
                what="unflatten({overwrite: true}) never overwrites (wrong operator)"),
        ),
    ),
    Project(
        name="ts-dedent", registry="npm", version="2.1.1", archive="ts-dedent-2.1.1.tgz",
        sha256="04577a35dbd4ddec6e5a94599c5310d9f91600bbef4d9f4230ddad2d5a774f75",
        kind="TypeScript sources and tests (src/index.ts, src/__tests__/index.spec.ts) under jest with ts-jest; "
             "`pretest` runs eslint; no tsconfig.json and no build script shipped; no lockfile",
        tests_dir="src/__tests__",
        hand_install=("npm", "install"), hand_test=("npx", "jest", "--json"),
        bugs=(
            Bug(path="src/index.ts",
                original="    const pattern = new RegExp(`\\n[\\t ]{${Math.min(...indentLengths)}}`, 'g');",
                injected="    const pattern = new RegExp(`\\n[\\t ]{${Math.max(...indentLengths)}}`, 'g');",
                breaks=r"should remove (leading/trailing line break|the same number of tabs/spaces from each line)",
                what="the common indentation is the deepest line's, not the shallowest's (max for min)"),
            Bug(path="src/index.ts",
                original="  strings[0] = strings[0].replace(/^\\r?\\n/, '');",
                injected="  strings[0] = strings[0].replace(/^(\\r?\\n)+/, '');",
                breaks=r"should not remove more than one leading/trailing line break",
                what="every leading line break is removed, not only the first (a greedy regex)"),
        ),
    ),
    Project(
        name="subarg-minimist-workspace", package="minimist", registry="npm", version="1.2.8",
        archive="minimist-1.2.8.tgz",
        sha256="350a76c115b393c19d24654834261e5dc9f0e8cc5e08f3937fa80140f3e4ce83",
        subdir="packages/minimist",
        beside=(Archive(package="subarg", registry="npm", version="1.0.0", archive="subarg-1.0.0.tgz",
                        sha256="851d25775d8df32552aac7614c264caa1b7a9a1f8f00929f9d82756746ab71b8",
                        subdir="packages/subarg"),),
        root_manifest=json.dumps({"name": "args-workspace", "private": True, "workspaces": ["packages/*"],
                                  "scripts": {"test": "npm test --workspaces"}}, indent=2) + "\n",
        kind="npm workspace made of two published packages: subarg 1.0.0 requires minimist by name and gets "
             "the workspace's own (a link); the root's `test` runs every member's (minimist's under nyc with an "
             "eslint `pretest` and an `aud` `posttest`; subarg's with its own tape 3, not hoisted); no lockfile",
        tests_dir="packages/subarg/test",
        hand_install=("npm", "install"), hand_test=("npx", "tape", "packages/*/test/*.js"),
        bugs=(
            Bug(path="packages/minimist/index.js",
                original="return (/^[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(e[-+]?\\d+)?$/).test(x);",
                injected="return (/^[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(e[-+]?\\d+)$/).test(x);",
                breaks=r"^(recursive|nums|numeric short args|short|short -k=v|short and long|long opts|alias|"
                       r"dotted alias|multiAlias|nested dotted objects|mixed short bool and capture|"
                       r"parse with modifier functions|proto pollution \((array|number)\)|"
                       r"flag boolean true only affects double hyphen arguments without equals signs)$",
                what="in minimist, a number needs an exponent to be read as one (`?` lost): subarg's `recursive` "
                     "(`-d 5`, in the other package, through the workspace's link) and 15 of minimist's own"),
        ),
    ),
    Project(
        name="idna", registry="pypi", version="3.3", archive="idna-3.3.tar.gz",
        sha256="9d643ff0a55b762d5cdb124b8eaa99c66322e2157b69160bc32796e824360e6d",
        kind="Python unittest suite declared in setup.py (`test_suite: 'tests'`, in the dict given to "
             "`setup(**arguments)`), no pytest anywhere; `tests/test_idna_uts46.py`'s `load_tests` makes one "
             "`TestIdnaTest` per line of Unicode's IdnaTestV2.txt: 6,225 generated tests that all print "
             "`runTest (tests.test_idna_uts46.TestIdnaTest.runTest)` (their docstring line tells them apart), "
             "6,250 in all",
        tests_dir="tests", runner_total=6250, model_requests=3,
        hand_install=("python", "-m", "pip", "install", "-e", "."),
        hand_test=("python", "-m", "unittest", "discover", "-v", "-s", "tests", "-t", "."),
        bugs=(
            Bug(path="idna/core.py",
                original="    if len(label) > (254 if trailing_dot else 253):",
                injected="    if len(label) > (253 if trailing_dot else 253):",
                breaks=r"^tests\.test_idna_uts46\.TestIdnaTest\.runTest( \[#\d+\])?$",
                what="a name with a trailing dot may no longer be 254 characters long (the dot's allowance lost): "
                     "6 of the generated UTS #46 tests error"),
        ),
    ),
    Project(
        name="go-humanize", package="golang-github-dustin-go-humanize-dev", registry="debian",
        version="1.0.0-3", archive="golang-github-dustin-go-humanize-dev_1.0.0-3_all.deb",
        sha256="b4d1a9d00e0c8af421a30e683bf36e14ba99fa621d3f698220f9af0420bd330c",
        source="usr/share/gocode/src/github.com/dustin/go-humanize", go_module="github.com/dustin/go-humanize",
        kind="Go module with no dependency outside the standard library (github.com/dustin/go-humanize 1.0.0, "
             "the published source as Debian ships it, GOPATH layout: the suite adds the go.mod naming the "
             "module); two packages (the root and english/), table-driven tests, go test -json",
        tests_dir=".",
        hand_install=("go", "version"), hand_test=("go", "test", "./..."),
        bugs=(
            Bug(path="ordinals.go",
                original="\t\tif x%100 != 12 {",
                injected="\t\tif x%100 == 12 {",
                breaks=r"TestOrdinals",
                what="Ordinal() gives 2 and 22 the suffix \"th\" and 12 \"nd\" (flipped comparison)"),
        ),
    ),
    Project(
        name="fnv", package="librust-fnv-dev", registry="debian",
        version="1.0.7-1", archive="librust-fnv-dev_1.0.7-1_amd64.deb",
        sha256="906cc04d72bbbb03e1439c56aa5c66356fee07a27716484623ba22754431d17f",
        source="usr/share/cargo/registry/fnv-1.0.7",
        kind="Rust crate fnv 1.0.7 as published on crates.io (Debian's librust-fnv-dev ships the .crate's "
             "files): no dependency, no dev-dependency, no Cargo.lock, `[lib] path = \"lib.rs\"` at the crate's "
             "root, unit tests in a #[cfg(test)] module of lib.rs, cargo test",
        tests_dir=".",
        hand_install=("cargo", "--version"), hand_test=("cargo", "test"),
        bugs=(
            Bug(path="lib.rs",
                original="            hash = hash ^ (*byte as u64);",
                injected="            hash = hash | (*byte as u64);",
                breaks=r"basic_tests",
                what="FnvHasher::write ORs each byte into the hash instead of XOR (wrong operator)"),
        ),
    ),
    Project(
        name="go-difflib", package="golang-github-pmezard-go-difflib-dev", registry="debian",
        version="1.0.0-3", archive="golang-github-pmezard-go-difflib-dev_1.0.0-3_all.deb",
        sha256="e40784b6b23b94127c81010189ad0bc582c20b3bbdc145aa8a52c9622f8192f9",
        source="usr/share/gocode/src/github.com/pmezard/go-difflib", go_module="github.com/pmezard/go-difflib",
        kind="Go module github.com/pmezard/go-difflib 1.0.0 (Debian's source, GOPATH layout: the suite adds the "
             "go.mod), no dependency; its only package is in a subfolder (difflib/), nothing at the module's root",
        tests_dir="difflib",
        hand_install=("go", "version"), hand_test=("go", "test", "./..."),
        bugs=(
            Bug(path="difflib/difflib.go",
                original='\tif length == 1 {\n\t\treturn fmt.Sprintf("%d", beginning)\n\t}\n\tif length == 0 {',
                injected='\tif length <= 1 {\n\t\treturn fmt.Sprintf("%d", beginning)\n\t}\n\tif length == 0 {',
                breaks=r"TestOmitFilenames|TestOutputFormatRangeFormatUnified",
                what="a unified diff's empty range is written `N` instead of `N,0` (the context format's "
                     "rule copied: `<=` for `==`)"),
        ),
    ),
    Project(
        name="scopeguard", package="librust-scopeguard-dev", registry="debian",
        version="1.1.0-1", archive="librust-scopeguard-dev_1.1.0-1_amd64.deb",
        sha256="864953c2558cb59a899d0130be9f151b9c0a4e053c40033e72eea24f57fd6d7a",
        source="usr/share/cargo/registry/scopeguard-1.1.0",
        kind="Rust crate scopeguard 1.1.0 as published on crates.io (Debian's librust-scopeguard-dev): "
             "no dependency, a default feature (use_std), src/lib.rs with unit tests in `mod tests` and "
             "doctests, an example; cargo test",
        tests_dir="src",
        hand_install=("cargo", "--version"), hand_test=("cargo", "test"),
        bugs=(
            Bug(path="src/lib.rs",
                original="impl Strategy for OnSuccess {\n    #[inline]\n"
                         "    fn should_run() -> bool { !std::thread::panicking() }",
                injected="impl Strategy for OnSuccess {\n    #[inline]\n"
                         "    fn should_run() -> bool { std::thread::panicking() }",
                breaks=r"test_defer_success_[12]",
                what="the OnSuccess strategy runs only when unwinding, as OnUnwind does (negation lost)"),
        ),
    ),
)


def project(name: str) -> Project:
    return next(p for p in PROJECTS if name in (p.id, p.name))


# --- the archives -----------------------------------------------------------------

def cache_dir() -> Path:
    return Path(os.environ.get("GREENLOOP_REALWORLD_CACHE", Path.home() / ".cache" / "greenloop-realworld"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(p: Project | Archive) -> Path:
    """The published archive, from the cache or its registry."""
    archives = cache_dir() / "archives"
    path = archives / p.archive
    if not path.is_file():
        archives.mkdir(parents=True, exist_ok=True)
        staging = archives / f".fetch-{p.archive}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        if p.registry == "pypi":
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                   "--dest", str(staging), p.spec]
        elif p.registry == "debian":
            cmd = ["apt-get", "download", "--quiet", p.spec]
        else:
            cmd = ["npm", "pack", "--silent", "--pack-destination", str(staging), p.spec]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=staging)
        got = staging / p.archive
        if done.returncode != 0 or not got.is_file():
            shutil.rmtree(staging, ignore_errors=True)
            raise MaterialError(f"could not fetch {p.spec} ({' '.join(cmd)}): {(done.stdout + done.stderr)[-1500:]}")
        got.replace(path)
        shutil.rmtree(staging, ignore_errors=True)
    digest = _sha256(path)
    if digest != p.sha256:
        raise MaterialError(f"{path} has sha256 {digest}, expected {p.sha256} for {p.spec}")
    return path


def _extract(archive: Path, dest: Path) -> None:
    """``archive``'s files at ``dest``, its top folder stripped."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        members = []
        for m in tar.getmembers():
            parts = Path(m.name).parts
            if len(parts) < 2:
                continue
            m.name = str(Path(*parts[1:]))
            members.append(m)
        tar.extractall(dest, members=members, filter="data")


def _extract_deb(deb: Path, source: str, dest: Path) -> None:
    """The folder ``source`` of the Debian package ``deb`` at ``dest``."""
    staging = dest.parent / f".deb-{dest.name}"
    shutil.rmtree(staging, ignore_errors=True)
    done = subprocess.run(["dpkg-deb", "-x", str(deb), str(staging)], capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not (staging / source).is_dir():
        raise MaterialError(f"{deb.name} has no {source}/ ({done.stderr[-1500:]})")
    shutil.copytree(staging / source, dest, symlinks=True, dirs_exist_ok=True)
    shutil.rmtree(staging)


def unpack(p: Project, dest: Path) -> Path:
    """The published tree of ``p`` at ``dest`` (a monorepo's: every archive in its folder, and
    the workspace's root manifest)."""
    dest.mkdir(parents=True)
    if p.registry == "debian":
        _extract_deb(fetch(p), p.source, dest)
    else:
        _extract(fetch(p), dest / p.subdir)
    if p.go_module:
        (dest / "go.mod").write_text(f"module {p.go_module}\n\ngo 1.18\n", encoding="utf-8")
    for other in p.beside:
        _extract(fetch(other), dest / other.subdir)
    if p.root_manifest:
        (dest / "package.json").write_text(p.root_manifest, encoding="utf-8")
    if not (dest / p.tests_dir).is_dir():
        raise MaterialError(f"{p.spec}: the published archive has no {p.tests_dir}/ folder of tests")
    if p.checkout:  # as its git repository tracks it: no sdist metadata, nothing its .gitignore excludes
        (dest / "PKG-INFO").unlink(missing_ok=True)
        commit_all(dest, f"{p.spec} as its git repository tracks it", ignored=False)
        git(dest, "clean", "-fdqX")
    return dest


def inject(p: Project, root: Path) -> None:
    """Put every bug of ``p`` into the tree at ``root``."""
    for bug in p.bugs:
        path = root / bug.path
        text = path.read_text(encoding="utf-8")
        if text.count(bug.original) != 1:
            raise MaterialError(f"{p.spec}: {bug.path} has {text.count(bug.original)} copies of {bug.original!r}")
        path.write_text(text.replace(bug.original, bug.injected), encoding="utf-8")


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def commit_all(root: Path, message: str, *, ignored: bool = True) -> None:
    """Commit every file of ``root`` (a git repository from now on), those its .gitignore
    excludes too unless ``ignored`` is False."""
    if not (root / ".git").is_dir():
        git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "--all", *(["--force"] if ignored else []), ".")
    git(root, "commit", "--quiet", "--no-verify", "-m", message)


def buggy_checkout(p: Project, dest: Path) -> Path:
    """A git repository of ``p`` with its bugs in, as a user would hand it to Greenloop."""
    unpack(p, dest)
    inject(p, dest)
    commit_all(dest, f"{p.spec} with {len(p.bugs)} injected bug(s)", ignored=not p.checkout)
    return dest


def tree_files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside .git) and its bytes, by relative path."""
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git" or path.is_dir():
            continue
        files[rel.as_posix()] = path.read_bytes() if not path.is_symlink() else os.readlink(path).encode()
    return files


def differences(left: Path, right: Path) -> list[str]:
    """What differs between two trees (outside .git): missing, extra and changed files."""
    a, b = tree_files(left), tree_files(right)
    out = [f"only in {left}: {k}" for k in sorted(a.keys() - b.keys())]
    out += [f"only in {right}: {k}" for k in sorted(b.keys() - a.keys())]
    out += [f"differs: {k}" for k in sorted(a.keys() & b.keys()) if a[k] != b[k]]
    return out


def matching(pattern: str, ids: list[str]) -> list[str]:
    return [t for t in ids if re.search(pattern, t)]
