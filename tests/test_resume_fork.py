"""Stored conversations can be continued (resume) and branched (fork)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar


async def test_a_resumed_channel_continues_the_conversation_with_its_context(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    session, _ = await sidecar.chat(str(workspace), "hello, my name is Ada")

    resumed = await sidecar.open_channel(cwd=str(workspace), resume=session)
    await sidecar.turn(resumed["channelId"], "what is my name?")

    assert resumed["sessionId"] == session
    history = repr(model.main_requests[-1]["messages"])
    assert "my name is Ada" in history and "Hello from the stand-in model!" in history
    assert "what is my name?" in history


async def test_resuming_a_session_an_open_channel_holds_returns_that_channel(
    sidecar: Sidecar, workspace: Path
) -> None:
    opened = await sidecar.open_channel(cwd=str(workspace))
    await sidecar.turn(opened["channelId"], "hello")

    again = await sidecar.request(
        "claude/newChannel", {"cwd": str(workspace), "resume": opened["sessionId"]}
    )
    listed = (await sidecar.request("claude/listChannels"))["channels"]

    assert (again["channelId"], again["pid"]) == (opened["channelId"], opened["pid"])
    assert [c["channelId"] for c in listed] == [opened["channelId"]], "no second CLI"
    joined = again["attached"]
    assert [e["kind"] for e in joined["entries"]] == ["prompt", "text", "turn"]
    assert joined["missed"] is False and joined["pendingPermissions"] == []
    transcript = await sidecar.request("claude/getTranscript", {"channelId": opened["channelId"]})
    assert joined["entries"] == transcript["entries"]
    assert 0 < joined["seq"] <= transcript["seq"]


async def test_two_resumes_of_one_session_at_once_share_one_channel_with_its_conversation(
    sidecar: Sidecar, workspace: Path
) -> None:
    session, _ = await sidecar.chat(str(workspace), "hello")

    # The second comes while the first's CLI starts: it waits for that resume to finish.
    first, second = await asyncio.gather(
        sidecar.open_channel(cwd=str(workspace), resume=session),
        sidecar.open_channel(cwd=str(workspace), resume=session),
    )
    listed = (await sidecar.request("claude/listChannels"))["channels"]

    assert first["channelId"] == second["channelId"]
    assert [c["channelId"] for c in listed] == [first["channelId"]], "no second CLI"
    joined = second["attached"]
    assert [e["kind"] for e in joined["entries"]] == ["prompt", "text", "turn"]


async def test_a_resumed_chat_goes_on_with_the_model_and_effort_chosen_for_it(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    first = await sidecar.open_channel(cwd=str(workspace), model="haiku", effort="high")
    await sidecar.turn(first["channelId"], "one")
    await sidecar.request(
        "claude/setModel", {"channelId": first["channelId"], "model": "sonnet", "effort": "low"}
    )
    await sidecar.turn(first["channelId"], "two")
    await sidecar.request("claude/closeChannel", {"channelId": first["channelId"]})

    resumed = await sidecar.open_channel(cwd=str(workspace), resume=first["sessionId"])
    await sidecar.turn(resumed["channelId"], "three")

    assert (resumed["info"]["model"], resumed["info"]["effort"]) == ("sonnet", "low")
    assert "sonnet" in model.main_requests[-1]["model"]
    assert model.main_requests[-1]["output_config"]["effort"] == "low"


async def test_a_resumed_chat_takes_the_model_and_effort_the_client_asks_for_instead(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    session, _ = await sidecar.chat(str(workspace), "one", model="haiku", effort="low")

    # (sonnet: CLI 2.1.233 sends no effort for haiku)
    resumed = await sidecar.open_channel(
        cwd=str(workspace), resume=session, model="sonnet", effort="high"
    )
    await sidecar.turn(resumed["channelId"], "two")

    assert (resumed["info"]["model"], resumed["info"]["effort"]) == ("sonnet", "high")
    assert "sonnet" in model.main_requests[-1]["model"]
    assert model.main_requests[-1]["output_config"]["effort"] == "high"


async def test_resuming_an_unknown_session_fails_cleanly(sidecar: Sidecar, workspace: Path) -> None:
    error = await sidecar.error(
        "claude/newChannel",
        {"cwd": str(workspace), "resume": "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"},
    )

    assert error.code == -32005
    assert (await sidecar.request("claude/listChannels"))["channels"] == []
    assert sidecar.notes == []


THREE_EXCHANGES = {
    "rules": [
        {"match": "one", "steps": [[{"text": "answer one"}]]},
        {"match": "two", "steps": [[{"text": "answer two"}]]},
        {"match": "three", "steps": [[{"text": "answer three"}]]},
        # Half its answer, then held until a prompt "three" reaches the model.
        {
            "match": "slow",
            "steps": [
                [
                    {"text": "slow " * 100},
                    {"wait_for_prompt": "^three$", "timeout": 45},
                    {"text": "slow " * 100},
                ]
            ],
            "chunk": 5,
        },
    ],
    "default": [[{"text": "answer default"}]],
}


def texts_of(request: dict[str, Any]) -> list[str]:
    """The prompt and answer texts of a request's conversation, reminders left out."""
    out = []
    for message in request["messages"]:
        if message["role"] == "system":
            continue
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        out += [
            b["text"].strip()
            for b in blocks
            if b.get("type") == "text" and not b["text"].startswith("<system-reminder>")
        ]
    return out


async def test_fork_at_the_second_message_keeps_two_exchanges_and_leaves_the_source_alone(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    source = await sidecar.open_channel(cwd=str(workspace))
    ids = []
    for text in ("one", "two", "three"):
        ids.append((await sidecar.turn(source["channelId"], text)).message_id)

    fork = await sidecar.open_channel(
        "claude/forkSession", channelId=source["channelId"], atMessageId=ids[1]
    )
    await sidecar.turn(fork["channelId"], "next in the fork")
    forked_request = model.main_requests[-1]
    await sidecar.turn(source["channelId"], "next in the source")

    assert fork["sessionId"] != source["sessionId"]
    assert texts_of(forked_request) == [
        "one",
        "answer one",
        "two",
        "answer two",
        "next in the fork",
    ]
    assert texts_of(model.main_requests[-1]) == [
        "one",
        "answer one",
        "two",
        "answer two",
        "three",
        "answer three",
        "next in the source",
    ]


async def test_fork_of_a_channel_mid_turn_leaves_the_source_turn_running(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    source = await sidecar.new_channel(str(workspace))
    await sidecar.turn(source, "one")
    mark = len(sidecar.notes)
    await sidecar.send(source, "slow please")
    await sidecar.wait_for(lambda n: n.channel == source and n.method == "claude/delta", after=mark)

    fork = await sidecar.open_channel("claude/forkSession", channelId=source)
    # The source's answer is held halfway until the fork's prompt reaches the model: the fork
    # was made, and ran its own turn, while the source's turn was running.
    fork_turn, source_result = await asyncio.gather(
        sidecar.turn(fork["channelId"], "three"), sidecar.wait_for_result(source, after=mark)
    )

    assert source_result["subtype"] == "success", source_result["result"]
    assert sidecar.text(source, after=mark) == "slow " * 200
    assert fork_turn.result["subtype"] == "success"
    (fork_request,) = [r for r in model.main_requests if texts_of(r)[-1] == "three"]
    assert "one" in texts_of(fork_request)


async def test_fork_of_a_stored_session_without_a_channel(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    session, _ = await sidecar.chat(str(workspace), "hello, my name is Ada")

    missing_cwd = await sidecar.error("claude/forkSession", {"sessionId": session})
    fork = await sidecar.open_channel("claude/forkSession", sessionId=session, cwd=str(workspace))
    await sidecar.turn(fork["channelId"], "what is my name?")

    assert missing_cwd.code == -32602 and missing_cwd.data["field"] == "cwd"
    assert fork["sessionId"] != session
    assert "hello, my name is Ada" in texts_of(model.main_requests[-1])


async def test_a_fork_keeps_the_model_set_on_its_source(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    source = await sidecar.new_channel(str(workspace))
    await sidecar.request("claude/setModel", {"channelId": source, "model": "claude-sonnet-4-5"})
    await sidecar.turn(source, "hello")

    fork = await sidecar.open_channel("claude/forkSession", channelId=source)
    await sidecar.turn(fork["channelId"], "hello again")

    assert model.main_requests[-1]["model"] == "claude-sonnet-4-5"


# Each answer with the usage the stand-in model reports for it: known costs and context.
PRICED = {
    "rules": [
        {
            "match": word,
            "steps": [[{"text": f"answer {word}"}]],
            "usage": {"input_tokens": 1000 * n, "output_tokens": 100 * n},
        }
        for n, word in enumerate(("one", "two", "three"), 1)
    ],
    "default": [[{"text": "answer default"}]],
}


def tokens(n: int) -> int:
    """The context of the call that answered PRICED's n-th prompt: its input."""
    return 1000 * n


async def test_a_resumed_channel_reports_its_cost_and_context_and_its_total_goes_on(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(PRICED))
    first = await sidecar.open_channel(cwd=str(workspace))
    one = (await sidecar.turn(first["channelId"], "one")).ended
    two = (await sidecar.turn(first["channelId"], "two")).ended
    await sidecar.request("claude/closeChannel", {"channelId": first["channelId"]})

    resumed = await sidecar.open_channel(cwd=str(workspace), resume=first["sessionId"])
    info = await sidecar.request("claude/channelInfo", {"channelId": resumed["channelId"]})
    three = (await sidecar.turn(resumed["channelId"], "three")).ended

    assert 0 < one["costUsd"] < two["costUsd"] < three["costUsd"]
    assert first["info"]["totalCostUsd"] == 0 and first["info"]["context"] is None
    assert resumed["info"]["totalCostUsd"] == pytest.approx(one["costUsd"] + two["costUsd"])
    window = two["context"]["maxTokens"]
    assert resumed["info"]["context"] == {
        "totalTokens": tokens(2),
        "maxTokens": window,
        "percentage": pytest.approx(100 * tokens(2) / window, abs=0.01),
    }
    assert info["totalCostUsd"] == resumed["info"]["totalCostUsd"]
    assert info["context"] == resumed["info"]["context"]
    # Whether or not the CLI restored the session's cost itself (2.1.330 does, 2.1.233 not).
    assert three["totalCostUsd"] == pytest.approx(
        one["costUsd"] + two["costUsd"] + three["costUsd"]
    )
    assert three["context"]["totalTokens"] == tokens(3)


async def test_a_fork_reports_the_cost_and_context_of_what_it_copied_and_keeps_them(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(PRICED))
    source = await sidecar.open_channel(cwd=str(workspace))
    one = await sidecar.turn(source["channelId"], "one")
    two = (await sidecar.turn(source["channelId"], "two")).ended

    fork = await sidecar.open_channel(
        "claude/forkSession", channelId=source["channelId"], atMessageId=one.message_id
    )
    three = (await sidecar.turn(fork["channelId"], "three")).ended
    await sidecar.request("claude/closeChannel", {"channelId": fork["channelId"]})
    again = await sidecar.open_channel(cwd=str(workspace), resume=fork["sessionId"])

    assert fork["info"]["totalCostUsd"] == pytest.approx(one.ended["costUsd"])
    assert fork["info"]["context"]["totalTokens"] == tokens(1)
    assert three["totalCostUsd"] == pytest.approx(one.ended["costUsd"] + three["costUsd"])
    # Resumed later, the fork still counts the turn it copied (not the source's second).
    assert again["info"]["totalCostUsd"] == pytest.approx(three["totalCostUsd"])
    assert again["info"]["totalCostUsd"] < one.ended["costUsd"] + two["costUsd"] + three["costUsd"]
    assert again["info"]["context"]["totalTokens"] == tokens(3)
