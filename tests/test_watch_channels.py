"""An overview of every chat of the daemon kept current: claude/watchChannels answers with
the chats, then claude/channelsChanged tells of each that starts, changes or ends."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Note, Sidecar
from tests.test_permissions import next_request, respond, write_twice


def changed(note: Note) -> bool:
    return note.method == "claude/channelsChanged"


def about(channel: str, state: str | None = None) -> Any:
    """A predicate: a claude/channelsChanged that carries ``channel`` (in ``state``)."""

    def matches(note: Note) -> bool:
        return changed(note) and any(
            c["channelId"] == channel and (state is None or c["state"] == state)
            for c in note.params["channels"]
        )

    return matches


def summary_of(note: Note, channel: str) -> dict[str, Any]:
    return next(c for c in note.params["channels"] if c["channelId"] == channel)


async def test_watch_answers_with_every_chat_as_list_channels_gives_it(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    watched = await sidecar.request("claude/watchChannels", {})
    listed = await sidecar.request("claude/listChannels", {})

    assert [c["channelId"] for c in watched["channels"]] == [channel]
    assert watched == listed
    assert "watchChannels" in sidecar.features["features"]


async def test_a_chat_opened_after_watch_is_announced(sidecar: Sidecar, workspace: Path) -> None:
    await sidecar.request("claude/watchChannels", {})

    channel = await sidecar.new_channel(str(workspace))

    note = await sidecar.wait_for(about(channel))
    assert summary_of(note, channel)["cwd"] == str(workspace)
    assert note.params["closed"] == []
    assert "channelId" not in note.params and "seq" not in note.params


async def test_a_chat_waiting_for_permission_is_sent_with_the_request_it_waits_on(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(write_twice()))
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.request("claude/watchChannels", {})

    await sidecar.send(channel, "write a note")
    request = await next_request(sidecar, channel)
    waiting = await sidecar.wait_for(about(channel, "awaitingPermission"))
    start = len(sidecar.notes)
    await respond(sidecar, channel, request, "allow")
    await sidecar.wait_for_result(channel)
    idle = await sidecar.wait_for(about(channel, "idle"), after=start)

    pending = summary_of(waiting, channel)["pendingPermissions"]
    assert [p["requestId"] for p in pending] == [request.params["requestId"]]
    assert "pendingPermissions" not in summary_of(idle, channel)


async def test_the_last_prompt_is_its_first_line_and_the_time_of_the_last_event_moves(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    before = (await sidecar.request("claude/listChannels", {}))["channels"][0]

    await sidecar.turn(channel, "\n  hello there  \nand a second line")
    after = (await sidecar.request("claude/listChannels", {}))["channels"][0]

    assert "lastPrompt" not in before
    assert after["lastPrompt"] == "hello there"
    assert datetime.fromisoformat(after["lastEventAt"]) > datetime.fromisoformat(
        before["lastEventAt"]
    )
    assert after["lastEventAt"].endswith("Z")


async def test_a_resumed_chat_shows_the_last_prompt_of_its_conversation(
    sidecar: Sidecar, workspace: Path
) -> None:
    first = await sidecar.new_channel(str(workspace))
    await sidecar.turn(first, "hello from the first chat")
    session = (await sidecar.request("claude/listChannels", {}))["channels"][0]["sessionId"]
    await sidecar.request("claude/closeChannel", {"channelId": first})

    resumed = await sidecar.new_channel(str(workspace), resume=session)
    # The conversation read back (getTranscript waits for it), then the chat's summary.
    await sidecar.request("claude/getTranscript", {"channelId": resumed, "limit": 5})
    listed = (await sidecar.request("claude/listChannels", {}))["channels"]

    assert [c["lastPrompt"] for c in listed if c["channelId"] == resumed] == [
        "hello from the first chat"
    ]


async def test_a_closed_chat_is_named_in_closed(sidecar: Sidecar, workspace: Path) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.request("claude/watchChannels", {})

    await sidecar.request("claude/closeChannel", {"channelId": channel})

    note = await sidecar.wait_for(lambda n: changed(n) and n.params["closed"] == [channel])
    assert note.params["channels"] == []


async def test_watch_false_stops_the_notifications(sidecar: Sidecar, workspace: Path) -> None:
    await sidecar.request("claude/watchChannels", {})
    stopped = await sidecar.request("claude/watchChannels", {"watch": False})
    unseen = await sidecar.new_channel(str(workspace))
    await sidecar.request("claude/watchChannels", {})

    # Told of what happens after watching again, and of nothing before it: notifications
    # of one connection come in order.
    await sidecar.request("claude/closeChannel", {"channelId": unseen})
    note = await sidecar.wait_for(changed)

    assert stopped == {"channels": []}
    assert note.params == {"channels": [], "closed": [unseen]}
