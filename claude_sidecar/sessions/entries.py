"""A session file decoded: its entries, one per line, and the lines that could not be read.

What a session file holds (CLI 2.1.330)
---------------------------------------
One JSON object per line, each with a ``type``:

* Conversation entries, linked by ``uuid`` / ``parentUuid``: ``user`` (prompts, tool
  results, meta lines), ``assistant`` (**one entry per content block**: a reply with
  thinking + text + tool_use is three entries sharing ``message.id``), ``system``
  (``compact_boundary``, ``local_command`` output, ...), ``attachment`` (context the CLI
  injected: environment, date, files, prompt snapshots; never shown) and, in older CLIs,
  ``progress``.
* Metadata lines without a uuid: ``custom-title`` (``/rename``), ``ai-title``, ``summary``
  (older CLIs), ``last-prompt``, ``agent-name``, ``mode``, ``permission-mode``, ``tag``,
  ``cost-state``, ``queue-operation``, ``api-request*``, ``tools-used``, ``atis-latch``,
  ``file-history-snapshot``, ... New ones appear in every release; they are ignored.

Sub-agents (the ``Agent``/``Task`` tool) write their own transcript at
``<project dir>/<session id>/subagents/**/agent-<id>.jsonl`` next to an
``agent-<id>.meta.json`` naming the ``toolUseId`` that started them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec


class Block(msgspec.Struct):
    """A content block of a message (any type; only the fields used here)."""

    type: str = ""
    text: Any = None
    thinking: Any = None
    id: Any = None
    name: Any = None
    input: Any = None
    tool_use_id: Any = None
    content: Any = None
    is_error: Any = None


class Message(msgspec.Struct):
    """The ``message`` of a user or assistant entry."""

    id: Any = None
    content: str | list[Block] | None = None


class Entry(msgspec.Struct, rename="camel"):
    """One line of a session file; unknown fields are ignored."""

    type: Any = None
    uuid: str | None = None
    parent_uuid: str | None = None
    timestamp: Any = None
    is_sidechain: bool | None = False
    is_meta: bool | None = False
    is_compact_summary: bool | None = False
    is_api_error_message: bool | None = False
    message: Message | None = None
    subtype: Any = None
    content: Any = None
    level: Any = None
    cwd: Any = None
    git_branch: Any = None
    custom_title: Any = None
    ai_title: Any = None
    summary: Any = None
    origin: Any = None
    compact_metadata: Any = None
    source_tool_assistant_uuid: Any = msgspec.field(default=None, name="sourceToolAssistantUUID")
    permission_decision: Any = None
    tool_use_result: Any = None


class _TypeOnly(msgspec.Struct):
    type: Any = None


_decoder = msgspec.json.Decoder(Entry)
_type_decoder = msgspec.json.Decoder(_TypeOnly)
# Copies of API request bodies (most of a file's bytes): never needed, not decoded.
BULK_PREFIX = b'{"type":"api-request'

# Entry types that are part of the conversation tree.
CHAIN_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})


class Line(msgspec.Struct):
    """A decoded entry and where it was in the file: its line number, or (read from the
    file's end, where line numbers are not known) its byte offset."""

    number: int
    index: int
    entry: Entry
    offset: int | None = None

    @property
    def place(self) -> str:
        """Where the line is, for a warning."""
        return f"at byte {self.offset}" if self.offset is not None else f"line {self.number}"


class File(msgspec.Struct):
    """A session file, decoded."""

    lines: list[Line]
    warnings: list[str]
    mtime: float


def load(path: Path, label: str = "") -> File:
    """Decode every line of ``path``; lines that cannot be read become warnings
    (prefixed with ``label``, the file's name in a sub-agent's warnings)."""
    with open(path, "rb") as f:
        data = f.read()
        mtime = os.fstat(f.fileno()).st_mtime
    where = f"{label}: " if label else ""
    lines: list[Line] = []
    warnings: list[str] = []
    raw_lines = data.split(b"\n")
    last = len(raw_lines)
    for number, raw in enumerate(raw_lines, 1):
        if not raw.strip() or raw.startswith(BULK_PREFIX):
            continue
        try:
            entry = _decoder.decode(raw)
        except msgspec.ValidationError as e:
            try:
                kind = _type_decoder.decode(raw).type
            except msgspec.DecodeError:
                kind = None
            if isinstance(kind, str) and kind not in CHAIN_TYPES:
                continue  # metadata of a shape this module does not know: not needed
            warnings.append(f"{where}line {number}: not a session entry ({e}); skipped")
            continue
        except msgspec.DecodeError as e:
            if number == last:
                warnings.append(
                    f"{where}line {number}: truncated entry at the end of the file "
                    f"(the CLI may still be writing it); skipped"
                )
            else:
                warnings.append(f"{where}line {number}: not valid JSON ({e}); skipped")
            continue
        if not isinstance(entry.type, str):
            warnings.append(f"{where}line {number}: entry without a type; skipped")
            continue
        if entry.type in CHAIN_TYPES and not entry.uuid:
            warnings.append(f"{where}line {number}: {entry.type} entry without a uuid; skipped")
            continue
        if entry.uuid and entry.type not in CHAIN_TYPES:
            warnings.append(
                f"{where}line {number}: entry of unknown type {entry.type!r}; not shown"
            )
        lines.append(Line(number, len(lines), entry))
    return File(lines, warnings, mtime)


def message_id(entry: Entry) -> str | None:
    """The API message id of an assistant entry: the blocks of one response share it."""
    if entry.type != "assistant" or entry.message is None:
        return None
    return entry.message.id if isinstance(entry.message.id, str) and entry.message.id else None


def content_blocks(entry: Entry) -> list[Block]:
    """The content blocks of an entry's message ([] for text content or none)."""
    content = entry.message.content if entry.message is not None else None
    return content if isinstance(content, list) else []
