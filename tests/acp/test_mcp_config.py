"""A session's MCP servers from the ACP client, in the CLI's ``mcpServers`` shape."""

from __future__ import annotations

import pytest
from acp import RequestError
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer
from claude_sidecar.frontends.acp.prompt import mcp_servers


def test_stdio_http_and_sse_servers_become_the_clis_config_with_env_and_headers() -> None:
    config = mcp_servers(
        [
            McpServerStdio(
                name="files",
                command="/usr/bin/files-mcp",
                args=["--root", "/w"],
                env=[EnvVariable(name="TOKEN", value="t")],
            ),
            HttpMcpServer(
                type="http",
                name="docs",
                url="https://docs.example/mcp",
                headers=[HttpHeader(name="Authorization", value="Bearer x")],
            ),
            SseMcpServer(type="sse", name="events", url="https://events.example/sse", headers=[]),
        ]
    )

    assert config == {
        "files": {
            "type": "stdio",
            "command": "/usr/bin/files-mcp",
            "args": ["--root", "/w"],
            "env": {"TOKEN": "t"},
        },
        "docs": {
            "type": "http",
            "url": "https://docs.example/mcp",
            "headers": {"Authorization": "Bearer x"},
        },
        "events": {"type": "sse", "url": "https://events.example/sse", "headers": {}},
    }


def test_two_servers_of_one_name_are_refused_naming_the_second() -> None:
    server = HttpMcpServer(type="http", name="docs", url="https://docs.example/mcp", headers=[])

    with pytest.raises(RequestError) as raised:
        mcp_servers([server, server])

    assert raised.value.data["field"] == "mcpServers.1.name"  # type: ignore[index]
