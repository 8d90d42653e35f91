"""A file as it was before and after a change, and the unified diff between the two.

The payload of a channel's ``FileUpdated`` event, and what edit previews and rewinds
diff with: below the channel (which makes changes) and the conversation and front ends
(which show them).
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from dataclasses import dataclass

MAX_TEXT_BYTES = 2 * 1024 * 1024
"""Files larger than this get a notice instead of contents or a diff."""


class Unreadable(Exception):
    """A file whose contents cannot be shown as text (binary, too large, unreadable)."""


def read_text(path: str) -> str | None:
    """The file's text, None if it does not exist; ``Unreadable`` if it is not shown as text."""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Unreadable(f"cannot read {path}: {e.strerror}") from e
    if size > MAX_TEXT_BYTES:
        raise Unreadable(
            f"file is larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB ({size} bytes)"
        )
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


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@$")


def unified_diff(path: str, old: str | None, new: str | None, context: int = 3) -> str:
    """A unified diff from ``old`` to ``new`` (None: the file does not exist).

    Lines both sides share at the start and the end are set aside before difflib runs,
    so a small edit of a big file costs a scan of it, not a full sequence match (which
    is quadratic in the worst case and ~20 ms for 10,000 lines even in the best).
    """
    a = (old or "").splitlines(keepends=True)
    b = (new or "").splitlines(keepends=True)
    common = min(len(a), len(b))
    head = 0
    while head < common and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < common - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start, cut = max(0, head - context), max(0, tail - context)
    lines = difflib.unified_diff(
        a[start : len(a) - cut],
        b[start : len(b) - cut],
        n=context,
        fromfile=path if old is not None else "/dev/null",
        tofile=path if new is not None else "/dev/null",
    )
    parts = []
    for line in lines:
        if start and line.startswith("@@"):
            line = _shift_hunk(line, start)
        # difflib leaves a line without its newline unterminated; mark it as diff(1) does.
        parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    text = "".join(parts)
    if not text and (old is None) != (new is None):
        # Creating or deleting an empty file changes no line, but it is still a change.
        text = (
            f"--- {path if old is not None else '/dev/null'}\n"
            f"+++ {path if new is not None else '/dev/null'}\n"
        )
    return text


def _shift_hunk(header: str, offset: int) -> str:
    """Move a hunk header's line numbers down by ``offset`` lines."""
    m = _HUNK.match(header.rstrip("\n"))
    assert m is not None, header
    old_start, old_len, new_start, new_len = m.groups()
    return (
        f"@@ -{int(old_start) + offset}{old_len or ''} "
        f"+{int(new_start) + offset}{new_len or ''} @@\n"
    )


@dataclass(frozen=True)
class FileChange:
    """One file as it was before and after a change (None: the file did not exist)."""

    path: str
    tool_name: str
    tool_use_id: str | None
    message_id: str | None
    old: str | None
    new: str | None
    notice: str | None = None
    parent_tool_use_id: str | None = None

    @functools.cached_property
    def diff(self) -> str | None:
        """The unified diff of the change (computed once); None when contents are not shown."""
        return None if self.notice else unified_diff(self.path, self.old, self.new)


def snapshot(path: str) -> tuple[str | None, str | None]:
    """(content, notice): the text of ``path`` (None: no such file) or why it is not shown."""
    try:
        return read_text(path), None
    except Unreadable as e:
        return None, str(e)
