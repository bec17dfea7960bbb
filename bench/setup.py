"""Setup phase: cold vs warm, for small sample projects.

    python bench/setup.py [--runs N] [--sandbox bwrap]

For each sample (a src-layout Python library with a test extra; a Node
project with a package-lock.json) it measures, in the same run:

- cold: an empty Greenloop data directory (no environment, no uv/npm package cache);
- rebuild: the environment is gone but the package caches are warm (what a
  changed lockfile costs);
- warm: the environment is in the cache (every later run, worktree and validation).

Each is the median of N setups; the ratio is cold / warm.

Then warm suite runs of a Go module and a Rust crate: Greenloop's (the sandbox,
the environment's kept build caches, the parse) against the bare warm command
(the plan's test command run directly in a copy of the project, its own
caches warm, with the variables a sandboxed run gets and no other of the
host's); the median of N runs each, after one run that warms both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from greenloop.projectenv import cache  # noqa: E402
from greenloop.projectenv.setup import set_up  # noqa: E402
from greenloop.runner.execute import run_tests  # noqa: E402
from greenloop.runner.plan import plan_tests  # noqa: E402
from greenloop.sandbox.environment import sandbox_env  # noqa: E402
from greenloop.sandbox.models import SandboxSettings  # noqa: E402
from tests.projectenv.conftest import NODE_MANIFEST, SRC_LAYOUT, git_init, write  # noqa: E402
from tests.projectenv.test_setup import CRATE  # noqa: E402

GO_MODULE = {
    "go.mod": "module example.com/sums\n\ngo 1.19\n",
    "sums.go": "package sums\n\nfunc Add(a, b int) int { return a - b }\n",
    "sums_test.go": "package sums\n\nimport \"testing\"\n\n"
                    "func TestAdd(t *testing.T) { if Add(2, 2) != 4 { t.Fatal(\"bad\") } }\n"
                    "func TestZero(t *testing.T) { if Add(0, 0) != 0 { t.Fatal(\"bad\") } }\n",
}


def python_sample(root: Path) -> tuple[Path, str, str]:
    return git_init(write(root / "wordy", SRC_LAYOUT)), "python", "pytest"


def node_sample(root: Path) -> tuple[Path, str, str]:
    ws = write(root / "numbers", {"index.js": "module.exports = require('is-number');\n"})
    (ws / "package.json").write_text(json.dumps(NODE_MANIFEST))
    subprocess.run(["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"],
                   cwd=ws, check=True, capture_output=True, timeout=300)
    return git_init(ws), "javascript", "node-test"


async def once(ws: Path, language: str, framework: str, settings: SandboxSettings, out: Path) -> tuple[float, str]:
    started = time.monotonic()
    env = await set_up(ws, language, framework, settings, out)
    return time.monotonic() - started, env.source


async def measure(sample, runs: int, settings: SandboxSettings, scratch: Path) -> dict:
    ws, language, framework = sample(scratch / "project")
    cold, rebuild, warm = [], [], []
    for i in range(runs):
        home = scratch / f"home-{i}"
        os.environ["GREENLOOP_HOME"] = str(home)
        t, source = await once(ws, language, framework, settings, scratch / f"cold-{i}")
        assert source == "built", source
        cold.append(t)
        for d in cache.envs_root().glob(f"{'python' if language == 'python' else 'node'}-*"):
            shutil.rmtree(d) if d.is_dir() else d.unlink()
        t, source = await once(ws, language, framework, settings, scratch / f"rebuild-{i}")
        assert source == "built", source
        rebuild.append(t)
        t, source = await once(ws, language, framework, settings, scratch / f"warm-{i}")
        assert source == "cache", source
        warm.append(t)
    med = {k: statistics.median(v) for k, v in (("cold", cold), ("rebuild", rebuild), ("warm", warm))}
    return {**med, "ratio": med["cold"] / med["warm"]}


async def suite_runs(files: dict[str, str], runs: int, settings: SandboxSettings, scratch: Path) -> dict:
    """Median seconds of a warm Greenloop suite run and of the bare warm command."""
    os.environ["GREENLOOP_HOME"] = str(scratch / "home")
    ws = git_init(write(scratch / "project", files))
    bare = shutil.copytree(ws, scratch / "bare")
    plan = plan_tests(ws)
    plan.environment = await set_up(ws, plan.language, plan.framework, settings, scratch / "setup")
    # The bare command gets the variables a sandboxed run gets (the allow-list, a private HOME, the
    # environment's offline settings), its own build caches, and nothing else of the host's: a host's
    # RUST_BACKTRACE=1 made every failing Rust test symbolize a backtrace in the bare run only.
    (scratch / "bare-home").mkdir()
    env = sandbox_env(str(scratch / "bare-home"), {**plan.environment.env, "GOCACHE": str(scratch / "bare-gocache")})

    async def greenloop(i: int) -> float:
        started = time.monotonic()
        await run_tests(plan, ws, scratch / f"suite-{i}", settings)
        return time.monotonic() - started

    def direct() -> float:
        started = time.monotonic()
        subprocess.run(["bash", "-c", plan.test_command], cwd=bare, env=env, capture_output=True, timeout=600)
        return time.monotonic() - started

    await greenloop(-1)
    direct()  # both warm
    ours, theirs = [], []
    for i in range(runs):
        ours.append(await greenloop(i))
        theirs.append(direct())
    med = {"greenloop": statistics.median(ours), "bare": statistics.median(theirs)}
    return {**med, "command": plan.test_command, "ratio": med["greenloop"] / med["bare"]}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sandbox", default="bwrap")
    args = ap.parse_args()
    settings = SandboxSettings(backend=args.sandbox)
    print("| sample | cold | rebuild (package caches warm) | warm (cache hit) | cold / warm |")
    print("|---|---:|---:|---:|---:|")
    for name, sample in (("Python src layout, test extra (uv)", python_sample),
                         ("Node, package-lock.json (npm ci)", node_sample)):
        with tempfile.TemporaryDirectory(prefix="greenloop-bench-setup-") as tmp:
            r = await measure(sample, args.runs, settings, Path(tmp))
        print(f"| {name} | {r['cold']:.2f} s | {r['rebuild']:.2f} s | {r['warm'] * 1000:.0f} ms | {r['ratio']:.0f}x |")
    print()
    print("| warm suite run | command | Greenloop | bare | Greenloop / bare |")
    print("|---|---|---:|---:|---:|")
    for name, files in (("Go module, 2 tests", GO_MODULE), ("Rust crate, 2 tests", CRATE)):
        with tempfile.TemporaryDirectory(prefix="greenloop-bench-suite-") as tmp:
            r = await suite_runs(files, args.runs, settings, Path(tmp))
        print(f"| {name} | `{r['command']}` | {r['greenloop'] * 1000:.0f} ms | {r['bare'] * 1000:.0f} ms "
              f"| {r['ratio']:.2f}x |")


if __name__ == "__main__":
    asyncio.run(main())
