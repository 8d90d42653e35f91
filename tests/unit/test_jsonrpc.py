"""The JSON-RPC layer on pygls's public seams (claude_sidecar/frontends/server/jsonrpc.py).

These drive ``SidecarProtocol`` through pygls's own serving loop (``run_async``) with
frames in memory, so they fail when a pygls upgrade changes a seam the daemon relies
on: ``structure_message`` as ``json.loads``' object_hook, ``handle_message`` getting
every message, ``send_request_async`` settled by a response handed back to pygls,
``notify`` writing a frame.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from claude_sidecar.frontends.server.jsonrpc import Requests, SidecarProtocol
from claude_sidecar.protocol import encoded
from claude_sidecar.protocol.errors import InvalidParams
from lsprotocol.converters import get_converter
from pygls.io_ import run_async
from pygls.server import JsonRPCServer


class Frames:
    """pygls's reader over frames the test queues, and a writer that keeps what is sent."""

    def __init__(self) -> None:
        self._in = asyncio.StreamReader()
        self.out: list[dict[str, Any]] = []
        self.frames: list[bytes] = []
        self._sent = asyncio.Event()

    def feed(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self._in.feed_data(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def end(self) -> None:
        self._in.feed_eof()

    # pygls's AsyncReader
    async def readline(self) -> bytes:
        return await self._in.readline()

    async def readexactly(self, n: int) -> bytes:
        return await self._in.readexactly(n)

    # pygls's Writer, and Requests' send
    def write(self, data: bytes) -> None:
        self.frames.append(data)
        _, _, body = data.partition(b"\r\n\r\n")
        self.out.append(json.loads(body))
        self._sent.set()

    def close(self) -> None:
        pass

    async def sent(self, count: int) -> list[dict[str, Any]]:
        """Wait until ``count`` messages were sent; return them."""
        async with asyncio.timeout(5):
            while len(self.out) < count:
                self._sent.clear()
                await self._sent.wait()
        return self.out


async def echo(params: Any) -> Any:
    return {"echo": params}


async def refuse(params: Any) -> Any:
    raise InvalidParams("limit", "is not a number", "send a number")


def serve(frames: Frames, handlers: dict[str, Any]) -> tuple[SidecarProtocol, asyncio.Task[None]]:
    server = JsonRPCServer(protocol_cls=SidecarProtocol, converter_factory=get_converter)
    protocol = server.protocol
    assert isinstance(protocol, SidecarProtocol)
    protocol.requests = Requests(handlers, {}, lambda method: None, frames.write)
    protocol.set_writer(frames)
    loop = run_async(stop_event=threading.Event(), reader=frames, protocol=protocol)
    return protocol, asyncio.ensure_future(loop)


async def test_params_reach_the_handler_as_plain_json_nested_objects_included() -> None:
    frames = Frames()
    _, serving = serve(frames, {"x/echo": echo})
    params = {"limit": {"jsonrpc": "2.0", "id": 1, "method": "m"}, "list": [{"a": 1}]}

    frames.feed({"jsonrpc": "2.0", "id": 7, "method": "x/echo", "params": params})

    (answer,) = await frames.sent(1)
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": {"echo": params}}
    frames.end()
    await serving


async def test_a_result_encoded_in_pieces_is_answered_as_that_json_with_its_length() -> None:
    """A whole session's history is answered from the pieces it was encoded in."""
    runs = encoded.array_of_runs([b"3,4", b"", b"2", b"1"])  # newest first, one run empty
    result = encoded.obj([("runs", runs), ("näme", "wörd"), ("none", None)])

    async def pieces(params: Any) -> Any:
        return result

    frames = Frames()
    _, serving = serve(frames, {"x/pieces": pieces})

    frames.feed({"jsonrpc": "2.0", "id": 9, "method": "x/pieces"})

    (answer,) = await frames.sent(1)
    assert answer["result"] == {"runs": [1, 2, 3, 4], "näme": "wörd", "none": None}
    header, body = frames.frames[0].split(b"\r\n\r\n")
    assert header == b"Content-Length: %d" % len(body)
    assert answer == {"jsonrpc": "2.0", "id": 9, "result": json.loads(result.joined())}
    frames.end()
    await serving


async def test_an_error_is_answered_with_its_code_and_data() -> None:
    frames = Frames()
    _, serving = serve(frames, {"x/refuse": refuse})

    frames.feed({"jsonrpc": "2.0", "id": "a", "method": "x/refuse"})
    frames.feed({"jsonrpc": "2.0", "id": "b", "method": "x/unknown"})

    answers = {answer["id"]: answer for answer in await frames.sent(2)}
    refused, unknown = answers["a"], answers["b"]
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"] == {"name": "invalidParams", "field": "limit"}
    assert unknown["error"]["code"] == -32601
    frames.end()
    await serving


async def test_a_cancel_request_cancels_the_running_request() -> None:
    frames = Frames()
    started = asyncio.Event()

    async def wait_forever(params: Any) -> Any:
        started.set()
        await asyncio.Event().wait()

    _, serving = serve(frames, {"x/wait": wait_forever})
    frames.feed({"jsonrpc": "2.0", "id": 3, "method": "x/wait"})
    await started.wait()

    frames.feed({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}})

    (answer,) = await frames.sent(1)
    assert answer["id"] == 3 and answer["error"]["code"] == -32800
    frames.end()
    await serving


async def test_the_daemons_own_request_is_settled_by_the_clients_answer() -> None:
    frames = Frames()
    protocol, serving = serve(frames, {})

    asked = protocol.send_request_async("x/ask", {"q": 1}, msg_id="r1")
    (request,) = await frames.sent(1)
    assert request == {"jsonrpc": "2.0", "id": "r1", "method": "x/ask", "params": {"q": 1}}
    frames.feed({"jsonrpc": "2.0", "id": "r1", "result": {"a": {"jsonrpc": 2}}})

    assert await asyncio.wait_for(asked, 5) == {"a": {"jsonrpc": 2}}
    frames.end()
    await serving


async def test_a_notification_is_sent_as_given() -> None:
    frames = Frames()
    protocol, serving = serve(frames, {})

    protocol.notify("$/cancelRequest", {"id": "r9"})

    (note,) = await frames.sent(1)
    assert note == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "r9"}}
    frames.end()
    await serving


@pytest.mark.parametrize("message", [[1, 2], "text", {"jsonrpc": "2.0"}])
async def test_what_is_not_a_message_is_dropped_and_serving_goes_on(message: Any) -> None:
    frames = Frames()
    _, serving = serve(frames, {"x/echo": echo})

    frames.feed(message)
    frames.feed({"jsonrpc": "2.0", "id": 1, "method": "x/echo", "params": 1})

    (answer,) = await frames.sent(1)
    assert answer["result"] == {"echo": 1}
    frames.end()
    await serving
