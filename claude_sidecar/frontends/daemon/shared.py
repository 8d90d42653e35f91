"""The shared daemon's chats: one hub for every connection, chats that outlive them.

A connection opens or attaches to chats; its end detaches it, and its chats keep running
(turns finish, permission requests wait for whoever attaches next). Several connections
may be attached to one chat: each gets every notification, any may send or interrupt, and
the editor's tools are asked of the most recently active one that offers the tool.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from claude_sidecar.frontends.daemon.connection import Connection
from claude_sidecar.frontends.daemon.streams import WINDOW_BYTES, Streams
from claude_sidecar.frontends.server.attach import attach_answer
from claude_sidecar.frontends.server.outbox import settled_seq
from claude_sidecar.hub.hub import Hub
from claude_sidecar.protocol.api import (
    AttachedClient,
    AttachResult,
    InitializationOptions,
    WarmPoolOptions,
)
from claude_sidecar.protocol.errors import ChatsOpen, ChatsRunning, EditorUnavailable

log = logging.getLogger(__name__)


class SharedDaemon:
    """Every chat of the shared daemon and the connections attached to them."""

    def __init__(
        self,
        *,
        cli_path: str | None = None,
        env: Mapping[str, str] | None = None,
        window_bytes: int = WINDOW_BYTES,
        warm_pool: int = 1,
    ) -> None:
        self.streams = Streams(window_bytes)
        self.hub = Hub(self.streams, ask_editor=self.ask_editor, cli_path=cli_path, env=env)
        # The daemon's defaults: what a client that asks for nothing else gets (and what
        # the warm pool's spares are started with).
        self.hub.configure(InitializationOptions(warm_pool=WarmPoolOptions(size=warm_pool)))
        self.connections: set[Connection] = set()
        # Set when the daemon is to end (claude/stopDaemon, a signal, no use).
        self.stopped = asyncio.Event()

    def attach(
        self,
        connection: Connection,
        channel_id: str,
        after_seq: int | None,
        limit: int | None = None,
    ) -> AttachResult:
        """Attach ``connection`` to the chat: with ``after_seq``, queue what it missed
        first; without it (or when the window no longer has it all), the answer carries the
        conversation as of the answer's ``seq`` (its last ``limit`` entries, if given)."""
        channel = self.hub.get(channel_id)
        # Deltas waiting to be coalesced are numbered and sent now: part of the answer's
        # seq, not sent again after it.
        settled_seq(channel.feed)
        missed = self.streams.attach(connection, channel_id, after_seq)
        for frame in missed or ():
            connection.queue(frame)
        # What the stream sent, not what the outbox numbered: a chat still starting holds
        # its first frames back, and this connection gets them when they go out.
        stream = self.streams.get(channel_id)
        seq = stream.seq if stream is not None else 0
        whole = after_seq is None or missed is None
        log.info(
            "chat %s: %r attached at seq %d (%s)",
            channel_id,
            connection,
            seq,
            "snapshot" if whole else f"{len(missed or ())} replayed",
        )
        return attach_answer(
            channel,
            seq,
            replayed=0 if missed is None else len(missed),
            missed=after_seq is not None and missed is None,
            whole=whole,
            limit=limit,
        )

    def detach(self, connection: Connection, channel_id: str) -> None:
        """Stop sending the chat's notifications to ``connection``."""
        if self.streams.detach(connection, channel_id):
            log.info("chat %s: %r detached", channel_id, connection)

    def detach_all(self, connection: Connection) -> None:
        """The connection ended: detach it from every chat (they keep running)."""
        chats = self.streams.detach_all(connection)
        if chats:
            log.info("%r left; still running: %s", connection, ", ".join(chats))

    async def ask_editor(
        self, channel_id: str, tool: str, arguments: dict[str, Any], timeout: float
    ) -> Any:
        """Ask the most recently active attached client that offers ``tool`` to run it;
        when that client leaves before answering, the next one that offers it."""
        asked: set[Connection] = set()
        while True:
            ask = next(
                (
                    c
                    for c in reversed(self.streams.attached(channel_id))
                    if isinstance(c, Connection)
                    and c not in asked
                    and c.server is not None
                    and any(t.name == tool for t in c.server.client.editor_tools)
                ),
                None,
            )
            if ask is None or ask.server is None:
                why = "the editor asked left" if asked else "no attached editor offers it"
                raise EditorUnavailable(channel_id, tool, why)
            asked.add(ask)
            try:
                return await ask.server.ask_editor(channel_id, tool, arguments, timeout)
            except EditorUnavailable:
                log.info("chat %s: the editor asked for %s left; asking another", channel_id, tool)

    async def stop(self, *, force: bool, only_if_no_chats: bool = False) -> int:
        """Close every chat (refused while one is in a turn, unless ``force``; while there
        is any, with ``only_if_no_chats``); returns how many were closed."""
        if only_if_no_chats and self.hub.channel_count:
            raise ChatsOpen([c.id for c in self.hub.channels])
        running = [c.id for c in self.hub.channels if c.state not in ("idle", "exited")]
        if running and not force:
            raise ChatsRunning(running)
        count = self.hub.channel_count
        await self.close(grace=2.0)
        self.stopped.set()
        return count

    async def close(self, grace: float = 5.0) -> None:
        """End every chat and spare CLI."""
        channels = [c.id for c in self.hub.channels]
        await self.hub.close_all(grace=grace)
        for channel_id in channels:
            self.streams.forget(channel_id)

    def kill_now(self) -> None:
        """SIGKILL every CLI at once; the last resort when the event loop is gone."""
        self.hub.kill_all_now()


class ConnectionShare:
    """One connection's share of the shared daemon: what its ``claude/*`` server uses
    (``frontends.server.sharing.Sharing``), bound to the connection."""

    def __init__(self, shared: SharedDaemon, connection: Connection) -> None:
        self._shared = shared
        self._connection = connection

    @property
    def hub(self) -> Hub:
        """The daemon's hub."""
        return self._shared.hub

    def named(self, client_name: str | None) -> None:
        """Name the connection after its client (logs, ``claude/listChannels``)."""
        self._connection.client_name = client_name

    def attach(self, channel_id: str, after_seq: int | None, limit: int | None) -> AttachResult:
        """Attach the connection to a chat (``SharedDaemon.attach``)."""
        return self._shared.attach(self._connection, channel_id, after_seq, limit)

    def detach(self, channel_id: str) -> None:
        """Detach the connection from a chat."""
        self._shared.detach(self._connection, channel_id)

    def detach_all(self) -> None:
        """Detach the connection from every chat."""
        self._shared.detach_all(self._connection)

    def touch(self, channel_id: str) -> None:
        """The connection is the chat's most recently active client."""
        self._shared.streams.touch(self._connection, channel_id)

    def forget(self, channel_id: str) -> None:
        """Drop a closed chat's stream."""
        self._shared.streams.forget(channel_id)

    def clients(self, channel_id: str) -> list[AttachedClient]:
        """The clients attached to a chat."""
        return self._shared.streams.clients(channel_id)

    async def stop(self, *, force: bool, only_if_no_chats: bool) -> int:
        """Stop the daemon (``SharedDaemon.stop``)."""
        return await self._shared.stop(force=force, only_if_no_chats=only_if_no_chats)
