"""``claude-sidecar serve``: the shared daemon on its private Unix socket.

One daemon per socket (the lock beside it). Every connection is a client of its own
(``initialize`` to ``exit``), checked to be this user's (``peer``: the kernel's word on
its uid where there is one; the socket's directory, re-checked, in any case) and served
by a ``server.SidecarServer`` over the daemon's one hub. The chats belong to the daemon:

* a chat with no client attached and no turn running closes after ``idle_close``
  seconds (its session stays on disk: a client reopens it with ``resume``);
* the daemon exits once it has had no chat and no connection for ``linger`` seconds;
* SIGTERM or SIGINT close every chat and end the daemon; no CLI outlives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from claude_sidecar.frontends.daemon.connection import (
    SEND_LIMIT,
    STALL_SECONDS,
    Connection,
    SocketWriter,
)
from claude_sidecar.frontends.daemon.peer import Peer, peer_of
from claude_sidecar.frontends.daemon.place import Place
from claude_sidecar.frontends.daemon.shared import ConnectionShare, SharedDaemon
from claude_sidecar.frontends.daemon.streams import WINDOW_BYTES
from claude_sidecar.frontends.server.server import SidecarServer
from claude_sidecar.frontends.server.stdio import serve_client
from claude_sidecar.protocol.errors import SidecarError
from claude_sidecar.runtime import diagnostics, heap

log = logging.getLogger(__name__)
# pygls's reading loop logs each message's length at DEBUG: kept at pygls's level.
_pygls_log = logging.getLogger("pygls.io")

_HEADER_LIMIT = 1 << 20
_BODY_LIMIT = 256 << 20
_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*: [^\r\n]*\r\n")
_CONTENT_LENGTH = re.compile(rb"Content-Length: (\d+)\r\n", re.IGNORECASE)


@dataclass(frozen=True)
class Lifetime:
    """How long chats and the daemon live without clients (seconds)."""

    idle_close: float = 1800.0
    linger: float = 60.0


class NotFramed(ConnectionError):
    """The client sent something that is not a Content-Length framed message."""


class _FramedReader:
    """pygls's reader over a socket, refusing a stream that is not LSP-framed (pygls
    itself would skip any line that is not a header, and wait forever)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self) -> bytes:
        line = await self._reader.readline()
        if not line or line == b"\r\n":
            return line
        if not _HEADER.fullmatch(line):
            raise NotFramed(f"expected a header line, got {line[:60]!r}")
        length = _CONTENT_LENGTH.fullmatch(line)
        if length and int(length.group(1)) > _BODY_LIMIT:
            raise NotFramed(f"a message of {int(length.group(1))} bytes is over the limit")
        return line

    async def readexactly(self, n: int) -> bytes:
        return await self._reader.readexactly(n)


class SocketDaemon:
    """The shared daemon's listener and its life."""

    def __init__(
        self,
        place: Place,
        shared: SharedDaemon,
        lifetime: Lifetime,
        send_limit: int = SEND_LIMIT,
        stall: float = STALL_SECONDS,
    ) -> None:
        self.place = place
        self.shared = shared
        self.lifetime = lifetime
        self.send_limit = send_limit
        self.stall = stall
        self._quiet_since: dict[str, float] = {}
        self._empty_since: float | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._directory: tuple[int, int] | None = None

    async def run(self) -> None:
        """Listen until the daemon is stopped, idle for ``linger``, or signalled."""
        self.place.prepare_directory()
        self._directory = self.place.pin()
        lock = self.place.take_lock()
        try:
            with contextlib.suppress(FileNotFoundError):
                # We hold the lock: a socket file left here is a dead daemon's.
                os.unlink(self.place.socket)
            old_umask = os.umask(0o177)
            try:
                listener = await asyncio.start_unix_server(
                    self._accept, path=os.fspath(self.place.socket), limit=_HEADER_LIMIT
                )
            finally:
                os.umask(old_umask)
            self.place.check_socket()
            log.info("serving %s (pid %d)", self.place.socket, os.getpid())
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, self.shared.stopped.set)
            loop.add_signal_handler(
                signal.SIGUSR1, lambda: diagnostics.log_snapshot(self.shared.hub.channel_count)
            )
            sweeper = asyncio.ensure_future(self._sweep())
            async with listener:
                await self.shared.stopped.wait()
            sweeper.cancel()
            await self._end()
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.place.socket)
            os.close(lock)

    async def _end(self) -> None:
        for connection in list(self.shared.connections):
            if connection.server is not None:
                connection.server.client_gone.set()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5.0)
        await self.shared.close(grace=2.0)
        log.info("stopped")

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve_connection(reader, writer)
        finally:
            self._tasks.discard(task)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        sock: socket.socket = writer.get_extra_info("socket")
        peer = self._admit(sock)
        if isinstance(peer, str):
            log.warning("refused a connection: %s", peer)
            writer.transport.abort()
            return
        pid = peer.pid
        server: SidecarServer | None = None

        def lost(error: OSError | ValueError) -> None:
            if server is not None:
                server.lose_client(error)

        out = SocketWriter(writer.transport, lost, self.send_limit, self.stall)
        connection = Connection(out, pid)
        server = SidecarServer(shared=ConnectionShare(self.shared, connection))
        connection.server = server
        server.connect(out.queue)
        server.protocol.set_writer(out)
        self.shared.connections.add(connection)
        self._empty_since = None
        log.info("%r connected", connection)
        try:
            await serve_client(server, _FramedReader(reader), _pygls_log)
        except (ConnectionError, EOFError, ValueError) as e:
            # Not framed, a header over the limit, a cut message, a reset.
            log.warning("%r disconnected: %s", connection, e)
        finally:
            server.requests.cancel_others()
            await server.close()
            self.shared.connections.discard(connection)
            out.close()
            log.info("%r closed", connection)

    def _admit(self, sock: socket.socket) -> Peer | str:
        """The peer on ``sock`` if it is this user's, else why it is refused."""
        try:
            peer = peer_of(sock)
        except (OSError, ValueError) as e:
            return f"its peer's credentials are unreadable ({e})"
        if peer.uid is not None and peer.uid != os.geteuid():
            return f"pid {peer.pid or '?'} runs as uid {peer.uid}, not as this user"
        assert self._directory is not None
        try:
            # It came through the directory: still this user's alone, as at start?
            self.place.check_pinned(self._directory)
        except SidecarError as e:
            return e.message
        except OSError as e:
            return f"{self.place.directory}: {e}"
        return peer

    async def _sweep(self) -> None:
        """Close chats idle with nobody attached; stop when empty for ``linger``."""
        interval = max(0.2, min(30.0, self.lifetime.idle_close / 4, self.lifetime.linger / 4))
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(interval)
            now = loop.time()
            await self._close_idle_chats(now)
            if self.shared.hub.channel_count or self.shared.connections:
                self._empty_since = None
            elif self._empty_since is None:
                self._empty_since = now
            elif now - self._empty_since >= self.lifetime.linger:
                log.info("no chat and no client for %g s: exiting", self.lifetime.linger)
                self.shared.stopped.set()
                return

    async def _close_idle_chats(self, now: float) -> None:
        streams = self.shared.streams
        for channel in self.shared.hub.channels:
            quiet = channel.state in ("idle", "exited") and not streams.attached(channel.id)
            if not quiet:
                self._quiet_since.pop(channel.id, None)
                continue
            since = self._quiet_since.setdefault(channel.id, now)
            if now - since < self.lifetime.idle_close:
                continue
            self._quiet_since.pop(channel.id, None)
            log.info(
                "chat %s: no client for %g s and nothing running: closing it (session %s kept)",
                channel.id,
                self.lifetime.idle_close,
                channel.session_id,
            )
            with contextlib.suppress(SidecarError):
                await self.shared.hub.close_channel(channel.id)
            streams.forget(channel.id)


def serve_socket(
    place: Place,
    *,
    cli_path: str | None = None,
    env: Mapping[str, str] | None = None,
    lifetime: Lifetime | None = None,
    window_bytes: int = WINDOW_BYTES,
    warm_pool: int = 1,
    send_limit: int = SEND_LIMIT,
    stall: float = STALL_SECONDS,
) -> int:
    """Run the shared daemon on ``place`` until it stops; returns the exit code."""
    shared: SharedDaemon | None = None

    async def main() -> None:
        nonlocal shared
        heap.settle_after_imports()
        shared = SharedDaemon(
            cli_path=cli_path, env=env, window_bytes=window_bytes, warm_pool=warm_pool
        )
        await SocketDaemon(place, shared, lifetime or Lifetime(), send_limit, stall).run()

    try:
        asyncio.run(main())
    finally:
        if shared is not None:
            shared.kill_now()
    return 0
