"""What a parser is handed: the command, its exit code, its output streams and
the directories reports and sources live in.

Streams are read line by line so that memory grows with the number of tests,
never with the size of the output (a 1 GB log is fine). Undecodable bytes are
replaced, over-long lines are cut, NUL bytes are dropped.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
MAX_LINE_CHARS = 64 * 1024
MAX_REPORT_BYTES = 512 * 1024 * 1024
TAIL_CHARS = 4_000
TIMEOUT_CMD_RE = re.compile(r"(?:^|[\s;&|(])timeout\s+(?:(?:-s|-k)\s+\S+\s+|-\S+\s+)*\d")


def strip_ansi(text: str) -> str:
    """Remove colour and cursor escape sequences."""
    return ANSI_RE.sub("", text) if "\x1b" in text else text


def _iter_stream_lines(stream: io.TextIOBase) -> Iterator[str]:
    while True:
        line = stream.readline(MAX_LINE_CHARS)
        if not line:
            return
        if not line.endswith(("\n", "\r")):
            # Over-long line: skip the rest of it, keep what we have.
            # (A line may end in a lone "\r": files are read with universal
            # newlines, and progress output rewrites lines with it.)
            rest = line
            while rest and not rest.endswith(("\n", "\r")):
                rest = stream.readline(MAX_LINE_CHARS)
        yield line.rstrip("\r\n").replace("\x00", "")


class RunOutput(BaseModel):
    """A finished run of a test command, as parsers see it.

    Each stream is given either as a file (``*_path``, streamed) or as text
    (``*_text``, for small in-memory outputs and tests).
    """

    model_config = ConfigDict(frozen=True)

    command: str = ""
    exit_code: int | None = None
    stdout_path: Path | None = None
    stderr_path: Path | None = None
    stdout_text: str | None = None
    stderr_text: str | None = None
    # Where the command ran: report paths named in the command resolve here.
    cwd: Path | None = None
    # The project's sources, for locating test definitions; defaults to cwd.
    project_root: Path | None = None

    @property
    def sources_root(self) -> Path | None:
        return self.project_root or self.cwd

    def lines(self, stream: str = "stdout", *, ansi: bool = False) -> Iterator[str]:
        """Lines of ``stream`` ("stdout" or "stderr"), ANSI-stripped unless ``ansi``."""
        text: str | None = getattr(self, f"{stream}_text")
        path: Path | None = getattr(self, f"{stream}_path")
        if text is not None:
            source: io.TextIOBase = io.StringIO(text)
        elif path is not None and path.is_file():
            source = open(path, encoding="utf-8", errors="replace", newline="")  # noqa: SIM115
        else:
            return
        with source:
            for line in _iter_stream_lines(source):
                yield line if ansi else strip_ansi(line)

    def all_lines(self, *, ansi: bool = False) -> Iterator[str]:
        """stdout then stderr (captured separately, so their interleaving is lost)."""
        yield from self.lines("stdout", ansi=ansi)
        yield from self.lines("stderr", ansi=ansi)

    def head(self, stream: str = "stdout", max_chars: int = 64 * 1024) -> str:
        """The first ``max_chars`` characters of a stream (for detection)."""
        out: list[str] = []
        size = 0
        for line in self.lines(stream):
            out.append(line)
            size += len(line) + 1
            if size >= max_chars:
                break
        return "\n".join(out)

    def tail(self, max_chars: int = TAIL_CHARS) -> str:
        """The last ``max_chars`` characters of stdout+stderr, for a human."""
        from collections import deque

        kept: deque[str] = deque()
        size = 0
        for line in self.all_lines():
            kept.append(line)
            size += len(line) + 1
            while size > max_chars and len(kept) > 1:
                size -= len(kept.popleft()) + 1
        return "\n".join(kept)[-max_chars:]

    @property
    def killed_by_timeout(self) -> bool:
        """The whole run was killed by coreutils ``timeout`` (exit 124, or 137
        with ``-s KILL``): tests that were running then count as timed out."""
        return self.exit_code in (124, 137) and TIMEOUT_CMD_RE.search(self.command) is not None

    def resolve(self, path: str) -> Path | None:
        """A report path as the command named it, resolved against cwd."""
        p = Path(path)
        if not p.is_absolute():
            if self.cwd is None:
                return None
            p = self.cwd / p
        return p
