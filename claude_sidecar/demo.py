"""``claude-sidecar demo``: the whole stack on the embedded stand-in model.

Starts the scripted model, the daemon (``--stdio``, exactly as an editor would) and a
small terminal client, then plays one scripted turn: streamed thinking and text, a
Write tool call that really runs, its result, and the turn's cost. No API key needed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient

from .scripted import DEMO_SCENARIO_PATH, ScriptedModel, load_scenario

DEFAULT_PROMPT = "Create a haiku file about editors, please."


class _Style:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text


class _Renderer:
    """Prints notifications as a chat transcript."""

    def __init__(self) -> None:
        self.style = _Style(sys.stdout.isatty())
        self.kind: str | None = None
        self.first_delta_at: float | None = None
        self.done = asyncio.Event()
        self.result: dict[str, Any] = {}

    def _switch(self, kind: str | None, header: str = "") -> None:
        if kind != self.kind:
            if self.kind is not None:
                print()
            if header:
                print(header)
            self.kind = kind

    def delta(self, params: dict[str, Any]) -> None:
        if self.first_delta_at is None:
            self.first_delta_at = time.monotonic()
        kind = params["kind"]
        if kind == "thinking":
            self._switch("thinking", self.style("2;3", "thinking…"))
            print(self.style("2;3", params["text"]), end="", flush=True)
        elif kind == "text":
            self._switch("text", self.style("1;36", "claude:"))
            print(params["text"], end="", flush=True)

    def message(self, params: dict[str, Any]) -> None:
        message = params["message"]
        kind = message.get("type")
        if kind == "assistant":
            for block in message["message"]["content"]:
                if block.get("type") == "tool_use":
                    self._switch(None)
                    arguments = json.dumps(block["input"], ensure_ascii=False)
                    print(self.style("33", f"⚙ tool call {block['name']}: ") + arguments[:300])
        elif kind == "user" and message.get("parent_tool_use_id") is None:
            content = message["message"].get("content")
            for block in content if isinstance(content, list) else ():
                if block.get("type") == "tool_result":
                    self._switch(None)
                    text = block.get("content")
                    if isinstance(text, list):
                        text = " ".join(part.get("text", "") for part in text)
                    print(self.style("32", "✓ tool result: ") + str(text)[:300])
        elif kind == "result":
            self._switch(None)
            self.result = message
            self.done.set()


async def _play(prompt: str, model_url: str, workspace: str, home: str,
                cli_path: str | None) -> int:
    renderer = _Renderer()
    style = renderer.style
    client = LanguageClient("claude-sidecar-demo", "1", converter_factory=get_converter)
    client.feature("claude/delta")(lambda params: renderer.delta(params))
    client.feature("claude/message")(lambda params: renderer.message(params))
    client.feature("claude/status")(lambda params: None)

    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(HOME=home, ANTHROPIC_BASE_URL=model_url, ANTHROPIC_API_KEY="demo-no-key-needed",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    argv = ["-m", "claude_sidecar", "--stdio", "--log-level", "WARNING"]
    if cli_path:
        argv += ["--cli", cli_path]
    await client.start_io(sys.executable, *argv, env=env)
    try:
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            # One chat and done: a spare CLI for a next chat would only cost time.
            initialization_options={"clientName": "claude-sidecar demo",
                                    "warmPool": {"size": 0}}))
        started = time.monotonic()
        channel = await client.protocol.send_request_async(
            "claude/newChannel", {"cwd": workspace, "permissionMode": "acceptEdits"})
        ready = time.monotonic()
        print(style("2", f"channel {channel['channelId']}: CLI pid {channel['pid']}, "
                         f"ready in {(ready - started) * 1000:.0f} ms, workspace {workspace}"))
        print(style("1", "you: ") + prompt)
        sent = time.monotonic()
        await client.protocol.send_request_async(
            "claude/sendMessage", {"channelId": channel["channelId"], "text": prompt})
        await asyncio.wait_for(renderer.done.wait(), 120)
        result = renderer.result
        first = ((renderer.first_delta_at or sent) - sent) * 1000
        print(style("2", f"turn {result.get('subtype')}: {result.get('num_turns')} model calls, "
                         f"{result.get('duration_ms')} ms, cost ${result.get('total_cost_usd', 0):.4f}, "
                         f"first token after {first:.0f} ms"))
        written = os.path.join(workspace, "haiku.txt")
        if os.path.exists(written):
            print(style("2", f"the Write tool really ran: {written}"))
        await client.protocol.send_request_async(
            "claude/closeChannel", {"channelId": channel["channelId"]})
        return 0 if not result.get("is_error") else 1
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def run_demo(cli_path: str | None = None, prompt: str | None = None) -> int:
    """Play the demo session; returns the process exit code."""
    # The transcript is the demo's output; the stand-in's per-request log is noise here.
    scripted_log = logging.getLogger("claude_sidecar.scripted")
    if scripted_log.getEffectiveLevel() > logging.DEBUG:
        scripted_log.setLevel(logging.WARNING)
    home = tempfile.mkdtemp(prefix="claude-sidecar-demo-home-")
    workspace = tempfile.mkdtemp(prefix="claude-sidecar-demo-")
    with ScriptedModel(load_scenario(DEMO_SCENARIO_PATH)) as model:
        return asyncio.run(_play(prompt or DEFAULT_PROMPT, model.url, workspace, home,
                                 cli_path))
