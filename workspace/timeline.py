"""What happened to each test and when, read back from the run's event logs
(``events.jsonl`` of the run directory and of each test's worktree folder):
the steps of its timeline, and each attempt's validation output."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

# How much of a validation's output the report keeps (its end says the most).
EXCERPT_LINES = 40
EXCERPT_CHARS = 4000

_VALIDATION_DIR = re.compile(r"validate-(\d+)-single-\d+$")


class Step(BaseModel):
    """One step of a test's timeline."""

    at: str  # UTC, ISO 8601 (seconds)
    state: str  # the test's state during the step: ANALYZING, FIXING, VALIDATING, or what it became
    what: str


class Validation(BaseModel):
    """A test run alone to validate one attempt."""

    attempt: int
    status: str | None
    command: str
    output: str  # the end of its output


def read_events(run_dir: str | Path) -> list[dict]:
    """Every event of the run, oldest first (a line that does not parse is left out)."""
    root = Path(run_dir)
    files = [root / "events.jsonl", *sorted(root.glob("worktrees/*/events.jsonl"))]
    events = []
    for f in files:
        if not f.is_file():
            continue
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return sorted(events, key=lambda e: e.get("timestamp", ""))


def _step(event: dict) -> tuple[str, str] | None:
    kind = event.get("event_type")
    if kind == "analysis_complete":
        return "ANALYZING", f"analysed: {event.get('kind', 'failure')}"
    if kind == "fix_proposed":
        return "FIXING", f"attempt {event.get('attempt')}: fix proposed"
    if kind == "fix_applied":
        return "FIXING", f"attempt {event.get('attempt')}: edits applied to {', '.join(event.get('files') or [])}"
    if kind == "single_run":
        return "VALIDATING", f"run alone: {event.get('status') or 'not found in the output'}"
    if kind == "rolled_back":
        return "VALIDATING", "edits rolled back"
    if kind == "fix_merged":
        return "FIXED", "fix merged into the run workspace"
    if kind == "merge_conflict":
        return "PENDING", "fix did not merge: queued again"
    return None


def timelines(events: list[dict]) -> dict[str, list[Step]]:
    """Each test's steps, in order."""
    out: dict[str, list[Step]] = defaultdict(list)
    for e in events:
        test, step = e.get("test"), _step(e)
        if test and step:
            out[test].append(Step(at=e.get("timestamp", ""), state=step[0], what=step[1]))
    return dict(out)


def _tail(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-EXCERPT_LINES:])[-EXCERPT_CHARS:]


def validations(events: list[dict]) -> dict[str, dict[int, Validation]]:
    """Per test, per attempt: the last run of the test alone and the end of its output."""
    out: dict[str, dict[int, Validation]] = defaultdict(dict)
    for e in events:
        if e.get("event_type") != "single_run" or not e.get("test") or not e.get("artifacts"):
            continue
        folder = Path(e["artifacts"])
        m = _VALIDATION_DIR.search(folder.name)
        if not m:
            continue
        output = "\n".join(t for t in (_tail(p) for p in sorted(folder.glob("test-*/stdout.txt"))
                                       + sorted(folder.glob("test-*/stderr.txt"))) if t)
        out[e["test"]][int(m.group(1))] = Validation(attempt=int(m.group(1)), status=e.get("status"),
                                                     command=str(e.get("command") or ""), output=output)
    return dict(out)
