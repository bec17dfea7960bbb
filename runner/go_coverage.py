"""Per-test coverage for Go: the lines each failing test (and a sample of passing ones) ran.

``go test -cover`` measures per package binary, not per test, so the honest way
is one run per test: each package with a chosen test is compiled once with
coverage of its whole module (``go test -c -cover -coverpkg=<module>/...``),
then its binary runs each chosen test alone (``-test.run '^TestX$'``) with its
own ``-test.coverprofile``. The cost is one compile per package and a quick
run per test (~20 ms for a go-cmp subtest, the binary built), so the number
of runs is limited: every failing test (up to ``MAX_FAILING``) and passing
tests (up to ``MAX_PASSING``), nearest the failing ones first, which are the
spectrum's other side. Only the spectrum (analysis/localize.py) reads it: a
sample of the passing tests is no test impact map (runner/impact.py), which
must know every test that ran a file.

Table-driven tests: a subtest runs as its own path (``^TestX$/^case$``: each
slash-separated part of ``-run`` matches one level of names). A parent that
fails because its subtests fail is not run itself (that would run every case
of the table, passing ones included, and blur what its failing cases ran): the
spectrum gives it what its measured failing subtests ran
(``Spectrum.covered``). The passing tests measured first are the failing
subtests' siblings: the other rows of the same table run the same code with
other inputs, so the lines only the failing rows ran stand out (a suspect run
by no passing test), where a sample of unrelated tests leaves most of the
library run by "no passing test".

A profile's blocks with a count above zero are the lines the test ran; their
files are named by import path, mapped back to the workspace through its
``go.mod`` files.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..parsers.models import Status, TestReport

FOLDER = ".greenloop/impact/go"
MAX_FAILING = 10
MAX_PASSING = 300
MIN_PASSING = 20  # the nearest passing tests, always measured
PASSING_BUDGET_S = 45  # seconds after the first test binary is built, after which no further passing test runs
_SKIP_DIRS = {"vendor", "node_modules", ".git", ".greenloop", "testdata"}
_BLOCK = re.compile(r"^(.+\.go):(\d+)\.\d+,(\d+)\.\d+ \d+ (\d+)$")


def modules(workspace: Path) -> dict[str, str]:
    """Each module's path (from its go.mod) and its folder relative to the workspace ("" for the top)."""
    out: dict[str, str] = {}
    for mod in sorted(workspace.rglob("go.mod")):
        rel = mod.parent.relative_to(workspace)
        if any(part in _SKIP_DIRS for part in rel.parts):
            continue
        try:
            text = mod.read_text(errors="replace")
        except OSError:
            continue
        found = re.search(r"^\s*module\s+\"?([^\s\"]+)", text, re.M)
        if found:
            out[found.group(1)] = rel.as_posix() if rel.parts else ""
    return out


def _local(import_path: str, mods: dict[str, str]) -> tuple[str, str] | None:
    """The module an import path belongs to (longest match) and the path's folder in the workspace."""
    best = max((m for m in mods if import_path == m or import_path.startswith(m + "/")), key=len, default=None)
    if best is None:
        return None
    rest = import_path[len(best):].lstrip("/")
    folder = "/".join(p for p in (mods[best], rest) if p)
    return best, folder


def chosen(report: TestReport) -> list[str]:
    """The tests to measure: the failing ones (a parent of failing subtests left to them), then
    passing ones nearest a failing one (its table's other rows first, then its package's tests)."""
    failing_ids = [t.id for t in report.tests if t.status in (Status.FAILED, Status.ERRORED) and "::" in t.id]
    parents = {p for i in failing_ids for p in _ancestors(i)}
    failing = [i for i in failing_ids if i not in parents][:MAX_FAILING]
    paths = [_path(i) for i in failing]
    passing = [t.id for t in report.tests if t.status == Status.PASSED and "::" in t.id]
    # Stable: equally near tests keep the report's order.
    passing.sort(key=lambda i: -max((_shared(_path(i), p) for p in paths), default=0))
    return failing + passing[:MAX_PASSING]


def _path(test_id: str) -> list[str]:
    """A test id as the path of names it runs under: its package, its function, its subtests."""
    package, _, name = test_id.partition("::")
    return [package, *name.split("/")]


def _shared(a: list[str], b: list[str]) -> int:
    """How many leading names two test paths share (1: the package, 2: the test function, ...)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _ancestors(test_id: str) -> list[str]:
    """The tests a subtest runs under (``pkg::TestX`` for ``pkg::TestX/a/b``, then ``pkg::TestX/a``)."""
    package, _, name = test_id.partition("::")
    parts = name.split("/")
    return [f"{package}::{'/'.join(parts[:n])}" for n in range(1, len(parts))]


def run_pattern(name: str) -> str:
    """The ``-test.run`` pattern that selects exactly one test or subtest."""
    return "/".join(f"^{re.escape(part)}$" for part in name.split("/"))


def script(workspace: Path, report: TestReport) -> str | None:
    """A shell command that writes one coverage profile per chosen test into ``FOLDER``
    (``<n>.out``, with ``index.txt`` naming each n's test id); None when there is nothing to measure.
    The failing tests' packages come first; past the ``MIN_PASSING`` nearest passing tests, passing
    tests stop being run ``PASSING_BUDGET_S`` after the first test binary is built (a suite of slow
    tests costs that much at most beyond the old sample; the compile, slow on a loaded machine, is
    not counted)."""
    failing = {t.id for t in report.tests if t.status in (Status.FAILED, Status.ERRORED)}
    if not failing:
        return None
    mods = modules(workspace)
    by_package: dict[str, list[str]] = {}
    for test_id in chosen(report):  # failing tests first, so their packages come first
        by_package.setdefault(test_id.split("::", 1)[0], []).append(test_id)
    in_budget = f"[ $(($(date +%s) - start)) -lt {PASSING_BUDGET_S} ]"
    lines = [f"rm -rf {FOLDER}", f"mkdir -p {FOLDER}", f'out="$PWD/{FOLDER}"', "start="]
    n = passing = 0
    for p, (package, tests) in enumerate(by_package.items()):
        where = _local(package, mods)
        if where is None:
            continue
        module, folder = where
        binary = f'"$out/pkg{p}.test"'
        go_dir = shlex.quote(folder or ".")
        lines.append(("" if failing.intersection(tests) or passing < MIN_PASSING else f"{in_budget} && ")
                     + f"(cd {go_dir} && go test -c -cover -coverpkg={shlex.quote(module + '/...')} "
                     f"-o {binary} . >/dev/null 2>&1) &&")
        lines.append("{")
        lines.append('  start="${start:-$(date +%s)}"')
        for test_id in tests:
            name = test_id.split("::", 1)[1]
            bounded = test_id not in failing and passing >= MIN_PASSING
            passing += test_id not in failing
            lines.append(f"  {in_budget + ' && ' if bounded else ''}"
                         f"printf '%s\\t%s\\n' {n} {shlex.quote(test_id)} >> \"$out/index.txt\" &&")
            lines.append(f"  (cd {go_dir} && {binary} -test.count=1 -test.run {shlex.quote(run_pattern(name))} "
                         f'-test.coverprofile="$out/{n}.out" >/dev/null 2>&1)')
            n += 1
        lines.append(f"  rm -f {binary}")
        lines.append("}")
    if n == 0:
        return None
    lines.append("true")
    return "\n".join(lines)


def collect(workspace: Path, known: set[str]) -> dict[str, dict[str, list[int]]]:
    """The lines each measured test ran, per workspace-relative file: {file: {test id: [lines]}}."""
    folder = workspace / FOLDER
    index = folder / "index.txt"
    if not index.is_file():
        return {}
    mods = modules(workspace)
    files: dict[str, dict[str, set[int]]] = {}
    for row in index.read_text(errors="replace").splitlines():
        n, _, test_id = row.partition("\t")
        profile = folder / f"{n}.out"
        if test_id not in known or not profile.is_file():
            continue
        for line in profile.read_text(errors="replace").splitlines()[1:]:  # the first line is "mode: ..."
            block = _BLOCK.match(line.strip())
            if block is None or block.group(4) == "0":
                continue
            package, _, base = block.group(1).rpartition("/")
            where = _local(package, mods)
            if where is None:
                continue
            file = "/".join(p for p in (where[1], base) if p)
            into = files.setdefault(file, {}).setdefault(test_id, set())
            into.update(range(int(block.group(2)), int(block.group(3)) + 1))
    return {f: {t: sorted(n) for t, n in sorted(by.items())} for f, by in sorted(files.items())}
