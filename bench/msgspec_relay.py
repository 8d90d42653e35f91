"""The practical limit for the relay benchmarks: a minimal msgspec relay process.

It does the least a relay from CLI lines to JSON-RPC notifications can do: spawn N
synthetic CLIs (asyncio subprocesses, like the daemon), read each one's stdout in large
chunks, split lines, decode each line once with msgspec into a typed struct holding only
the routing fields, re-encode a text/thinking/tool-input delta as a ``claude/delta``
notification (``channelId``, ``seq``, ``kind``, ``index``, ``text``, ``entryId``: the
daemon's shape) with msgspec into a Content-Length frame, pass any other line on verbatim as
``claude/message`` (``msgspec.Raw``), and write the frames of one read chunk to stdout
with one ``write`` (no flush per frame). No JSON-RPC server, no state machine, no
control-request correlation: whatever the daemon costs beyond this is its own overhead.
A delta's ``entryId`` (the daemon's id of the entry it appends to: ``<message id>:<index>``
for text and thinking, the tool_use id for tool input) is remembered from the block's
``content_block_start``, so the relay's frames are the daemon's, byte for byte in size;
the relay keeps no text.

Run by relay.py (``python bench/msgspec_relay.py --cli PATH --channels N``), not by hand.
stdin: one line per turn, ``go <text>`` sends a user message with ``<text>`` to every
CLI; EOF closes the CLIs and exits. stdout: a ``relay/ready`` notification once every
CLI answered ``initialize``, then the frames.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys

import msgspec


class Delta(msgspec.Struct):
    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    partial_json: str | None = None


class Message(msgspec.Struct):
    id: str = ""


class Block(msgspec.Struct):
    type: str = ""
    id: str = ""


class Event(msgspec.Struct):
    type: str
    index: int = 0
    delta: Delta | None = None
    message: Message | None = None  # message_start
    content_block: Block | None = None  # content_block_start


class Line(msgspec.Struct):
    type: str
    event: Event | None = None
    parent_tool_use_id: str | None = None


class DeltaParams(msgspec.Struct, omit_defaults=True, rename="camel"):
    channel_id: str
    seq: int
    kind: str
    index: int
    text: str
    parent_tool_use_id: str | None = None
    entry_id: str | None = None


class MessageParams(msgspec.Struct, rename="camel"):
    channel_id: str
    seq: int
    message: msgspec.Raw


class Notification(msgspec.Struct):
    method: str
    params: DeltaParams | MessageParams
    jsonrpc: str = "2.0"


KINDS = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "input_json_delta": ("toolInput", "partial_json"),
}
# The daemon's read size and stream limit (claude_sidecar.cli.transport.READ_CHUNK): both
# read their CLIs the same way.
READ_CHUNK = 256 * 1024
decode = msgspec.json.Decoder(Line).decode
encode = msgspec.json.Encoder().encode
out_fd = sys.stdout.fileno()


def write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(out_fd, view) :]


def framed(note: Notification) -> bytes:
    body = encode(note)
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class Relay:
    def __init__(self, channel_id: str, process: asyncio.subprocess.Process) -> None:
        self.channel_id = channel_id
        self.process = process
        self.seq = 0
        # The entry ids of the open blocks: by index in the main conversation, by
        # (parent_tool_use_id, index) in a sub-agent's; and each one's message id.
        self.main: dict[int, str] = {}
        self.sub: dict[tuple[str, int], str] = {}
        self.message_ids: dict[str | None, str] = {}

    def route(self, raw: bytes) -> bytes:
        self.seq += 1
        try:
            line = decode(raw)
        except msgspec.ValidationError:
            return framed(
                Notification(
                    "claude/message", MessageParams(self.channel_id, self.seq, msgspec.Raw(raw))
                )
            )
        except msgspec.DecodeError:
            self.seq -= 1
            return b""  # not JSON: skipped, as the daemon does
        event = line.event
        if event is not None and event.type == "content_block_delta" and event.delta:
            known = KINDS.get(event.delta.type or "")
            if known is not None:
                text = getattr(event.delta, known[1])
                if text is not None:
                    parent = line.parent_tool_use_id
                    if parent is None:
                        entry_id = self.main.get(event.index)
                    else:
                        entry_id = self.sub.get((parent, event.index))
                    return framed(
                        Notification(
                            "claude/delta",
                            DeltaParams(
                                self.channel_id,
                                self.seq,
                                known[0],
                                event.index,
                                text,
                                parent,
                                entry_id,
                            ),
                        )
                    )
        elif event is not None and event.message is not None:
            self.message_ids[line.parent_tool_use_id] = event.message.id
        elif event is not None and event.content_block is not None:
            block, parent = event.content_block, line.parent_tool_use_id
            if block.type == "tool_use":
                entry_id = block.id
            else:
                entry_id = f"{self.message_ids.get(parent)}:{event.index}"
            if parent is None:
                self.main[event.index] = entry_id
            else:
                self.sub[(parent, event.index)] = entry_id
        return framed(
            Notification(
                "claude/message", MessageParams(self.channel_id, self.seq, msgspec.Raw(raw))
            )
        )

    async def pump(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        pending = b""
        while chunk := await stdout.read(READ_CHUNK):
            lines = (pending + chunk).split(b"\n") if pending else chunk.split(b"\n")
            pending = lines.pop()
            write_all(b"".join([self.route(raw) for raw in lines if raw]))

    async def control_initialize(self) -> None:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(
            b'{"type":"control_request","request_id":"init",'
            b'"request":{"subtype":"initialize","hooks":null}}\n'
        )
        await stdin.drain()
        await stdout.readline()  # its control_response


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--channels", type=int, default=1)
    args = parser.parse_args()
    relays = []
    for n in range(args.channels):
        process = await asyncio.create_subprocess_exec(
            args.cli,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=READ_CHUNK,
        )
        relays.append(Relay(f"ch-{n + 1}", process))
    await asyncio.gather(*(r.control_initialize() for r in relays))
    pumps = [asyncio.create_task(r.pump()) for r in relays]
    write_all(framed(Notification("relay/ready", MessageParams("-", 0, msgspec.Raw(b"{}")))))

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while command := await reader.readline():
        text = command.decode().strip().removeprefix("go ").strip()
        user = encode(
            {
                "type": "user",
                "session_id": "",
                "parent_tool_use_id": None,
                "message": {"role": "user", "content": [{"type": "text", "text": text}]},
            }
        )
        for r in relays:
            assert r.process.stdin is not None
            r.process.stdin.write(user + b"\n")
    for r in relays:
        assert r.process.stdin is not None
        r.process.stdin.close()
    await asyncio.gather(*pumps, *(r.process.wait() for r in relays))


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        asyncio.run(main())
