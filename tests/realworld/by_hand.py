"""Check the real-world material outside Greenloop: for each project, install its
test dependencies by hand (a throwaway venv, or ``npm install``), run its suite on
the published tree (every test must pass) and on the buggy one (exactly the tests
each bug names must fail).

    .venv/bin/python -m tests.realworld.by_hand [NAME...]

Needs the network (PyPI, npm). Prints one line per project and exits non-zero when
the material is wrong; what it checks is what the real-world suite takes for granted.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.realworld.projects import PROJECTS, Project, inject, unpack


def failing_ids(p: Project, out: str) -> list[str]:
    """The failing tests in the output of ``p.hand_test``."""
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)  # humanize's addopts ask for --color=yes
    if "unittest" in p.hand_test:  # its failure blocks: "FAIL: name (id)", "ERROR: name (id)"
        return [m.group(1) for m in re.finditer(r"^(?:FAIL|ERROR): \S+ \((\S+)\)$", out, re.M)]
    if p.registry == "pypi":
        return [line.split(" ", 1)[1].split(" - ")[0] for line in out.splitlines() if line.startswith("FAILED ")]
    if "tape" in p.hand_test:
        failed, name = [], ""
        for line in out.splitlines():
            if line.startswith("# "):
                name = line[2:]
            elif line.startswith("not ok") and name not in failed:
                failed.append(name)
        return failed
    report = json.loads(out[out.index("{"):])
    if "jest" in p.hand_test:
        return [a["fullName"] for r in report["testResults"] for a in r["assertionResults"] if a["status"] == "failed"]
    return [f["fullTitle"] for f in report["failures"]]


def run_suite(p: Project, root: Path, venv: Path | None) -> tuple[int, list[str], str]:
    env = dict(os.environ)
    if venv is not None:
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
        env["VIRTUAL_ENV"] = str(venv)
    subprocess.run(p.hand_install, cwd=root, env=env, check=True, capture_output=True, timeout=600)
    done = subprocess.run(p.hand_test, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout + (done.stderr if "unittest" in p.hand_test else "")  # unittest reports on stderr
    return done.returncode, failing_ids(p, out), done.stdout[-2000:] + done.stderr[-2000:]


def check(p: Project, work: Path) -> list[str]:
    """What is wrong with ``p``'s material (nothing: an empty list)."""
    problems: list[str] = []
    for state in ("published", "buggy"):
        root = unpack(p, work / state)
        if state == "buggy":
            inject(p, root)
        venv = None
        if p.registry == "pypi":
            venv = work / f"venv-{state}"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        code, failed, tail = run_suite(p, root, venv)
        if state == "published" and (code != 0 or failed):
            problems.append(f"the published suite fails (exit {code}): {failed}\n{tail}")
        if state == "buggy":
            for bug in p.bugs:
                if not any(re.search(bug.breaks, t) for t in failed):
                    problems.append(f"no failing test matches {bug.breaks!r}: {failed}")
            stray = [t for t in failed if not any(re.search(b.breaks, t) for b in p.bugs)]
            if stray:
                problems.append(f"tests fail that no bug names: {stray}")
            if code == 0:
                problems.append("the buggy suite exits 0")
            print(f"  {p.id}: buggy suite fails {len(failed)} test(s): {failed}")
    return problems


def main(names: list[str]) -> int:
    bad = 0
    for p in PROJECTS:
        if names and p.name not in names and p.id not in names:
            continue
        with tempfile.TemporaryDirectory(prefix=f"realworld-{p.id}-") as work:
            problems = check(p, Path(work))
        print(f"{p.spec}: {'ok' if not problems else 'WRONG'}")
        for problem in problems:
            print(f"  {problem}")
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
