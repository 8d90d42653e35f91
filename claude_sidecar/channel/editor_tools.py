"""The editor's own tools for the agent: an in-process MCP server named ``editor``.

The client declares its tools at ``initialize`` (``editorTools``). Each channel then
registers an SDK MCP server ``editor`` with its CLI; the CLI speaks MCP to it through
``mcp_message`` control requests. The MCP protocol itself (handshake, tools/list,
tools/call, errors) is served by the ``mcp`` package's low-level ``Server`` over its
in-memory transport; this module only bridges messages and turns a tool call into a
``claude/callEditorTool`` request to the client. A client error or a timeout becomes a
tool error the model sees, never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from claude_sidecar.cli import wire
from claude_sidecar.cli.control import Route
from claude_sidecar.protocol.api import EditorTool
from claude_sidecar.runtime.background import Background

if TYPE_CHECKING:
    import mcp_types as mt

    from claude_sidecar.cli.link import CliLink

log = logging.getLogger(__name__)

# Not "ide": the CLI keeps only getDiagnostics and executeCode of a server by that name
# (its own IDE integration), and would silently drop every other editor tool.
SERVER_NAME = "editor"

AskClient = Callable[[str, str, dict[str, Any], float], Awaitable[Any]]
"""Sends ``claude/callEditorTool`` (channel id, tool, arguments, timeout) to the client and
returns its result; raises ``TimeoutError`` after the given seconds, or the client's error."""

AskEditor = Callable[[str, dict[str, Any], float], Awaitable[Any]]
"""``AskClient`` for one channel: (tool, arguments, timeout)."""

_MCP_MODULES = ("mcp.server.lowlevel", "mcp.shared.memory", "mcp.shared.message", "mcp_types")


def import_mcp() -> None:
    """Import the modules of the mcp package the editor's server uses (a process that forks
    daemons imports them once for all: tests/zygote)."""
    for name in _MCP_MODULES:
        importlib.import_module(name)


async def load_mcp() -> None:
    """Import the mcp package in a worker thread (at once if it is imported already): its
    module bodies take ~0.9 s of CPU here, which, run where the first channel's server was
    made, held the event loop: every request of every client waited, and that channel's CLI
    started that much later."""
    if all(name in sys.modules for name in _MCP_MODULES):
        return
    await asyncio.to_thread(import_mcp)


def tool_names(tools: Sequence[EditorTool]) -> list[str]:
    """The names the model sees: ``mcp__ide__<tool>``."""
    return [f"mcp__{SERVER_NAME}__{tool.name}" for tool in tools]


def _as_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def serve_mcp(link: CliLink, server: EditorToolServer | None) -> None:
    """Answer the CLI's ``mcp_message`` requests on ``link``: the editor's tools serve
    ``editor``; there is no other in-process server."""

    def call(request_id: str, mcp: wire.McpMessage) -> None:
        link.background.spawn(reply(request_id, mcp), "mcp")

    async def reply(request_id: str, mcp: wire.McpMessage) -> None:
        message = mcp.message
        if server is None or mcp.server_name != SERVER_NAME:
            error = {"code": -32601, "message": f"no in-process MCP server {mcp.server_name!r}"}
            answer = {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
        else:
            answer = await server.handle(message)
        if link.exit is None:
            link.send(wire.control_success(request_id, {"mcp_response": answer}))

    link.serve("mcp_message", Route(wire.mcp_message_decoder, call))


class BridgeGone(Exception):
    """The in-process MCP server ended while a call waited for its answer."""


class EditorToolServer:
    """One channel's ``editor`` MCP server; started by the CLI's first message, closed with it."""

    def __init__(self, tools: Sequence[EditorTool], ask: AskEditor, timeout: float) -> None:
        self._tools = list(tools)
        self._ask = ask
        self._timeout = timeout
        # Imported here: the mcp package costs the daemon's start-up time and memory
        # (~0.9 s, tens of MB), and only clients that declare editor tools need it; the hub
        # has it loaded off the event loop first (load_mcp).
        from mcp.server.lowlevel import Server

        self._server = Server(
            SERVER_NAME, on_list_tools=self._list_tools, on_call_tool=self._call_tool
        )
        self._outgoing: Any = None
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._ready: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._background = Background("editor MCP server")
        self._stop = asyncio.Event()

    async def _list_tools(self, ctx: Any, params: Any) -> mt.ListToolsResult:
        import mcp_types as mt

        return mt.ListToolsResult(
            tools=[
                mt.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in self._tools
            ]
        )

    async def _call_tool(self, ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        import mcp_types as mt

        arguments = dict(params.arguments or {})
        if params.name not in {t.name for t in self._tools}:
            text = f"the editor has no tool {params.name!r}"
            return mt.CallToolResult(
                content=[mt.TextContent(type="text", text=text)], is_error=True
            )
        try:
            result = await self._ask(params.name, arguments, self._timeout)
        except TimeoutError:
            text, failed = f"the editor did not answer within {self._timeout:g} s", True
        except Exception as e:  # the client's JSON-RPC error, or the client went away
            text, failed = f"the editor could not run {params.name}: {e}", True
        else:
            text, failed = _as_text(result), False
        return mt.CallToolResult(content=[mt.TextContent(type="text", text=text)], is_error=failed)

    async def _serve(self) -> None:
        import anyio
        from mcp.shared.memory import create_client_server_memory_streams

        assert self._ready is not None
        async with create_client_server_memory_streams() as (client, server):
            incoming, self._outgoing = client
            async with anyio.create_task_group() as group:
                group.start_soon(
                    self._server.run,
                    server[0],
                    server[1],
                    self._server.create_initialization_options(),
                )
                group.start_soon(self._collect, incoming)
                self._ready.set()
                await self._stop.wait()
                group.cancel_scope.cancel()

    async def _collect(self, incoming: Any) -> None:
        async for item in incoming:
            if isinstance(item, Exception):
                log.warning("editor MCP server: %s", item)
                continue
            reply = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            future = self._waiting.pop(reply.get("id"), None)
            if future is not None and not future.done():
                future.set_result(reply)

    async def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        """Deliver one JSON-RPC message from the CLI; return the reply to send back."""
        import mcp_types as mt
        from mcp.shared.message import SessionMessage

        request_id = message.get("id")
        if self._stop.is_set():
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32603, "message": "the channel is closing"},
            }
        if self._task is None:
            self._ready = asyncio.Event()
            self._task = self._background.spawn(self._serve(), "bridge")
            self._task.add_done_callback(self._bridge_ended)
        ready, task = self._ready, self._task
        assert ready is not None
        if not ready.is_set():
            starting = asyncio.ensure_future(ready.wait())
            await asyncio.wait({starting, task}, return_when=asyncio.FIRST_COMPLETED)
            starting.cancel()
        if task.done():
            # It failed while starting: say so rather than send into a closed stream.
            return self._bridge_error(request_id, task)
        try:
            parsed = mt.jsonrpc_message_adapter.validate_python(message)
        except ValueError as e:
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32600, "message": f"invalid JSON-RPC: {e}"},
            }
        if "method" not in message or request_id is None:
            await self._outgoing.send(SessionMessage(parsed))
            # A notification expects no reply, but the control request carrying it does.
            return {"jsonrpc": "2.0", "result": {}}
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        await self._outgoing.send(SessionMessage(parsed))
        try:
            return await future
        except BridgeGone as e:
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32603, "message": str(e)},
            }

    def _bridge_ended(self, task: asyncio.Task[None]) -> None:
        """The in-process server stopped: closed, or it failed. Nothing it was asked will be
        answered now, so every pending call fails at once (instead of waiting out the CLI's
        timeout), and the next message starts the server afresh."""
        if self._task is task:
            self._task = None
        # A failure is logged by Background.
        failure = None if task.cancelled() else task.exception()
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(BridgeGone(f"the editor's MCP server stopped: {failure!r}"))

    def _bridge_error(self, request_id: Any, task: asyncio.Task[None]) -> dict[str, Any]:
        failure = None if task.cancelled() else task.exception()
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32603, "message": f"the editor's MCP server stopped: {failure!r}"},
        }

    async def close(self) -> None:
        """Stop the server; pending calls are answered with an error by the CLI's timeout."""
        self._stop.set()
        for future in self._waiting.values():
            future.cancel()
        if self._task is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await asyncio.wait({self._task})
