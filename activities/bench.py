"""``greenloop bench mutants``: fix quality on the user's own repository.

Single-point mutants of the project's source (``analysis/mutants.py``), each committed into a
fresh one-commit repository (the mutant is the only difference from the project's last commit,
and no history points at it), are driven by ordinary Greenloop runs (``workflows/bench.py``
starts one per mutant). A mutant is kept when the suite passed before (a run on the unmutated
tree) and fails at least one test after. For each kept mutant this module measures the fixer's
first message, built by the code the run's analysis uses (``llm/first_message.py``), for up to
``MAX_TESTS`` failing tests: is the mutated line inside a code excerpt, where its function ranks
among the suspects, how long the message is; the run says whether it was fixed and at what cost.

``prepare`` (called by the CLI before the bench starts) makes the repositories and, for
``--scripted-oracle``, the scenario in which the scripted LLM answers each mutant's fixer with
the reverse mutation. The activities measure a kept mutant and write the bench's JSON and HTML.
"""

from __future__ import annotations

import asyncio
import html
import io
import json
import re
import shutil
import statistics
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field
from temporalio import activity

from ..analysis.localize import Spectrum
from ..analysis.mutants import Mutant, sample
from ..domain.errors import ErrorKind, GreenloopError
from ..domain.llm import Usage
from ..git_command import git
from ..llm.first_message import first_message
from ..parsers.locate import SourceIndex
from ..run_request import FixRequest
from ..workspace.backups import slug
from .errors import typed_errors
from .testing import load_report

MAX_TESTS = 3  # failing tests of a mutant whose first message is measured
# The one-commit repositories' fixed identity and date: the same mutants make the same commits.
COMMIT_ENV = {"GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}


class MutantCase(BaseModel):
    """One mutant, committed alone into its repository ``repo``."""

    number: int
    mutant: Mutant
    repo: str

    @property
    def name(self) -> str:
        return f"m{self.number:02d}"

    def run_id(self, bench_id: str) -> str:
        """The id of this mutant's run (a child of the bench's workflow)."""
        return f"{bench_id}-{self.name}"


class BenchInput(BaseModel):
    """What the bench workflow drives: the unmutated repository, the mutants, and the run each
    mutant gets (``request``: the repository and run directory are filled in per mutant)."""

    bench_id: str
    source: str  # the user's repository
    out_dir: str
    clean_repo: str
    cases: list[MutantCase]
    request: FixRequest
    concurrency: int = Field(default=2, ge=1, le=16)
    fix: bool = False


class TestMeasure(BaseModel):
    test: str
    in_message: bool
    rank: int | None
    chars: int  # the first message as the analysis builds it (before any analyzer findings)
    # With --fix: the size of the first message the run's fixer was sent (the analyzer's findings in it),
    # and whether it holds the very context measured here.
    sent_chars: int | None = None
    same_context: bool | None = None


class MeasureInput(BaseModel):
    case: MutantCase
    run_dir: str


class MutantResult(BaseModel):
    """One mutant: what changed, whether the tests noticed (kept), and for a kept one what its
    first message showed and, with ``--fix``, what fixing it took."""

    number: int
    file: str
    line: int
    function: str
    operator: str
    before: str
    after: str
    run_id: str
    kept: bool
    why_not: str = ""  # why a mutant was not kept
    failing: int = 0  # tests the mutant fails
    tests: list[TestMeasure] = Field(default_factory=list[TestMeasure])
    # The first measured test's figures (the mutant's row in the table).
    in_message: bool | None = None
    rank: int | None = None
    chars: int | None = None
    # With --fix: did the run fix every failing test, how many attempts, tokens, cost and time.
    fixed: bool | None = None
    state: str = ""
    attempts: int = 0
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0


class BenchReportInput(BaseModel):
    bench_id: str
    source: str
    out_dir: str
    fix: bool
    results: list[MutantResult]


class BenchResult(BaseModel):
    bench_id: str
    source: str
    fix: bool
    results: list[MutantResult]
    totals: dict[str, Any]
    json_path: str
    html_path: str


def prepare(repo: Path, out_dir: Path, count: int, seed: int, ref: str = "HEAD") -> tuple[Path, list[MutantCase]]:
    """The project's commit ``ref`` as a one-commit repository (``clean``) and ``count`` mutants of its
    source, each as its own one-commit repository; typed errors for a path that is not a git
    repository (or has no such commit) and a project with nothing to mutate."""
    if not repo.is_dir():
        raise GreenloopError(f"{repo} does not exist or is not a directory", kind=ErrorKind.VALIDATION_ERROR,
                             suggestion="give the path of a git repository")
    probe = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", f"{ref}^{{commit}}"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        raise GreenloopError(f"{repo} is not a git repository with a commit {ref}: the mutants are made from it",
                             kind=ErrorKind.VALIDATION_ERROR,
                             suggestion="run it on a git repository (git init && git add -A && git commit)"
                             if ref == "HEAD" else "give --ref a branch, tag or commit of the repository")
    if out_dir.exists():
        shutil.rmtree(out_dir)
    clean = out_dir / "clean"
    clean.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", ref], capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(clean, filter="data")
    index = SourceIndex(clean)
    mutants = sample(index, count, seed)
    if not mutants:
        raise GreenloopError(f"{repo} has no source a mutant can change (Python, JavaScript/TypeScript, Go or Rust "
                             "functions outside tests)", kind=ErrorKind.VALIDATION_ERROR)
    cases: list[MutantCase] = []
    for number, m in enumerate(mutants, 1):
        case = MutantCase(number=number, mutant=m, repo=str(out_dir / "mutants" / f"m{number:02d}"))
        shutil.copytree(clean, case.repo, symlinks=True)
        target = Path(case.repo) / m.file
        target.write_text(m.apply(target.read_text()))
        _commit(Path(case.repo), f"mutant {case.name}")
        cases.append(case)
    _commit(clean, "the project's last commit")
    return clean, cases


def _commit(root: Path, message: str) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", message, env=COMMIT_ENV)


def oracle_scenario(cases: list[MutantCase], bench_id: str) -> dict[str, Any]:
    """A scripted-LLM scenario (``llm/scenario.py``) whose fixer undoes each mutant: in each
    mutant's run, the first turn replaces the mutated line (with its neighbours
    when it is not unique in the file) by the original, the second says it is done."""
    rules: list[dict[str, Any]] = [{"name": "analyzer", "trigger": {"role": "analyzer"},
                                    "response": {"text": "The code under test was changed; see the suspects."}}]
    for case in cases:
        context = f"^{re.escape(case.run_id(bench_id))}/"
        old, new = _unique_edit(Path(case.repo) / case.mutant.file, case.mutant)
        edit = {"command": "str_replace", "path": case.mutant.file, "old_str": old, "new_str": new}
        rules += [
            {"name": f"{case.name}-fix", "priority": 10, "trigger": {"role": "fixer", "context": context, "turn": 1},
             "response": {"text": "Undoing the change.", "tool_calls": [
                 {"name": "str_replace_based_edit_tool", "input": edit}]}},
            {"name": f"{case.name}-done", "priority": 10, "trigger": {"role": "fixer", "context": context, "turn": 2},
             "response": {"text": f"{case.mutant.file}:{case.mutant.line} is back to what it was."}},
        ]
    return {"name": "mutants-oracle", "description": "undoes each mutant (greenloop bench mutants --scripted-oracle)",
            "rules": rules, "default": {"text": "No change."}}


def _unique_edit(path: Path, m: Mutant) -> tuple[str, str]:
    """The mutated line and its original, widened by neighbouring lines until it is unique."""
    lines = path.read_text().split("\n")
    i = m.line - 1
    lo, hi = i, i + 1
    while True:
        old = "\n".join(lines[lo:hi])
        if "\n".join(lines).count(old) == 1 or (lo == 0 and hi == len(lines)):
            new = "\n".join([*lines[lo:i], m.before, *lines[i + 1:hi]])
            return old, new
        lo, hi = max(0, lo - 1), min(len(lines), hi + 1)


def write_scenario(path: Path, scenario: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True))
    return path


def initial_report(run_dir: Path) -> Path:
    """The report of a run's first suite run (``activities/testing.py`` keeps each run's under
    ``runs/<label>-<n>``; a retried one, after a lost worker, under the next ``n``: the last one read)."""
    done = [p for p in (run_dir / "runs").glob("initial-*/report.json") if p.parent.name.split("-")[-1].isdigit()]
    if not done:
        raise GreenloopError(f"the run in {run_dir} has no first suite run's report", kind=ErrorKind.VALIDATION_ERROR)
    return max(done, key=lambda p: int(p.parent.name.split("-")[-1]))


@activity.defn
@typed_errors
async def measure_mutant(inp: MeasureInput) -> list[TestMeasure]:
    """The fixer's first message for up to ``MAX_TESTS`` of the kept mutant's failing tests, as the
    mutant's run built it: its first suite run, its per-test coverage when recorded, the mutant's tree."""
    return await asyncio.to_thread(_measure, inp)


def _measure(inp: MeasureInput) -> list[TestMeasure]:
    run_dir, m = Path(inp.run_dir), inp.case.mutant
    report = load_report(str(initial_report(run_dir)))
    spectrum = Spectrum.load(run_dir)
    out: list[TestMeasure] = []
    for test in report.failing[:MAX_TESTS]:
        msg = first_message(Path(inp.case.repo), report, test, spectrum)
        sent = _sent(run_dir, test.id)
        out.append(TestMeasure(test=test.id, in_message=msg.shows(m.file, m.line), rank=msg.rank(m.file, m.function),
                               chars=len(msg.text), sent_chars=len(sent) if sent is not None else None,
                               same_context=msg.context.render() in sent if sent is not None else None))
    return out


def _sent(run_dir: Path, test_id: str) -> str | None:
    """The first message the run's fixer was sent for ``test_id`` (its first attempt's conversation,
    ``activities/conversation.py``), when it asked one."""
    path = run_dir / "conversations" / slug(test_id) / "attempt-1.json"
    try:
        content = json.loads(path.read_text())["messages"][0]["content"]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    return content if isinstance(content, str) else None


def totals(results: list[MutantResult], fix: bool) -> dict[str, Any]:
    """The bench's figures over its kept mutants (per failing test measured, as bench/README.md counts)."""
    kept = [r for r in results if r.kept]
    rows = [t for r in kept for t in r.tests]
    n = max(1, len(rows))
    out: dict[str, Any] = {
        "mutants": len(results), "kept": len(kept), "failing_tests": len(rows),
        "recall": round(sum(t.in_message for t in rows) / n, 3),
        "top1": round(sum(1 for t in rows if t.rank == 1) / n, 3),
        "top5": round(sum(1 for t in rows if t.rank is not None and t.rank <= 5) / n, 3),
        "median_chars": int(statistics.median([t.chars for t in rows])) if rows else 0,
    }
    if fix:
        usage = sum((r.usage for r in kept), Usage())
        out.update(fixed=sum(1 for r in kept if r.fixed), attempts=sum(r.attempts for r in kept),
                   input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                   cost_usd=round(usage.cost_usd, 4), seconds=round(sum(r.seconds for r in kept), 1))
    return out


@activity.defn
@typed_errors
async def write_bench_report(inp: BenchReportInput) -> BenchResult:
    """The bench's JSON (``bench.json``) and HTML page (``bench.html``) in its directory."""
    out = Path(inp.out_dir)
    result = BenchResult(bench_id=inp.bench_id, source=inp.source, fix=inp.fix, results=inp.results,
                         totals=totals(inp.results, inp.fix), json_path=str(out / "bench.json"),
                         html_path=str(out / "bench.html"))
    Path(result.json_path).write_text(result.model_dump_json(indent=2))
    Path(result.html_path).write_text(render_html(result))
    return result


def render_html(result: BenchResult) -> str:
    """One self-contained page: the figures, then a row per mutant."""
    e = html.escape
    head = ["#", "mutant", "kept", "failing", "line in message", "rank", "chars"]
    if result.fix:
        head += ["fixed", "attempts", "tokens", "cost", "time"]
    rows: list[str] = []
    for r in result.results:
        cells = [str(r.number), f"<code>{e(r.file)}:{r.line}</code> {e(r.operator)} in <code>{e(r.function)}</code>"
                 f"<br><del>{e(r.before.strip())}</del><br><ins>{e(r.after.strip())}</ins>",
                 "yes" if r.kept else f"no ({e(r.why_not)})", str(r.failing),
                 "" if r.in_message is None else ("yes" if r.in_message else "no"),
                 str(r.rank or "—") if r.kept else "", str(r.chars or "") if r.kept else ""]
        if result.fix:
            cells += ["" if r.fixed is None else ("yes" if r.fixed else "no"), str(r.attempts),
                      str(r.usage.input_tokens + r.usage.output_tokens), f"${r.usage.cost_usd:.4f}", f"{r.seconds:.1f} s"]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    figures = "".join(f"<li>{e(k)}: {e(json.dumps(v))}</li>" for k, v in result.totals.items())
    return (f"<!doctype html><meta charset=utf-8><title>greenloop bench mutants: {e(result.source)}</title>"
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}del{color:#a00}ins{color:#070}</style>"
            f"<h1>Mutants of {e(result.source)}</h1><p>bench {e(result.bench_id)}</p><ul>{figures}</ul>"
            "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(rows) + "</table>")
