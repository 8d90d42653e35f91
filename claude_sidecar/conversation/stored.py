"""A stored session's conversation as entries: the same kinds and ids a live channel gives.

``sessions.render.Renderer`` decides what of a session file is shown (meta lines,
reminders, command wrappers, compact summaries: its rules); for each thing it shows it
calls ``StoredEntries.add``, which makes or updates the entry. Ids are the live ones: a
prompt's uuid, ``<message id>:<block index>`` for text and thinking (the file holds one
line per content block, in order, so a block's index is how many lines of its message
came before it), a tool use's id.

What a session file does not hold, a stored entry does not have: turn footers, a
permission's request id and preview, streaming state. The files a tool changed come from
its result's ``toolUseResult`` (Write, Edit, MultiEdit), counted like a live diff.
"""

from __future__ import annotations

from typing import Any, Literal

from claude_sidecar.protocol.api import (
    Entry,
    EntryFileChange,
    EntryPermission,
    EntryToolResult,
    NoticeEntry,
    NoticeLevel,
    PromptEntry,
    TextEntry,
    ThinkingEntry,
    ToolEntry,
)

# A history message's system subtype -> the notice's subtype and level.
_NOTICES: dict[str, tuple[str, NoticeLevel]] = {
    "compactBoundary": ("compaction", "info"),
    "compactSummary": ("compactSummary", "info"),
    "commandOutput": ("commandOutput", "info"),
    "interrupted": ("interrupted", "info"),
    "apiError": ("apiError", "error"),
    "taskNotification": ("taskNotification", "info"),
}


UNREADABLE_NOTICE_ID = "history:unreadable"
# The warnings a notice lists; the rest are counted (getHistory has them all).
_WARNINGS_SHOWN = 10


def unreadable_notice(warnings: list[str]) -> NoticeEntry | None:
    """A notice for the top of a resumed or forked conversation listing what of its
    session could not be read (the history's ``warnings``); None when all could be."""
    if not warnings:
        return None
    lines = warnings[:_WARNINGS_SHOWN]
    if len(warnings) > _WARNINGS_SHOWN:
        lines.append(f"and {len(warnings) - _WARNINGS_SHOWN} more")
    return NoticeEntry(
        id=UNREADABLE_NOTICE_ID,
        subtype="unreadableHistory",
        level="warn",
        text="Parts of this session's file could not be read and are not shown:\n"
        + "\n".join(lines),
    )


class StoredEntries:
    """The entries of one transcript file (the session's, or one sub-agent's)."""

    def __init__(self, parent_id: str | None = None) -> None:
        self.parent_id = parent_id
        self.entries: list[Entry] = []
        self._tools: dict[str, ToolEntry] = {}
        # Message id -> how many of its blocks (file lines) came so far; line uuid -> index.
        self._blocks: dict[str, int] = {}
        self._index: dict[str, int] = {}

    def block(self, message_id: str | None, line_uuid: str | None) -> None:
        """Count one assistant line (one content block) of message ``message_id``, shown
        or not: the index of the next block depends on it."""
        if message_id is None or line_uuid is None or line_uuid in self._index:
            return
        self._index[line_uuid] = self._blocks.get(message_id, 0)
        self._blocks[message_id] = self._index[line_uuid] + 1

    def add(
        self,
        kind: str,
        uuid: str,
        message_id: str | None,
        fields: dict[str, Any],
        files: list[EntryFileChange] | None = None,
    ) -> None:
        """Make or update the entry of one history message of ``kind`` (``HistoryKind``);
        ``files``: what a tool result's tool changed."""
        parent = self.parent_id
        text = fields.get("text") or ""
        if kind == "userPrompt":
            images = fields.get("image_count", 0)
            self.entries.append(
                PromptEntry(id=uuid, text=text, image_count=images, parent_id=parent)
            )
        elif kind in ("assistantText", "thinking"):
            index = self._index.get(uuid, 0)
            entry_id = f"{message_id}:{index}" if message_id else uuid
            if kind == "assistantText":
                self.entries.append(TextEntry(id=entry_id, text=text, parent_id=parent))
            else:
                self.entries.append(ThinkingEntry(id=entry_id, text=text, parent_id=parent))
        elif kind == "toolUse" and fields.get("tool_use_id"):
            given = fields.get("input")
            tool = ToolEntry(
                id=fields["tool_use_id"],
                name=fields.get("tool_name") or "",
                # No result stored: the call never finished.
                status="interrupted",
                input=given if isinstance(given, dict) else {},
                parent_id=parent,
            )
            self._tools[tool.id] = tool
            self.entries.append(tool)
        elif kind == "toolResult":
            self._result(fields, files)
        elif kind == "system":
            subtype = fields.get("subtype") or "notice"
            shown, level = _NOTICES.get(subtype, (subtype, "info"))
            self.entries.append(
                NoticeEntry(id=uuid, subtype=shown, level=level, text=text, parent_id=parent)
            )

    def _result(self, fields: dict[str, Any], files: list[EntryFileChange] | None) -> None:
        tool = self._tools.get(fields.get("tool_use_id") or "")
        if tool is None:
            return
        if files and not fields.get("is_error"):
            tool.files = files
        is_error = bool(fields.get("is_error"))
        tool.result = EntryToolResult(
            text=fields.get("text") or "",
            is_error=is_error,
            image_count=fields.get("image_count", 0),
        )
        answer: Literal["allowed", "denied"] | None = fields.get("permission")
        if answer is not None:
            tool.permission = EntryPermission(request_id=None, decision=answer)
        if fields.get("stopped") and answer != "denied":
            # Running when an interrupt stopped it (the CLI records it as rejected).
            tool.status = "interrupted"
        else:
            tool.status = "denied" if answer == "denied" else "failed" if is_error else "done"
