"""Long tool results cut to a budget, with a note of what was cut.

A test's output, a command's output or a file view can be far longer than is
worth sending to the model (it pays for every character, in every later turn).
``trim`` keeps the start and the end, where failures and summaries are told,
and puts in their place a note that says how much was cut, which lines, and
how to see them."""

from __future__ import annotations

from pathlib import Path

# What one tool result may hold, in characters (the text editor's own view limit).
RESULT_CHARS = 60_000
HEAD_SHARE = 0.3  # of the budget: the start; the rest keeps the end


def trim(text: str, budget: int = RESULT_CHARS, hint: str = "") -> str:
    """``text`` when it fits ``budget`` characters, else its start and end around a note
    ("[greenloop cut N of M characters: lines a-b; <hint>]")."""
    if len(text) <= budget:
        return text
    head_chars = int(budget * HEAD_SHARE)
    head = text[:head_chars]
    tail = text[len(text) - (budget - head_chars):]
    first = head.count("\n") + 1
    last = text.count("\n") + 1 - tail.count("\n")
    cut = len(text) - len(head) - len(tail)
    lines = f"lines {first}-{last}" if last >= first else f"within line {first}"
    note = f"[greenloop cut {cut} of {len(text)} characters here ({lines})" + (f"; {hint}" if hint else "") + "]"
    return f"{head}\n{note}\n{tail}"


def trim_file(path: str | Path, budget: int, hint: str = "") -> str:
    """The text of an output file, cut to ``budget`` like ``trim`` (a file of tens of MB is
    never read whole: its start and end are)."""
    p = Path(path)
    if not p.is_file():
        return ""
    size = p.stat().st_size
    with p.open("rb") as f:
        if size <= 4 * budget:
            return trim(f.read().decode("utf-8", errors="replace"), budget, hint)
        head = f.read(int(budget * HEAD_SHARE)).decode("utf-8", errors="replace")
        f.seek(size - (budget - len(head)))
        tail = f.read().decode("utf-8", errors="replace")
    note = f"[greenloop cut {size - len(head) - len(tail)} of {size} bytes here" + (f"; {hint}" if hint else "") + "]"
    return f"{head}\n{note}\n{tail}"
