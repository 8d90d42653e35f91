"""One client of the shared daemon: its socket, its bounded outgoing queue, its server.

Frames are collected and written once per event-loop iteration, as ``stdout.FrameWriter``
does for the private daemon, but never block: the socket's transport buffers what the
client has not read yet. A client with more than ``limit`` bytes unread that then reads
nothing for ``stall`` seconds has stopped reading: it is disconnected with a logged reason
(and may re-attach and get what it missed); a client merely slower than a burst is not.
Whatever its pace, a client is disconnected at ``4 * limit`` (at least 64 MiB) unread:
the daemon's memory is bounded.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from claude_sidecar.runtime.stdout import FrameBatcher

if TYPE_CHECKING:
    from claude_sidecar.frontends.server.server import SidecarServer

log = logging.getLogger(__name__)

SEND_LIMIT = 64 << 20
"""Bytes a client may leave unread before it must show it reads (several replay windows)."""
STALL_SECONDS = 10.0
"""How long a client over the limit may read nothing before it is disconnected."""
_HARD_LIMIT = 64 << 20

_ids = itertools.count(1)


class TooSlow(ConnectionError):
    """The client left more than the limit unread."""


class SocketWriter(FrameBatcher):
    """A connection's outgoing frames: pygls's writer and the chats' sink, sent in
    batches (``stdout.FrameBatcher``) to the socket's transport, which never blocks."""

    def __init__(
        self,
        transport: asyncio.WriteTransport,
        on_lost: Callable[[OSError | ValueError], None],
        limit: int = SEND_LIMIT,
        stall: float = STALL_SECONDS,
    ) -> None:
        super().__init__()
        self._transport = transport
        self._on_lost = on_lost
        self._limit = limit
        self._hard_limit = max(4 * limit, _HARD_LIMIT)
        self._stall = stall
        # Bytes handed to the transport so far; with its backlog, how much the client read.
        self._written = 0
        self._stall_check: asyncio.TimerHandle | None = None

    def _send(self, data: bytes) -> None:
        if self._transport.is_closing():
            self._lose(BrokenPipeError("the client's socket is closed"))
            return
        self._transport.write(data)
        self._written += len(data)
        unread = self._transport.get_write_buffer_size()
        if unread > self._hard_limit:
            self._lose(TooSlow(f"the client left {unread} bytes unread"))
        elif unread > self._limit and self._stall_check is None:
            self._watch(unread)

    def _watch(self, unread: int) -> None:
        self._stall_check = asyncio.get_running_loop().call_later(
            self._stall, self._check_reading, unread, self._written
        )

    def _check_reading(self, unread_then: int, written_then: int) -> None:
        self._stall_check = None
        if self._lost:
            return
        unread = self._transport.get_write_buffer_size()
        read = (self._written - written_then) - (unread - unread_then)
        if unread <= self._limit:
            return
        if read <= 0:
            self._lose(
                TooSlow(
                    f"the client has {unread} bytes unread and read nothing for {self._stall:g} s"
                )
            )
        else:
            self._watch(unread)

    def _lose(self, error: OSError) -> None:
        self._lost = True
        if self._stall_check is not None:
            self._stall_check.cancel()
        self._transport.abort()
        self._on_lost(error)

    def close(self) -> None:
        """Flush and close the socket (pygls's writer interface)."""
        self.flush()
        if self._stall_check is not None:
            self._stall_check.cancel()
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
