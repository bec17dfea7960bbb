"""Per-test-file coverage of JavaScript suites, from V8's own coverage (no npm package).

node writes the coverage of every process (and worker thread) it runs when
``NODE_V8_COVERAGE`` names a folder, child processes included: the runners of
vitest, jest, mocha, node:test, tap and ava start from that environment. A
runner's worker may be stopped by a signal or an IPC disconnect before it
exits normally (vitest's forks): a small preload Greenloop writes into
``.greenloop/`` (loaded through ``NODE_OPTIONS``) takes the coverage then.

One coverage file holds one process's (or one worker thread's) functions with
their call counts: V8 names each function as the source does, also after a
transform (vite, babel, ts), where byte offsets would point into transformed
code. So the map kept is, per process, per project file, the names of the
functions that ran; the test files that process ran say whose they are
(``analysis``'s region indexer turns names into lines: activities/testing.py).
A process that ran several test files (jest's reused workers, mocha's single
process) cannot tell which of them ran what: it is left out, never smeared
over all of them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

from pydantic import BaseModel, Field

FOLDER = ".greenloop/v8"
PRELOAD = "greenloop_v8.cjs"
PRELOAD_SOURCE = """// Greenloop (runner/v8_coverage.py): write this process's V8 coverage before a signal or a
// disconnect from its parent ends it (NODE_V8_COVERAGE alone writes it only on a normal exit).
'use strict';
const take = () => { try { require('v8').takeCoverage(); } catch (e) { /* coverage is off */ } };
for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]]) {
  process.once(signal, () => {
    take();
    if (process.listenerCount(signal) === 0) process.exit(code);  // else the process's own handler ends it
  });
}
process.once('disconnect', take);
"""
FRAMEWORKS = ("vitest", "jest", "mocha", "node-test", "node-tap", "tape", "ava")


class ProcessCoverage(BaseModel):
    """What one node process (or worker thread) ran: per project file, the named functions called."""

    functions: dict[str, set[str]] = Field(default_factory=dict)


def supported(framework: str) -> bool:
    return framework in FRAMEWORKS


def prepare(workspace: Path) -> None:
    """Write the preload into the workspace's ``.greenloop/``, with no earlier run's coverage left."""
    clear(workspace)
    folder = workspace / ".greenloop"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PRELOAD).write_text(PRELOAD_SOURCE)


def clear(workspace: Path) -> None:
    shutil.rmtree(workspace / FOLDER, ignore_errors=True)
    (workspace / ".greenloop" / PRELOAD).unlink(missing_ok=True)


def command(test_command: str) -> str:
    """The suite's own command with V8 coverage on in every node process it starts."""
    return (f'NODE_V8_COVERAGE="$PWD/{FOLDER}" '
            f'NODE_OPTIONS="--require \\"$PWD/.greenloop/{PRELOAD}\\"${{NODE_OPTIONS:+ $NODE_OPTIONS}}" {test_command}')


def collect(workspace: Path) -> list[ProcessCoverage]:
    """Each coverage file's project functions that ran (count above 0), by file relative to the
    workspace (the sandbox may mount it elsewhere: a URL's path is matched by its tail)."""
    root = workspace.resolve()
    places: dict[str, str | None] = {}
    out: list[ProcessCoverage] = []
    for part in sorted((workspace / FOLDER).glob("coverage-*.json")):
        try:
            data = json.loads(part.read_text())
        except (OSError, ValueError):
            continue
        ran: dict[str, set[str]] = {}
        for script in data.get("result", []) if isinstance(data, dict) else []:
            url = str(script.get("url") or "")
            if url not in places:
                places[url] = _project_file(root, url)
            rel = places[url]
            if rel is None:
                continue
            for fn in script.get("functions") or []:
                ranges = fn.get("ranges") or []
                if ranges and int(ranges[0].get("count") or 0) > 0:
                    ran.setdefault(rel, set()).add(str(fn.get("functionName") or ""))
        if ran:
            out.append(ProcessCoverage(functions=ran))
    return out


def _project_file(root: Path, url: str) -> str | None:
    """The workspace file a script URL names; None for node's own, a dependency's or Greenloop's."""
    if not url.startswith("file://"):
        return None
    parts = [p for p in unquote(urlparse(url).path).split("/") if p]
    if "node_modules" in parts or ".greenloop" in parts:
        return None
    for i in range(len(parts)):
        rel = "/".join(parts[i:])
        if (root / rel).is_file():
            return rel
    return None


def attributed(processes: list[ProcessCoverage],
               tests_of: dict[str, list[str]]) -> list[tuple[list[str], dict[str, set[str]]]]:
    """Each process that ran exactly one test file (a key of ``tests_of``), with that file's tests:
    what it ran, they ran. A process with no test file (a runner's parent) or several is left out."""
    out: list[tuple[list[str], dict[str, set[str]]]] = []
    for process in processes:
        test_files = [f for f in process.functions if f in tests_of]
        if len(test_files) == 1:
            out.append((tests_of[test_files[0]], process.functions))
    return out
