"""The MCP servers of a channel: status, reconnect and enable/disable by name.

The servers themselves are configured at ``claude/newChannel`` (``mcpServers``) and run
by the CLI; these requests go to the CLI as control requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_sidecar.channel.editor_tools import SERVER_NAME
from claude_sidecar.cli import compat, wire
from claude_sidecar.protocol.api import McpServerStatus, McpStatusResult
from claude_sidecar.protocol.errors import ControlRequestFailed

if TYPE_CHECKING:
    from claude_sidecar.channel.channel import Channel

TIMEOUT = 30.0


async def status(channel: Channel) -> McpStatusResult:
    """Each server's name, status (connected, pending, failed, disabled, ...) and tools."""
    raw = await channel.control("mcp_status", TIMEOUT)
    reply = wire.mcp_status_decoder.decode(raw) if raw else wire.McpStatusReply()
    return McpStatusResult(
        servers=[
            McpServerStatus(
                name=s.name,
                status=s.status,
                tools=[t.name for t in s.tools],
                error=s.error,
                transport=s.transport or _transport(channel, s),
                scope=s.scope,
                server_info=s.serverInfo,
            )
            for s in reply.mcpServers
        ]
    )


def _transport(channel: Channel, server: wire.McpServer) -> str | None:
    """The transport of a server the CLI does not name one for (2.1.233 names none), when the
    daemon knows it: the editor's server, and those given at claude/newChannel."""
    if server.scope != "dynamic":
        return None
    if server.name == SERVER_NAME and channel.has_editor_tools:
        return "sdk"
    config = (channel.settings.options.mcp_servers or {}).get(server.name)
    if config is None:
        return None
    kind = config.get("type", "stdio")
    return kind if isinstance(kind, str) else None


async def reconnect(channel: Channel, server_name: str) -> None:
    """Restart one server (the CLI refuses a disabled or unknown one)."""
    version = channel.settings.reported.claude_code_version
    if compat.older_than(version, compat.REFUSES_RECONNECTING_A_DISABLED_MCP_SERVER):
        # Older CLIs reconnect a disabled server, enabling it behind the user's back:
        # refuse it as current CLIs do.
        current = await status(channel)
        if any(s.name == server_name and s.status == "disabled" for s in current.servers):
            raise ControlRequestFailed(
                "mcp_reconnect",
                f"MCP server {server_name} is disabled — enable it "
                "(mcp_toggle) before reconnecting",
            )
    await channel.control("mcp_reconnect", TIMEOUT, serverName=server_name)


async def toggle(channel: Channel, server_name: str, enabled: bool) -> None:
    """Enable or disable one server for this channel."""
    await channel.control("mcp_toggle", TIMEOUT, serverName=server_name, enabled=enabled)
