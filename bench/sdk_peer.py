"""The peer for relay throughput and memory: the official Python SDK on the synthetic CLI.

N ``claude_agent_sdk.ClaudeSDKClient`` in one asyncio process, each with its own
synthetic CLI (``ClaudeAgentOptions(cli_path=..., include_partial_messages=True)``),
consuming every message (the SDK parses each line into its message types; this script
only counts, it forwards nothing). Run by relay.py and memory.py as a subprocess, not by
hand:

``python bench/sdk_peer.py --cli PATH --channels N --deltas M [--memory]``

It prints one JSON line when its clients are connected (``{"ready": true, ...}``), then
reads commands from stdin, one a line, and answers each with one JSON line:

- ``burst``: every client sends ``burst`` (the CLI streams M deltas) and counts the
  ``content_block_delta`` stream events until its ``ResultMessage``; the answer holds the
  number of deltas and the nanoseconds from the first ``query`` to the last delta seen
  by any client.
- ``status``: this process's own VmRSS and VmHWM (KiB, from /proc/self/status).

With ``--memory`` the first line also carries the RSS measured after importing the SDK
and before any client connected (the SDK's idle figure). EOF disconnects and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from typing import Any


def status() -> dict[str, int]:
    figures = {}
    with open("/proc/self/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                figures[name] = int(value.split()[0])
    return figures


def reply(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--deltas", type=int, default=1000)
    args = parser.parse_args()

    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
    from claude_agent_sdk.types import ResultMessage, StreamEvent

    idle = status()
    workspace = tempfile.TemporaryDirectory(prefix="bench-sdk-")
    clients = [
        ClaudeSDKClient(
            ClaudeAgentOptions(
                cwd=workspace.name,
                cli_path=args.cli,
                include_partial_messages=True,
                env={"SYNTH_BURST": str(args.deltas)},
            )
        )
        for _ in range(args.channels)
    ]
    await asyncio.gather(*(c.connect() for c in clients))
    reply({"ready": True, "idle": idle})

    async def turn(client: ClaudeSDKClient, text: str) -> tuple[int, int]:
        await client.query(text)
        deltas, last = 0, 0
        async for message in client.receive_response():
            if isinstance(message, StreamEvent):
                if message.event.get("type") == "content_block_delta":
                    deltas += 1
                    last = time.monotonic_ns()
            elif isinstance(message, ResultMessage):
                break
        return deltas, last

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        while command := (await reader.readline()).decode().strip():
            if command == "status":
                reply(status())
                continue
            started = time.monotonic_ns()
            results = await asyncio.gather(*(turn(c, command) for c in clients))
            reply(
                {
                    "deltas": sum(d for d, _ in results),
                    "elapsed_ns": max(t for _, t in results) - started,
                }
            )
    finally:
        for client in clients:
            await client.disconnect()
        workspace.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
