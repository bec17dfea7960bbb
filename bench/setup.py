"""Setup phase: cold vs warm, for small sample projects.

    python bench/setup.py [--runs N] [--sandbox bwrap]

For each sample (a src-layout Python library with a test extra; a Node
project with a package-lock.json) it measures, in the same run:

- cold: an empty Greenloop data directory (no environment, no uv/npm package cache);
- rebuild: the environment is gone but the package caches are warm (what a
  changed lockfile costs);
- warm: the environment is in the cache (every later run, worktree and validation).

Each is the median of N setups; the ratio is cold / warm.
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
from greenloop.sandbox.models import SandboxSettings  # noqa: E402
from tests.projectenv.conftest import NODE_MANIFEST, SRC_LAYOUT, git_init, write  # noqa: E402


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


if __name__ == "__main__":
    asyncio.run(main())
