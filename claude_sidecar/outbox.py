"""Per-channel notification numbering and encoding.

Every notification about a channel carries ``channelId`` and a ``seq`` that starts at
1 and has no gaps, so a client can detect loss or reordering. Notifications are
encoded with msgspec straight into a Content-Length frame; CLI messages travel as the
original bytes (``msgspec.Raw``) and are never decoded into Python objects and back.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from .api import DeltaKind, DeltaNotification, ExitInfo, MessageNotification, StatusNotification

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


class Outbox:
    """Numbers and sends the notifications of one channel."""

    def __init__(self, channel_id: str, sink: Sink) -> None:
        self.channel_id = channel_id
        self._sink = sink
        self._seq = 0

    @property
    def last_seq(self) -> int:
        """The seq of the last notification sent (0 before the first)."""
        return self._seq

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def delta(self, kind: DeltaKind, index: int, text: str, parent_tool_use_id: str | None) -> None:
        """Send ``claude/delta`` for one content_block_delta."""
        self._sink(frame("claude/delta", DeltaNotification(
            channel_id=self.channel_id, seq=self._next(), kind=kind, index=index, text=text,
            parent_tool_use_id=parent_tool_use_id)))

    def message(self, raw: bytes) -> None:
        """Send ``claude/message`` carrying one CLI line verbatim."""
        self._sink(frame("claude/message", MessageNotification(
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
        self._sink(frame("claude/status", StatusNotification(
            channel_id=self.channel_id, seq=self._next(), state=state,  # type: ignore[arg-type]
            session_id=session_id, model=model, permission_mode=permission_mode, exit=exit)))
