"""Reading a JSON report document (Jest's and Vitest's ``--json``,
pytest-json-report, gtest's ``--gtest_output=json``, RSpec's and Mocha's
``json`` formatters): from a file with a size bound, or as the first JSON
object that starts a line of a stream where the tests' own output may come
first. Problems come back as a reason, never as an exception, so that each
parser can say in its warnings what it did instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .run_output import MAX_REPORT_BYTES


def read_json_file(path: Path, max_bytes: int = MAX_REPORT_BYTES) -> tuple[object | None, str | None]:
    """(document, None), or (None, why) when the file is missing, too large,
    truncated or malformed."""
    try:
        if not path.is_file():
            return None, "not written"
        if path.stat().st_size > max_bytes:
            return None, "too large to read"
        with open(path, encoding="utf-8", errors="replace") as fh:
            return json.load(fh), None
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"truncated or malformed ({type(exc).__name__}: {exc})"


def first_json_object(text: str) -> object:
    """The first JSON object in ``text`` that starts a line (reporters may
    print other lines before it); raises ValueError when there is none."""
    decoder = json.JSONDecoder()
    last: Exception | None = None
    for m in re.finditer(r"(?m)^\s*\{", text):
        try:
            return decoder.raw_decode(text, m.end() - 1)[0]
        except (ValueError, RecursionError) as exc:
            last = exc
    raise ValueError(str(last) if last else "no JSON object found")
