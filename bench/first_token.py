"""Time to first token through the daemon, against the real CLI and the stand-in model.

Prints a table (median and min of N runs, in ms) and writes JSON next to this file:

- new chat, cold: ``claude/newChannel`` + ``claude/sendMessage`` -> first ``claude/delta``,
  warm pool off
- new chat, warm pool: the same with a spare CLI ready in the pool
- new chat, warm pool, primed: the spare also built its context (``primeContext``)
- fresh process, first turn: ``claude/sendMessage`` on a channel that just became ready
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

from claude_sidecar.cli.discovery import find_cli
from claude_sidecar.protocol import api
from claude_sidecar.runtime.processes import children_of
from claude_sidecar.scripted import ScriptedModel, load_scenario
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient

SCENARIO = {
    "rules": [],
    "default": [[{"text": "The quick brown fox jumps over the lazy dog."}]],
    "chunk": 8,
}


def daemon_env(model_url: str, home: str) -> dict[str, str]:
    """The daemon's environment: its own HOME, the CLI pointed at the stand-in model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(
        HOME=home,
        ANTHROPIC_BASE_URL=model_url,
        ANTHROPIC_API_KEY="bench",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    return env


class DaemonClient:
    """A daemon (``python -m claude_sidecar --stdio``, its own HOME) under a pygls client."""

    def __init__(self, name: str) -> None:
        self.client = LanguageClient(name, "1", converter_factory=get_converter)

    async def start(
        self,
        model_url: str,
        options: dict[str, Any],
        log_level: str = "WARNING",
        log_file: str | None = None,
    ) -> None:
        """Start the daemon with the CLI pointed at ``model_url``, and initialize it. Its CLIs
        run at the daemon's priority (``--cli-nice 0``), as the SDK's peer runs its own."""
        logging = ["--log-level", log_level, *(["--log-file", log_file] if log_file else [])]
        await self.client.start_io(
            sys.executable,
            "-m",
            "claude_sidecar",
            "--stdio",
            "--cli-nice",
            "0",
            *logging,
            env=daemon_env(model_url, tempfile.mkdtemp(prefix="bench-home-")),
        )
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(), initialization_options=options
            )
        )

    @property
    def pid(self) -> int:
        assert self.client._server is not None
        return self.client._server.pid

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.client.protocol.send_request_async(method, params)


class _Daemon(DaemonClient):
    """One daemon under a pygls client, timing the first delta of each turn."""

    def __init__(self) -> None:
        super().__init__("bench")
        self._first_delta: dict[str, asyncio.Future[float]] = {}
        self._results: dict[str, asyncio.Event] = {}
        # pygls tags handlers with attributes: plain functions, not bound methods.
        self.client.feature("claude/delta")(lambda params: self._on_delta(params))
        self.client.feature("claude/turnEnded")(lambda params: self._on_turn_ended(params))
        for method in set(api.NOTIFICATIONS) - {"claude/delta", "claude/turnEnded"}:
            self.client.feature(method)(lambda params: None)

    def _on_delta(self, params: dict[str, Any]) -> None:
        future = self._first_delta.get(params["channelId"])
        if future is not None and not future.done():
            future.set_result(time.perf_counter())

    def _on_turn_ended(self, params: dict[str, Any]) -> None:
        # claude/turnEnded, not the CLI's raw result: claude/message comes only with the
        # rawMessages option.
        self._results.setdefault(params["channelId"], asyncio.Event()).set()

    async def turn(self, channel_id: str, started: float) -> float:
        """Send a prompt; ms from ``started`` to its first delta (waits for the result)."""
        self._first_delta[channel_id] = asyncio.get_running_loop().create_future()
        self._results[channel_id] = asyncio.Event()
        await self.request("claude/sendMessage", {"channelId": channel_id, "text": "hi"})
        at = await asyncio.wait_for(self._first_delta[channel_id], 60)
        await asyncio.wait_for(self._results[channel_id].wait(), 60)
        return (at - started) * 1000

    async def new_chat(self, cwd: str) -> float:
        """``claude/newChannel`` + ``claude/sendMessage`` -> first delta, in ms."""
        started = time.perf_counter()
        channel = (await self.request("claude/newChannel", {"cwd": cwd}))["channelId"]
        elapsed = await self.turn(channel, started)
        await self.request("claude/closeChannel", {"channelId": channel})
        return elapsed

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()  # type: ignore[no-untyped-call]  # pygls's Client.stop is unannotated


async def _spare_ready(daemon_pid: int, settle: float = 1.5) -> None:
    """Wait until the daemon has spawned its spare CLI, then for it to initialize."""
    deadline = time.monotonic() + 30
    # Polls: a child process appearing is not an event this process can await.
    while not children_of(daemon_pid) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    await asyncio.sleep(settle)


async def measure(model_url: str, runs: int, sdk: bool) -> dict[str, list[float]]:
    """First-delta times through the daemon (cold, with the warm pool, fresh, warm), and
    of the SDK peer, each SDK run right after a cold one so both see the same load."""
    figures: dict[str, list[float]] = {
        "new chat, cold": [],
        "new chat, warm pool": [],
        "fresh process, first turn": [],
        "warm turn": [],
    }
    if sdk:
        figures["peer: SDK connect + query"] = []
    cold = _Daemon()
    await cold.start(model_url, {"warmPool": {"size": 0}})
    try:
        for _ in range(runs):
            workspace = tempfile.mkdtemp(prefix="bench-ws-")
            figures["new chat, cold"].append(await cold.new_chat(workspace))
            if sdk:
                figures["peer: SDK connect + query"].append(await sdk_new_chat(model_url))
            channel = (await cold.request("claude/newChannel", {"cwd": workspace}))["channelId"]
            figures["fresh process, first turn"].append(
                await cold.turn(channel, time.perf_counter())
            )
            figures["warm turn"].append(await cold.turn(channel, time.perf_counter()))
            await cold.request("claude/closeChannel", {"channelId": channel})
    finally:
        await cold.stop()

    for name, prime in (("new chat, warm pool", False), ("new chat, warm pool, primed", True)):
        workspace = tempfile.mkdtemp(prefix="bench-ws-")
        pooled = _Daemon()
        await pooled.start(
            model_url, {"warmPool": {"size": 1, "cwd": workspace, "primeContext": prime}}
        )
        figures[name] = []
        try:
            for _ in range(runs):
                await _spare_ready(pooled.pid)
                figures[name].append(await pooled.new_chat(workspace))
        finally:
            await pooled.stop()
    return figures


async def sdk_new_chat(model_url: str) -> float:
    """The peer: connect a ClaudeSDKClient and query; ms to its first content delta.

    The SDK runs the same agent as the daemon: the Claude Code system prompt (the SDK's
    default is an empty one) and the user's and project's settings."""
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
    from claude_agent_sdk.types import StreamEvent

    workspace = tempfile.mkdtemp(prefix="bench-ws-")
    options = ClaudeAgentOptions(
        cwd=workspace,
        cli_path=find_cli(),
        include_partial_messages=True,
        system_prompt={"type": "preset", "preset": "claude_code"},
        env=daemon_env(model_url, tempfile.mkdtemp(prefix="bench-home-")),
    )
    started = time.perf_counter()
    first = None
    async with ClaudeSDKClient(options) as sdk:
        await sdk.query("hi")
        async for message in sdk.receive_response():
            if (
                first is None
                and isinstance(message, StreamEvent)
                and message.event.get("type") == "content_block_delta"
            ):
                first = time.perf_counter()
    return ((first or time.perf_counter()) - started) * 1000


def run_all(runs: int) -> dict[str, Any]:
    """Every figure of this benchmark, in ms, with the ratios the targets are stated in."""
    try:
        import claude_agent_sdk  # noqa: F401

        sdk = True
    except ImportError as e:
        print(f"(SDK peer skipped: {e})", file=sys.stderr)
        sdk = False
    with ScriptedModel(load_scenario(SCENARIO)) as model:
        figures = asyncio.run(measure(model.url, runs, sdk))
    median = {name: statistics.median(values) for name, values in figures.items()}
    ratios = {
        "warm pool / warm turn (target <= 1.5)": median["new chat, warm pool"]
        / median["warm turn"],
        "primed pool / warm turn (target <= 1.5)": median["new chat, warm pool, primed"]
        / median["warm turn"],
    }
    if "peer: SDK connect + query" in median:
        ratios["SDK / warm pool (target >= 5)"] = (
            median["peer: SDK connect + query"] / median["new chat, warm pool"]
        )
        ratios["SDK / primed pool (target >= 5)"] = (
            median["peer: SDK connect + query"] / median["new chat, warm pool, primed"]
        )
        ratios["SDK / cold"] = median["peer: SDK connect + query"] / median["new chat, cold"]
    return {"first delta ms": figures, "ratios": ratios}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    result = run_all(args.runs)
    print(f"{'time to first delta (ms)':<40}{'median':>10}{'min':>10}{'max':>10}")
    for name, values in result["first delta ms"].items():
        print(
            f"{name:<40}{statistics.median(values):>10.1f}{min(values):>10.1f}{max(values):>10.1f}"
        )
    for name, value in result["ratios"].items():
        print(f"{name:<40}{value:>10.2f}")
    out = Path(__file__).with_name("results")
    out.mkdir(exist_ok=True)
    (out / "first_token.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
