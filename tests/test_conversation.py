"""The daemon keeps each channel's conversation: `claude/entry` as it changes, and
`claude/getTranscript` for all of it at once (real CLI, stand-in model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Note, Sidecar, StartSidecar

# The daemon's side of a chat, as a client of the release before or after relies on it.
pytestmark = pytest.mark.cross_release

SCENARIO = {
    "rules": [
        {
            "match": "(?i)write",
            "steps": [
                [
                    {"text": "Writing it."},
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{cwd}/notes.txt", "content": "one\ntwo\n"},
                        }
                    },
                ],
                [{"text": "Done."}],
            ],
        },
        {
            "match": "(?i)wait for it",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Bash",
                            # Runs until interrupted (the CLI refuses a plain `sleep`).
                            "input": {
                                "command": "python3 -c 'import time; time.sleep(60)'",
                                "description": "Wait",
                            },
                        }
                    }
                ],
                [{"text": "Waited."}],
            ],
        },
        {
            # Streams a little, then holds (a prompt that never comes) until interrupted.
            "match": "(?i)long story",
            "steps": [[{"text": "Once upon a time"}, {"wait_for_prompt": "^never$"}]],
        },
    ],
    "default": [[{"text": "Hello there."}]],
}


def latest(sidecar: Sidecar, channel: str, up_to: int | None = None) -> dict[str, dict[str, Any]]:
    """Each entry as its last `claude/entry` (up to seq ``up_to``) gave it, in the order
    first seen."""
    entries: dict[str, dict[str, Any]] = {}
    for note in sidecar.of(channel, "claude/entry"):
        if up_to is None or note.params["seq"] <= up_to:
            entries[note.params["entry"]["id"]] = note.params["entry"]
    return entries


async def test_a_turn_sends_its_entries_and_the_transcript_is_the_same(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    channel = await sidecar.new_channel(str(workspace))

    turn = await sidecar.turn(channel, "hello")
    transcript = await sidecar.request("claude/getTranscript", {"channelId": channel})

    kinds = [(e["kind"], e.get("text")) for e in transcript["entries"]]
    assert kinds == [("prompt", "hello"), ("text", "Hello there."), ("turn", None)]
    assert transcript["entries"][0]["id"] == turn.message_id
    deltas = [n.params for n in turn.notes if n.method == "claude/delta"]
    assert deltas and {d["entryId"] for d in deltas} == {transcript["entries"][1]["id"]}
    assert transcript["seq"] > turn.ended["seq"]
    assert transcript["entries"] == list(latest(sidecar, channel, transcript["seq"]).values())


async def test_a_tool_entry_waits_for_permission_then_shows_result_and_file(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write the notes")
    asked = await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/permissionRequest"
    )

    waiting = (await sidecar.request("claude/getTranscript", {"channelId": channel}))["entries"]
    tool = next(e for e in waiting if e["kind"] == "tool")
    assert (tool["name"], tool["status"]) == ("Write", "awaitingPermission")
    assert tool["permission"]["requestId"] == asked.params["requestId"]
    assert tool["permission"]["decision"] == "pending"

    start = len(sidecar.notes)
    await sidecar.request(
        "claude/respondPermission",
        {"channelId": channel, "requestId": asked.params["requestId"], "decision": "allow"},
    )
    await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/turnEnded", after=start
    )

    done = latest(sidecar, channel)[tool["id"]]
    assert done["status"] == "done" and done["permission"]["decision"] == "allowed"
    assert done["files"] == [{"path": str(workspace / "notes.txt"), "added": 2, "removed": 0}]
    assert "notes.txt" in done["result"]["text"]


async def test_a_prompt_sent_during_a_turn_is_queued_until_the_cli_takes_it_up(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write the notes")
    # The turn waits for this answer: it is still running when the next prompt is sent.
    asked = await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/permissionRequest"
    )

    queued_id = await sidecar.send(channel, "next")
    while_running = (await sidecar.request("claude/getTranscript", {"channelId": channel}))[
        "entries"
    ]
    assert while_running[-1] == {"kind": "prompt", "id": queued_id, "text": "next", "queued": True}

    start = len(sidecar.notes)
    await sidecar.request(
        "claude/respondPermission",
        {"channelId": channel, "requestId": asked.params["requestId"], "decision": "allow"},
    )
    taken = await sidecar.wait_for(
        lambda n: n.channel == channel
        and n.method == "claude/entry"
        and n.params["entry"]["id"] == queued_id
        and not n.params["entry"].get("queued"),
        after=start,
    )
    # The idle after it (which may have come already, on a loaded machine).
    after = next(i for i, n in enumerate(sidecar.notes) if n is taken)
    await sidecar.wait_for_state(channel, "idle", after=after)
    entries = (await sidecar.request("claude/getTranscript", {"channelId": channel}))["entries"]
    prompts = [e["text"] for e in entries if e["kind"] == "prompt"]
    assert prompts == ["write the notes", "next"]
    assert not any(e.get("queued") for e in entries)


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_an_unknown_channel_gets_channel_not_found(sidecar: Sidecar) -> None:
    error = await sidecar.error("claude/getTranscript", {"channelId": "ch-404"})

    assert error.data["name"] == "channelNotFound"


def as_stored(entry: dict[str, Any]) -> dict[str, Any]:
    """A live entry without what a session file does not keep (docs/protocol.md, "The
    conversation"): a permission's request id and preview."""
    entry = dict(entry)
    if "permission" in entry:
        entry["permission"] = {"decision": entry["permission"]["decision"]}
    return entry


@pytest.mark.pinned_cli(
    "CLI 2.1.233 does not store the user's permission decision (permissionDecision): "
    "its history's tool entries have no `permission`"
)
async def test_the_history_of_a_chat_has_the_entries_the_chat_had_live(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    opened = await sidecar.open_channel(cwd=str(workspace))
    channel = opened["channelId"]
    await sidecar.send(channel, "write the notes")
    asked = await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/permissionRequest"
    )
    start = len(sidecar.notes)
    await sidecar.request(
        "claude/respondPermission",
        {"channelId": channel, "requestId": asked.params["requestId"], "decision": "allow"},
    )
    await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/turnEnded", after=start
    )
    await sidecar.turn(channel, "hello")
    live = (await sidecar.request("claude/getTranscript", {"channelId": channel}))["entries"]
    await sidecar.request("claude/closeChannel", {"channelId": channel})

    history = await sidecar.request(
        "claude/getHistory", {"sessionId": opened["sessionId"], "cwd": str(workspace)}
    )

    # Turn footers are the daemon's own, recorded beside the session file.
    assert history["entries"] == [as_stored(e) for e in live]
    assert [e["kind"] for e in history["entries"]] == [
        "prompt",
        "text",
        "tool",
        "text",
        "turn",
        "prompt",
        "text",
        "turn",
    ]


async def interrupted_chat(
    sidecar: Sidecar, workspace: Path, prompt: str, under_way: Callable[[Note], bool]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Send ``prompt``, interrupt once ``under_way`` holds for a notification of the chat,
    close it; the chat's live entries and its stored history's."""
    opened = await sidecar.open_channel(cwd=str(workspace))
    channel = opened["channelId"]
    await sidecar.send(channel, prompt)
    await sidecar.wait_for(lambda n: n.channel == channel and under_way(n))
    await sidecar.request("claude/interrupt", {"channelId": channel})
    await sidecar.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")
    live = (await sidecar.request("claude/getTranscript", {"channelId": channel}))["entries"]
    await sidecar.request("claude/closeChannel", {"channelId": channel})
    history = await sidecar.request(
        "claude/getHistory", {"sessionId": opened["sessionId"], "cwd": str(workspace)}
    )
    return live, history["entries"]


async def test_an_interrupted_answer_reads_as_cut_short_in_the_history_too(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))

    live, history = await interrupted_chat(
        sidecar, workspace, "a long story", lambda n: n.method == "claude/delta"
    )

    answer = next(e for e in history if e["kind"] == "text")
    assert answer["aborted"] is True
    assert answer["text"].startswith("Once upon a time")
    assert history[-1]["outcome"] == "interrupted"
    assert [e["kind"] for e in history] == [e["kind"] for e in live]


async def test_a_tool_an_interrupt_stopped_reads_interrupted_live_and_in_the_history(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    sidecar = await sidecar_with({"autoAllowTools": ["Bash"]})

    live, history = await interrupted_chat(
        sidecar,
        workspace,
        "wait for it",
        lambda n: n.method == "claude/entry"
        and n.params["entry"]["kind"] == "tool"
        and n.params["entry"]["status"] == "running",
    )

    [tool] = [e for e in live if e["kind"] == "tool"]
    assert tool["status"] == "interrupted"
    assert tool["permission"]["decision"] == "allowed"
    [stored] = [e for e in history if e["kind"] == "tool"]
    assert stored["status"] == "interrupted"


async def test_raw_cli_messages_are_sent_only_to_a_client_that_asks_for_them(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    plain = await sidecar_with({"rawMessages": False})
    channel = await plain.new_channel(str(workspace))

    turn = await plain.turn(channel, "hello")

    methods = {n.method for n in plain.of(channel)}
    assert "claude/message" not in methods
    assert {"claude/entry", "claude/delta", "claude/turnEnded"} <= methods
    seqs = [n.params["seq"] for n in plain.of(channel)]
    assert seqs == list(range(1, len(seqs) + 1)), "seq has no gaps where messages were"
    assert turn.ended["outcome"] == "success"


async def test_a_resumed_channel_starts_with_the_stored_conversation_then_goes_on(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    opened = await sidecar.open_channel(cwd=str(workspace))
    first = await sidecar.turn(opened["channelId"], "hello")
    await sidecar.request("claude/closeChannel", {"channelId": opened["channelId"]})

    resumed = await sidecar.new_channel(str(workspace), resume=opened["sessionId"])
    before = await sidecar.request("claude/getTranscript", {"channelId": resumed})
    await sidecar.turn(resumed, "hello again")
    after = await sidecar.request("claude/getTranscript", {"channelId": resumed})

    assert [(e["kind"], e.get("text")) for e in before["entries"]] == [
        ("prompt", "hello"),
        ("text", "Hello there."),
        ("turn", None),
    ]
    assert before["entries"][0]["id"] == first.message_id
    assert before["entries"][2]["costUsd"] == first.ended["costUsd"]
    assert after["entries"][:3] == before["entries"]
    assert [e["kind"] for e in after["entries"][3:]] == ["prompt", "text", "turn"]
    assert not [n for n in sidecar.of(resumed, "claude/entry") if n.params["seq"] <= before["seq"]]


async def test_a_fork_at_a_prompt_starts_with_that_exchange_and_the_ones_before(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    source = await sidecar.new_channel(str(workspace))
    ids = [(await sidecar.turn(source, text)).message_id for text in ("one", "two", "three")]

    fork = await sidecar.open_channel("claude/forkSession", channelId=source, atMessageId=ids[1])
    transcript = await sidecar.request("claude/getTranscript", {"channelId": fork["channelId"]})

    prompts = [e["text"] for e in transcript["entries"] if e["kind"] == "prompt"]
    assert prompts == ["one", "two"]
    # The source was between turns: its footers (the daemon's own) come along.
    assert [e["kind"] for e in transcript["entries"]][-1] == "turn"


async def test_a_compaction_shows_live_as_the_stored_session_shows_it(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    opened = await sidecar.open_channel(cwd=str(workspace))
    channel = opened["channelId"]
    # Two exchanges: CLI 2.1.233 compacts nothing shorter.
    for text in ("hello", "hello again", "/compact", "after it"):
        await sidecar.turn(channel, text)
    live = (await sidecar.request("claude/getTranscript", {"channelId": channel}))["entries"]
    await sidecar.request("claude/closeChannel", {"channelId": channel})

    history = await sidecar.request(
        "claude/getHistory", {"sessionId": opened["sessionId"], "cwd": str(workspace)}
    )

    by_id = {e["id"]: e for e in live}
    notices = [e for e in live if e["kind"] == "notice"]
    assert [e["subtype"] for e in notices] == ["compaction", "compactSummary", "commandOutput"]
    compaction, summary, _ = notices
    assert "   - hello\n" in summary["text"], "the stand-in model's summary"
    # A stored compacted session shows what came before the compaction first, then the
    # compaction, with what it kept of the exchange before; each entry is the one the
    # chat showed live, once.
    at = history["entries"].index(compaction)
    assert history["entries"][at : at + 2] == [compaction, summary]
    assert [e["text"] for e in history["entries"][:at] if e["kind"] == "prompt"] == [
        "hello",
        "hello again",
    ]
    assert history["entries"] == [by_id.get(e["id"]) for e in history["entries"]]
    assert len({e["id"] for e in history["entries"]}) == len(history["entries"])
    assert history["entries"][-3:] == live[-3:]
    assert [e.get("text") for e in live if e["kind"] == "prompt"] == [
        "hello",
        "hello again",
        "/compact",
        "after it",
    ]
