"""``claude-sidecar demo``: the whole stack on the embedded stand-in model.

Starts the scripted model, the daemon (``--stdio``, exactly as an editor would) and a
small terminal client, then plays two scripted turns as an editor plugin would show
them: streamed thinking and text, a Write tool call that asks for permission with the
diff the daemon previewed, the demo's answer (allow), the ``claude/fileUpdated`` diff of
what really changed on disk, and the turn's ``claude/turnEnded`` summary; then an Edit of
the same file, asked and shown the same way. No API key needed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient

from claude_sidecar.protocol import api
from claude_sidecar.scripted import DEMO_SCENARIO_PATH, ScriptedModel, load_scenario

DEFAULT_PROMPTS = (
    "Create a haiku file about editors, please.",
    "Now give it a brighter last line.",
)


class _Style:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled and text else text


def _ignore(params: dict[str, Any]) -> None:
    """Notifications the transcript does not show (``claude/status``, newer ones)."""


def _feature(handler: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """A fresh function calling ``handler``: pygls sets attributes on what it registers,
    which a bound method refuses. It stays a coroutine function if ``handler`` is one, so
    pygls runs it as a task."""
    if asyncio.iscoroutinefunction(handler):

        async def run_async(params: dict[str, Any]) -> None:
            await handler(params)

        return run_async

    def run(params: dict[str, Any]) -> None:
        handler(params)

    return run


class _Renderer:
    """Prints notifications as a chat transcript and answers permission requests."""

    def __init__(self, respond: Callable[[dict[str, Any]], Awaitable[Any]]) -> None:
        self.style = _Style(sys.stdout.isatty())
        self.respond = respond
        self.kind: str | None = None
        self.first_delta_at: float | None = None
        self.done = asyncio.Event()
        self.ended: dict[str, Any] = {}
        # Tool uses whose call and result were printed (by id).
        self.tools_shown: set[str] = set()
        self.results_shown: set[str] = set()

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        """A handler for every notification the daemon sends (none left to pygls's
        "unknown method" warning); those the transcript does not show are ignored."""
        shown: dict[str, Callable[[dict[str, Any]], Any]] = {
            "claude/delta": self.delta,
            "claude/entry": self.entry,
            "claude/permissionRequest": self.permission_request,
            "claude/permissionCancelled": self.permission_cancelled,
            "claude/fileUpdated": self.file_updated,
            "claude/turnEnded": self.turn_ended,
        }
        return {name: shown.get(name, _ignore) for name in api.NOTIFICATIONS}

    def start_turn(self) -> None:
        self.first_delta_at = None
        self.done.clear()

    def _switch(self, kind: str | None, header: str = "") -> None:
        if kind != self.kind:
            if self.kind is not None:
                print()
            if header:
                print(header)
            self.kind = kind

    def _diff(self, diff: str) -> None:
        """A unified diff, indented, without its file headers (the title names the file)."""
        lines = diff.splitlines()
        if len(lines) >= 2 and lines[0].startswith("--- ") and lines[1].startswith("+++ "):
            lines = lines[2:]
        colours = {"+": "32", "-": "31", "@": "36", "\\": "2"}
        for line in lines:
            code = colours.get(line[:1])
            print("  " + (self.style(code, line) if code else line))

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

    def entry(self, params: dict[str, Any]) -> None:
        """A tool use of the main conversation, once when its input is complete and once
        when its result came (the daemon sends the whole entry each time it changes)."""
        entry = params["entry"]
        if entry["kind"] != "tool" or entry.get("parentId"):
            return
        if entry.get("input") is not None and entry["id"] not in self.tools_shown:
            self.tools_shown.add(entry["id"])
            self._switch(None)
            tool_input = entry["input"]
            shown = tool_input.get("file_path") or json.dumps(tool_input, ensure_ascii=False)
            print(self.style("33", f"⚙ tool call {entry['name']}: ") + shown[:300])
        if entry.get("result") is not None and entry["id"] not in self.results_shown:
            self.results_shown.add(entry["id"])
            self._switch(None)
            print(self.style("32", "✓ tool result: ") + entry["result"]["text"][:300])

    async def permission_request(self, params: dict[str, Any]) -> None:
        self._switch(None)
        target = params.get("description") or params["toolName"]
        print(
            self.style("1;35", f"? permission request: {params['toolName']} {target}")
            + self.style(
                "2", " (the daemon's preview of the change)" if params.get("preview") else ""
            )
        )
        if params.get("preview") is not None:
            self._diff(params["preview"])
        elif params.get("previewNote"):
            print(self.style("2", f"  ({params['previewNote']})"))
        if params.get("autoDecision"):
            print(self.style("2", "  → allowed by the client's autoAllowTools"))
            return
        # An editor would wait for the user's click here; the demo clicks "allow".
        print(self.style("35", "  → allowed (the demo answers for you)"))
        await self.respond(
            {
                "channelId": params["channelId"],
                "requestId": params["requestId"],
                "decision": "allow",
            }
        )

    def permission_cancelled(self, params: dict[str, Any]) -> None:
        self._switch(None)
        print(self.style("2", f"  permission request withdrawn ({params['reason']})"))

    def turn_ended(self, params: dict[str, Any]) -> None:
        self._switch(None)
        self.ended = params
        self.done.set()

    def file_updated(self, params: dict[str, Any]) -> None:
        self._switch(None)
        print(
            self.style("1;34", f"✎ file updated by {params['toolName']}: {params['path']}")
            + self.style("2", " (what changed on disk)" if params.get("diff") else "")
        )
        if params.get("diff") is not None:
            self._diff(params["diff"])
        elif params.get("notice"):
            print(self.style("2", f"  ({params['notice']})"))


def demo_env(base: Mapping[str, str], home: str, model_url: str) -> dict[str, str]:
    """``base`` made to run the demo's CLI on the stand-in model at ``model_url``, in ``home``.

    The user's own Claude settings are left out, so the demo neither writes into their
    config dir (``CLAUDE_CONFIG_DIR``) nor goes to another provider (``CLAUDE_CODE_USE_*``)
    or key; the daemon's own ``CLAUDE_SIDECAR_*`` settings stay.
    """
    env = {
        k: v
        for k, v in base.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE")) or k.startswith("CLAUDE_SIDECAR_")
    }
    env.update(
        HOME=home,
        ANTHROPIC_BASE_URL=model_url,
        ANTHROPIC_API_KEY="demo-no-key-needed",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    return env


async def _play(
    prompts: tuple[str, ...], model_url: str, workspace: str, home: str, cli_path: str | None
) -> int:
    client = LanguageClient("claude-sidecar-demo", "1", converter_factory=get_converter)

    async def respond_permission(params: dict[str, Any]) -> Any:
        return await client.protocol.send_request_async("claude/respondPermission", params)

    renderer = _Renderer(respond_permission)
    style = renderer.style
    for name, handler in renderer.handlers().items():
        client.feature(name)(_feature(handler))

    env = demo_env(os.environ, home, model_url)
    argv = ["-m", "claude_sidecar", "--stdio", "--log-level", "WARNING"]
    if cli_path:
        argv += ["--cli", cli_path]
    await client.start_io(sys.executable, *argv, env=env)
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                # One chat and done: a spare CLI for a next chat would only cost time.
                initialization_options={
                    "clientName": "claude-sidecar demo",
                    "warmPool": {"size": 0},
                },
            )
        )
        started = time.monotonic()
        # `default` mode: the CLI asks before every edit, as a new user's editor would.
        channel = await client.protocol.send_request_async(
            "claude/newChannel", {"cwd": workspace, "permissionMode": "default"}
        )
        ready = time.monotonic()
        print(
            style(
                "2",
                f"channel {channel['channelId']}: CLI pid {channel['pid']}, "
                f"ready in {(ready - started) * 1000:.0f} ms, workspace {workspace}, "
                "permission mode default (edits ask first)",
            )
        )
        failed = False
        for prompt in prompts:
            print(style("1", "you: ") + prompt)
            renderer.start_turn()
            sent = time.monotonic()
            await client.protocol.send_request_async(
                "claude/sendMessage", {"channelId": channel["channelId"], "text": prompt}
            )
            async with asyncio.timeout(120):
                await renderer.done.wait()
            ended = renderer.ended
            failed = failed or ended["outcome"] != "success"
            first = ((renderer.first_delta_at or sent) - sent) * 1000
            print(
                style(
                    "2",
                    f"turn {ended['outcome']}: {ended.get('numTurns', 0)} model calls, "
                    f"{ended['durationMs']} ms ({ended['permissionWaitMs']} ms of them "
                    f"waiting for permission), cost ${ended['costUsd']:.4f}, "
                    f"first token after {first:.0f} ms",
                )
            )
        await client.protocol.send_request_async(
            "claude/closeChannel", {"channelId": channel["channelId"]}
        )
        return 1 if failed else 0
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()  # type: ignore[no-untyped-call]  # pygls's Client.stop is unannotated


def run_demo(cli_path: str | None = None, prompt: str | None = None) -> int:
    """Play the demo session (only ``prompt`` if given); returns the process exit code."""
    # The transcript is the demo's output; the stand-in's per-request log is noise here.
    scripted_log = logging.getLogger("claude_sidecar.scripted")
    if scripted_log.getEffectiveLevel() > logging.DEBUG:
        scripted_log.setLevel(logging.WARNING)
    # The workspace stays for the user to look at (its path is printed below); the CLI's HOME
    # (the stand-in's settings, the session) is of no use once the demo ended: each run left
    # one in the temporary folder.
    workspace = tempfile.mkdtemp(prefix="claude-sidecar-demo-")
    with (
        tempfile.TemporaryDirectory(
            prefix="claude-sidecar-demo-home-", ignore_cleanup_errors=True
        ) as home,
        ScriptedModel(load_scenario(DEMO_SCENARIO_PATH)) as model,
    ):
        code = asyncio.run(
            _play((prompt,) if prompt else DEFAULT_PROMPTS, model.url, workspace, home, cli_path)
        )
    written = os.path.join(workspace, "haiku.txt")
    if os.path.exists(written):
        style = _Style(sys.stdout.isatty())
        print(style("2", f"the tools really ran: {written} now reads:"))
        with open(written, encoding="utf-8") as poem:
            for line in poem.read().splitlines():
                print("  " + line)
    return code
