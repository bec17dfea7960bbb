"""Per-run overhead of each sandbox backend over a bare subprocess.

Two commands, each run N times (default 10) in a copy of samples/demo-python:
``true`` (pure overhead) and the demo's pytest suite
(``python -m pytest -q -p no:cacheprovider``, a small real suite). Backends:
docker with its warm pool and without it, bwrap, local — each through its
module's ``run`` directly (the same call the dispatcher makes) — and a bare
``bash -c`` subprocess as the baseline. Backends take turns run by run (so a
drift in the machine's load hits them alike); the first round is a warm-up,
not counted (it builds the docker image and, for the pool, starts the
container). Pooled runs follow each other at once, so each waits for the
previous run's reset: a worker with gaps between runs hides that part.

Usage: python bench/sandbox.py [--runs N] [--only BACKEND ...] — prints a markdown table
(median and p90 wall time per run; overhead = median minus the bare median).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from greenloop.sandbox.environment import sandbox_env  # noqa: E402
from greenloop.sandbox.models import Limits  # noqa: E402

COMMANDS = {"true": "true", "pytest (demo)": "python -m pytest -q -p no:cacheprovider"}
BACKENDS = ("bare", "local", "bwrap", "docker (pool)", "docker (no pool)")


def bare(command: str, ws: Path) -> None:
    subprocess.run(["bash", "-c", command], cwd=ws, env=sandbox_env("/tmp"), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)


async def sandboxed(name: str, command: str, ws: Path, out: Path) -> None:
    module = importlib.import_module("greenloop.sandbox." + name.split()[0])
    extra = {"pooled": name == "docker (pool)"} if name.startswith("docker") else {}
    r = await module.run(command, ws, sandbox_env("/tmp"), Limits(timeout_s=120, memory_mb=1024), out,
                         lambda _: None, **extra)
    if r.exit_code is None or r.timed_out:
        raise RuntimeError(f"{name}: {command!r} did not finish: {r.warnings}")


def usable(name: str) -> tuple[bool, str]:
    if name == "bare":
        return True, ""
    try:
        module = importlib.import_module("greenloop.sandbox." + name.split()[0])
    except ImportError as exc:
        return False, f"no module ({exc})"
    return module.available()


def once(name: str, command: str, ws: Path, out: Path) -> float:
    started = time.perf_counter()
    if name == "bare":
        bare(command, ws)
    else:
        asyncio.run(sandboxed(name, command, ws, out))
    return time.perf_counter() - started


def measure(names: list[str], command: str, ws: Path, runs: int, tmp: Path) -> dict[str, list[float]]:
    """Round-robin over the backends, so drift in the machine's load hits them all alike."""
    times: dict[str, list[float]] = {n: [] for n in names}
    for i in range(runs + 1):
        for name in names:
            took = once(name, command, ws, tmp / f"{name}-{i}")
            if i:  # the first round warms up
                times[name].append(took)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--only", nargs="*", choices=BACKENDS)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="greenloop-bench-sandbox-"))
    ws = tmp / "demo-python"
    shutil.copytree(REPO / "samples" / "demo-python", ws, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    rows, skipped, names = [], [], []
    for name in args.only or BACKENDS:
        ok, why = usable(name)
        (names.append(name) if ok else skipped.append(f"{name}: {why}"))
    medians: dict[str, float] = {}
    try:
        for label, command in COMMANDS.items():
            for name, times in measure(names, command, ws, args.runs, tmp).items():
                times.sort()
                med = statistics.median(times)
                p90 = times[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))]
                if name == "bare":
                    medians[label] = med
                rows.append((name, label, med, p90))
    finally:
        if any(n.startswith("docker") for n in names):
            from greenloop.sandbox import docker

            docker.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"Sandbox overhead per run ({args.runs} runs each, after one warm-up; wall time)\n")
    print("| backend | command | median | p90 | overhead vs bare |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, label, med, p90 in rows:
        base = medians.get(label)
        over = "—" if name == "bare" or base is None else f"{(med - base) * 1000:+.0f} ms"
        print(f"| {name} | {label} | {med * 1000:.0f} ms | {p90 * 1000:.0f} ms | {over} |")
    for line in skipped:
        print(f"\nnot measured: {line}")


if __name__ == "__main__":
    main()
