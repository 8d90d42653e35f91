"""The editor's tools in the shared daemon: asked of an attached client that offers them,
and spare CLIs started with them."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon, StartShared, kill_group
from tests.harness import Sidecar, child_pids, tool_results
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


async def test_a_spare_started_for_a_clients_editor_tools_serves_only_a_client_with_the_same(
    start_shared: StartShared, workspace: Path
) -> None:
    daemon = await start_shared("--warm-pool", "1")
    options = {"editorTools": [DIAGNOSTICS_TOOL], "warmPool": {"cwd": str(workspace)}}
    editor = await daemon.client(options, name="editor")
    (spare,) = await spares(daemon, editor)

    plain = await (await daemon.client(name="plain")).open_channel(cwd=str(workspace))
    opened = await editor.open_channel(cwd=str(workspace))

    assert plain["pid"] != spare, "a client without those editor tools starts its own CLI"
    assert opened["pid"] == spare


async def spares(daemon: SharedDaemon, client: Sidecar, timeout: float = 60) -> set[int]:
    """Wait until the daemon has exactly one CLI that serves no chat; its pid."""
    assert daemon.process is not None
    deadline = time.monotonic() + timeout
    while True:
        chats = (await client.request("claude/listChannels"))["channels"]
        spare = child_pids(daemon.process.pid) - {c["pid"] for c in chats}
        if len(spare) == 1 or time.monotonic() > deadline:
            assert len(spare) == 1, f"expected one spare CLI, found {sorted(spare)}"
            return spare
        # Polls: a spare's start is not an event the daemon tells its clients.
        await asyncio.sleep(0.1)
