"""Replaying a recorded notification stream into a conversation, as a live channel feeds it.

A stream (tests/data/streams/<name>.jsonl) is every notification one channel sent while
the real CLI played a scenario of the stand-in model, one ``{method, params}`` per line.
Each is turned back into the channel event it was made from and given to a
``LiveConversation``; what it passes on is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from claude_sidecar.conversation import LiveConversation
from claude_sidecar.feed.changes import FileChange
from claude_sidecar.feed.events import (
    ChannelEvent,
    CliMessage,
    EntryChanged,
    FileUpdated,
    PermissionAsked,
    PermissionWithdrawn,
    StatusChanged,
    TurnEnded,
)
from claude_sidecar.frontends.server.outbox import Outbox
from claude_sidecar.protocol import api

STREAMS = Path(__file__).resolve().parents[1] / "data" / "streams"


class Recorder:
    """A front end's feed that keeps what it is given."""

    def __init__(self) -> None:
        self.events: list[ChannelEvent] = []
        self.deltas = 0
        self.entry_ids: list[str | None] = []

    def publish(self, event: ChannelEvent) -> None:
        self.events.append(event)

    def delta(
        self,
        kind: api.DeltaKind,
        index: int,
        text: str,
        parent: str | None,
        entry_id: str | None = None,
    ) -> None:
        self.deltas += 1
        self.entry_ids.append(entry_id)

    def entries_changed(self) -> list[api.Entry]:
        return [e.entry for e in self.events if isinstance(e, EntryChanged)]


def _event(method: str, p: dict[str, Any]) -> ChannelEvent | None:
    if method == "claude/message":
        return CliMessage(json.dumps(p["message"]).encode())
    if method == "claude/status":
        exited, retry = p.get("exit"), p.get("retry")
        return StatusChanged(
            p["state"],
            p["sessionId"],
            p.get("model"),
            p.get("permissionMode"),
            msgspec.convert(exited, api.ExitInfo) if exited else None,
            msgspec.convert(retry, api.RetryInfo) if retry else None,
        )
    if method == "claude/permissionRequest":
        fields = {k: v for k, v in p.items() if k not in ("channelId", "seq")}
        return PermissionAsked(msgspec.convert(fields, api.PermissionRequest))
    if method == "claude/permissionCancelled":
        return PermissionWithdrawn(p["requestId"], p["reason"])
    if method == "claude/fileUpdated":
        return FileUpdated(
            FileChange(
                path=p["path"],
                tool_name=p["toolName"],
                tool_use_id=p.get("toolUseId"),
                message_id=p.get("messageId"),
                old=p.get("oldContent"),
                new=p.get("newContent"),
                notice=p.get("notice"),
                parent_tool_use_id=p.get("parentToolUseId"),
            )
        )
    if method == "claude/turnEnded":
        fields = {k: v for k, v in p.items() if k not in ("channelId", "seq")}
        return msgspec.convert(_snake(fields), TurnEnded)
    return None


def _snake(fields: dict[str, Any]) -> dict[str, Any]:
    def snake(name: str) -> str:
        return "".join("_" + c.lower() if c.isupper() else c for c in name)

    # Top level only: the nested structs (usage, error) are the protocol's, camelCase.
    return {snake(k): v for k, v in fields.items()}


def play(name: str, conversation: LiveConversation) -> None:
    """Feed the stream ``name`` to ``conversation``, as its channel did."""
    for line in (STREAMS / f"{name}.jsonl").read_text().splitlines():
        note = json.loads(line)
        method, params = note["method"], note["params"]
        if method == "claude/delta":
            conversation.delta(
                params["kind"], params["index"], params["text"], params.get("parentToolUseId")
            )
        elif (event := _event(method, params)) is not None:
            conversation.publish(event)


def replay(name: str) -> tuple[LiveConversation, Recorder]:
    """Feed the stream ``name`` to a new conversation; returns it and its front end."""
    front = Recorder()
    conversation = LiveConversation(front)
    play(name, conversation)
    return conversation, front


def client_stream(name: str) -> list[dict[str, Any]]:
    """What a client receives for the stream ``name`` with raw messages off: every
    notification but ``claude/message``, as the outbox encodes it (``{method, params}``).

    Written to tests/data/streams/<name>.client.jsonl for the clients' own tests: a
    client's store, given these in order, must end with <name>.entries.json.
    """
    frames: list[bytes] = []
    play(name, LiveConversation(Outbox("ch-1", frames.append, raw_messages=False)))
    notes = [json.loads(f.split(b"\r\n\r\n", 1)[1]) for f in frames]
    return [
        {"method": n["method"], "params": n["params"]}
        for n in notes
        if n["method"] != "claude/message"
    ]
