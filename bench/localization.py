"""First-message recall on mutants of published projects: is the code that must change in the
fixer's first message, where does its function rank, and how long is that message?

For each published project of the real-world suite (PyPI sdists and npm tarballs, fetched and
checked like the suite does), install its test dependencies once (a throwaway venv, or
``npm install``), then make single-point mutants of its own source (``analysis/mutants.py``: a
comparison or boolean flipped, an off-by-one, an operator or a constant changed, arguments swapped,
a statement removed), each run on the unchanged tree otherwise (the mutant is the only difference:
no history to read). A mutant is kept when
the suite passed before and fails at least one test after. For up to three failing tests of each
kept mutant, the first message is built by the code the analysis activity builds it with
(``llm/first_message.py``, shared with ``greenloop bench mutants``; Python: with the per-test coverage
the flaky-check run records) and checked:

- recall: is the mutated line inside a code excerpt of the message;
- rank: where the mutated line's function stands among the ranked suspects;
- size: the characters of the fixer's first user message.

``--baseline REV`` measures the context builder of another commit the same way (the figures
before localization: ``--baseline bbafe26``).

    .venv/bin/python bench/localization.py [--per-project 20] [--seed 1] [--baseline REV] [NAME...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from greenloop.analysis.localize import Spectrum  # noqa: E402
from greenloop.analysis.mutants import sample  # noqa: E402
from greenloop.analysis.note import AnalysisNote  # noqa: E402
from greenloop.analysis.patterns import classify  # noqa: E402
from greenloop.llm import prompts  # noqa: E402
from greenloop.llm.first_message import first_message  # noqa: E402
from greenloop.parsers import RunOutput, parse  # noqa: E402
from greenloop.parsers.locate import SourceIndex  # noqa: E402
from greenloop.runner import impact  # noqa: E402
from tests.realworld.projects import PROJECTS, Project, fetch, unpack  # noqa: E402

FRAMEWORK = {"pytest": "pytest", "tape": "tape", "mocha": "mocha"}
def framework(p: Project) -> str:
    return next(FRAMEWORK[w] for w in ("pytest", "tape", "mocha") if w in " ".join(p.hand_test))


def run_suite(p: Project, root: Path, env: dict[str, str], out_dir: Path, spectrum: bool):
    command = " ".join(p.hand_test) + (" -p no:cacheprovider" if p.registry == "pypi" else "")
    if spectrum:
        impact.prepare(root)
        command = impact.command(command)
    out, err = out_dir / "stdout", out_dir / "stderr"
    with out.open("w") as so, err.open("w") as se:
        done = subprocess.run(["bash", "-c", command], cwd=root, env=env, stdout=so, stderr=se, timeout=600)
    report = parse(RunOutput(command=command, exit_code=done.returncode, stdout_path=out, stderr_path=err, cwd=root),
                   framework(p))
    lines = impact.collect_lines(root, {t.id for t in report.tests}) if spectrum else {}
    impact.clear(root)
    return report, Spectrum(files=lines) if lines else None


def load_baseline(rev: str):
    """``build_context`` as commit ``rev`` had it (imported into the package's namespace)."""
    text = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:analysis/context.py"], capture_output=True,
                          text=True, check=True).stdout
    spec = importlib.util.spec_from_loader("greenloop.analysis._baseline_context", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "greenloop.analysis"
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through it
    exec(compile(text, f"{rev}:analysis/context.py", "exec"), module.__dict__)
    return module.build_context


def measure_message(root: Path, report, test, spectrum, baseline, m) -> tuple[bool, int | None, int]:
    """(is the mutated line shown, its function's rank, the message's size) in the fixer's first
    message for ``test``: the run's own (``llm/first_message.py``), or ``baseline``'s."""
    if baseline is None:
        msg = first_message(root, report, test, spectrum)
        return msg.shows(m.file, m.line), msg.rank(m.file, m.function), len(msg.text)
    c = classify(test, set(SourceIndex(root).files()))
    ctx = baseline(root, test, c)
    note = AnalysisNote(kind=c.kind.value, evidence=c.evidence, suggestion=c.suggestion,
                        error_site=f"{c.error_site.file}:{c.error_site.line}" if c.error_site else None,
                        expected=c.expected, actual=c.actual, context_markdown=ctx.render())
    text = prompts.fixer_user(test.id, test.file, test.line, test.message, test.details, note, [])
    return any(s.file == m.file and s.start_line <= m.line <= s.end_line for s in ctx.snippets), None, len(text)


def measure(p: Project, work: Path, count: int, seed: int, baseline) -> list[dict]:
    root = unpack(p, work / "src")
    env = dict(os.environ)
    if p.registry == "pypi":
        venv = work / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
        env["VIRTUAL_ENV"] = str(venv)
        subprocess.run(p.hand_install, cwd=root, env=env, check=True, capture_output=True, timeout=900)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "coverage"], check=True, timeout=600)
    else:
        subprocess.run(p.hand_install, cwd=root, env=env, check=True, capture_output=True, timeout=900)
    outs = work / "out"
    outs.mkdir()
    clean, _ = run_suite(p, root, env, outs, spectrum=False)
    if clean.failing:
        raise SystemExit(f"{p.name}: the published suite fails: {[t.id for t in clean.failing][:5]}")
    # A test that fails only under coverage (a recursion limit, a tracer check) is no mutant's doing.
    traced, _ = run_suite(p, root, env, outs, spectrum=p.registry == "pypi")
    noisy = {t.id for t in traced.failing}
    index = SourceIndex(root)
    pool = [m for m in sample(index, count * 6, seed) if not m.file.startswith(("docs/", "bench"))]
    rows: list[dict] = []
    for number, m in enumerate(pool):
        if len({r["mutant"] for r in rows}) >= count:
            break
        path = root / m.file
        original = path.read_text()
        path.write_text(m.apply(original))
        try:
            report, spectrum = run_suite(p, root, env, outs, spectrum=p.registry == "pypi")
            failing = [t for t in report.failing if t.id not in noisy]
            if not failing:
                continue
            for test in failing[:3]:
                found, rank, chars = measure_message(root, report, test, spectrum, baseline, m)
                rows.append({"project": p.name, "mutant": number, "file": m.file, "line": m.line,
                             "operator": m.operator, "test": test.id, "found": found, "rank": rank,
                             "chars": chars, "failing": len(failing)})
        finally:
            path.write_text(original)
    return rows


def summary(rows: list[dict]) -> dict:
    mutants = {(r["project"], r["mutant"]) for r in rows}
    ranks = [r["rank"] for r in rows]
    return {
        "projects": len({r["project"] for r in rows}), "mutants": len(mutants), "failing tests": len(rows),
        "recall": round(sum(r["found"] for r in rows) / max(1, len(rows)), 3),
        "top1": round(sum(1 for k in ranks if k == 1) / max(1, len(rows)), 3),
        "top5": round(sum(1 for k in ranks if k and k <= 5) / max(1, len(rows)), 3),
        "median chars": int(statistics.median([r["chars"] for r in rows])) if rows else 0,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--per-project", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--baseline", help="measure the context builder of this commit instead")
    ap.add_argument("--json", type=Path, help="write every row here")
    args = ap.parse_args()
    baseline = load_baseline(args.baseline) if args.baseline else None
    rows: list[dict] = []
    started = time.monotonic()
    for p in PROJECTS:
        if args.names and p.name not in args.names:
            continue
        fetch(p)
        with tempfile.TemporaryDirectory(prefix=f"loc-{p.name}-") as work:
            got = measure(p, Path(work), args.per_project, args.seed, baseline)
        print(f"{p.name:22} {json.dumps(summary(got))}", flush=True)
        rows += got
    print(f"{'all':22} {json.dumps(summary(rows))}  ({time.monotonic() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
