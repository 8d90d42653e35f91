"""MCP servers configured per channel: their tools work, their status is visible."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar, json_object, tool_results

WEATHER = {
    "weather": {
        "type": "stdio",
        "command": sys.executable,
        "args": [str(Path(__file__).parent / "fixtures" / "weather_mcp.py")],
    }
}
BROKEN = {"broken": {"type": "stdio", "command": "/nonexistent/mcp-server"}}
ASK_WEATHER = {
    "rules": [
        {
            "match": "(?i)weather",
            "steps": [
                [{"tool_use": {"name": "mcp__weather__forecast", "input": {"city": "Paris"}}}],
                [{"text": "It will be sunny."}],
            ],
        }
    ],
    "default": [[{"text": "Hello!"}]],
}


async def status_of(
    sidecar: Sidecar, channel: str, name: str, wanted: str, timeout: float = 60
) -> dict[str, Any]:
    """Poll claude/mcpStatus until server ``name`` reaches ``wanted`` (servers start async)."""
    deadline = time.monotonic() + timeout
    while True:
        servers = (await sidecar.request("claude/mcpStatus", {"channelId": channel}))["servers"]
        server = json_object(next(s for s in servers if s["name"] == name))
        if server["status"] == wanted:
            return server
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} stayed {server['status']}")
        await asyncio.sleep(0.1)


async def test_a_configured_stdio_server_answers_the_models_tool_call(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(ASK_WEATHER))
    channel = await sidecar.new_channel(
        str(workspace), mcpServers=WEATHER, allowedTools=["mcp__weather__forecast"]
    )

    server = await status_of(sidecar, channel, "weather", "connected")
    result = (await sidecar.turn(channel, "what is the weather in Paris?")).result

    assert server["tools"] == ["forecast"] and server["transport"] == "stdio"
    assert result["subtype"] == "success"
    assert "Forecast for Paris: sunny, 23 degrees" in str(tool_results(model)[-1]["content"])


async def test_a_broken_server_shows_as_failed_and_the_channel_keeps_working(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace), mcpServers={**BROKEN}, strictMcpConfig=True)

    server = await status_of(sidecar, channel, "broken", "failed")
    result = (await sidecar.turn(channel, "hello")).result

    assert "ENOENT" in server["error"] or server["error"]
    init = next(
        n.message
        for n in sidecar.of(channel, "claude/message")
        if n.message.get("type") == "system" and n.message.get("subtype") == "init"
    )
    assert {"name": "broken", "status": "failed"}.items() <= init["mcp_servers"][0].items()
    assert result["subtype"] == "success"


async def test_a_server_can_be_disabled_enabled_and_reconnected_by_name(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace), mcpServers=WEATHER)
    await status_of(sidecar, channel, "weather", "connected")

    await sidecar.request(
        "claude/mcpToggle", {"channelId": channel, "serverName": "weather", "enabled": False}
    )
    await status_of(sidecar, channel, "weather", "disabled")
    refused = await sidecar.error(
        "claude/mcpReconnect", {"channelId": channel, "serverName": "weather"}
    )
    await sidecar.request(
        "claude/mcpToggle", {"channelId": channel, "serverName": "weather", "enabled": True}
    )
    await status_of(sidecar, channel, "weather", "connected")
    await sidecar.request("claude/mcpReconnect", {"channelId": channel, "serverName": "weather"})
    unknown = await sidecar.error(
        "claude/mcpReconnect", {"channelId": channel, "serverName": "nope"}
    )

    assert refused.code == -32006 and "disabled" in refused.data["cliError"]
    assert unknown.code == -32006 and "nope" in unknown.data["cliError"]
    await status_of(sidecar, channel, "weather", "connected")


@pytest.mark.same_on_every_cli("the daemon checks the params before any CLI is asked")
async def test_a_malformed_server_config_is_refused_naming_the_field(
    sidecar: Sidecar, workspace: Path
) -> None:
    no_command = await sidecar.error(
        "claude/newChannel", {"cwd": str(workspace), "mcpServers": {"x": {"type": "stdio"}}}
    )
    bad_type = await sidecar.error(
        "claude/newChannel",
        {"cwd": str(workspace), "mcpServers": {"x": {"type": "carrier-pigeon", "url": "u"}}},
    )

    assert (no_command.code, no_command.data["field"]) == (-32602, "mcpServers.x.command")
    assert (bad_type.code, bad_type.data["field"]) == (-32602, "mcpServers.x.type")
