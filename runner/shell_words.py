"""Shell command text taken apart without losing its quoting: segments at
``&&``/``||``/``;``/``|``/``&`` and words, each kept as written so a command
rebuilt from them means what it meant (``tape 'test/**/*.js'`` keeps its
quotes, so tape, not the shell, expands the glob)."""

from __future__ import annotations

import shlex


def split_segments(text: str) -> list[tuple[str, str]]:
    """A shell command split at unquoted ``&&``, ``||``, ``;``, ``|`` and ``&``,
    as ``(operator before, raw segment)`` pairs (the first operator is "")."""
    out: list[tuple[str, str]] = []
    buf: list[str] = []
    op, quote, i = "", "", 0
    while i < len(text):
        c = text[i]
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < len(text):
                buf.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
            buf.append(c)
        elif c == "\\" and i + 1 < len(text):
            buf.extend(text[i:i + 2])
            i += 1
        elif c == "&" and ((buf and buf[-1] in "<>") or text[i + 1:i + 2] == ">"):
            buf.append(c)  # a redirection (2>&1, &>file), not a separator
        elif c in "&|;":
            two = text[i:i + 2]
            sep = two if two in ("&&", "||") else c
            out.append((op, "".join(buf).strip()))
            buf, op = [], sep
            i += len(sep)
            continue
        else:
            buf.append(c)
        i += 1
    out.append((op, "".join(buf).strip()))
    return [(o, s) for o, s in out if s]


def raw_words(segment: str) -> list[str]:
    """Shell words of a segment with their quoting kept."""
    words: list[str] = []
    buf: list[str] = []
    quote, i = "", 0
    while i < len(segment):
        c = segment[i]
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < len(segment):
                buf.append(segment[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
            buf.append(c)
        elif c == "\\" and i + 1 < len(segment):
            buf.extend(segment[i:i + 2])
            i += 1
        elif c.isspace():
            if buf:
                words.append("".join(buf))
                buf = []
        else:
            buf.append(c)
        i += 1
    if buf:
        words.append("".join(buf))
    return words


def unquote(word: str) -> str:
    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if parts else ""
