"""The shared daemon's feeds: every chat's notifications, encoded once, sent to every
connection attached to the chat, and kept in a bounded replay window.

A chat's ``outbox.Outbox`` numbers and encodes its events as in the private daemon; its
sink here is the chat's ``ChatStream``, which hands each frame to the attached
connections and keeps the most recent frames (up to ``window_bytes``) so that a client
that was away gets exactly what it missed (``claude/attach`` with ``afterSeq``). The
outbox sends every seq exactly once and in order, so the stream numbers the frames by
counting them.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Protocol

from claude_sidecar.frontends.server.outbox import Outbox
from claude_sidecar.protocol.api import AttachedClient, InitializationOptions
from claude_sidecar.protocol.errors import InvalidParams

log = logging.getLogger(__name__)

WINDOW_BYTES = 4 << 20
"""A chat's replay window by default: 4 MiB of its latest notifications (a long answer
streamed delta by delta is ~1-2 MiB of notifications)."""


class Attached(Protocol):
    """A connection as a chat's stream sees it."""

    connection_id: str
    client_name: str | None

    def queue(self, frame: bytes) -> None:
        """Send one frame to the client (must not block)."""


class ChatStream:
    """One chat's notifications: to each attached connection, and into the window."""

    def __init__(self, channel_id: str, window_bytes: int) -> None:
        self.channel_id = channel_id
        self.seq = 0
        self._window: deque[bytes] = deque()
        self._window_size = 0
        self._window_bytes = window_bytes
        # Attached connections, the most recently active last.
        self.attached: dict[Attached, None] = {}

    def send(self, frame: bytes) -> None:
        """Take the outbox's next frame (seq ``self.seq + 1``)."""
        self.seq += 1
        window = self._window
        window.append(frame)
        self._window_size += len(frame)
        while self._window_size > self._window_bytes and len(window) > 1:
            self._window_size -= len(window.popleft())
        for connection in self.attached:
            connection.queue(frame)

    @property
    def oldest_kept(self) -> int:
        """The seq of the oldest frame in the window (``seq + 1`` when it is empty)."""
        return self.seq - len(self._window) + 1

    def missed(self, after_seq: int) -> list[bytes] | None:
        """The frames numbered after ``after_seq``; None if some are no longer kept."""
        if after_seq > self.seq:
            raise InvalidParams(
                "afterSeq",
                f"is {after_seq}, but chat {self.channel_id} has sent only {self.seq} "
                "notifications",
                "send the seq of the last notification this client received of the chat",
            )
        if after_seq + 1 < self.oldest_kept:
            return None
        skip = after_seq + 1 - self.oldest_kept
        return [frame for i, frame in enumerate(self._window) if i >= skip]

    @property
    def window_size(self) -> int:
        """Bytes the window holds now."""
        return self._window_size


class _SharedOutbox(Outbox):
    """A chat's outbox whose stream is forgotten if the chat never comes to be."""

    def __init__(self, streams: Streams, stream: ChatStream, client: InitializationOptions):
        super().__init__(
            stream.channel_id,
            stream.send,
            held=True,
            coalesce=client.coalesce_deltas_ms / 1000,
            raw_messages=client.raw_messages,
        )
        self._streams = streams

    def discard(self) -> list[bytes]:
        """Drop what was held back, and the chat's stream with it."""
        self._streams.forget(self.channel_id)
        return super().discard()


class Streams:
    """Every chat's stream (the hub's ``events.Subscriber`` in the shared daemon).

    A chat's coalescing and raw messages follow the client that opened it.
    """

    def __init__(self, window_bytes: int = WINDOW_BYTES) -> None:
        self.window_bytes = window_bytes
        self._streams: dict[str, ChatStream] = {}

    def open_feed(self, channel_id: str, client: InitializationOptions) -> Outbox:
        """The feed of a new chat; its frames are kept until the chat has started."""
        stream = self._streams[channel_id] = ChatStream(channel_id, self.window_bytes)
        return _SharedOutbox(self, stream, client)

    def get(self, channel_id: str) -> ChatStream | None:
        """The stream of chat ``channel_id``, if it has one."""
        return self._streams.get(channel_id)

    def attach(
        self, connection: Attached, channel_id: str, after_seq: int | None
    ) -> list[bytes] | None:
        """Send the chat's next frames to ``connection``; returns the frames numbered after
        ``after_seq`` (for the caller to send first), None if the window no longer has
        them all, and ``[]`` without ``after_seq``."""
        stream = self._streams[channel_id]
        missed = [] if after_seq is None else stream.missed(after_seq)
        stream.attached.pop(connection, None)
        stream.attached[connection] = None
        return missed

    def detach(self, connection: Attached, channel_id: str) -> bool:
        """Stop sending the chat's frames to ``connection``; False if it was not attached."""
        stream = self._streams.get(channel_id)
        return stream is not None and stream.attached.pop(connection, 0) is None

    def detach_all(self, connection: Attached) -> list[str]:
        """Detach ``connection`` from every chat; returns the chats it was attached to."""
        return [cid for cid, s in self._streams.items() if s.attached.pop(connection, 0) is None]

    def touch(self, connection: Attached, channel_id: str) -> None:
        """Note that ``connection`` acted on the chat (it is asked the editor's tools first)."""
        stream = self._streams.get(channel_id)
        if stream is not None and connection in stream.attached:
            del stream.attached[connection]
            stream.attached[connection] = None

    def attached(self, channel_id: str) -> list[Attached]:
        """The connections attached to the chat, the most recently active last."""
        stream = self._streams.get(channel_id)
        return list(stream.attached) if stream is not None else []

    def clients(self, channel_id: str) -> list[AttachedClient]:
        """The attached connections as ``claude/listChannels`` shows them."""
        return [AttachedClient(c.connection_id, c.client_name) for c in self.attached(channel_id)]

    def forget(self, channel_id: str) -> None:
        """The chat is closed: drop its stream and window."""
        stream = self._streams.pop(channel_id, None)
        if stream is not None:
            log.info(
                "chat %s: stream closed after %d notifications (%d attached)",
                channel_id,
                stream.seq,
                len(stream.attached),
            )
