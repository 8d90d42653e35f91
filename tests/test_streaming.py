"""Turns stream from the real CLI to the client: deltas, messages, status, context."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar, assistant_text

# The daemon's side of a chat, as a client of the release before or after relies on it.
pytestmark = pytest.mark.cross_release

THINK_AND_ANSWER = {
    "rules": [
        {
            "match": "(?i)capital",
            "steps": [
                [
                    {"thinking": "The user asks for the capital of France. That is Paris."},
                    {"text": "The capital of France is Paris, a city on the Seine."},
                ]
            ],
            "chunk": 5,
        }
    ],
    "default": [[{"text": "I only know capitals."}]],
}


async def test_turn_streams_deltas_that_concatenate_to_the_assistant_text(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THINK_AND_ANSWER))
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.turn(channel, "What is the capital of France?")

    messages = [n.message for n in sidecar.of(channel, "claude/message")]
    final_text = assistant_text(messages)
    assert final_text == "The capital of France is Paris, a city on the Seine."
    assert sidecar.text(channel) == final_text
    assert sidecar.text(channel, "thinking") == (
        "The user asks for the capital of France. That is Paris."
    )
    assert len(sidecar.of(channel, "claude/delta")) > 10, "the answer was not streamed in pieces"


async def test_message_notifications_carry_every_other_cli_message_verbatim(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    turn = await sidecar.turn(channel, "hello")
    message_id, result = turn.message_id, turn.result

    types = [n.message["type"] for n in sidecar.of(channel, "claude/message")]
    assert {"system", "stream_event", "assistant", "user", "result"} <= set(types)
    assert result["subtype"] == "success" and result["is_error"] is False
    replayed = [
        n.message for n in sidecar.of(channel, "claude/message") if n.message["type"] == "user"
    ]
    assert replayed[0]["uuid"] == message_id, "the user's own message is echoed with its uuid"
    # content_block_delta events became claude/delta; none is duplicated as a message
    assert not [
        n
        for n in sidecar.of(channel, "claude/message")
        if n.message.get("event", {}).get("delta", {}).get("type") == "text_delta"
    ]


async def test_status_follows_the_turn_from_idle_to_running_to_idle(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    sent = (await sidecar.turn(channel, "hello")).start
    await sidecar.wait_for_state(channel, "idle", after=sent)

    states = [n.params["state"] for n in sidecar.of(channel, "claude/status")]
    deduped = [s for i, s in enumerate(states) if i == 0 or states[i - 1] != s]
    assert deduped == ["idle", "running", "idle"]
    last = sidecar.of(channel, "claude/status")[-1].params
    assert last["sessionId"] and last["model"], "status names the session and the model"


async def test_two_turns_in_one_channel_keep_context(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.turn(channel, "hello, my name is Ada")
    await sidecar.turn(channel, "what did I just say?")

    second = model.main_requests[-1]
    flat = repr(second["messages"])
    assert "my name is Ada" in flat, "the first prompt is in the second request"
    assert "Hello from the stand-in model!" in flat, "the first answer is in the second request"
    assert "what did I just say?" in flat


def half_then_wait_for(letter: str, other: str) -> list[dict[str, str | int]]:
    """A step streaming 60 ``letter``s, then holding until ``other``'s prompt has reached
    the model, then 60 more."""
    half: dict[str, str | int] = {"text": letter * 60}
    return [half, {"wait_for_prompt": f"^{other}$", "timeout": 45}, half]


async def test_two_channels_stream_at_the_same_time_without_mixing(
    sidecar: Sidecar, model: ScriptedModel, tmp_path: Path
) -> None:
    # Each answer stops halfway until the other channel's request has reached the model:
    # both can only finish if both channels' turns were streaming at the same time (a
    # daemon that ran them one after the other would see the first time out).
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {"match": "alpha", "steps": [half_then_wait_for("A", "beta")], "chunk": 4},
                    {"match": "beta", "steps": [half_then_wait_for("B", "alpha")], "chunk": 4},
                ],
                "default": [[{"text": "?"}]],
            }
        )
    )
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one, two = await asyncio.gather(
        sidecar.new_channel(str(tmp_path / "one")), sidecar.new_channel(str(tmp_path / "two"))
    )

    turns = await asyncio.gather(sidecar.turn(one, "alpha"), sidecar.turn(two, "beta"))

    for turn in turns:
        assert turn.result["is_error"] is False, turn.result["result"]
    assert sidecar.text(one) == "A" * 120
    assert sidecar.text(two) == "B" * 120


async def test_messages_sent_during_a_turn_queue_up_and_are_all_answered(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "first",
                        "steps": [
                            [
                                {"text": "one " * 15},
                                {"wait_for_prompt": "^second sent$", "timeout": 90},
                                {"text": "one " * 15},
                            ]
                        ],
                        "chunk": 4,
                    },
                    {"match": "second", "steps": [[{"text": "SECOND ANSWER"}]]},
                ],
                "default": [[{"text": "?"}]],
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace))

    first = await sidecar.send(channel, "first")
    await sidecar.wait_for(lambda n: n.channel == channel and n.method == "claude/delta")
    second = await sidecar.send(channel, "second")
    # The first answer is held until the second message is with the CLI: sent mid-turn.
    model.release("second sent")

    assert first != second
    await sidecar.wait_for(lambda n: "SECOND ANSWER" in sidecar.text(channel), timeout=60)
    # The idle that follows the second answer: after the last note its text needs.
    answered = max(
        i for i in range(len(sidecar.notes)) if "SECOND ANSWER" in sidecar.text(channel, after=i)
    )
    await sidecar.wait_for_state(channel, "idle", after=answered)
    prompts = [m for r in model.main_requests for m in r["messages"] if m["role"] == "user"]
    assert "second" in repr(prompts[-1])


async def test_send_message_accepts_content_blocks_and_a_chosen_uuid(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    chosen = "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
    pixel = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
        "awAAAABJRU5ErkJggg=="
    )

    reply = await sidecar.request(
        "claude/sendMessage",
        {
            "channelId": channel,
            "uuid": chosen,
            "content": [
                {"type": "text", "text": "hello, what is in this picture?"},
                {"type": "image", "mediaType": "image/png", "data": pixel},
            ],
        },
    )
    message_id = reply["messageId"]
    result = await sidecar.wait_for_result(channel)

    assert message_id == chosen
    assert result.get("user_message_uuid", chosen) == chosen
    sent = model.main_requests[-1]["messages"]
    images = [
        b
        for m in sent
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "image"
    ]
    assert images and images[0]["source"]["data"] == pixel


async def test_a_message_sent_during_a_tool_call_joins_the_turn_and_the_channel_goes_idle(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)run",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Bash",
                                        # Runs until the test has sent its message.
                                        "input": {
                                            "command": "until [ -e sent ]; do sleep 0.05; done;"
                                            " echo done"
                                        },
                                    }
                                }
                            ],
                            [{"text": "The command finished."}],
                        ],
                    }
                ],
                "default": [[{"text": "?"}]],
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace), allowedTools=["Bash"])
    await sidecar.send(channel, "run the command")
    await sidecar.wait_for(
        lambda n: n.channel == channel
        and isinstance(n.message, dict)
        and n.message.get("type") == "assistant"
    )

    late = await sidecar.send(channel, "also, be brief")
    (workspace / "sent").touch()
    await sidecar.wait_for_state(channel, "idle", after=len(sidecar.notes))

    echoed = [
        n.message for n in sidecar.of(channel, "claude/message") if n.message.get("uuid") == late
    ]
    assert echoed, "the late message was taken up by the CLI"
    results = [
        n.message
        for n in sidecar.of(channel, "claude/message")
        if n.message.get("type") == "result"
    ]
    assert results[-1]["subtype"] == "success"
