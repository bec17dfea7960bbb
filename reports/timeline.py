"""What happened to each test and when, read back from the run's event logs
(``events.jsonl`` of the run directory, of each test's worktree folder and of
each validation-queue check's folder): the steps of its timeline, and each
attempt's validation output."""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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


def read_events(run_dir: str | Path) -> list[dict[str, Any]]:
    """Every event of the run, oldest first (a line that does not parse is left out)."""
    root = Path(run_dir)
    files = [root / "events.jsonl", *sorted(root.glob("worktrees/*/events.jsonl")),
             *sorted(root.glob("batches/*/events.jsonl"))]
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


def run_time(events: list[dict[str, Any]], now: float | None = None) -> tuple[str | None, float | None]:
    """When the run's first step was logged (UTC, ISO 8601) and the seconds from it to ``now``
    (the report is written at the run's end); (None, None) without a readable step."""
    stamps = [e["timestamp"] for e in events if isinstance(e.get("timestamp"), str)]
    for first in sorted(stamps):
        try:
            start = datetime.strptime(first, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
        return first, max(0.0, (time.time() if now is None else now) - start)
    return None, None


def _checked(event: dict, test: str) -> str:
    """A validation-queue check of ``test``'s fix (with the others of its batch or part), as a step."""
    tests = event.get("tests") or []
    what = f"checked in {event.get('label')}" + (f" with {len(tests) - 1} other fix(es)" if len(tests) > 1 else "")
    if event.get("ok"):
        return f"{what}: passed"
    if test in (event.get("still_failing") or []):
        return f"{what}: the test still fails"
    if event.get("broken"):
        return f"{what}: {event['broken']}"
    regressions = event.get("regressions") or []
    if regressions:
        return f"{what}: tests that passed now fail ({', '.join(regressions[:3])})"
    return f"{what}: failed"


def _short(event: dict) -> str:
    """A command the model ran, on one line, shortened."""
    command = " ".join(str((event.get("input") or {}).get("command") or "").split())
    return command if len(command) <= 80 else command[:77] + "..."


def _step(event: dict, test: str) -> tuple[str, str] | None:
    kind = event.get("event_type")
    if kind == "analysis_complete":
        return "ANALYZING", f"analysed: {event.get('kind', 'failure')}"
    if kind == "fix_proposed":
        return "FIXING", f"attempt {event.get('attempt')}: fix proposed"
    if kind == "model_test_run":
        tests = (event.get("input") or {}).get("tests") or ["the failing test"]
        return ("ANALYZING" if event.get("role") == "analyzer" else "FIXING",
                f"attempt {event.get('attempt')}: the {event.get('role')} ran {', '.join(tests)}: {event.get('outcome')}")
    if kind == "model_command":
        return ("ANALYZING" if event.get("role") == "analyzer" else "FIXING",
                f"attempt {event.get('attempt')}: the {event.get('role')} ran `{_short(event)}`: {event.get('outcome')}")
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
    if kind == "batch_checked":
        return "VALIDATING", _checked(event, test)
    if kind == "batch_accepted":
        return "FIXED", "fix accepted into the run workspace"
    return None


def timelines(events: list[dict[str, Any]]) -> dict[str, list[Step]]:
    """Each test's steps, in order (a validation-queue event names every test of its batch)."""
    out: dict[str, list[Step]] = defaultdict(list)
    for e in events:
        named = e.get("tests")
        for test in named if isinstance(named, list) else [e.get("test")]:
            step = _step(e, test) if test else None
            if step:
                out[test].append(Step(at=e.get("timestamp", ""), state=step[0], what=step[1]))
    return dict(out)


def _tail(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-EXCERPT_LINES:])[-EXCERPT_CHARS:]


def validations(events: list[dict[str, Any]]) -> dict[str, dict[int, Validation]]:
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
