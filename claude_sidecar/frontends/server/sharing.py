"""What a connection of the shared daemon lends the ``claude/*`` server that serves it.

The shared daemon (``frontends.daemon``) is built on this server, so the server knows it
only as this interface, bound to one connection; a private daemon (``--stdio``) has none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from claude_sidecar.hub.hub import Hub
    from claude_sidecar.protocol.api import AttachedClient, AttachResult


class Sharing(Protocol):
    """One connection's share of the shared daemon's chats."""

    @property
    def hub(self) -> Hub:
        """The daemon's hub, every connection's."""
        ...

    def named(self, client_name: str | None) -> None:
        """The connection's client says who it is (``initializationOptions.clientName``)."""

    def attach(self, channel_id: str, after_seq: int | None, limit: int | None) -> AttachResult:
        """Attach the connection to a chat (``claude/attach``); ``limit``: the answer's
        conversation is its last page of that many entries."""
        ...

    def detach(self, channel_id: str) -> None:
        """Stop sending the chat's notifications to the connection."""

    def detach_all(self) -> None:
        """The connection ended: detach it from every chat (they keep running)."""

    def touch(self, channel_id: str) -> None:
        """The connection used the chat: it is the one asked for the editor's tools."""

    def forget(self, channel_id: str) -> None:
        """The chat was closed: its stream and replay window go."""

    def clients(self, channel_id: str) -> list[AttachedClient]:
        """Who is attached to the chat."""
        ...

    async def stop(self, *, force: bool, only_if_no_chats: bool) -> int:
        """Stop the daemon (``claude/stopDaemon``); how many chats were closed."""
        ...
