"""Anthropic's own text-editor tool, which Claude is trained on, over the overlay.

The tool is declared by type, not by schema: ``text_editor_20250728`` (named
``str_replace_based_edit_tool``) for Claude 4 models and later,
``text_editor_20250124`` (``str_replace_editor``) for Claude 3.7,
``text_editor_20241022`` for Claude 3.5. Its commands are ``view`` (a file
with numbered lines, or a directory), ``str_replace``, ``create`` and
``insert``; results read like Anthropic's reference implementation (``cat -n``
numbering, a snippet of the edited lines), and every mistake is an error
result the model can act on. ``undo_edit`` (older versions) is answered with
an error: the conversation's edits are kept between model calls as the files
they make, with no history, so the model edits again instead.

Edits land in the overlay, never on disk, confined like every other edit
(``workspace/policy.py``). The analyzer gets the same tool but may only view:
an edit command is answered with an error that says so.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .tools import MAX_READ_CHARS, Overlay, ToolError
from .trim import trim

SNIPPET_LINES = 4


class EditorVersion(BaseModel, frozen=True):
    type: str
    name: str


CLAUDE_4 = EditorVersion(type="text_editor_20250728", name="str_replace_based_edit_tool")
CLAUDE_3_7 = EditorVersion(type="text_editor_20250124", name="str_replace_editor")
CLAUDE_3_5 = EditorVersion(type="text_editor_20241022", name="str_replace_editor")
NAMES = {v.name for v in (CLAUDE_4, CLAUDE_3_7, CLAUDE_3_5)}
EDIT_COMMANDS = {"str_replace", "create", "insert", "undo_edit"}


def version_for(model: str) -> EditorVersion:
    """The editor tool version of ``model`` (newer and unknown models get the newest)."""
    m = model.lower()
    if "3-7" in m or "3.7" in m:
        return CLAUDE_3_7
    if "3-5" in m or "3.5" in m:
        return CLAUDE_3_5
    return CLAUDE_4


def declaration(model: str) -> dict[str, Any]:
    """The tool's entry in a request's ``tools``."""
    v = version_for(model)
    out: dict[str, Any] = {"type": v.type, "name": v.name}
    if v is CLAUDE_4:
        out["max_characters"] = MAX_READ_CHARS
    return out


def numbered(text: str, start: int = 1) -> str:
    """Lines numbered as ``cat -n`` numbers them."""
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(text.split("\n"), start))


class Editor:
    """The editor's commands over ``overlay``."""

    def __init__(self, overlay: Overlay) -> None:
        self.overlay = overlay

    def call(self, args: dict[str, Any], *, allow_edits: bool) -> str:
        command = args.get("command")
        if command not in {"view", *EDIT_COMMANDS}:
            raise ToolError(f"unknown command {command!r}: use view, str_replace, create or insert")
        if command in EDIT_COMMANDS and not allow_edits:
            raise ToolError(f"{command} is not available here: this conversation only views files "
                            "(say what should change instead)")
        if command == "undo_edit":
            raise ToolError("undo_edit is not available: edit the file again (str_replace) to change it back")
        params = {k: v for k, v in args.items() if k != "command"}
        if command == "insert" and "insert_text" in params and "new_str" not in params:
            params["new_str"] = params.pop("insert_text")  # both spellings of the inserted text
        return getattr(self, command)(**params)

    # --- commands ---------------------------------------------------------------------------
    def view(self, path: str, view_range: list[int] | None = None) -> str:
        rel = self.overlay.resolve(path)
        text = self.overlay.text(rel)
        if text is None:
            if view_range is not None:
                raise ToolError(f"the path {path} does not exist or is a directory: view_range is for files")
            return f"Here are the files and directories in {rel}, excluding hidden items:\n" \
                   + self.overlay.list_dir(rel)
        lines = text.split("\n")
        start = 1
        if view_range is not None:
            if not (isinstance(view_range, list) and len(view_range) == 2
                    and all(isinstance(n, int) for n in view_range)):
                raise ToolError("view_range must be a list of two integers, [start, end] (end -1: to the end)")
            start, end = view_range
            if not 1 <= start <= len(lines):
                raise ToolError(f"view_range's start {start} is outside the file's lines [1, {len(lines)}]")
            if end != -1 and not start <= end:
                raise ToolError(f"view_range's end {end} must be -1 or at least its start {start}")
            lines = lines[start - 1:] if end == -1 else lines[start - 1:end]
        out = trim(numbered("\n".join(lines), start), MAX_READ_CHARS, "view a view_range to see them")
        return f"Here's the result of running `cat -n` on {rel}:\n{out}\n"

    def str_replace(self, path: str, old_str: str, new_str: str = "") -> str:
        rel = self.overlay.resolve(path, for_edit=True)
        text = self.overlay.text(rel)
        if text is None:
            raise ToolError(f"the path {path} does not exist: create it with the create command")
        if not isinstance(old_str, str) or not old_str or not isinstance(new_str, str):
            raise ToolError("old_str must be a non-empty string and new_str a string")
        count = text.count(old_str)
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {rel}.")
        if count > 1:
            lines = [n + 1 for n, line in enumerate(text.split("\n")) if old_str.split("\n")[0] in line]
            raise ToolError(f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines "
                            f"{lines}. Please ensure it is unique")
        new = text.replace(old_str, new_str, 1)
        self.overlay.write(rel, new)
        at = text.split(old_str)[0].count("\n") + 1
        return self._edited(rel, new, at, new_str.count("\n"))

    def create(self, path: str, file_text: str) -> str:
        rel = self.overlay.resolve(path, for_edit=True)
        if not isinstance(file_text, str):
            raise ToolError("file_text must be a string")
        self.overlay.write(rel, file_text)
        return f"File created successfully at: {rel}"

    def insert(self, path: str, insert_line: int, new_str: str) -> str:
        rel = self.overlay.resolve(path, for_edit=True)
        text = self.overlay.text(rel)
        if text is None:
            raise ToolError(f"the path {path} does not exist: create it with the create command")
        lines = text.split("\n")
        if not isinstance(insert_line, int) or not 0 <= insert_line <= len(lines):
            raise ToolError(f"insert_line {insert_line!r} must be within the file's lines [0, {len(lines)}]")
        if not isinstance(new_str, str):
            raise ToolError("new_str must be a string")
        added = new_str.split("\n")
        new = "\n".join(lines[:insert_line] + added + lines[insert_line:])
        self.overlay.write(rel, new)
        return self._edited(rel, new, insert_line + 1, len(added) - 1)

    # --- helpers ----------------------------------------------------------------------------
    def _snippet(self, rel: str, text: str, at: int, added: int) -> str:
        lines = text.split("\n")
        start = max(1, at - SNIPPET_LINES)
        end = min(len(lines), at + added + SNIPPET_LINES)
        body = numbered("\n".join(lines[start - 1:end]), start)
        return f"Here's the result of running `cat -n` on a snippet of {rel}:\n{body}\n"

    def _edited(self, rel: str, text: str, at: int, added: int) -> str:
        return (f"The file {rel} has been edited. {self._snippet(rel, text, at, added)}"
                "Review the changes and make sure they are as expected. Edit the file again if necessary.")


