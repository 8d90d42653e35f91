"""A session file's lines read from its end, a block at a time: what finding the current
conversation from its last entry needs, and nothing older.

Each line is decoded into a :class:`Slim` record first: its links (``uuid``,
``parentUuid``, ``logicalParentUuid``), its type and the few fields the chain's rules look
at (sidechain, compact boundary and summary, message id, tool results), with its byte
offset and length kept; a line is decoded whole (:meth:`LineIndex.line`) only when it is
rendered. Lines are read again from the file when needed, never kept as bytes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from claude_sidecar.sessions.entries import BULK_PREFIX, CHAIN_TYPES, Entry, Line

BLOCK = 256 * 1024
"""Bytes read per step backwards: a page of a long session is a few hundred KB."""


class _SlimBlock(msgspec.Struct):
    type: Any = None


class _SlimMessage(msgspec.Struct):
    id: Any = None
    content: str | list[_SlimBlock] | None = None


class _SlimLine(msgspec.Struct, rename="camel"):
    type: Any = None
    uuid: str | None = None
    parent_uuid: str | None = None
    logical_parent_uuid: Any = None
    is_sidechain: bool | None = False
    is_compact_summary: bool | None = False
    subtype: Any = None
    timestamp: Any = None
    message: _SlimMessage | None = None
    source_tool_assistant_uuid: Any = msgspec.field(default=None, name="sourceToolAssistantUUID")


class _TypeOnly(msgspec.Struct):
    type: Any = None


_slim = msgspec.json.Decoder(_SlimLine)
_type_only = msgspec.json.Decoder(_TypeOnly)
_whole = msgspec.json.Decoder(Entry)


class Slim(msgspec.Struct, gc=False):
    """What the chain's rules need of one line with a ``uuid``, and where it is.

    ``order``: how many such lines were read before it (0: the file's last), so a line's
    place among the others is known without its line number (which reading from the end
    cannot know)."""

    offset: int
    length: int
    order: int
    type: str
    uuid: str
    parent: str | None
    logical_parent: str | None
    sidechain: bool
    compact_boundary: bool
    compact_summary: bool
    message_id: str | None
    tool_result: bool
    source_tool: str | None
    timestamp: str


class LineIndex:
    """The lines of a session file from its end: :meth:`read_back` reads one more block;
    every line read so far with a ``uuid`` is in ``by_uuid`` and, newest first, in
    ``newest_first``. Problems with a line go to ``warnings`` (where: its byte offset)."""

    def __init__(self, path: Path, label: str = "") -> None:
        self._file = open(path, "rb")  # noqa: SIM115 (closed by close())
        self.size = os.fstat(self._file.fileno()).st_size
        self.mtime = os.fstat(self._file.fileno()).st_mtime
        self._where = f"{label}: " if label else ""
        # Bytes before ``_unread`` are not read yet; ``_carry``: the start of a line that
        # began before the last block read (its pieces, oldest first).
        self._unread = self.size
        self._carry: list[bytes] = []
        self._last_piece = True  # the next line handed out is the file's last piece
        self.by_uuid: dict[str, Slim] = {}
        self.newest_first: list[Slim] = []
        self.warnings: list[tuple[int, str]] = []

    def close(self) -> None:
        """Close the file (what was read stays)."""
        self._file.close()

    @property
    def done(self) -> bool:
        """Whether every line has been read."""
        return self._unread == 0 and not self._carry

    def read_back(self) -> bool:
        """Read the next block towards the file's start; False when there is none."""
        if self.done:
            return False
        start = max(0, self._unread - BLOCK)
        block = os.pread(self._file.fileno(), self._unread - start, start)
        self._unread = start
        cut = block.find(b"\n")
        if cut < 0 and start > 0:
            self._carry.insert(0, block)  # a line longer than a block
            return True
        data = block + b"".join(self._carry)
        self._carry = []
        pieces = data.split(b"\n")
        if start > 0:
            self._carry = [pieces[0]]
            pieces = pieces[1:]
            offset = start + len(self._carry[0]) + 1
        else:
            offset = 0
        offsets = []
        for piece in pieces:
            offsets.append(offset)
            offset += len(piece) + 1
        for piece, at in zip(reversed(pieces), reversed(offsets), strict=True):
            last = self._last_piece
            self._last_piece = False
            self._take(piece, at, last)
        return True

    def _warn(self, offset: int, text: str) -> None:
        self.warnings.append((offset, f"{self._where}at byte {offset}: {text}"))

    def _take(self, raw: bytes, offset: int, last: bool) -> None:
        if not raw.strip() or raw.startswith(BULK_PREFIX):
            return
        try:
            line = _slim.decode(raw)
        except msgspec.ValidationError as e:
            try:
                kind = _type_only.decode(raw).type
            except msgspec.DecodeError:
                kind = None
            if not (isinstance(kind, str) and kind not in CHAIN_TYPES):
                self._warn(offset, f"not a session entry ({e}); skipped")
            return
        except msgspec.DecodeError as e:
            if last:
                self._warn(
                    offset,
                    "truncated entry at the end of the file (the CLI may still be writing "
                    "it); skipped",
                )
            else:
                self._warn(offset, f"not valid JSON ({e}); skipped")
            return
        kind = line.type
        if not isinstance(kind, str):
            self._warn(offset, "entry without a type; skipped")
            return
        if kind in CHAIN_TYPES and not line.uuid:
            self._warn(offset, f"{kind} entry without a uuid; skipped")
            return
        if not line.uuid:
            return
        if kind not in CHAIN_TYPES:
            self._warn(offset, f"entry of unknown type {kind!r}; not shown")
        message = line.message
        content = message.content if message is not None else None
        message_id = message.id if message is not None and kind == "assistant" else None
        message_id = message_id if isinstance(message_id, str) and message_id else None
        tool_result = (
            kind == "user"
            and isinstance(content, list)
            and any(b.type == "tool_result" for b in content)
        )
        # Interned: a line's parent is another line's uuid (one string for both), and a
        # long session's index holds a record per line (~250,000 for 100,000 entries).
        slim = Slim(
            offset=offset,
            length=len(raw),
            order=len(self.newest_first),
            type=sys.intern(kind),
            uuid=sys.intern(line.uuid),
            parent=sys.intern(line.parent_uuid) if line.parent_uuid else None,
            logical_parent=line.logical_parent_uuid
            if isinstance(line.logical_parent_uuid, str)
            else None,
            sidechain=line.is_sidechain is True,
            compact_boundary=kind == "system" and line.subtype == "compact_boundary",
            compact_summary=line.is_compact_summary is True,
            message_id=message_id,
            tool_result=tool_result,
            source_tool=line.source_tool_assistant_uuid
            if isinstance(line.source_tool_assistant_uuid, str)
            else None,
            # (Only parallel tool use sorts by it.)
            timestamp=str(line.timestamp or "") if message_id or tool_result else "",
        )
        self.by_uuid[slim.uuid] = slim
        self.newest_first.append(slim)

    def line_numbers(self, offsets: Iterable[int]) -> dict[int, int]:
        """The line number (from 1) of the line at each of ``offsets``: the newlines
        before it counted, the file read from its start once."""
        numbers: dict[int, int] = {}
        newlines = at = 0
        for offset in sorted(set(offsets)):
            while at < offset:
                chunk = os.pread(self._file.fileno(), min(BLOCK * 4, offset - at), at)
                if not chunk:
                    break
                newlines += chunk.count(b"\n")
                at += len(chunk)
            numbers[offset] = newlines + 1
        return numbers

    def line(self, slim: Slim) -> Line | None:
        """The line of ``slim`` decoded whole (None, with a warning, when it cannot be)."""
        raw = os.pread(self._file.fileno(), slim.length, slim.offset)
        try:
            entry = _whole.decode(raw)
        except msgspec.DecodeError as e:
            self._warn(slim.offset, f"not a session entry ({e}); skipped")
            return None
        return Line(0, slim.order, entry, offset=slim.offset)

    def find(self, uuid: str) -> Slim | None:
        """The line with ``uuid``, reading back as far as needed (None: not in the file)."""
        while (found := self.by_uuid.get(uuid)) is None and self.read_back():
            pass
        return found

    def older(self, slim: Slim) -> Slim | None:
        """The line with a uuid right before ``slim`` in the file, reading back as needed."""
        while slim.order + 1 >= len(self.newest_first) and self.read_back():
            pass
        following = slim.order + 1
        return self.newest_first[following] if following < len(self.newest_first) else None
