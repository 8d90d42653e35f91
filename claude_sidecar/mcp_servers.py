"""The MCP servers of a channel: status, reconnect and enable/disable by name.

The servers themselves are configured at ``claude/newChannel`` (``mcpServers``) and run
by the CLI; these requests go to the CLI as control requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import wire
from .api import McpServerStatus, McpStatusResult

if TYPE_CHECKING:
    from .channel import Channel

TIMEOUT = 30.0


async def status(channel: Channel) -> McpStatusResult:
    """Each server's name, status (connected, pending, failed, disabled, ...) and tools."""
    raw = await channel.control("mcp_status", TIMEOUT)
    reply = wire.mcp_status_decoder.decode(raw) if raw else wire.McpStatusReply()
    return McpStatusResult(servers=[
        McpServerStatus(name=s.name, status=s.status, tools=[t.name for t in s.tools],
                        error=s.error, transport=s.transport, scope=s.scope,
                        server_info=s.serverInfo)
        for s in reply.mcpServers])


async def reconnect(channel: Channel, server_name: str) -> None:
    """Restart one server (the CLI refuses a disabled or unknown one)."""
    await channel.control("mcp_reconnect", TIMEOUT, serverName=server_name)


async def toggle(channel: Channel, server_name: str, enabled: bool) -> None:
    """Enable or disable one server for this channel."""
    await channel.control("mcp_toggle", TIMEOUT, serverName=server_name, enabled=enabled)
