"""What the ACP agent lends its parts (each session, the extension methods): the hub, its
background tasks, the client and the stream to it.

The parts are given this, not the agent, so that the agent can own them without the two
importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_sidecar.runtime.background import Background

if TYPE_CHECKING:
    from acp.interfaces import Client

    from claude_sidecar.frontends.acp.rpc import StdioTransport
    from claude_sidecar.hub.hub import Hub


class AgentServices:
    """The agent's hub and background tasks, whether it may offer ``bypassPermissions``,
    and (once serving) the stream to the client (``transport``, set by ``serve``) and the
    SDK's connection to it (``conn``, set when the SDK connects)."""

    transport: StdioTransport
    conn: Client

    def __init__(self, hub: Hub, *, allow_bypass: bool) -> None:
        self.hub = hub
        self.allow_bypass = allow_bypass
        self.background = Background("acp")
