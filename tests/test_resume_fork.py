"""Stored conversations can be continued (resume) and branched (fork)."""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.scripted import ScriptedModel
from tests.harness import Sidecar


async def test_a_resumed_channel_continues_the_conversation_with_its_context(
        sidecar: Sidecar, model: ScriptedModel, workspace: Path) -> None:
    first = await sidecar.request("claude/newChannel", {"cwd": str(workspace)})
    sidecar.pids.append(first["pid"])
    await sidecar.send(first["channelId"], "hello, my name is Ada")
    await sidecar.wait_for_result(first["channelId"])
    await sidecar.request("claude/closeChannel", {"channelId": first["channelId"]})

    resumed = await sidecar.request("claude/newChannel", {
        "cwd": str(workspace), "resume": first["sessionId"]})
    sidecar.pids.append(resumed["pid"])
    await sidecar.send(resumed["channelId"], "what is my name?")
    await sidecar.wait_for_result(resumed["channelId"])

    assert resumed["sessionId"] == first["sessionId"]
    history = repr(model.main_requests[-1]["messages"])
    assert "my name is Ada" in history and "Hello from the stand-in model!" in history
    assert "what is my name?" in history


async def test_resuming_an_unknown_session_fails_cleanly(
        sidecar: Sidecar, workspace: Path) -> None:
    error = await sidecar.error("claude/newChannel", {
        "cwd": str(workspace), "resume": "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"})

    assert error.code == -32005
    assert (await sidecar.request("claude/listChannels"))["channels"] == []
    assert sidecar.notes == []
