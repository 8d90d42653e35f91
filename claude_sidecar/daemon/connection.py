"""One client of the shared daemon: its socket, its bounded outgoing queue, its server.

Frames are collected and written once per event-loop iteration, as ``stdout.FrameWriter``
does for the private daemon, but never block: the socket's transport buffers what the
client has not read yet. A client that lets more than ``limit`` bytes pile up (it stopped
reading) is disconnected with a logged reason; it may re-attach and get what it missed.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server import SidecarServer

log = logging.getLogger(__name__)

SEND_LIMIT = 64 << 20
"""Bytes a client may leave unread before it is disconnected (several replay windows)."""

_ids = itertools.count(1)


class TooSlow(ConnectionError):
    """The client left more than the limit unread."""


class SocketWriter:
    """A connection's outgoing frames: pygls's writer and the chats' sink."""

    def __init__(
        self,
        transport: asyncio.WriteTransport,
        on_lost: Callable[[OSError | ValueError], None],
        limit: int = SEND_LIMIT,
    ) -> None:
        self._transport = transport
        self._on_lost = on_lost
        self._limit = limit
        self._frames: list[bytes] = []
        self._lost = False

    def write(self, data: bytes) -> None:
        """Send one frame now, after what was queued (pygls's writer interface)."""
        self._frames.append(data)
        self.flush()

    def queue(self, data: bytes) -> None:
        """Send one frame before the event loop next waits for I/O."""
        frames = self._frames
        frames.append(data)
        if len(frames) == 1:
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Hand every collected frame to the socket."""
        if not self._frames:
            return
        data = b"".join(self._frames)
        self._frames.clear()
        if self._lost:
            return
        if self._transport.is_closing():
            self._lose(BrokenPipeError("the client's socket is closed"))
            return
        self._transport.write(data)
        unread = self._transport.get_write_buffer_size()
        if unread > self._limit:
            self._lose(TooSlow(f"the client left {unread} bytes unread (limit {self._limit})"))

    def _lose(self, error: OSError) -> None:
        self._lost = True
        self._transport.abort()
        self._on_lost(error)

    def close(self) -> None:
        """Flush and close the socket (pygls's writer interface)."""
        self.flush()
        self._transport.close()


class Connection:
    """A client connected to the shared daemon, as the chats' streams see it."""

    def __init__(self, writer: SocketWriter, peer_pid: int | None) -> None:
        self.connection_id = f"conn-{next(_ids)}"
        self.client_name: str | None = None
        self.peer_pid = peer_pid
        self._writer = writer
        # The connection's claude/* server (set once it exists: it needs the connection).
        self.server: SidecarServer | None = None

    def queue(self, frame: bytes) -> None:
        """Send one frame of a chat this connection is attached to."""
        self._writer.queue(frame)

    def __repr__(self) -> str:
        return f"{self.connection_id} ({self.client_name or 'unnamed'}, pid {self.peer_pid})"
