"""Model calls and tokens per fixed test, on the bundled demo and the real-world suite's projects,
for this checkout or another one (``--greenloop PATH``: a worktree of an earlier commit, with
its own ``.venv``), so that two commits are compared on the same material.

Each run is ``greenloop run REPO --scripted SCENARIO --json`` as the real-world suite starts it
(``tests/realworld/test_realworld.py``: no key, no option but the scripted LLM, the environment
cache under the suite's data home), on a buggy checkout made by this checkout's
``tests/realworld/projects.py`` and with this checkout's scenarios: only the Greenloop that
drives the run differs. The scripted server counts each request it answers and reports tokens
from the request's size (``llm/scripted_server.py``), so the figures measure what Greenloop
sends and how often, not what a model would answer. Printed: one row per project (calls, input
and output tokens, cache writes and reads, cost, fixed tests, stale fixes rebased and re-asked),
as a Markdown table.

    .venv/bin/python bench/model_usage.py [--greenloop PATH] [demo] [NAME...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the real-world material (tests/realworld), imported as the test suite does

from tests.realworld.projects import PROJECTS, buggy_checkout  # noqa: E402
from tests.realworld.test_realworld import RUN_TIMEOUT_S, data_home  # noqa: E402

DEMO = "demo"


def material(name: str, tmp: Path) -> tuple[Path, Path]:
    """The buggy checkout and the scenario of ``name`` (``demo``: the bundled sample)."""
    if name == DEMO:
        return REPO / "samples" / "demo-python", REPO / "samples" / "scenarios" / "demo-python.yaml"
    project = next(p for p in PROJECTS if p.id == name)
    return buggy_checkout(project, tmp / project.name), project.scenario


def run(greenloop: Path, repo: Path, scenario: Path, data_home: Path) -> dict:
    """``greenloop run REPO --scripted SCENARIO --json`` with ``greenloop``'s own venv and code, as
    the real-world suite starts it (its environment; the embedded dev server: no ``--address``)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "GREENLOOP_", "VIRTUAL_ENV", "PYTHON"))}
    env["XDG_DATA_HOME"] = str(data_home)
    done = subprocess.run([str(greenloop / ".venv" / "bin" / "python"), "-m", "greenloop.cli.main", "run", str(repo),
                           "--scripted", str(scenario), "--json"],
                          cwd=greenloop, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env)
    try:
        return json.loads(done.stdout)
    except ValueError:
        sys.exit(f"greenloop run exited {done.returncode}: {done.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--greenloop", type=Path, default=REPO, help="the checkout whose Greenloop drives the runs")
    parser.add_argument("names", nargs="*", default=[DEMO])
    args = parser.parse_args()

    print("| project | fixed | model calls | tokens in + out | cache write / read | cost | calls per fixed test "
          "| tokens per fixed test | rebased / re-asked |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.names:
        with tempfile.TemporaryDirectory(prefix=f"model-usage-{name}-") as tmp:
            repo, scenario = material(name, Path(tmp))
            summary = run(args.greenloop.resolve(), repo, scenario, data_home())
        u, fixed = summary["usage"], len(summary["fixed"])
        tokens = u["input_tokens"] + u["output_tokens"]
        per = (lambda n: f"{n / fixed:.1f}") if fixed else (lambda n: "-")
        print(f"| {name} | {fixed} | {u['calls']} | {u['input_tokens']} + {u['output_tokens']} "
              f"| {u.get('cache_creation_input_tokens', 0)} / {u.get('cache_read_input_tokens', 0)} "
              f"| ${u['cost_usd']:.4f} | {per(u['calls'])} | {per(tokens)} "
              f"| {summary.get('rebased', '-')} / {summary.get('reasked', '-')} |", flush=True)


if __name__ == "__main__":
    main()
