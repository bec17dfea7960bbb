"""Reading the command a test run was started with, for every parser: its
shell words, its segments (``build && test``), the words one tool was given,
option values and the ``VAR=value`` assignments that start a segment.

Parsers read commands to learn what the run asked for (which reporter, which
report file, which filter); none of them runs the command, so this is
deliberately a word splitter, not a shell.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

# Shell operators that end one command and start the next.
SEGMENT_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
SEPARATORS = ("&&", "||", ";", "|")
# ``npm test``, ``yarn run test:ci``, ``pnpm test`` (with variables before it): the package script it runs.
PACKAGE_RUNNER = re.compile(r"^(?:\w+=\S*\s+)*(?:npm|yarn|pnpm)(?:\s+run)?\s+([\w:.-]+)")
ENV_WORD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


def command_words(command: str) -> list[str]:
    """Shell words of a command; falls back to whitespace splitting on bad quoting."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def segments(command: str) -> list[str]:
    """The simple commands of a command line, in order (empty ones left out)."""
    return [s for s in SEGMENT_SPLIT.split(command.strip()) if s]


def tool_words(words: list[str], is_tool: Callable[[int, str], bool]) -> list[str] | None:
    """The words given to the last word ``is_tool(i, word)`` accepts, up to
    the end of its segment; None when no word is the tool."""
    start = None
    for i, w in enumerate(words):
        if is_tool(i, w):
            start = i + 1
    if start is None:
        return None
    out: list[str] = []
    for w in words[start:]:
        if w in SEPARATORS:
            break
        if w.endswith(";"):  # "b.py;": the word ends the segment, its text belongs to it
            out.extend([w.rstrip(";")] if w.rstrip(";") else [])
            break
        out.append(w)
    return out


def option_values(words: list[str], *names: str) -> list[str]:
    """Values of an option given as ``--name=v``, ``--name v`` or ``-n v``."""
    out: list[str] = []
    for i, w in enumerate(words):
        for name in names:
            if w == name and i + 1 < len(words):
                out.append(words[i + 1])
            elif w.startswith(name + "="):
                out.append(w[len(name) + 1:])
    return out


def plain_words(words: list[str], start: int, value_options: set[str]) -> list[str]:
    """The plain words from ``words[start]`` to the end of its shell segment:
    options, and the values of the options in ``value_options``, left out."""
    out: list[str] = []
    skip = False
    for w in words[start:]:
        if w in SEPARATORS:
            break
        if skip:
            skip = False
            continue
        if w.startswith("-"):
            skip = "=" not in w and w in value_options
            continue
        out.append(w)
    return out


def env_assignments(command: str) -> dict[str, str]:
    """``VAR=value`` words that start a command (or follow ``export``/``env``)."""
    env: dict[str, str] = {}
    at_start = True
    for w in command_words(command):
        if w in SEPARATORS or w.endswith(";"):
            at_start = True
            m = ENV_WORD.match(w.rstrip(";"))
            if m and w.endswith(";"):
                env[m.group(1)] = m.group(2)
            continue
        if w in ("export", "env", "cross-env"):
            at_start = True
            continue
        m = ENV_WORD.match(w)
        if m and at_start:
            env[m.group(1)] = m.group(2)
            continue
        at_start = False
    return env


def with_package_scripts(command: str, root: Path | None) -> str:
    """The command with the package.json script each ``npm test`` / ``npm t``
    / ``npm run x`` / ``yarn x`` segment runs appended (after `` ; ``, with the
    words passed to it after ``--``), so that options and variables written
    in the script are seen too."""
    if root is None:
        return command
    try:
        scripts = json.loads((root / "package.json").read_text(encoding="utf-8")).get("scripts")
    except (OSError, ValueError, AttributeError):
        return command
    if not isinstance(scripts, dict):
        return command
    extra: list[str] = []
    for seg in segments(command):
        m = PACKAGE_RUNNER.match(seg)
        script = scripts.get("test" if m.group(1) == "t" else m.group(1)) if m else None
        if isinstance(script, str):
            words = command_words(seg)
            passed = words[words.index("--") + 1:] if "--" in words else []
            extra.append(" ".join([script, *map(shlex.quote, passed)]))
    return " ; ".join([command, *extra])
