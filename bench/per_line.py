"""(f) CPU per CLI line on the relay's hot path, in one process: the daemon's against the
minimal msgspec relay's, on the same lines.

Section (a) measures whole processes over pipes, where scheduling and I/O spread the
figure by +-30% from run to run on a shared machine. This section takes them out: it
feeds the same ``stream_event`` delta lines (as CLI 2.1.330 prints them), a read of 1,000
at a time, to the daemon's ``LineRouter.route_all`` as the link hands them over (one
block: its decoding, routing, the outbox's numbering and encoding, the frame writer's
queue and its one write per read, all wired as the server wires them:
``SidecarServer.open_feed`` on a server connected to a ``FrameWriter``; the deltas'
blocks open, so each is appended to its entry of the conversation, and each read's
pieces joined) and to the relay's ``Relay.route`` as its pump does (split, then decode,
encode and frame each with the same ``entryId``, then one ``join``), interleaved, and
reports the best of several rounds of each, in microseconds per line. A text delta and a
tool-input delta of a sub-agent (with ``parent_tool_use_id``) are measured apart.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable
from typing import Any

from claude_sidecar.channel.channel import Channel
from claude_sidecar.frontends.server.server import SidecarServer
from claude_sidecar.protocol.api import NewChannelParams
from claude_sidecar.runtime.stdout import FrameWriter

import msgspec_relay

SESSION = '"session_id":"2fdd75d0-0b82-42b4-a5ba-548f90199793"'
LINES = {
    "text delta": (
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":1,'
        b'"delta":{"type":"text_delta","text":"Hello there fri"}},' + SESSION.encode() + b","
        b'"parent_tool_use_id":null,"uuid":"78d3c0b2-1111-4e4e-9999-0123456789ab"}'
    ),
    "sub-agent tool-input delta": (
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":2,'
        b'"delta":{"type":"input_json_delta","partial_json":"{\\"file_path\\": \\"/a"}},'
        + SESSION.encode()
        + b',"parent_tool_use_id":"toolu_01ABCDEF","uuid":"78d3c0b2-2222-4e4e-9999-0123456789ab"}'
    ),
}
BATCH = 1000
# The blocks those deltas belong to, opened first as in a real stream: the daemon's
# conversation appends each delta to its open entry.
OPENING = [
    b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1"}},'
    b'"parent_tool_use_id":null}',
    b'{"type":"stream_event","event":{"type":"content_block_start","index":1,'
    b'"content_block":{"type":"text","text":""}},"parent_tool_use_id":null}',
    b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_2"}},'
    b'"parent_tool_use_id":"toolu_01ABCDEF"}',
    b'{"type":"stream_event","event":{"type":"content_block_start","index":2,'
    b'"content_block":{"type":"tool_use","id":"toolu_02","name":"Write","input":{}}},'
    b'"parent_tool_use_id":"toolu_01ABCDEF"}',
]


def _best(run: Callable[[], None], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


async def _measure(lines_per_round: int, rounds: int) -> dict[str, Any]:
    out = io.BufferedWriter(io.BytesIO(), 1 << 16)  # type: ignore[arg-type]
    frames = FrameWriter(out, lambda error: None)
    server = SidecarServer()
    server.connect(frames.queue)
    feed = server.open_feed("ch-1", server.hub.options)
    feed.release()
    channel = Channel("ch-1", NewChannelParams(cwd="/"), "s", feed)
    relay = msgspec_relay.Relay("ch-1", None)  # type: ignore[arg-type]
    route_all = channel.lines.route_all  # what the link calls with the lines of each read
    route_all(b"".join(raw + b"\n" for raw in OPENING))
    for raw in OPENING:
        relay.route(raw)  # the relay remembers the blocks' entry ids too
    compacted = channel.conversation.entries.compacted
    figures: dict[str, Any] = {}
    for name, line in LINES.items():
        block = (line + b"\n") * BATCH

        def daemon(block: bytes = block) -> None:
            for _ in range(lines_per_round // BATCH):
                route_all(block)
                frames.flush()  # what the event loop does once per read batch
                out.seek(0)
                # Each batch's text, joined by route_all, dropped: it would grow by the
                # million otherwise.
                compacted.clear()

        def minimal(block: bytes = block) -> None:
            for _ in range(lines_per_round // BATCH):
                # As its pump does with each read: split, route, join.
                b"".join([relay.route(raw) for raw in block.split(b"\n") if raw])

        best_daemon = best_relay = float("inf")
        for _ in range(rounds):  # interleaved: both see the same machine
            best_daemon = min(best_daemon, _best(daemon, 1))
            best_relay = min(best_relay, _best(minimal, 1))
        figures[name] = {
            "daemon_us": best_daemon / lines_per_round * 1e6,
            "relay_us": best_relay / lines_per_round * 1e6,
        }
    return figures


def measure(quick: bool, log: Callable[[str], None]) -> dict[str, Any]:
    """Best-of-rounds CPU per line, daemon and relay, for each kind of line."""
    log("(f) CPU per line on the hot path, in process ...")
    lines, rounds = (20_000, 3) if quick else (200_000, 12)
    return {"lines": lines, "rounds": rounds, **asyncio.run(_measure(lines, rounds))}
