"""The run's JSONL event log in its run directory: one line
per thing that happened, for people and tools that read files rather than
the Temporal history."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


def log_event(run_dir: str | Path, event_type: str, **data: Any) -> None:
    """Append one event; best effort (a full disk must not fail a test run)."""
    line = {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()), "event_type": event_type, **data}
    try:
        with open(Path(run_dir) / "events.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(line, default=str) + "\n")
    except OSError:
        pass
