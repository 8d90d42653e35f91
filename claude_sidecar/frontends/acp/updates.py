"""A session's conversation as ACP ``session/update``s: the daemon's entries in, updates out.

Pure: no I/O. ``SessionUpdates`` is given what a channel's conversation publishes (the
entries an event changed, streamed deltas with their entry's id, file changes) and
returns the ACP updates that say the same, as JSON-ready dicts (the hot path, a delta,
builds one small dict; no model objects). The rules (docs/acp.md):

- text and thinking of the main conversation: ``agent_message_chunk`` and
  ``agent_thought_chunk``, one per delta; an entry's final text sends only what did not
  stream;
- a tool use: ``tool_call`` when it appears, then ``tool_call_update`` with the fields
  that changed (status, title, input, locations, content: ``diff`` for edits, text for
  output); ``TodoWrite`` is the session's ``plan`` instead;
- a sub-agent's tool uses are tool calls too (``_meta.claudeSidecar.parentToolCallId``);
  its prompt and answer are the Agent tool call's input and result;
- a notice (an API error, a command's output, a compaction) is an ``agent_message_chunk``
  with ``_meta.claudeSidecar.notice``; an interruption and a turn's footer are the
  prompt's stop reason instead; a prompt this session did not send (another client of
  the CLI session) is a ``user_message_chunk``.
"""

from __future__ import annotations

from typing import Any

from claude_sidecar.feed.changes import FileChange
from claude_sidecar.protocol.api import (
    Entry,
    NoticeEntry,
    PromptEntry,
    SlashCommand,
    TextEntry,
    ThinkingEntry,
    ToolEntry,
    ToolStatus,
    TurnEntry,
    TurnOutcome,
)

Update = dict[str, Any]
"""One ACP ``SessionUpdate`` (``sessionUpdate`` names its kind), ready to encode."""

META = "claudeSidecar"
"""The key of this agent's fields in ACP ``_meta`` objects."""

EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})

_KINDS: dict[str, str] = {
    "Read": "read",
    "NotebookRead": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Bash": "execute",
    "BashOutput": "execute",
    "KillShell": "execute",
    "KillBash": "execute",
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "Agent": "think",
    "Task": "think",
    "ExitPlanMode": "switch_mode",
    "EnterPlanMode": "switch_mode",
}

_STATUS: dict[ToolStatus, str] = {
    "pending": "pending",
    "awaitingPermission": "pending",
    "running": "in_progress",
    "done": "completed",
    "failed": "failed",
    "denied": "failed",
    "interrupted": "failed",
}

_PLAN_STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


def tool_kind(name: str) -> str:
    """The ACP ``ToolKind`` of a Claude Code tool (``other`` for MCP and unknown tools)."""
    return _KINDS.get(name, "other")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def tool_title(name: str, tool_input: dict[str, Any] | None) -> str:
    """What a client shows for a tool use: the tool and what it works on."""
    given = tool_input or {}
    path = _text(given.get("file_path")) or _text(given.get("notebook_path"))
    if name == "Read" and path:
        return f"Read {path}"
    if name in ("Write", "Edit", "MultiEdit", "NotebookEdit") and path:
        return f"{'Write' if name == 'Write' else 'Edit'} {path}"
    if name == "Bash" and (command := _text(given.get("command"))):
        return f"`{command}`"
    if name == "Grep" and (pattern := _text(given.get("pattern"))):
        where = _text(given.get("path"))
        return f"grep {pattern!r}" + (f" in {where}" if where else "")
    if name == "Glob" and (pattern := _text(given.get("pattern"))):
        return f"Find {pattern}"
    if name == "WebFetch" and (url := _text(given.get("url"))):
        return f"Fetch {url}"
    if name == "WebSearch" and (query := _text(given.get("query"))):
        return f"Search the web: {query}"
    if name in ("Agent", "Task") and (description := _text(given.get("description"))):
        return description
    if name == "ExitPlanMode":
        return "Ready to code?"
    if name.startswith("mcp__"):
        _, server, tool = [*name.split("__", 2), "", ""][:3]
        return f"{server}: {tool}" if tool else name
    return name


def tool_locations(name: str, tool_input: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The files a tool use works on (ACP ``ToolCallLocation``s)."""
    given = tool_input or {}
    path = _text(given.get("file_path")) or _text(given.get("notebook_path"))
    if path is None and name in ("Grep", "Glob", "LS"):
        path = _text(given.get("path"))
    if path is None:
        return []
    location: dict[str, Any] = {"path": path}
    offset = given.get("offset")
    if name == "Read" and isinstance(offset, int) and offset >= 0:
        location["line"] = offset
    return [location]


def proposed_diffs(name: str, tool_input: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The ``diff`` contents an edit tool's input proposes: the replaced text and its
    replacement (a new file's whole text for ``Write``)."""
    given = tool_input or {}
    path = _text(given.get("file_path")) or _text(given.get("notebook_path"))
    if name not in EDIT_TOOLS or path is None:
        return []
    if name == "Write":
        return [_diff(path, None, str(given.get("content", "")))]
    if name == "NotebookEdit":
        return [_diff(path, None, str(given.get("new_source", "")))]
    edits = [given] if name == "Edit" else given.get("edits") or []
    return [
        _diff(path, str(edit.get("old_string", "")), str(edit.get("new_string", "")))
        for edit in edits
        if isinstance(edit, dict)
    ]


def _diff(path: str, old: str | None, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": path, "oldText": old, "newText": new}


def plan_update(tool_input: dict[str, Any] | None) -> Update | None:
    """The session's ``plan`` from a ``TodoWrite`` input (None while it streams)."""
    todos = (tool_input or {}).get("todos")
    if not isinstance(todos, list):
        return None
    entries = [
        {
            "content": str(todo.get("content", "")),
            "priority": "medium",
            "status": _PLAN_STATUS.get(str(todo.get("status")), "pending"),
        }
        for todo in todos
        if isinstance(todo, dict)
    ]
    return {"sessionUpdate": "plan", "entries": entries}


def stop_reason(outcome: TurnOutcome, cli_stop_reason: str | None) -> str | None:
    """The ACP ``StopReason`` of a turn that ended with ``outcome`` (``claude/turnEnded``)
    and whose last model reply stopped for ``cli_stop_reason`` (the CLI's ``result``
    line); None for a turn that failed (an error answers the prompt)."""
    if outcome == "interrupted":
        return "cancelled"
    if outcome in ("maxTurns", "maxBudget"):
        return "max_turn_requests"
    if outcome == "error":
        return None
    if cli_stop_reason in ("max_tokens", "refusal"):
        return cli_stop_reason
    return "end_turn"


def available_commands(commands: list[SlashCommand]) -> Update:
    """The ``available_commands_update`` for the slash commands the session's CLI reported
    (a client sends one as the prompt's text, ``/name input``, which the CLI runs)."""
    listed: list[dict[str, Any]] = []
    for command in commands:
        item: dict[str, Any] = {"name": command.name, "description": command.description}
        if command.argument_hint:
            item["input"] = {"hint": command.argument_hint}
        if command.aliases or command.builtin:
            item["_meta"] = {META: {"aliases": command.aliases, "builtin": command.builtin}}
        listed.append(item)
    return {"sessionUpdate": "available_commands_update", "availableCommands": listed}


def usage(used: int, size: int, total_cost_usd: float) -> Update:
    """The ``usage_update`` (the context meter): ``used`` of ``size`` tokens of the
    context window, and what the session's CLI has cost so far."""
    return {
        "sessionUpdate": "usage_update",
        "used": max(0, used),
        "size": max(0, size),
        "cost": {"amount": total_cost_usd, "currency": "USD"},
    }


def session_info(title: str | None = None, updated_at: str | None = None) -> Update:
    """A ``session_info_update`` with the fields given (the others stay as they are)."""
    update: Update = {"sessionUpdate": "session_info_update"}
    if title is not None:
        update["title"] = title
    if updated_at is not None:
        update["updatedAt"] = updated_at
    return update


def text_chunk(kind: str, text: str) -> Update:
    """An ``agent_message_chunk`` (``kind`` text) or ``agent_thought_chunk`` (thinking)."""
    return {
        "sessionUpdate": "agent_thought_chunk" if kind == "thinking" else "agent_message_chunk",
        "content": {"type": "text", "text": text},
    }


class SessionUpdates:
    """The updates of one session's conversation, remembering what the client was sent.

    ``own_prompts``: the ids of the prompts this session sent (the client has them; they
    are not echoed).
    """

    def __init__(self) -> None:
        self.own_prompts: set[str] = set()
        # Entry id -> the text the client has of it (streamed pieces, joined when read).
        self._sent: dict[str, list[str]] = {}
        # Tool call id -> the fields the client has (tool_call sent once, then updates).
        self._tools: dict[str, dict[str, Any]] = {}
        # Tool call id -> {path: (old, new)}: what the tool did to each file.
        self._files: dict[str, dict[str, tuple[str | None, str | None]]] = {}
        self._entries: dict[str, ToolEntry] = {}
        self._plan: list[dict[str, Any]] | None = None

    def delta(
        self, kind: str, text: str, parent_tool_use_id: str | None, entry_id: str | None
    ) -> Update | None:
        """A streamed piece of text or thinking of the main conversation as a chunk
        (None for tool input, which the tool call gets whole, and for sub-agents)."""
        if parent_tool_use_id is not None or entry_id is None or kind == "toolInput":
            return None
        self._sent.setdefault(entry_id, []).append(text)
        return text_chunk(kind, text)

    def entry(self, entry: Entry) -> list[Update]:
        """The updates for an entry that was added or changed (the whole entry)."""
        if isinstance(entry, TextEntry | ThinkingEntry):
            if entry.parent_id is not None:
                return []
            rest = self._unsent(entry.id, entry.text)
            kind = "text" if isinstance(entry, TextEntry) else "thinking"
            return [text_chunk(kind, rest)] if rest else []
        if isinstance(entry, ToolEntry):
            return self._tool(entry)
        if isinstance(entry, NoticeEntry):
            if entry.subtype == "interrupted" or entry.parent_id is not None or not entry.text:
                return []
            update = text_chunk("text", entry.text)
            update["_meta"] = {META: {"notice": entry.subtype, "level": entry.level}}
            return [update]
        if isinstance(entry, PromptEntry):
            if entry.parent_id is not None or entry.id in self.own_prompts or entry.queued:
                return []
            return [
                {
                    "sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": entry.text},
                    "messageId": entry.id,
                }
            ]
        assert isinstance(entry, TurnEntry)
        return []

    def file_changed(self, change: FileChange) -> list[Update]:
        """A file a tool changed: its tool call's diff becomes the whole file's, before
        and after."""
        tool_id = change.tool_use_id
        if tool_id is None or change.notice is not None or tool_id not in self._entries:
            return []
        self._files.setdefault(tool_id, {})[change.path] = (change.old, change.new)
        return self._tool(self._entries[tool_id])

    def tool_call(self, entry: ToolEntry) -> dict[str, Any]:
        """Every field of the tool call ``entry`` is (a ``ToolCallUpdate``'s fields)."""
        fields: dict[str, Any] = {
            "toolCallId": entry.id,
            "title": tool_title(entry.name, entry.input),
            "kind": tool_kind(entry.name),
            "status": _STATUS[entry.status],
            "content": self._content(entry),
            "locations": tool_locations(entry.name, entry.input),
        }
        if entry.input is not None:
            fields["rawInput"] = entry.input
        if entry.result is not None:
            fields["rawOutput"] = {"text": entry.result.text, "isError": entry.result.is_error}
        meta: dict[str, Any] = {"toolName": entry.name, "status": entry.status}
        if entry.parent_id is not None:
            meta["parentToolCallId"] = entry.parent_id
        fields["_meta"] = {META: meta}
        return fields

    # ------------------------------------------------------------ internals

    def _unsent(self, entry_id: str, text: str) -> str:
        pieces = self._sent.setdefault(entry_id, [])
        sent = "".join(pieces)
        pieces[:] = [sent] if sent else []
        if not text.startswith(sent) or len(text) == len(sent):
            # Nothing new, or a text the stream did not lead to (what streamed stays).
            return ""
        pieces[:] = [text]
        return text[len(sent) :]

    def _content(self, entry: ToolEntry) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        if entry.name in EDIT_TOOLS:
            done = self._files.get(entry.id, {})
            proposed = [d for d in proposed_diffs(entry.name, entry.input) if d["path"] not in done]
            content += proposed
            content += [_diff(path, old, new or "") for path, (old, new) in done.items()]
        result = entry.result
        if result is not None and result.text and (entry.name not in EDIT_TOOLS or result.is_error):
            content.append({"type": "content", "content": {"type": "text", "text": result.text}})
        return content

    def _tool(self, entry: ToolEntry) -> list[Update]:
        self._entries[entry.id] = entry
        if entry.name == "TodoWrite":
            plan = plan_update(entry.input)
            if plan is None or plan["entries"] == self._plan:
                return []
            self._plan = plan["entries"]
            return [plan]
        fields = self.tool_call(entry)
        sent = self._tools.get(entry.id)
        self._tools[entry.id] = fields
        if sent is None:
            return [{"sessionUpdate": "tool_call", **fields}]
        changed = {k: v for k, v in fields.items() if sent.get(k) != v}
        if not changed:
            return []
        return [{"sessionUpdate": "tool_call_update", "toolCallId": entry.id, **changed}]
