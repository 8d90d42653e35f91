"""Time to first token through the daemon, against the real CLI and the stand-in model.

Prints a table (median and min of N runs, in ms) and writes JSON next to this file:

- new channel: ``claude/newChannel`` + ``claude/sendMessage`` -> first ``claude/delta``
- fresh channel: ``claude/sendMessage`` on a channel that just became ready -> first delta
- warm turn: a second ``claude/sendMessage`` on the same channel -> first delta
- peer: the official Python SDK (``ClaudeSDKClient``) connect + query -> first stream event

Run: ``uv run python bench/first_token.py [--runs N]``. Figures vary by machine: compare
rows within one run, never against a fixed number.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient

from claude_sidecar.discovery import find_cli
from claude_sidecar.scripted import ScriptedModel, load_scenario

SCENARIO = {"rules": [], "default": [[{"text": "The quick brown fox jumps over the lazy dog."}]],
            "chunk": 8}


def _env(model_url: str, home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(HOME=home, ANTHROPIC_BASE_URL=model_url, ANTHROPIC_API_KEY="bench",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    return env


async def measure_daemon(model_url: str, runs: int) -> dict[str, list[float]]:
    home = tempfile.mkdtemp(prefix="bench-home-")
    client = LanguageClient("bench", "1", converter_factory=get_converter)
    first_delta: dict[str, asyncio.Future[float]] = {}
    results: dict[str, asyncio.Event] = {}

    def on_delta(params: dict[str, Any]) -> None:
        future = first_delta.get(params["channelId"])
        if future is not None and not future.done():
            future.set_result(time.perf_counter())

    def on_message(params: dict[str, Any]) -> None:
        message = params["message"]
        if isinstance(message, dict) and message.get("type") == "result":
            results.setdefault(params["channelId"], asyncio.Event()).set()

    client.feature("claude/delta")(on_delta)
    client.feature("claude/message")(on_message)
    client.feature("claude/status")(lambda params: None)
    await client.start_io(sys.executable, "-m", "claude_sidecar", "--stdio",
                          "--log-level", "WARNING", env=_env(model_url, home))
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    request = client.protocol.send_request_async
    figures: dict[str, list[float]] = {"new channel": [], "fresh channel": [], "warm turn": []}

    async def turn(channel_id: str, started: float) -> float:
        loop = asyncio.get_running_loop()
        first_delta[channel_id] = loop.create_future()
        results[channel_id] = asyncio.Event()
        await request("claude/sendMessage", {"channelId": channel_id, "text": "hi"})
        at = await asyncio.wait_for(first_delta[channel_id], 60)
        await asyncio.wait_for(results[channel_id].wait(), 60)
        return (at - started) * 1000

    for _ in range(runs):
        workspace = tempfile.mkdtemp(prefix="bench-ws-")
        started = time.perf_counter()
        channel = (await request("claude/newChannel", {"cwd": workspace}))["channelId"]
        figures["new channel"].append(await turn(channel, started))
        figures["warm turn"].append(await turn(channel, time.perf_counter()))
        await request("claude/closeChannel", {"channelId": channel})

        channel = (await request("claude/newChannel", {"cwd": workspace}))["channelId"]
        figures["fresh channel"].append(await turn(channel, time.perf_counter()))
        await request("claude/closeChannel", {"channelId": channel})

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return figures


async def measure_sdk(model_url: str, runs: int) -> list[float]:
    """The peer: connect a ClaudeSDKClient and query; time to its first stream event."""
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
    from claude_agent_sdk.types import StreamEvent

    timings = []
    for _ in range(runs):
        workspace = tempfile.mkdtemp(prefix="bench-ws-")
        options = ClaudeAgentOptions(
            cwd=workspace, cli_path=find_cli(), include_partial_messages=True,
            env=_env(model_url, tempfile.mkdtemp(prefix="bench-home-")))
        started = time.perf_counter()
        first = None
        async with ClaudeSDKClient(options) as sdk:
            await sdk.query("hi")
            async for message in sdk.receive_response():
                if first is None and isinstance(message, StreamEvent) and \
                        message.event.get("type") == "content_block_delta":
                    first = time.perf_counter()
        timings.append(((first or time.perf_counter()) - started) * 1000)
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with ScriptedModel(load_scenario(SCENARIO)) as model:
        figures = asyncio.run(measure_daemon(model.url, args.runs))
        try:
            figures["peer: SDK connect + query"] = asyncio.run(measure_sdk(model.url, args.runs))
        except ImportError as e:
            print(f"(SDK peer skipped: {e})", file=sys.stderr)
    print(f"{'time to first delta (ms)':<34}{'median':>10}{'min':>10}{'max':>10}")
    for name, values in figures.items():
        print(f"{name:<34}{statistics.median(values):>10.1f}{min(values):>10.1f}"
              f"{max(values):>10.1f}")
    out = Path(__file__).with_name("results")
    out.mkdir(exist_ok=True)
    (out / "first_token.json").write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
