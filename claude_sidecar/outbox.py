"""Per-channel notification numbering and encoding.

Every notification about a channel carries ``channelId`` and a ``seq`` that starts at
1 and has no gaps, so a client can detect loss or reordering. Notifications are
encoded with msgspec straight into a Content-Length frame; CLI messages travel as the
original bytes (``msgspec.Raw``) and are never decoded into Python objects and back.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from .files import FileChange
from .api import (
    DeltaKind,
    DeltaNotification,
    ExitInfo,
    FileUpdatedNotification,
    MessageNotification,
    PermissionCancelledNotification,
    PermissionRequest,
    PermissionRequestNotification,
    StatusNotification,
)

Sink = Callable[[bytes], None]
"""Takes one complete JSON-RPC frame (header and body) and sends it to the client."""

_encoder = msgspec.json.Encoder()


class _Frame(msgspec.Struct):
    method: str
    params: msgspec.Raw
    jsonrpc: str = "2.0"


def frame(method: str, params: msgspec.Struct) -> bytes:
    """Encode a JSON-RPC notification as a Content-Length framed message."""
    body = _encoder.encode(_Frame(method, msgspec.Raw(_encoder.encode(params))))
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _nowhere(data: bytes) -> None:
    pass


class Outbox:
    """Numbers and sends the notifications of one channel.

    A channel's outbox starts ``held`` while its CLI starts: the client learns the
    channel id only from the ``claude/newChannel`` response, so nothing about a channel
    that fails to start is ever sent, and a started one begins at seq 1.
    """

    def __init__(self, channel_id: str, sink: Sink, *, held: bool = False) -> None:
        self.channel_id = channel_id
        self._sink = sink
        self._seq = 0
        self._held: list[bytes] | None = [] if held else None

    def release(self) -> None:
        """Send everything held back, in order, and stop holding."""
        held, self._held = self._held, None
        for data in held or ():
            self._sink(data)

    def discard(self) -> list[bytes]:
        """Drop what was held back (the channel never came to be); returns the frames."""
        held, self._held = self._held or [], None
        self._sink = _nowhere
        return held

    def _send(self, data: bytes) -> None:
        if self._held is not None:
            self._held.append(data)
        else:
            self._sink(data)

    @property
    def last_seq(self) -> int:
        """The seq of the last notification sent (0 before the first)."""
        return self._seq

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def delta(self, kind: DeltaKind, index: int, text: str, parent_tool_use_id: str | None) -> None:
        """Send ``claude/delta`` for one content_block_delta."""
        self._send(frame("claude/delta", DeltaNotification(
            channel_id=self.channel_id, seq=self._next(), kind=kind, index=index, text=text,
            parent_tool_use_id=parent_tool_use_id)))

    def message(self, raw: bytes) -> None:
        """Send ``claude/message`` carrying one CLI line verbatim."""
        self._send(frame("claude/message", MessageNotification(
            channel_id=self.channel_id, seq=self._next(), message=msgspec.Raw(raw))))

    def status(
        self,
        state: str,
        session_id: str,
        model: str | None,
        permission_mode: str | None,
        exit: ExitInfo | None = None,
    ) -> None:
        """Send ``claude/status`` after a state change."""
        self._send(frame("claude/status", StatusNotification(
            channel_id=self.channel_id, seq=self._next(), state=state,  # type: ignore[arg-type]
            session_id=session_id, model=model, permission_mode=permission_mode, exit=exit)))

    def permission_request(self, request: PermissionRequest) -> None:
        """Send ``claude/permissionRequest`` for a tool use awaiting (or given) a decision."""
        self._send(frame("claude/permissionRequest", PermissionRequestNotification(
            **msgspec.structs.asdict(request), channel_id=self.channel_id, seq=self._next())))

    def permission_cancelled(self, request_id: str, reason: str) -> None:
        """Send ``claude/permissionCancelled``: the request needs no answer any more."""
        self._send(frame("claude/permissionCancelled", PermissionCancelledNotification(
            channel_id=self.channel_id, seq=self._next(), request_id=request_id,
            reason=reason)))  # type: ignore[arg-type]

    def file_updated(self, change: FileChange) -> None:
        """Send ``claude/fileUpdated`` for a change that is on disk."""
        shown = change.notice is None
        self._send(frame("claude/fileUpdated", FileUpdatedNotification(
            channel_id=self.channel_id, seq=self._next(), path=change.path,
            tool_name=change.tool_name, tool_use_id=change.tool_use_id,
            message_id=change.message_id, old_content=change.old if shown else None,
            new_content=change.new if shown else None, diff=change.diff, notice=change.notice,
            parent_tool_use_id=change.parent_tool_use_id)))
