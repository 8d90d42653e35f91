"""Turning the entries of a conversation into the messages an editor renders.

:class:`Renderer` takes the chain's entries one by one (see :mod:`.chain`) and makes the
``HistoryMessage`` list of ``claude/getHistory``, leaving out what the CLI injected and
never shows (meta lines, reminders, attachments). On the way it counts what a session
listing shows: prompts, responses, the first prompt typed.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from claude_sidecar.conversation.blocks import (
    agent_report,
    as_typed,
    compact_summary,
    result_text,
    tag,
)
from claude_sidecar.conversation.stored import StoredEntries
from claude_sidecar.protocol.api import EntryFileChange, HistoryKind, HistoryMessage
from claude_sidecar.sessions.entries import Block, Entry, Line, content_blocks, message_id

# REMINDER, SYSTEM_PREFIXES and ASSISTANT_TOOL_USES decide what counts as a prompt or a
# response: the listing's scan (.summary_scan) counts by them too.
REMINDER = re.compile(r"^\s*<(system-reminder|ide_opened_file|ide_selection)>.*</\1>\s*$", re.S)
_INTERRUPTED = "[Request interrupted by user"
# A tool's recorded result when an interrupt (or the user's denial) stopped it.
_STOPPED = "User rejected tool use"
# A user entry whose text starts like this is the CLI talking, not the user.
SYSTEM_PREFIXES = (
    ("<local-command-stdout>", "commandOutput"),
    ("<local-command-stderr>", "commandOutput"),
    ("<bash-stdout>", "commandOutput"),
    ("<bash-stderr>", "commandOutput"),
    ("<task-notification>", "taskNotification"),
    ("<session-start-hook>", "hook"),
    ("<tick>", "tick"),
    ("<goal>", "goal"),
    (_INTERRUPTED, "interrupted"),
)
ASSISTANT_TOOL_USES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_QUIET_BLOCKS = frozenset({"redacted_thinking", "image", "document", "container_upload"})


def _strip_tags(text: str) -> str:
    return re.sub(
        r"</?(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>", "", text
    ).strip()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _user_answer(entry: Entry) -> Literal["allowed", "denied"] | None:
    """How the user answered the permission request of a tool result's entry (CLI 2.1.330
    stores ``permissionDecision`` {decision: accept | reject, source: user_... | ...});
    None when the user was not asked (rules, modes) or the CLI stored nothing."""
    answer = entry.permission_decision
    if not isinstance(answer, dict) or not str(answer.get("source", "")).startswith("user"):
        return None
    if answer.get("decision") == "accept":
        return "allowed"
    if answer.get("decision") == "reject":
        return "denied"
    return None


def changed_files(result: Any) -> list[EntryFileChange] | None:
    """The file a tool result says its tool wrote (``toolUseResult`` of Write, Edit,
    MultiEdit), with the lines added and removed, counted as a live channel counts the
    diff of its ``claude/fileUpdated``; None for other tools."""
    if not isinstance(result, dict) or not isinstance(result.get("filePath"), str):
        return None
    added = removed = 0
    patch = result.get("structuredPatch")
    if isinstance(patch, list) and patch:
        for hunk in patch:
            for line in hunk.get("lines", ()) if isinstance(hunk, dict) else ():
                if isinstance(line, str) and line.startswith("+"):
                    added += 1
                elif isinstance(line, str) and line.startswith("-"):
                    removed += 1
    elif result.get("type") == "create" and isinstance(result.get("content"), str):
        added = len(result["content"].splitlines())
    else:
        return None
    return [EntryFileChange(path=result["filePath"], added=added, removed=removed)]


class Renderer:
    """Turns chain entries into HistoryMessages, collecting warnings.

    ``label`` names a sub-agent's transcript in warnings; ``parent_tool_use_id`` marks
    the messages of a sub-agent. After rendering: ``messages``; for a listing,
    ``prompts`` (user prompts shown), ``responses`` (the assistant responses shown, by
    message id), ``first_prompt`` and ``first_command`` (the first slash command typed).
    """

    def __init__(
        self, warnings: list[str], label: str = "", parent_tool_use_id: str | None = None
    ) -> None:
        self.warnings = warnings
        self.where = f"{label}: " if label else ""
        self.parent_tool_use_id = parent_tool_use_id
        self.messages: list[HistoryMessage] = []
        self.prompts = 0
        self.responses: set[str] = set()
        self.first_prompt: str | None = None
        self.first_command: str | None = None
        # The same messages as the conversation's entries (claude/getHistory's entries).
        self.stored = StoredEntries(parent_tool_use_id)

    def add(
        self,
        line: Line,
        kind: HistoryKind,
        files: list[EntryFileChange] | None = None,
        stopped: bool = False,
        **fields: Any,
    ) -> None:
        """Append a message of ``kind`` made from ``line``'s entry (for the entries only:
        ``files``, what a tool result says its tool changed; ``stopped``, that an interrupt
        stopped the tool)."""
        e = line.entry
        self.messages.append(
            HistoryMessage(
                kind=kind,
                uuid=e.uuid or "",
                timestamp=e.timestamp if isinstance(e.timestamp, str) else None,
                parent_tool_use_id=self.parent_tool_use_id,
                **fields,
            )
        )
        entry_fields = {**fields, "stopped": True} if stopped else fields
        self.stored.add(kind, e.uuid or "", message_id(e), entry_fields, files)

    def render(self, line: Line) -> None:
        """Append the messages of one entry (none for what is never shown)."""
        e = line.entry
        if e.type == "user":
            self._user(line)
        elif e.type == "assistant":
            self._assistant(line)
        elif e.type == "system":
            self._system(line)

    def _user(self, line: Line) -> None:
        e = line.entry
        if e.is_meta or e.message is None:
            return
        content = e.message.content
        if e.is_compact_summary:
            text = (
                content
                if isinstance(content, str)
                else "\n".join(
                    b.text for b in content or () if b.type == "text" and isinstance(b.text, str)
                )
            )
            self.add(line, "system", subtype="compactSummary", text=compact_summary(text))
            return
        blocks: list[Block] = (
            [Block(type="text", text=content)] if isinstance(content, str) else content or []
        )
        if any(b.type == "tool_result" for b in blocks):
            for b in blocks:
                if b.type == "tool_result":
                    text, images = result_text(b.content)
                    self.add(
                        line,
                        "toolResult",
                        tool_use_id=b.tool_use_id if isinstance(b.tool_use_id, str) else None,
                        text=agent_report(e.tool_use_result) or text,
                        is_error=b.is_error is True,
                        image_count=images,
                        permission=_user_answer(e),
                        stopped=e.tool_use_result == _STOPPED,
                        files=changed_files(e.tool_use_result),
                    )
                elif (
                    b.type == "text" and isinstance(b.text, str) and b.text.startswith(_INTERRUPTED)
                ):
                    self.add(line, "system", subtype="interrupted", text=b.text)
            return
        texts: list[str] = []
        images = 0
        for i, b in enumerate(blocks):
            if b.type == "text" and isinstance(b.text, str):
                if not REMINDER.match(b.text):
                    texts.append(b.text)
            elif b.type == "image":
                images += 1
            elif b.type not in _QUIET_BLOCKS:
                self.warnings.append(
                    f"{self.where}{line.place}: content block {i} of "
                    f"unknown type {b.type!r}; not shown"
                )
        text = "\n".join(texts).strip()
        if not text and not images:
            return
        if isinstance(e.origin, dict) and e.origin.get("kind") == "task-notification":
            self._notification(line, text)
            return
        for prefix, subtype in SYSTEM_PREFIXES:
            if text.startswith(prefix):
                if subtype == "taskNotification":
                    self._notification(line, text)
                else:
                    self.add(line, "system", subtype=subtype, text=_strip_tags(text))
                return
        command = text.startswith("<command-name>")
        text = as_typed(text)
        self.prompts += 1
        self.add(line, "userPrompt", text=text, image_count=images)
        if command:
            self.first_command = self.first_command or text
        else:
            self.first_prompt = self.first_prompt or text

    def _notification(self, line: Line, text: str) -> None:
        summary = tag("summary", text)
        result = tag("result", text)
        shown = "\n\n".join(p for p in (summary, result) if p) or text
        self.add(line, "system", subtype="taskNotification", text=shown)

    def _assistant(self, line: Line) -> None:
        e = line.entry
        self.stored.block(message_id(e), e.uuid)
        blocks = content_blocks(e)
        if e.is_api_error_message:
            text = "\n".join(b.text for b in blocks if isinstance(b.text, str))
            self.add(line, "system", subtype="apiError", text=text)
            return
        shown = False
        for i, b in enumerate(blocks):
            if b.type == "text" and isinstance(b.text, str):
                self.add(line, "assistantText", text=b.text)
            elif b.type == "thinking" and isinstance(b.thinking, str):
                self.add(line, "thinking", text=b.thinking)
            elif b.type in ASSISTANT_TOOL_USES:
                self.add(
                    line,
                    "toolUse",
                    tool_name=b.name if isinstance(b.name, str) else "",
                    tool_use_id=b.id if isinstance(b.id, str) else None,
                    input=b.input,
                )
            elif b.type.endswith("_tool_result"):
                text, images = result_text(b.content)
                self.add(
                    line,
                    "toolResult",
                    tool_use_id=b.tool_use_id if isinstance(b.tool_use_id, str) else None,
                    text=text,
                    is_error=b.is_error is True,
                    image_count=images,
                )
            elif b.type not in _QUIET_BLOCKS:
                self.warnings.append(
                    f"{self.where}{line.place}: content block {i} of "
                    f"unknown type {b.type!r}; not shown"
                )
                continue
            else:
                continue
            shown = True
        if shown:
            self.responses.add(message_id(e) or e.uuid or "")

    def _system(self, line: Line) -> None:
        e = line.entry
        subtype = e.subtype if isinstance(e.subtype, str) else ""
        text = e.content if isinstance(e.content, str) else None
        if subtype == "compact_boundary":
            self.add(
                line, "system", subtype="compactBoundary", text=text or "Conversation compacted"
            )
        elif subtype == "local_command":
            self.add(line, "system", subtype="commandOutput", text=_strip_tags(text or ""))
        elif text and e.level in ("warning", "error"):
            self.add(line, "system", subtype=_camel(subtype) or "notice", text=text)
