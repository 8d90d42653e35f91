"""The editor's tools in the shared daemon: asked of an attached client that offers them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon, kill_group
from tests.harness import tool_results
from tests.test_editor_tools import ASK_DIAGNOSTICS, DIAGNOSTICS_TOOL

# Long enough that a tool call left waiting for a client that is gone fails the test.
NEVER = 600


async def test_an_editor_tool_call_whose_editor_left_is_asked_of_another_attached_editor(
    shared: SharedDaemon, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(ASK_DIAGNOSTICS))
    options = {"editorTools": [DIAGNOSTICS_TOOL], "editorToolTimeout": NEVER}
    asked = asyncio.Event()

    async def never_answers(ls: Any, params: Any) -> Any:
        asked.set()
        await asyncio.Event().wait()

    def answers(ls: Any, params: Any) -> Any:
        return {"diagnostics": "a.py:1: unused import"}

    staying = await shared.client(
        options, name="staying", handlers={"claude/callEditorTool": answers}
    )
    channel = await staying.new_channel(str(workspace))
    leaving = await shared.client(
        options, name="leaving", handlers={"claude/callEditorTool": never_answers}
    )
    await leaving.request("claude/attach", {"channelId": channel})
    # Sending makes "leaving" the chat's most recently active client: it is asked first.
    await leaving.send(channel, "any problems?")
    await asyncio.wait_for(asked.wait(), 60)
    kill_group(leaving.process.pid)  # the editor is gone before it answered

    ended = await staying.wait_for(
        lambda n: n.channel == channel and n.method == "claude/turnEnded"
    )

    assert ended.params["outcome"] == "success"
    (result,) = tool_results(model)
    assert "unused import" in repr(result["content"]) and not result.get("is_error")
