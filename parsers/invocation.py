"""The call of a test runner inside a shell command, taken apart: the words
that start the runner (environment, wrappers, the runner and its
subcommand), the options kept, the positional arguments that chose what to
run, and the command's own selection options. Single-test selection and crash
resume build new commands on it, so a rebuilt command keeps the suite's
environment, wrappers and flags (the output must read as the suite's did).

The words keep their quoting (``command.raw_words``); each framework module
says where its runner's words end and which of its options take a value or
choose tests (``registry.Parser``'s selection members).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from .command import raw_words, split_segments, unquote
from .models import TestResult

ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Invocation:
    """The runner's call in a command, taken apart."""

    before: str  # earlier segments with their operators ("cd x && ")
    head: list[str]  # env, wrappers, the runner and its subcommand
    options: list[str] = field(default_factory=list)  # kept flags with their values
    positionals: list[str] = field(default_factory=list)  # what chose the tests: dropped
    after_dashes: list[str] | None = None  # cargo: the libtest arguments after "--"
    dropped: list[str] = field(default_factory=list)  # the command's own selection options

    def render(self, *extra: str) -> str:
        return self.before + " ".join([*self.head, *self.options, *(e for e in extra if e)])


def bin_name(word: str) -> str:
    """A command word's program name (``./node_modules/.bin/jest`` -> ``jest``)."""
    return unquote(word).rsplit("/", 1)[-1]


def split_args(words: list[str], inv: Invocation, value_options: set[str], selecting: set[str]) -> None:
    """Sort the words after the head into kept options, dropped selection
    options (with their values) and dropped positionals."""
    i = 0
    while i < len(words):
        w, v = words[i], unquote(words[i])
        if v.startswith("-") and v != "-":
            key = v.split("=", 1)[0]
            group = [w]
            if key == v and key in value_options and i + 1 < len(words):
                group.append(words[i + 1])
                i += 1
            (inv.dropped if key in selecting else inv.options).extend(group)
        else:
            inv.positionals.append(w)
        i += 1


def without(options: list[str], keys: set[str], value_options: set[str]) -> list[str]:
    """``options`` without the options ``keys`` (and the value a separate word gives them)."""
    out: list[str] = []
    skip = False
    for w in options:
        if skip:
            skip = False
            continue
        key = unquote(w).split("=", 1)[0]
        if key in keys:
            skip = key == unquote(w) and key in value_options
            continue
        out.append(w)
    return out


def take_apart(command: str, runner_end: Callable[[list[str]], int | None],
               split: Callable[[list[str], Invocation], None]) -> Invocation | None:
    """The last call of a runner in ``command`` (``runner_end`` says where its
    words end in a segment, ``split`` sorts the words after them), or None when
    no segment calls it. Segments before it stay (``cd sub &&``, a build),
    earlier calls of the runner itself and pipes do not."""
    segments = split_segments(command)
    for k in range(len(segments) - 1, -1, -1):
        op, segment = segments[k]
        if op == "|":
            continue
        words = raw_words(segment)
        end = runner_end(words)
        if end is None:
            continue
        before = "".join(f"{s} {segments[j + 1][0]} " for j, (_, s) in enumerate(segments[:k])
                         if runner_end(raw_words(s)) is None)
        inv = Invocation(before=before, head=words[:end])
        split(words[end:], inv)
        return inv
    return None


def insert_options(command: str, runner_end: Callable[[list[str]], int | None], value_options: set[str],
                   options: list[str]) -> str | None:
    """``command`` with ``options`` put in the runner's last call before its
    first path (what a runner that reads options only before its paths needs:
    ``node --test``); ``value_options`` take the next word as their value.
    Every other segment stays as it was. None when no segment calls the runner."""
    segments = split_segments(command)
    for k in range(len(segments) - 1, -1, -1):
        op, segment = segments[k]
        words = raw_words(segment)
        end = None if op == "|" else runner_end(words)
        if end is None:
            continue
        at = end
        while at < len(words) and (v := unquote(words[at])).startswith("-") and v != "-" and v != "--":
            at += 2 if v in value_options and at + 1 < len(words) else 1
        segments[k] = (op, " ".join([*words[:at], *options, *words[at:]]))
        return "".join(f" {o} {s}" if o else s for o, s in segments)
    return None


# ---------------------------------------------------------------------- name patterns


def js_regex(title: str) -> str:
    """A JavaScript regex matching exactly ``title``."""
    return "^" + re.escape(title) + "$"


def alternation(patterns: list[str]) -> str:
    """Anchored patterns (``^...$``) as one anchored alternation."""
    return patterns[0] if len(patterns) == 1 else "^(?:" + "|".join(p[1:-1] for p in patterns) + ")$"


def title_pattern(titles: list[str]) -> str:
    """A JavaScript regex matching exactly these full titles."""
    return alternation([js_regex(t) for t in titles])


def test_files(tests: list[TestResult], inv: Invocation) -> list[str]:
    """The tests' files (shell-quoted), or the command's own paths when a test's file is unknown."""
    if all(t.file for t in tests):
        return list(dict.fromkeys(shlex.quote(t.file) for t in tests if t.file))
    return inv.positionals
