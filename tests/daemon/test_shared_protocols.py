"""The shared daemon serves clients of every protocol it supports at once: each connection
gets its own handshake (features, ignored options), and they share chats."""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon


async def test_clients_of_different_protocols_share_a_chat_each_with_its_own_handshake(
    shared: SharedDaemon, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario({"default": [[{"text": "hello both"}]]}))
    # One client from before the handshake (no protocol: 1), one newer that still works
    # with protocol 1 and sends an option this daemon does not know.
    older = await shared.client(name="older")
    newer = await shared.client(
        {"protocol": {"version": 2, "oldest": 1, "client": {"name": "newer"}}, "inlineDiffs": 1},
        name="newer",
    )

    for client in (older, newer):
        assert client.features["protocolVersion"] == 1
        assert client.features["features"] == [
            "attach",
            "stopDaemon",
            "editorTools",
            "signIn",
            "rewind",
            "fork",
            "transcriptPaging",
            "partialListing",
            "watchChannels",
            "worktrees",
        ]
    assert older.features["ignoredOptions"] == []
    assert newer.features["ignoredOptions"] == ["initializationOptions.inlineDiffs"]

    channel = await older.new_channel(str(workspace))
    await newer.request("claude/attach", {"channelId": channel})
    await older.turn(channel, "hi")
    await newer.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")

    assert older.text(channel) == newer.text(channel) == "hello both"
