"""The agent can ask the editor things only the editor knows, through the `ide` MCP server."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario
from pygls.exceptions import JsonRpcInternalError

from tests.harness import Sidecar, StartSidecar, json_object, tool_results

DIAGNOSTICS_TOOL = {
    "name": "getDiagnostics",
    "description": "Errors and warnings the editor shows for a file (all files if no uri).",
    "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}},
}
ASK_DIAGNOSTICS = {
    "rules": [
        {
            "match": "(?i)problems",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "mcp__editor__getDiagnostics",
                            "input": {"uri": "file:///w/a.py"},
                        }
                    }
                ],
                [{"text": "I looked at the problems."}],
            ],
        }
    ],
    "default": [[{"text": "Hello!"}]],
}


class Editor:
    """Answers claude/callEditorTool the way a test tells it to."""

    def __init__(self, log: Path) -> None:
        self.calls: list[dict[str, Any]] = []
        self.answer: Callable[[dict[str, Any]], Any] = lambda params: None
        # The daemon's log file.
        self.log = log

    def daemon_errors(self) -> list[str]:
        """The ERROR lines (and what follows them) the daemon logged so far."""
        return [line for line in self.log.read_text().splitlines() if " ERROR " in line]


@pytest.fixture
async def editor_sidecar(
    sidecar_with: StartSidecar, model: ScriptedModel, tmp_path: Path
) -> tuple[Sidecar, Editor]:
    model.set_scenario(load_scenario(ASK_DIAGNOSTICS))
    editor = Editor(tmp_path / "daemon.log")

    async def call_editor_tool(ls: Any, params: Any) -> Any:
        editor.calls.append(params)
        answer = editor.answer(params)
        return await answer if asyncio.iscoroutine(answer) else answer

    daemon = await sidecar_with(
        {"editorTools": [DIAGNOSTICS_TOOL], "editorToolTimeout": 2},
        args=("--log-file", str(editor.log)),
        handlers={"claude/callEditorTool": call_editor_tool},
    )
    return daemon, editor


async def editor_server_after_a_message(sidecar: Sidecar, workspace: Path) -> dict[str, Any]:
    """The `editor` server's claude/mcpStatus entry once a new channel's first turn ran
    (the CLI connects in-process servers then), polled until it is connected."""
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.turn(channel, "hello")
    deadline = time.monotonic() + 60
    while True:
        servers = (await sidecar.request("claude/mcpStatus", {"channelId": channel}))["servers"]
        editor = json_object(next(s for s in servers if s["name"] == "editor"))
        if editor["status"] == "connected" or time.monotonic() > deadline:
            return editor
        await asyncio.sleep(0.1)


async def test_the_model_calls_an_editor_tool_and_gets_the_editors_answer(
    editor_sidecar: tuple[Sidecar, Editor], model: ScriptedModel, workspace: Path
) -> None:
    sidecar, editor = editor_sidecar
    editor.answer = lambda params: {
        "diagnostics": [{"line": 3, "severity": "error", "message": "undefined name 'foo'"}]
    }
    channel = await sidecar.new_channel(str(workspace))

    result = (await sidecar.turn(channel, "any problems in a.py?")).result

    assert editor.calls == [
        {"channelId": channel, "tool": "getDiagnostics", "arguments": {"uri": "file:///w/a.py"}}
    ]
    tool_result = tool_results(model)[-1]
    assert "undefined name 'foo'" in tool_result["content"][0]["text"]
    assert not tool_result.get("is_error")
    assert result["subtype"] == "success"
    assert sidecar.of(channel, "claude/permissionRequest") == [], "editor tools need no ask"


async def test_an_editor_error_becomes_a_tool_error_the_model_sees(
    editor_sidecar: tuple[Sidecar, Editor], model: ScriptedModel, workspace: Path
) -> None:
    sidecar, editor = editor_sidecar

    def fail(params: dict[str, Any]) -> None:
        raise JsonRpcInternalError("no such buffer")

    editor.answer = fail
    channel = await sidecar.new_channel(str(workspace))

    result = (await sidecar.turn(channel, "any problems in a.py?")).result

    tool_result = tool_results(model)[-1]
    assert tool_result.get("is_error") is True
    assert "no such buffer" in str(tool_result["content"])
    assert result["subtype"] == "success"


@pytest.mark.same_on_every_cli(
    "the daemon's editor-tool timeout; the tool call itself is tested on every CLI"
)
async def test_an_editor_that_never_answers_times_out_into_a_tool_error(
    editor_sidecar: tuple[Sidecar, Editor], model: ScriptedModel, workspace: Path
) -> None:
    sidecar, editor = editor_sidecar
    never = asyncio.Event()

    async def answer_never(params: dict[str, Any]) -> str:
        await never.wait()
        return "never"

    editor.answer = answer_never
    channel = await sidecar.new_channel(str(workspace))

    result = (await sidecar.turn(channel, "any problems in a.py?", timeout=30)).result
    tool_result = tool_results(model)[-1]

    assert tool_result.get("is_error") is True
    assert "did not answer within 2 s" in str(tool_result["content"])
    assert result["subtype"] == "success"


@pytest.mark.same_on_every_cli(
    "the daemon's editor-tool timeout; the tool call itself is tested on every CLI"
)
async def test_a_tool_call_that_timed_out_is_cancelled_in_the_editor(
    editor_sidecar: tuple[Sidecar, Editor], workspace: Path
) -> None:
    sidecar, editor = editor_sidecar
    cancelled = asyncio.Event()

    async def wait_for_cancel(params: dict[str, Any]) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            # pygls cancels a handler when the daemon sends $/cancelRequest for it.
            cancelled.set()
            raise
        return "unreachable"

    editor.answer = wait_for_cancel
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.turn(channel, "any problems in a.py?", timeout=30)

    await asyncio.wait_for(cancelled.wait(), 10)


@pytest.mark.same_on_every_cli(
    "the daemon's editor-tool timeout; the tool call itself is tested on every CLI"
)
async def test_a_late_answer_from_the_editor_is_dropped_and_the_daemon_keeps_serving(
    editor_sidecar: tuple[Sidecar, Editor], workspace: Path
) -> None:
    sidecar, editor = editor_sidecar
    late = asyncio.Event()

    async def answer_anyway(params: dict[str, Any]) -> str:
        # An editor that ignores $/cancelRequest and answers once the daemon gave up.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()
        late.set()
        return "far too late"

    editor.answer = answer_anyway
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.turn(channel, "any problems in a.py?", timeout=30)
    await asyncio.wait_for(late.wait(), 10)

    assert (await sidecar.request("claude/listChannels"))["channels"][0]["state"] == "idle"
    assert editor.daemon_errors() == [], "the late answer is dropped without an error"


async def test_mcp_status_lists_the_ide_server_once_the_cli_has_connected_it(
    editor_sidecar: tuple[Sidecar, Editor], workspace: Path
) -> None:
    sidecar, _ = editor_sidecar

    editor = await editor_server_after_a_message(sidecar, workspace)

    assert editor["status"] == "connected" and editor["tools"] == ["getDiagnostics"]


async def test_mcp_status_lists_every_declared_editor_tool_after_the_first_message(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    tools: list[dict[str, Any]] = [
        DIAGNOSTICS_TOOL,
        {"name": "getOpenEditors", "description": "The files open in the editor."},
        {
            "name": "getSelection",
            "inputSchema": {"type": "object", "properties": {}, "required": []},
        },
        {
            "name": "openFile",
            "inputSchema": {
                "type": "object",
                "required": ["path"],
                "properties": {
                    "path": {"type": "string"},
                    "range": {
                        "type": "object",
                        "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                    },
                },
            },
        },
    ]
    daemon = await sidecar_with({"editorTools": tools})

    editor = await editor_server_after_a_message(daemon, workspace)

    assert editor["status"] == "connected"
    assert sorted(editor["tools"]) == sorted(t["name"] for t in tools)
