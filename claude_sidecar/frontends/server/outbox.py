"""The ``claude/*`` front end's feed of one channel: numbering, coalescing and encoding.

The outbox receives a channel's events (``events.Feed``) and sends each as a
``claude/*`` notification.

Every notification about a channel carries ``channelId`` and a ``seq`` that starts at
1 and has no gaps, so a client can detect loss or reordering. Notifications are
encoded with msgspec in one pass straight into a Content-Length frame; CLI messages
travel as the original bytes (``msgspec.Raw``) and are never decoded and re-encoded.

With coalescing on (``initializationOptions.coalesceDeltasMs``), text and thinking
deltas of one content block are merged: the first delta after a quiet interval goes
out at once, the ones that follow within the interval wait and leave together at its
end (tool-input JSON fragments are merged the same way). Any other notification first
sends what is waiting, so nothing is reordered, and no text is ever dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec

from claude_sidecar.feed import events
from claude_sidecar.feed.changes import FileChange
from claude_sidecar.protocol.api import (
    DeltaKind,
    DeltaNotification,
    EntryNotification,
    FileUpdatedNotification,
    MessageNotification,
    PermissionCancelledNotification,
    PermissionRequestNotification,
    StatusNotification,
    TurnEndedNotification,
    WorktreeChangedNotification,
)

Sink = Callable[[bytes], None]
"""Takes one complete JSON-RPC frame (header and body) and sends it to the client."""

_encoder = msgspec.json.Encoder()
# Bound once: a method looked up on the encoder per delta is not specialised by the
# interpreter (~40 instructions of a delta's ~16,000).
_encode = _encoder.encode


def frame(method: str, params: msgspec.Struct) -> bytes:
    """Encode a JSON-RPC notification as a Content-Length framed message.

    The envelope is a constant per method: only the params are encoded, and the frame
    is built with one copy of them.
    """
    prefix = _PREFIXES.get(method)
    if prefix is None:
        prefix = _PREFIXES[method] = b'{"jsonrpc":"2.0","method":%s,"params":' % (
            _encoder.encode(method)
        )
    body = _encoder.encode(params)
    return b"Content-Length: %d\r\n\r\n%s%s}" % (len(prefix) + len(body) + 1, prefix, body)


_PREFIXES: dict[str, bytes] = {}
_DELTA = _PREFIXES["claude/delta"] = b'{"jsonrpc":"2.0","method":"claude/delta","params":'
# A delta's header and envelope by the length of its params: a dict lookup and one
# concatenation per delta instead of %-formatting (~100 ns of the ~1.5 us a delta costs).
_DELTA_HEADS: dict[int, bytes] = {}
_DELTA_HEADS_KEPT = 4096


def _delta_head(params_len: int) -> bytes:
    head = b"Content-Length: %d\r\n\r\n%s" % (len(_DELTA) + params_len + 1, _DELTA)
    if params_len < _DELTA_HEADS_KEPT:
        _DELTA_HEADS[params_len] = head
    return head


def settled_seq(feed: object) -> int:
    """Number and send what waits for the coalescing interval, and return the last seq
    sent: the conversation's entries already hold the waiting text, so a snapshot taken
    now is current as of that seq (0 for a feed that is not an outbox)."""
    if not isinstance(feed, Outbox):
        return 0
    feed.flush()
    return feed.last_seq


def _nowhere(data: bytes) -> None:
    pass


class Outbox:
    """Numbers and sends the notifications of one channel.

    A channel's outbox starts ``held`` while its CLI starts: the client learns the
    channel id only from the ``claude/newChannel`` response, so nothing about a channel
    that fails to start is ever sent, and a started one begins at seq 1.
    """

    def __init__(
        self,
        channel_id: str,
        sink: Sink,
        *,
        held: bool = False,
        coalesce: float = 0.0,
        raw_messages: bool = True,
    ) -> None:
        self.channel_id = channel_id
        self._sink = sink
        self._seq = 0
        self._held: list[bytes] | None = [] if held else None
        # Where frames go now: kept back while held, else the sink.
        self._send: Sink = sink if self._held is None else self._held.append
        # Coalescing: seconds between delta notifications (0: every delta is sent).
        self._coalesce = coalesce
        self._waiting: tuple[DeltaKind, int, str | None, str | None] | None = None
        self._waiting_text: list[str] = []
        self._waiting_progress: bytes | None = None
        # Set while something waits for the end of the interval.
        self._timer: asyncio.TimerHandle | None = None
        self._last_delta_at = float("-inf")
        # Off: CLI lines and progress are not sent (and take no seq).
        self._raw = raw_messages

    def publish(self, event: events.ChannelEvent) -> None:
        """Send one channel event as its notification (``events.Feed``)."""
        if isinstance(event, events.CliMessage):
            if self._raw:
                self.message(event.raw)
            return
        if isinstance(event, events.Progress):
            if self._raw:
                self.progress(event.raw)
            return
        method, notification = _NOTIFICATIONS[type(event)]
        if isinstance(event, events.PermissionAsked):
            fields = msgspec.structs.asdict(event.request)
        elif isinstance(event, events.FileUpdated):
            fields = _file_updated_fields(event.change)
        else:  # the other events carry exactly their notification's fields
            fields = msgspec.structs.asdict(event)
        self._send(
            frame(method, notification(channel_id=self.channel_id, seq=self._next(), **fields))
        )

    def release(self) -> None:
        """Send everything held back, in order, and stop holding."""
        held, self._held = self._held, None
        self._send = self._sink
        for data in held or ():
            self._sink(data)

    def discard(self) -> list[bytes]:
        """Drop what was held back (the channel never came to be); returns the frames."""
        held, self._held = self._held or [], None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._sink = self._send = _nowhere
        return held

    @property
    def last_seq(self) -> int:
        """The seq of the last notification sent (0 before the first)."""
        return self._seq

    def _next(self) -> int:
        if self._timer is not None:
            # What waits for the end of the interval precedes whatever is numbered now.
            self.flush()
        self._seq += 1
        return self._seq

    def delta(
        self,
        kind: DeltaKind,
        index: int,
        text: str,
        parent_tool_use_id: str | None,
        entry_id: str | None = None,
    ) -> None:
        """Send ``claude/delta`` for one content_block_delta (or merge it, when coalescing)."""
        if not self._coalesce:
            # The hot path of a streaming turn: no timer, so the next seq needs no flush;
            # the frame is built as _delta_frame builds it, without its call.
            self._seq = seq = self._seq + 1
            body = _encode(
                DeltaNotification(
                    self.channel_id, seq, kind, index, text, parent_tool_use_id, entry_id
                )
            )
            # One join, not two concatenations (each takes both operands' buffers); the
            # sink called from a local: an instance attribute called as a method is looked
            # up on the class first, every time (~50 instructions).
            send = self._send
            send(b"".join((_DELTA_HEADS.get(len(body)) or _delta_head(len(body)), body, b"}")))
            return
        block = (kind, index, parent_tool_use_id, entry_id)
        if self._waiting == block:
            self._waiting_text.append(text)
            return
        if self._waiting is not None:
            self.flush()
        if self._too_soon():
            self._waiting, self._waiting_text = block, [text]
        else:
            self._last_delta_at = asyncio.get_running_loop().time()
            self._send(self._delta_frame(kind, index, text, parent_tool_use_id, entry_id))

    def progress(self, raw: bytes) -> None:
        """Send a CLI progress message (``system/thinking_tokens``) as ``claude/message``.

        Each carries a running total; when coalescing, one that arrives within the
        interval replaces the one waiting and goes out just before the merged delta.
        """
        if self._coalesce and self._too_soon():
            self._waiting_progress = raw
        else:
            self.message(raw)

    def _too_soon(self) -> bool:
        """True if a delta sent now would come within the interval; the flush timer is
        then armed for its end."""
        if self._timer is not None:
            return True
        loop = asyncio.get_running_loop()
        due = self._last_delta_at + self._coalesce
        if loop.time() >= due:
            return False
        self._timer = loop.call_at(due, self.flush)
        return True

    def flush(self) -> None:
        """Send what waits for the end of the interval (progress, then merged delta)."""
        if self._timer is None:
            return
        self._timer.cancel()
        self._timer = None
        progress, self._waiting_progress = self._waiting_progress, None
        waiting, text = self._waiting, "".join(self._waiting_text)
        self._waiting, self._waiting_text = None, []
        if progress is not None:
            self.message(progress)
        if waiting is not None:
            self._last_delta_at = asyncio.get_running_loop().time()
            kind, index, parent_tool_use_id, entry_id = waiting
            self._send(self._delta_frame(kind, index, text, parent_tool_use_id, entry_id))

    def _delta_frame(
        self,
        kind: DeltaKind,
        index: int,
        text: str,
        parent_tool_use_id: str | None,
        entry_id: str | None,
    ) -> bytes:
        body = _encode(
            DeltaNotification(
                self.channel_id, self._next(), kind, index, text, parent_tool_use_id, entry_id
            )
        )
        return b"".join((_DELTA_HEADS.get(len(body)) or _delta_head(len(body)), body, b"}"))

    def message(self, raw: bytes) -> None:
        """Send ``claude/message`` carrying one CLI line verbatim."""
        self._send(
            frame(
                "claude/message",
                MessageNotification(
                    channel_id=self.channel_id, seq=self._next(), message=msgspec.Raw(raw)
                ),
            )
        )


def _file_updated_fields(change: FileChange) -> dict[str, object]:
    shown = change.notice is None
    return dict(
        path=change.path,
        tool_name=change.tool_name,
        tool_use_id=change.tool_use_id,
        message_id=change.message_id,
        old_content=change.old if shown else None,
        new_content=change.new if shown else None,
        diff=change.diff,
        notice=change.notice,
        parent_tool_use_id=change.parent_tool_use_id,
    )


# An event -> its notification's method and params type (all but channelId and seq come
# from the event).
_NOTIFICATIONS: dict[type, tuple[str, type[msgspec.Struct]]] = {
    events.StatusChanged: ("claude/status", StatusNotification),
    events.TurnEnded: ("claude/turnEnded", TurnEndedNotification),
    events.PermissionAsked: ("claude/permissionRequest", PermissionRequestNotification),
    events.PermissionWithdrawn: ("claude/permissionCancelled", PermissionCancelledNotification),
    events.FileUpdated: ("claude/fileUpdated", FileUpdatedNotification),
    events.EntryChanged: ("claude/entry", EntryNotification),
    events.WorktreeChanged: ("claude/worktreeChanged", WorktreeChangedNotification),
}
