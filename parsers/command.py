"""Reading the command a test run was started with, for every parser: its
shell words, its segments (``build && test``), the words one tool was given,
option values and the ``VAR=value`` assignments that start a segment.

Parsers read commands to learn what the run asked for (which reporter, which
report file, which filter); none of them runs the command, so this is
deliberately a word splitter, not a shell. The runner reads package scripts and
builds single-test commands with the same reader (``split_segments`` and
``raw_words`` keep each word's quoting, so a rebuilt command means what it meant).
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
    """The simple commands of a command line, in order (empty ones left out; quoted
    separators stay inside their command)."""
    return [segment for _, segment in split_segments(command)]


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


# --- quoting kept: commands taken apart so that, rebuilt, they mean what they meant ---------


def _pieces(text: str) -> list[tuple[str, bool]]:
    """The text in the pieces the shell reads it in: a quoted character, an escape
    pair, or a bare character (``True``: unquoted and unescaped, so it may separate)."""
    out: list[tuple[str, bool]] = []
    quote, i = "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and quote != "'":
            out.append((text[i:i + 2], False))
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        out.append((c, not quote and c not in "'\""))
        i += 1
    return out


def split_segments(text: str) -> list[tuple[str, str]]:
    """A shell command split at unquoted ``&&``, ``||``, ``;``, ``|`` and ``&``,
    as ``(operator before, raw segment)`` pairs (the first operator is "")."""
    pieces = _pieces(text)
    out: list[tuple[str, str]] = []
    buf: list[str] = []
    op, k = "", 0
    while k < len(pieces):
        piece, bare = pieces[k]
        following = pieces[k + 1][0] if k + 1 < len(pieces) and pieces[k + 1][1] else ""
        if bare and piece == "&" and ((buf and buf[-1] in "<>") or following == ">"):
            buf.append(piece)  # a redirection (2>&1, &>file), not a separator
        elif bare and piece in "&|;":
            sep = piece + following if piece + following in ("&&", "||") else piece
            out.append((op, "".join(buf).strip()))
            buf, op = [], sep
            k += len(sep)
            continue
        else:
            buf.append(piece)
        k += 1
    out.append((op, "".join(buf).strip()))
    return [(o, s) for o, s in out if s]


def raw_words(segment: str) -> list[str]:
    """Shell words of a segment with their quoting kept."""
    words: list[str] = []
    buf: list[str] = []
    for piece, bare in _pieces(segment):
        if bare and piece.isspace():
            if buf:
                words.append("".join(buf))
                buf = []
        else:
            buf.append(piece)
    if buf:
        words.append("".join(buf))
    return words


def unquote(word: str) -> str:
    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if parts else ""
