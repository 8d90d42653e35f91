"""The in-process MCP server that serves the editor's tools: when it stops, nothing waits
for an answer it will never give."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from claude_sidecar.channel.editor_tools import EditorToolServer
from claude_sidecar.protocol.api import EditorTool

LIST = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}


async def _never(name: str, arguments: dict[str, Any], timeout: float) -> Any:
    raise AssertionError("no tool is called in these tests")


def _server() -> EditorToolServer:
    return EditorToolServer([EditorTool(name="getSelection")], _never, timeout=5)


async def test_a_server_that_fails_to_start_answers_with_an_error_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = _server()

    async def broken(*args: Any) -> None:
        raise RuntimeError("cannot serve")

    monkeypatch.setattr(server._server, "run", broken)  # the failure under test
    reply = await asyncio.wait_for(server.handle(LIST), 5)
    assert reply["id"] == 7 and "cannot serve" in reply["error"]["message"]
    await server.close()


async def test_a_call_pending_when_the_server_dies_fails_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = _server()
    received: list[Any] = []

    async def dies_once_asked(read_stream: Any, *args: Any) -> None:
        # The call is pending once it reached the server: then the server dies.
        received.append(await read_stream.receive())
        raise RuntimeError("the server died")

    monkeypatch.setattr(server._server, "run", dies_once_asked)  # the failure under test
    reply = await asyncio.wait_for(server.handle(LIST), 5)
    assert received, "the call never reached the server"
    assert reply["id"] == 7 and "the server died" in reply["error"]["message"]
    await server.close()


async def test_after_it_died_the_next_call_starts_it_again(monkeypatch: pytest.MonkeyPatch) -> None:
    server = _server()
    real_run = server._server.run
    calls = 0

    async def fails_once(*args: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("first start fails")
        await real_run(*args)

    monkeypatch.setattr(server._server, "run", fails_once)  # the failure under test
    first = await asyncio.wait_for(server.handle(LIST), 5)
    assert "error" in first
    await asyncio.wait_for(
        server.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        ),
        5,
    )
    await server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
    second = await asyncio.wait_for(server.handle(LIST), 5)
    assert [t["name"] for t in second["result"]["tools"]] == ["getSelection"]
    await server.close()
