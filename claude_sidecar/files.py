"""File contents and unified diffs of what the agent's edit tools do to files.

Used to preview a Write, Edit or MultiEdit before the user allows it: the diff is
computed from the file on disk and the tool's input, exactly as the tool would apply it.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Any

MAX_TEXT_BYTES = 2 * 1024 * 1024
"""Files larger than this get a notice instead of contents or a diff."""

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})


class Unreadable(Exception):
    """A file whose contents cannot be shown as text (binary, too large, unreadable)."""


@dataclass(frozen=True)
class Preview:
    """The diff an edit would make, or why there is none."""

    diff: str | None
    note: str | None = None


def read_text(path: str) -> str | None:
    """The file's text, None if it does not exist; ``Unreadable`` if it is not shown as text."""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Unreadable(f"cannot read {path}: {e.strerror}") from e
    if size > MAX_TEXT_BYTES:
        raise Unreadable(f"file is larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB "
                         f"({size} bytes)")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Unreadable(f"cannot read {path}: {e.strerror}") from e
    if b"\x00" in data:
        raise Unreadable("binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Unreadable("not UTF-8 text") from e


def unified_diff(path: str, old: str | None, new: str | None) -> str:
    """A unified diff from ``old`` to ``new`` (None: the file does not exist)."""
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
        fromfile=path if old is not None else "/dev/null",
        tofile=path if new is not None else "/dev/null")
    # difflib leaves a line without its newline unterminated; mark it as diff(1) does.
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _apply_edit(text: str, old: str, new: str, replace_all: bool) -> str:
    count = text.count(old) if old else 0
    if count == 0:
        raise ValueError("old_string is not in the file")
    if count > 1 and not replace_all:
        raise ValueError(f"old_string occurs {count} times and replace_all is false")
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)


def preview_edit(tool_name: str, tool_input: dict[str, Any]) -> Preview | None:
    """The diff ``tool_name`` would make with ``tool_input``; None for other tools."""
    if tool_name not in EDIT_TOOLS:
        return None
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not os.path.isabs(path):
        return Preview(None, "file_path is not an absolute path")
    try:
        old = read_text(path)
    except Unreadable as e:
        return Preview(None, str(e))
    try:
        if tool_name == "Write":
            content = tool_input.get("content")
            if not isinstance(content, str):
                return Preview(None, "content is not a string")
            return Preview(unified_diff(path, old, content))
        if old is None:
            return Preview(None, "the file does not exist")
        edits = ([tool_input] if tool_name == "Edit" else tool_input.get("edits") or [])
        new = old
        for edit in edits:
            new = _apply_edit(new, str(edit.get("old_string", "")),
                              str(edit.get("new_string", "")), bool(edit.get("replace_all")))
        return Preview(unified_diff(path, old, new))
    except (ValueError, AttributeError) as e:
        return Preview(None, f"the edit would fail: {e}")
