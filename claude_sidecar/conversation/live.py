"""A live channel's conversation: the channel's events in, entries out.

``LiveConversation`` sits between a channel and its front end's feed. Every event goes
on to the front end unchanged; the entries it added or changed follow it as
``EntryChanged`` events. The rules (CLI 2.1.330; docs/protocol.md, "The conversation"):

- a ``stream_event`` ``content_block_start`` opens a text, thinking or tool entry for its
  stream (``parent_tool_use_id``) and index; deltas append to it;
- the ``assistant`` message then carries the complete block: its text replaces what
  streamed (``aborted`` after an interrupt); sub-agents' messages come only complete;
- ``user`` messages carry tool results, the CLI's echo of a prompt it took up
  (``isReplay``), a sub-agent's prompt, command output, or (the synthetic one after a
  ``compact_boundary``) the summary a compaction replaced the conversation with;
- a permission ask, its withdrawal and the tool's result give a tool entry its
  permission state; a file change gives it ``files``;
- ``TurnEnded`` adds the turn's footer and fails the tool uses of the main conversation
  that never finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, Literal, Protocol

import msgspec

from claude_sidecar.cli.signin import CLI_AUTH_FAILED, auth_required
from claude_sidecar.conversation.blocks import agent_report, as_typed, compact_summary, result_text
from claude_sidecar.conversation.entries import EncodedEntries, Entries
from claude_sidecar.conversation.paging import Page, Scope
from claude_sidecar.feed.events import (
    ChannelEvent,
    CliMessage,
    EntryChanged,
    Feed,
    FileUpdated,
    PermissionAsked,
    PermissionWithdrawn,
    PromptSent,
    StatusChanged,
    TurnEnded,
)
from claude_sidecar.protocol.api import (
    AskState,
    ContextReading,
    DeltaKind,
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
    ToolStatus,
    TurnEntry,
)

_LOCAL_COMMAND = re.compile(
    r"^\s*<(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>(.*?)</\1>\s*$",
    re.S,
)
_INTERRUPTED = "[Request interrupted by user"
_TOOL_USES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
# The tools that run a sub-agent (Task is their name in older CLIs).
_AGENT_TOOLS = frozenset({"Agent", "Task"})
_UNDER_WAY: frozenset[ToolStatus] = frozenset({"pending", "awaitingPermission", "running"})


class _Block(msgspec.Struct, gc=False):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    id: str | None = None
    name: str | None = None
    input: Any = None
    tool_use_id: str | None = None
    content: Any = None
    is_error: bool = False


class _Message(msgspec.Struct, gc=False):
    id: str | None = None
    content: list[_Block] | str | None = None


class _Event(msgspec.Struct, gc=False):
    type: str = ""
    index: int | None = None
    message: _Message | None = None
    content_block: _Block | None = None


class _Line(
    msgspec.Struct, gc=False, rename={"is_replay": "isReplay", "is_synthetic": "isSynthetic"}
):
    type: str = ""
    subtype: str | None = None
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    message: _Message | None = None
    event: _Event | None = None
    is_replay: bool = False
    is_synthetic: bool = False
    is_api_error_message: bool = False
    # The kind of a synthetic API error message (`authentication_failed`), its HTTP status.
    # Any: other lines may carry an `error` of another shape.
    error: Any = None
    api_error_status: int | None = None
    aborted: bool = False
    tool_result_meta: list[dict[str, Any]] | None = None
    # Read only for a sub-agent's report (it can be large: a Read's file, say).
    tool_use_result: msgspec.Raw = msgspec.Raw()
    content: str | None = None
    trigger: str | None = None


_decode_line = msgspec.json.Decoder(_Line).decode


def _decision(line: _Line, tool_use_id: str) -> AskState | Literal["stopped"] | None:
    """How the user answered a tool's permission request (``tool_result_meta``);
    ``stopped``: the tool was running when an interrupt stopped it (the CLI calls that
    user-rejected too, with no decision)."""
    for meta in line.tool_result_meta or ():
        if meta.get("id") != tool_use_id:
            continue
        if meta.get("non_execution_kind") == "user-rejected":
            return "denied" if meta.get("permission_decision") else "stopped"
        decision = (meta.get("permission_decision") or {}).get("decision")
        if decision == "accept":
            return "allowed"
        if decision == "reject":
            return "denied"
        return None
    return None


def _counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (``FileChange.diff``, computed once for
    ``claude/fileUpdated`` too): its two header lines skipped, hunk lines counted."""
    added = removed = 0
    for line in diff.splitlines()[2:]:
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed


class FooterSink(Protocol):
    """Where a conversation's turn footers are kept beyond the channel's life."""

    def record(
        self,
        session_id: str,
        prompts: Sequence[str],
        footer: TurnEntry,
        context: ContextReading | None = None,
    ) -> None:
        """Keep ``footer`` of the turn that answered ``prompts`` in session ``session_id``,
        with the context meter the turn left."""


def settled(entries: Sequence[Entry]) -> list[Entry]:
    """Copies of ``entries`` in which nothing is still under way (nothing streams, no tool
    runs, no ask waits; a prompt still queued there was never part of the conversation)."""
    kept: list[Entry] = []
    for entry in entries:
        if isinstance(entry, PromptEntry) and entry.queued:
            continue
        copy = msgspec.structs.replace(entry)
        if isinstance(copy, TextEntry | ThinkingEntry):
            copy.streaming = False
        elif isinstance(copy, ToolEntry) and copy.status in _UNDER_WAY:
            stop_tool(copy, "interrupted")
        kept.append(copy)
    return kept


def carried_over(entries: Sequence[Entry]) -> EncodedEntries:
    """What a channel keeps of a conversation that came before: :func:`settled` copies,
    encoded. Pure: it may run in a worker thread."""
    return EncodedEntries(settled(entries))


def stop_tool(tool: ToolEntry, status: ToolStatus) -> None:
    """A tool use that will not finish: ``status`` (interrupted, failed), its ask (if one
    still waits) cancelled, as a new struct (an entry passed on earlier shares its parts)."""
    tool.status = status
    if tool.permission is not None and tool.permission.decision == "pending":
        tool.permission = msgspec.structs.replace(tool.permission, decision="cancelled")


class ConversationWatcher(Protocol):
    """What is told of a conversation's life (the hub's roster): cheap, must not block."""

    def saw(self, event: ChannelEvent) -> None:
        """An event passed on to the front end (not a delta)."""

    def heard(self) -> None:
        """A read of the CLI's output was routed (deltas included)."""


class LiveConversation:
    """A channel's ``Feed`` that keeps its conversation and passes everything on."""

    def __init__(self, feed: Feed) -> None:
        self.feed = feed
        self.entries = Entries()
        # The open entries' ids and the lists their deltas append to: by index for the
        # main conversation, by (parent_tool_use_id, index) for sub-agents (the channel's
        # hot path appends there itself, without building a key for the main one).
        self.main_open: dict[int, tuple[str, list[str]]] = {}
        self.sub_open: dict[tuple[str, int], tuple[str, list[str]]] = {}
        # parent_tool_use_id -> the id of the message streaming now.
        self._message: dict[str | None, str] = {}
        # Message id -> how many of its content blocks came as assistant lines so far.
        self._blocks: dict[str, int] = {}
        self._turn_open = False
        self._turns = 0
        # A compaction was reported and the summary that replaced the conversation (the
        # CLI's next synthetic user line) has not come yet.
        self._summary_due = False
        self._changed: dict[str, Entry] = {}
        # Request id -> the tool whose ask waits for the client.
        self._asking: dict[str, ToolEntry] = {}
        # The CLI session the channel continues (claude/status), and where footers are kept.
        self._session_id: str | None = None
        self.footers: FooterSink | None = None
        # Fork points: each top-level prompt's uuid -> the uuid of the last assistant line
        # of its exchange (a fork "at" a prompt resumes the CLI's session there).
        self.exchange_ends: dict[str, str] = {}
        self._exchange: str | None = None
        # Set while the conversation that came before is read (``expect_seed``).
        self._seeded: asyncio.Future[None] | None = None
        # Told of each event once it has passed on, and of each read of the CLI's output
        # (deltas come by the read, not one by one): the hub's roster.
        self.watcher: ConversationWatcher | None = None

    # ------------------------------------------------------------ Feed

    def delta(
        self,
        kind: DeltaKind,
        index: int,
        text: str,
        parent_tool_use_id: str | None,
        entry_id: str | None = None,
    ) -> None:
        """Append a delta to its open entry and pass it on with the entry's id
        (``LineRouter.route_all`` does the same inline)."""
        if parent_tool_use_id is None:
            opened = self.main_open.get(index)
        else:
            opened = self.sub_open.get((parent_tool_use_id, index))
        if opened is not None:
            entry_id = opened[0]
            opened[1].append(text)
        self.feed.delta(kind, index, text, parent_tool_use_id, entry_id)

    def publish(self, event: ChannelEvent) -> None:
        """Apply one event to the conversation, pass it on, then the entries it changed."""
        if isinstance(event, CliMessage):
            self._line(event.raw)
        elif isinstance(event, PromptSent):
            self._prompt_sent(event)
            self._flush()
            if self.watcher is not None:
                self.watcher.saw(event)
            return  # the client knows what it sent
        elif isinstance(event, PermissionAsked):
            self._asked(event)
        elif isinstance(event, PermissionWithdrawn):
            self._withdrawn(event.request_id)
        elif isinstance(event, FileUpdated):
            self._file_updated(event)
        elif isinstance(event, TurnEnded):
            self._turn_ended(event)
        elif isinstance(event, StatusChanged):
            self._status(event)
        self.feed.publish(event)
        self._flush()
        if self.watcher is not None:
            self.watcher.saw(event)

    def heard(self) -> None:
        """The CLI's output was read (once per read, however many lines: deltas too)."""
        if self.watcher is not None:
            self.watcher.heard()

    def last_prompt(self) -> str | None:
        """The text of the newest prompt the CLI took up, among the entries known (what
        came before is not read further for it)."""
        prompt = self.entries.last_prompt()
        return prompt.text if prompt is not None else None

    def snapshot(self) -> list[Entry]:
        """Every entry as it is now, queued prompts last."""
        return self.entries.snapshot()

    def page(self, scope: Scope, before: str | None, limit: int | None) -> tuple[list[Entry], Page]:
        """A page of the conversation as it is now (see :mod:`.paging`)."""
        return self.entries.page(scope, before, limit)

    async def reach(self, scope: Scope, before: str | None, limit: int | None) -> None:
        """Produce, in a worker thread, what of the conversation that came before the page
        ``before``/``limit`` needs (a resumed session is read back only that far)."""
        await self.ready()
        count = self.entries.prefix_needed(scope, before, limit)
        if not self.entries.produced(count):
            await asyncio.to_thread(self.entries.produce, count)

    async def whole(self) -> list[Entry]:
        """Every entry (see :meth:`snapshot`), the conversation that came before read to
        its start in a worker thread first."""
        await self.ready()
        await asyncio.to_thread(self.entries.produce, None)
        return self.snapshot()

    async def each(self) -> Iterator[Entry]:
        """Every entry, oldest first, decoded a page at a time as the iterator goes on
        (see :meth:`Entries.each`): the conversation that came before is read to its
        start in a worker thread first, and kept encoded."""
        await self.ready()
        await asyncio.to_thread(self.entries.produce, None)
        return self.entries.each()

    def seed(self, entries: Sequence[Entry] | EncodedEntries) -> None:
        """Start from a conversation that came before (a resumed or forked session's),
        without telling the front end: a client reads it with ``claude/getTranscript``.
        It goes in front of every entry, also of those a turn added while it was being
        read (see :meth:`expect_seed`); given as entries, it is first :func:`carried_over`.
        """
        self.entries.seed(entries if isinstance(entries, EncodedEntries) else carried_over(entries))
        if self._seeded is not None and not self._seeded.done():
            self._seeded.set_result(None)

    def expect_seed(self) -> None:
        """The conversation that came before is still being read: :meth:`ready` waits
        for :meth:`seed`."""
        self._seeded = asyncio.get_running_loop().create_future()

    async def ready(self) -> None:
        """Wait until the conversation that came before is in place: what reads entries
        (a page, a snapshot) waits for it, so that every position counts it."""
        if self._seeded is not None:
            await asyncio.shield(self._seeded)

    # ------------------------------------------------------------ bookkeeping

    def _touch(self, entry: Entry) -> None:
        self._changed[entry.id] = entry

    def _add(self, entry: Entry) -> Entry:
        self._touch(self.entries.add(entry))
        return entry

    def _flush(self) -> None:
        changed, self._changed = self._changed, {}
        for entry in changed.values():
            self.feed.publish(EntryChanged(msgspec.structs.replace(self.entries.settle(entry))))

    def _tool(self, tool_use_id: str | None) -> ToolEntry | None:
        return self.entries.get(tool_use_id, ToolEntry)

    def _ensure_tool(self, tool_use_id: str, name: str, parent: str | None) -> ToolEntry:
        tool = self._tool(tool_use_id)
        if tool is None:
            tool = ToolEntry(id=tool_use_id, name=name, status="pending", parent_id=parent)
            self._add(tool)
        return tool

    def _open_block(
        self, key: tuple[str | None, int], opened: tuple[str, list[str]] | None
    ) -> None:
        """Point the deltas of block ``key`` at an entry and its pieces (None: nowhere)."""
        parent, index = key
        if parent is None:
            if opened is None:
                self.main_open.pop(index, None)
            else:
                self.main_open[index] = opened
        elif opened is None:
            self.sub_open.pop((parent, index), None)
        else:
            self.sub_open[(parent, index)] = opened

    def _opened(self, parent: str | None) -> list[tuple[int, str]]:
        """The open blocks of one stream: (index, entry id)."""
        if parent is None:
            return [(index, opened[0]) for index, opened in self.main_open.items()]
        return [(key[1], opened[0]) for key, opened in self.sub_open.items() if key[0] == parent]

    def _close(self, parent: str | None, index: int | None = None) -> None:
        """End the streaming of the open blocks of one stream (or one of its blocks)."""
        for at, entry_id in self._opened(parent):
            if index not in (None, at):
                continue
            self._open_block((parent, at), None)
            entry = self.entries.get(entry_id, TextEntry) or self.entries.get(
                entry_id, ThinkingEntry
            )
            if entry is not None and entry.streaming:
                entry.streaming = False
                self._touch(self.entries.end_stream(entry))

    def _close_all(self) -> None:
        for parent in {None, *(key[0] for key in self.sub_open)}:
            self._close(parent)

    # ------------------------------------------------------------ prompts

    def _prompt_sent(self, sent: PromptSent) -> None:
        prompt = PromptEntry(
            id=sent.message_id,
            text=sent.text,
            image_count=sent.image_count,
            queued=self._turn_open,
        )
        self._add(prompt)
        self._turn_open = True

    def _take_up(self, prompt_id: str) -> bool:
        prompt = self.entries.take_up(prompt_id)
        if prompt is not None:
            self._touch(prompt)
        return prompt is not None or prompt_id in self.entries

    # ------------------------------------------------------------ CLI lines

    def _line(self, raw: bytes) -> None:
        try:
            line = _decode_line(raw)
        except msgspec.MsgspecError:
            return  # not a message of the conversation
        parent = line.parent_tool_use_id
        if line.type == "stream_event" and line.event is not None:
            self._stream_event(line.event, parent, line.uuid)
        elif line.type == "assistant":
            self._assistant(line, parent)
        elif line.type == "user":
            self._user(line, parent)
        elif line.type == "system":
            self._system(line)
        elif line.type == "conversation_reset":
            self._reset(line)

    def _stream_event(self, event: _Event, parent: str | None, uuid: str | None) -> None:
        if event.type == "message_start":
            self._close(parent)
            message_id = event.message.id if event.message else None
            self._message[parent] = message_id or uuid or f"message:{len(self._message)}"
        elif event.type == "message_stop":
            self._close(parent)
        elif event.type == "content_block_start" and event.index is not None:
            block = event.content_block or _Block()
            key = (parent, event.index)
            message_id = self._message.get(parent) or uuid or ""
            entry: Entry | None = None
            if block.type == "text":
                entry = TextEntry(
                    id=f"{message_id}:{event.index}", text="", streaming=True, parent_id=parent
                )
            elif block.type == "thinking":
                entry = ThinkingEntry(
                    id=f"{message_id}:{event.index}", text="", streaming=True, parent_id=parent
                )
            elif block.type in _TOOL_USES and block.id:
                entry = self._ensure_tool(block.id, block.name or "", parent)
            if entry is not None:
                if entry.id not in self.entries:
                    self._add(entry)
                self._open_block(key, (entry.id, self.entries.stream(entry.id)))
        elif event.type == "content_block_stop" and event.index is not None:
            self._close(parent, event.index)

    def _assistant(self, line: _Line, parent: str | None) -> None:
        if parent is None and line.uuid and self._exchange is not None:
            self.exchange_ends[self._exchange] = line.uuid
        message = line.message or _Message()
        blocks = message.content if isinstance(message.content, list) else []
        if line.is_api_error_message:
            text = "\n".join(b.text for b in blocks if b.text)
            subtype = "apiError"
            if line.error == CLI_AUTH_FAILED:
                # The CLI's words ("Please run /login") name a command its stream-json
                # mode does not have: the fix this user can run instead.
                subtype, text = "authRequired", auth_required(text, line.api_error_status).message
            self._add(
                NoticeEntry(
                    id=line.uuid or f"error:{self._turns}",
                    subtype=subtype,
                    level="error",
                    text=text,
                    parent_id=parent,
                )
            )
            return
        message_id = message.id or line.uuid or ""
        for block in blocks:
            # The CLI sends (and stores) one line per content block, in order: a block's
            # index is how many came before it (the stream's index, when it streamed).
            index = self._blocks.get(message_id, 0)
            self._blocks[message_id] = index + 1
            if block.type in _TOOL_USES and block.id:
                tool = self._ensure_tool(block.id, block.name or "", parent)
                self.entries.end_stream(tool)
                tool.input = block.input if isinstance(block.input, dict) else {}
                tool.partial_input = ""
                if tool.status == "pending":
                    tool.status = "running"
                self._touch(tool)
            elif block.type in ("text", "thinking"):
                text = (block.text if block.type == "text" else block.thinking) or ""
                self._complete_block(line, parent, block.type, text, f"{message_id}:{index}")

    def _complete_block(
        self, line: _Line, parent: str | None, kind: str, text: str, entry_id: str
    ) -> None:
        cls: type[TextEntry | ThinkingEntry] = TextEntry if kind == "text" else ThinkingEntry
        for _, open_id in self._opened(parent):
            open_entry = self.entries.get(open_id, cls)
            if open_entry is not None:
                self.entries.end_stream(open_entry)
                open_entry.text = text
                open_entry.streaming = False
                if isinstance(open_entry, TextEntry):
                    open_entry.aborted = line.aborted
                self._touch(open_entry)
                return
        if not text:
            return
        if cls is TextEntry:
            self._add(TextEntry(id=entry_id, text=text, aborted=line.aborted, parent_id=parent))
        else:
            self._add(ThinkingEntry(id=entry_id, text=text, parent_id=parent))

    def _user(self, line: _Line, parent: str | None) -> None:
        message = line.message or _Message()
        content = message.content
        blocks = [_Block(type="text", text=content)] if isinstance(content, str) else content or []
        results = [b for b in blocks if b.type == "tool_result"]
        if results:
            for block in results:
                self._tool_result(line, block)
            return
        text = "\n".join(b.text for b in blocks if b.type == "text" and b.text)
        images = sum(1 for b in blocks if b.type == "image")
        uuid = line.uuid or ""
        if parent is not None:
            if uuid and uuid not in self.entries:
                self._add(PromptEntry(id=uuid, text=text, image_count=images, parent_id=parent))
            return
        if self._summary_due and line.is_synthetic and not line.is_replay:
            # A stored session shows it too (compactSummary), where its history starts.
            self._summary_due = False
            self._add(
                NoticeEntry(
                    id=uuid or f"summary:{self._turns}",
                    subtype="compactSummary",
                    level="info",
                    text=compact_summary(text),
                )
            )
            return
        if line.is_replay and uuid:
            self._turn_open = True
            if self._take_up(uuid):
                self._exchange = uuid
                return
        local = _LOCAL_COMMAND.match(text)
        if local:
            level: NoticeLevel = "warn" if local.group(1).endswith("stderr") else "info"
            self._add(
                NoticeEntry(
                    id=uuid or f"output:{self._turns}",
                    subtype="commandOutput",
                    level=level,
                    text=local.group(2).strip(),
                )
            )
        elif text.startswith(_INTERRUPTED):
            self._add(
                NoticeEntry(
                    id=uuid or f"interrupted:{self._turns}",
                    subtype="interrupted",
                    level="info",
                    text=text.strip(),
                )
            )
        elif line.is_replay and (text or images) and uuid:
            # A prompt this daemon did not send (another client of the session).
            self._add(PromptEntry(id=uuid, text=as_typed(text), image_count=images))
            self._exchange = uuid

    def _tool_result(self, line: _Line, block: _Block) -> None:
        tool = self._tool(block.tool_use_id)
        if tool is None:
            return
        text, images = result_text(block.content)
        if tool.name in _AGENT_TOOLS and line.tool_use_result:
            with contextlib.suppress(msgspec.MsgspecError):
                text = agent_report(msgspec.json.decode(line.tool_use_result)) or text
        tool.result = EntryToolResult(text=text, is_error=block.is_error, image_count=images)
        said = _decision(line, tool.id)
        stopped = said == "stopped"
        decision: AskState | None = "allowed" if said == "stopped" else said  # it ran
        permission = tool.permission
        if permission is not None and permission.decision in ("pending", "answered"):
            self._decide(tool, decision or ("denied" if block.is_error else "allowed"))
        denied = "denied" in (decision, tool.permission.decision if tool.permission else None)
        if stopped:
            tool.status = "interrupted"
        else:
            tool.status = "denied" if denied else "failed" if block.is_error else "done"
        self.entries.end_stream(tool)
        tool.partial_input = ""
        self._touch(tool)

    def _system(self, line: _Line) -> None:
        if line.subtype == "init":
            self._turn_open = True
        elif line.subtype == "compact_boundary":
            self._summary_due = True
            self._add(
                NoticeEntry(
                    id=line.uuid or f"compaction:{self._turns}",
                    subtype="compaction",
                    level="info",
                    text=line.content or "Conversation compacted",
                )
            )

    def _reset(self, line: _Line) -> None:
        # CLI 2.1.330 prints this for /clear (trigger "clear"); 2.1.233 clears silently.
        cleared = line.trigger == "clear"
        self._add(
            NoticeEntry(
                id=line.uuid or f"reset:{self._turns}:{len(self._changed)}",
                subtype="cleared" if cleared else "reset",
                level="info",
                text="Conversation cleared" if cleared else f"Conversation reset ({line.trigger})",
            )
        )

    # ------------------------------------------------------------ the daemon's events

    def _asked(self, asked: PermissionAsked) -> None:
        request = asked.request
        by_rule = request.auto_decision == "allow"
        tool = self._ensure_tool(
            request.tool_use_id or f"request:{request.request_id}",
            request.tool_name,
            request.parent_tool_use_id,
        )
        # The CLI may have normalised the input (ExitPlanMode's plan is the plan file's text).
        tool.input = request.input
        tool.partial_input = ""
        tool.permission = EntryPermission(
            decision="allowed" if by_rule else "pending",
            request_id=request.request_id,
            by_rule=by_rule,
            preview=request.preview,
            preview_note=request.preview_note,
            decision_reason=request.decision_reason,
        )
        tool.status = "running" if by_rule else "awaitingPermission"
        if not by_rule:
            self._asking[request.request_id] = tool
        self._touch(tool)

    def _decide(self, tool: ToolEntry, decision: AskState) -> None:
        """Set how the ask of ``tool`` went. A new struct, never a change in place: an
        entry passed on earlier shares its parts with this one."""
        if tool.permission is not None:
            if tool.permission.request_id is not None:
                self._asking.pop(tool.permission.request_id, None)
            tool.permission = msgspec.structs.replace(tool.permission, decision=decision)

    def _stop(self, tool: ToolEntry, status: ToolStatus) -> None:
        """:func:`stop_tool`, its ask no longer waited for."""
        ask = tool.permission
        if ask is not None and ask.decision == "pending" and ask.request_id is not None:
            self._asking.pop(ask.request_id, None)
        stop_tool(tool, status)

    def _withdrawn(self, request_id: str) -> None:
        tool = self._asking.get(request_id)
        if tool is not None:
            self._decide(tool, "cancelled")
            if tool.status == "awaitingPermission":
                tool.status = "running"
            self._touch(tool)

    def _file_updated(self, updated: FileUpdated) -> None:
        change = updated.change
        tool = self._tool(change.tool_use_id)
        if tool is None or change.diff is None:
            return
        added, removed = _counts(change.diff)
        tool.files = [*tool.files, EntryFileChange(path=change.path, added=added, removed=removed)]
        self._touch(tool)

    def _status(self, status: StatusChanged) -> None:
        self._session_id = status.session_id
        if status.state == "awaitingPermission":
            return
        # No ask waits in any other state: those still pending were answered (the tool's
        # result will say how) or the channel is gone.
        for tool in list(self._asking.values()):
            exited = status.state == "exited"
            self._decide(tool, "cancelled" if exited else "answered")
            if tool.status == "awaitingPermission":
                tool.status = "failed" if exited else "running"
            self._touch(tool)
        if status.state == "idle":
            # Idle: the CLI took up every prompt sent, or never will.
            self._turn_open = False
            for prompt in self.entries.queued():
                self._take_up(prompt.id)

    def _turn_ended(self, ended: TurnEnded) -> None:
        self._close_all()
        self._turn_open = False
        self._summary_due = False  # it comes in the compaction's turn, or not at all
        for message_id in ended.message_ids:
            self._take_up(message_id)
        unfinished: ToolStatus = "interrupted" if ended.outcome == "interrupted" else "failed"
        error = ended.error.message if ended.error else None
        for entry in reversed(self.entries.placed()):
            if isinstance(entry, TurnEntry):
                break
            if (
                isinstance(entry, NoticeEntry)
                and entry.subtype == "authRequired"
                and ended.error is not None
                and ended.error.kind == "authRequired"
                and entry.text != ended.error.message
            ):
                # Said as the turn ends: a CLI that gives the HTTP status on the result line
                # only (2.1.233) did not tell a refused key from none when the notice came.
                entry.text = ended.error.message
                self._touch(entry)
            if isinstance(entry, NoticeEntry) and entry.text == error:
                error = None  # the turn's apiError or authRequired notice shows it already
            if (
                isinstance(entry, ToolEntry)
                and entry.parent_id is None
                and entry.status in _UNDER_WAY
            ):
                self._stop(entry, unfinished)
                self._touch(entry)
        self._turns += 1
        # Named after the turn's first prompt: unique across restarts and resumes, which
        # start counting again.
        first = ended.message_ids[0] if ended.message_ids else uuid.uuid4()
        footer = TurnEntry(
            id=f"turn:{first}",
            outcome=ended.outcome,
            duration_ms=ended.duration_ms,
            permission_wait_ms=ended.permission_wait_ms,
            cost_usd=ended.cost_usd,
            error=error,
        )
        self._add(footer)
        if self.footers is not None and self._session_id and ended.message_ids:
            self.footers.record(self._session_id, ended.message_ids, footer, ended.context)
