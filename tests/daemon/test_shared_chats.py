"""The shared daemon: chats that outlive their clients, several clients on one chat, and
clients that come back and get exactly what they missed. Real CLI, stand-in model; every
client reaches the daemon through ``claude-sidecar connect``, as an editor would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon, seqs
from tests.harness import Note, Sidecar
from tests.test_permissions import next_request, write_twice


def held_answer(prompt: str, release: str) -> dict[str, Any]:
    """A rule answering ``prompt`` with 40 deltas of text, then holding the stream until a
    prompt matching ``release`` reaches the model, then 40 more."""
    return {
        "match": prompt,
        "steps": [
            [
                {"text": "a" * 80},
                {"wait_for_prompt": release, "timeout": 60},
                {"text": "b" * 80},
            ]
        ],
        "chunk": 2,
    }


def ended(channel_id: str) -> Any:
    return lambda n: n.channel == channel_id and n.method == "claude/turnEnded"


def streamed(client: Sidecar, channel_id: str) -> str:
    return client.text(channel_id)


async def test_a_chat_keeps_running_after_its_client_leaves_and_the_client_gets_what_it_missed(
    shared: SharedDaemon, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario({"rules": [held_answer("^long$", "^go on$")], "default": [[{"text": "ok"}]]})
    )
    first = await shared.client(name="first")
    channel = await first.new_channel(str(workspace))
    await first.send(channel, "long")
    await first.wait_for(lambda n: n.channel == channel and "a" in n.params.get("text", ""))
    await first.stop()  # the editor quits mid-turn
    last_seen = seqs(first, channel)[-1]

    # Another client lets the held answer go on (its prompt reaches the model) and sees
    # the turn end while the first client is away.
    watcher = await shared.client(name="watcher")
    await watcher.request("claude/attach", {"channelId": channel})
    other = await watcher.new_channel(str(workspace))
    await watcher.turn(other, "go on")
    await watcher.wait_for(ended(channel))

    back = await shared.client(name="first, back")
    attached = await back.request("claude/attach", {"channelId": channel, "afterSeq": last_seen})

    assert attached["replayed"] > 0 and attached["missed"] is False
    assert attached["entries"] is None, "a replay carries no snapshot"
    got = seqs(back, channel)
    assert got == list(range(last_seen + 1, attached["seq"] + 1)), "every missed seq, once"
    text = streamed(first, channel) + streamed(back, channel)
    assert text == "a" * 80 + "b" * 80, "every delta exactly once across the two connections"
    assert [n for n in back.notes if n.method == "claude/turnEnded"], "the turn's end replayed"


async def test_a_client_attaching_without_after_seq_gets_the_conversation_and_live_notifications(
    shared: SharedDaemon, workspace: Path
) -> None:
    first = await shared.client()
    channel = await first.new_channel(str(workspace))
    await first.turn(channel, "hello")

    second = await shared.client(name="second")
    attached = await second.request("claude/attach", {"channelId": channel})
    turn = await second.turn(channel, "hello again")
    last = seqs(second, channel)[-1]
    await first.wait_for(lambda n: n.channel == channel and n.params["seq"] == last)

    kinds = [e["kind"] for e in attached["entries"]]
    assert "prompt" in kinds and "text" in kinds, attached["entries"]
    assert seqs(second, channel)[0] == attached["seq"] + 1, "live from the seq after the answer"
    assert turn.result["subtype"] == "success"
    # Both clients saw the second turn, numbered alike (up to `last`: what follows the turn's
    # end, its status, may have reached one client and not yet the other).
    seen = [s for s in seqs(second, channel) if s <= last]
    assert [s for s in seqs(first, channel) if s <= last][-len(seen) :] == seen


async def test_a_client_attaching_with_a_limit_gets_the_last_page_and_pages_back(
    shared: SharedDaemon, workspace: Path
) -> None:
    first = await shared.client()
    channel = await first.new_channel(str(workspace))
    for text in ("one", "two", "three"):
        await first.turn(channel, text)
    whole = await first.request("claude/getTranscript", {"channelId": channel})

    second = await shared.client(name="second")
    attached = await second.request("claude/attach", {"channelId": channel, "limit": 2})
    older = await second.request(
        "claude/getTranscript", {"channelId": channel, "before": attached["nextCursor"]}
    )

    assert attached["entries"] == whole["entries"][-2:]
    assert attached["hasMore"] is True
    assert older["entries"] == whole["entries"][:-2], "the rest, up to the attach's page"
    assert (older["hasMore"], older["nextCursor"]) == (False, None)


async def test_two_clients_on_one_chat_the_first_permission_answer_wins(
    shared: SharedDaemon, model: ScriptedModel, workspace: Path
) -> None:
    target = workspace / "note.txt"
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "write it",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Write",
                                        "input": {"file_path": str(target), "content": "hi\n"},
                                    }
                                }
                            ],
                            [{"text": "written"}],
                        ],
                    }
                ],
                "default": [[{"text": "ok"}]],
            }
        )
    )
    vscode = await shared.client(name="vscode")
    nvim = await shared.client(name="nvim")
    channel = await vscode.new_channel(str(workspace))
    await nvim.request("claude/attach", {"channelId": channel})

    await vscode.send(channel, "write it")
    asked = [
        await c.wait_for(lambda n: n.channel == channel and n.method == "claude/permissionRequest")
        for c in (vscode, nvim)
    ]
    request_id = asked[0].params["requestId"]
    assert asked[1].params["requestId"] == request_id, "both clients are asked"
    await nvim.request(
        "claude/respondPermission",
        {"channelId": channel, "requestId": request_id, "decision": "allow"},
    )
    late = await vscode.error(
        "claude/respondPermission",
        {"channelId": channel, "requestId": request_id, "decision": "deny"},
    )
    await vscode.wait_for(ended(channel))

    assert late.data["name"] == "permissionRequestNotFound"
    cancelled: Note = await vscode.wait_for(
        lambda n: n.channel == channel and n.method == "claude/permissionCancelled"
    )
    assert cancelled.params == {
        "channelId": channel,
        "seq": cancelled.params["seq"],
        "requestId": request_id,
        "reason": "answeredElsewhere",
    }
    assert target.read_text() == "hi\n", "the first answer (allow) is the one the CLI got"


async def test_resuming_a_session_a_running_chat_holds_attaches_to_that_chat(
    shared: SharedDaemon, workspace: Path
) -> None:
    first = await shared.client()
    opened = await first.open_channel(cwd=str(workspace))
    await first.turn(opened["channelId"], "hello")

    second = await shared.client(name="second")
    resumed = await second.request(
        "claude/newChannel", {"cwd": str(workspace), "resume": opened["sessionId"]}
    )

    assert resumed["channelId"] == opened["channelId"]
    assert resumed["pid"] == opened["pid"], "no second CLI on the same session file"
    assert resumed["attached"]["entries"], "the answer carries the conversation so far"
    listed = (await second.request("claude/listChannels"))["channels"]
    assert [c["channelId"] for c in listed] == [opened["channelId"]]
    assert sorted(c["clientName"] for c in listed[0]["clients"]) == ["pytest", "second"]


async def test_an_after_seq_older_than_the_replay_window_gets_the_conversation_instead(
    start_shared: Any, workspace: Path
) -> None:
    daemon: SharedDaemon = await start_shared("--replay-window", "0.002")  # ~2 KB
    first = await daemon.client()
    channel = await first.new_channel(str(workspace))
    await first.turn(channel, "hello")
    await first.turn(channel, "hello again")

    back = await daemon.client(name="back")
    attached = await back.request("claude/attach", {"channelId": channel, "afterSeq": 1})

    assert attached["missed"] is True and attached["replayed"] == 0
    assert attached["entries"], "the conversation as of seq, since the replay has a gap"
    assert attached["seq"] == seqs(first, channel)[-1]
    assert seqs(back, channel) == []


async def test_detach_stops_the_notifications_and_the_chat_goes_on(
    shared: SharedDaemon, workspace: Path
) -> None:
    first = await shared.client()
    second = await shared.client(name="second")
    channel = await first.new_channel(str(workspace))
    await second.request("claude/attach", {"channelId": channel})
    await second.request("claude/detach", {"channelId": channel})

    await first.turn(channel, "hello")

    assert seqs(second, channel) == []
    listed = (await first.request("claude/listChannels"))["channels"]
    assert [c["clientName"] for c in listed[0]["clients"]] == ["pytest"]


async def test_a_client_watching_the_chats_sees_another_editors_chat_wait_for_a_permission(
    shared: SharedDaemon, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(write_twice()))
    overview = await shared.client(name="overview")
    await overview.request("claude/watchChannels", {})
    editor = await shared.client(name="editor")
    channel = await editor.new_channel(str(workspace))

    await editor.send(channel, "write a note")
    request = await next_request(editor, channel)
    note = await overview.wait_for(
        lambda n: n.method == "claude/channelsChanged"
        and any(
            c["channelId"] == channel and c["state"] == "awaitingPermission"
            for c in n.params["channels"]
        )
    )

    waiting = next(c for c in note.params["channels"] if c["channelId"] == channel)
    assert [p["requestId"] for p in waiting["pendingPermissions"]] == [request.params["requestId"]]
    assert [c["clientName"] for c in waiting["clients"]] == ["editor"]
    assert waiting["lastPrompt"] == "write a note"
