"""`claude/turnEnded` says how every turn ended; `claude/status` shows the CLI's retries."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Note, Sidecar

SCENARIO = {
    "rules": [
        {
            # Held halfway until the test interrupts it or kills the CLI, however slow the
            # machine (no prompt says "never sent").
            "match": "(?i)slow",
            "chunk": 2,
            "steps": [
                [
                    {"text": "a slow answer that takes its time to arrive " * 2},
                    {"wait_for_prompt": "^never sent$", "timeout": 90},
                    {"text": "a slow answer that takes its time to arrive " * 2},
                ]
            ],
        },
        {
            "match": "(?i)fail",
            "steps": [
                [{"error": {"status": 500, "type": "api_error", "message": "scripted failure"}}]
            ],
        },
        {
            "match": "(?i)busy",
            "steps": [
                [
                    {
                        "error": {
                            "status": 529,
                            "type": "overloaded_error",
                            "message": "Overloaded",
                            "retry": True,
                            "times": 1,
                        }
                    },
                    {"text": "Answered on the second try."},
                ]
            ],
        },
        {
            "match": "(?i)write",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{cwd}/a.txt", "content": "one\n"},
                        }
                    }
                ],
                [
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{cwd}/b.txt", "content": "two\n"},
                        }
                    }
                ],
                [{"text": "Wrote both."}],
            ],
        },
    ],
    "default": [[{"text": "Hello there."}]],
}


async def turn_ended(sidecar: Sidecar, channel: str, after: int) -> dict[str, Any]:
    note = await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/turnEnded", after=after
    )
    return note.params


async def test_a_successful_turn_ends_with_its_cost_usage_and_message_id(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    channel = await sidecar.new_channel(str(workspace))

    turn = await sidecar.turn(channel, "hello")
    message_id, ended, result = turn.message_id, turn.ended, turn.result

    assert ended["outcome"] == "success" and "error" not in ended
    assert ended["messageIds"] == [message_id]
    assert ended["costUsd"] == result["total_cost_usd"] == ended["totalCostUsd"] > 0
    assert ended["usage"]["inputTokens"] > 0 and ended["usage"]["outputTokens"] > 0
    assert ended["durationMs"] == result["duration_ms"]
    assert ended["permissionWaitMs"] == 0 and ended["numTurns"] == 1


async def test_turn_ended_follows_the_result_and_precedes_idle(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.send(channel, "hello")
    idle = await sidecar.wait_for_state(channel, "idle", after=1)

    def kind(n: Note) -> str:
        if n.method == "claude/message" and n.message.get("type") == "result":
            return "result"
        if n.method == "claude/status" and n.params["state"] == "idle":
            return "idle"
        return n.method

    # Up to that idle: the CLI sends more after its result (a command_lifecycle line) that,
    # on a busy machine, is already in by the time this test looks.
    seen = sidecar.notes[: sidecar.notes.index(idle) + 1]
    # (The conversation's entries that an event changed follow it: not what is checked.)
    order = [kind(n) for n in seen if n.channel == channel and n.method != "claude/entry"]
    assert order[-3:] == ["result", "claude/turnEnded", "idle"]


async def test_cost_is_per_turn_and_the_total_adds_up(sidecar: Sidecar, workspace: Path) -> None:
    channel = await sidecar.new_channel(str(workspace))

    first = (await sidecar.turn(channel, "hello")).ended
    second = (await sidecar.turn(channel, "hello again")).ended

    assert 0 < second["costUsd"] < second["totalCostUsd"]
    assert abs(second["totalCostUsd"] - (first["costUsd"] + second["costUsd"])) < 1e-9


async def test_an_interrupted_turn_says_interrupted_not_the_clis_diagnostic(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.send(channel, "slow please")
    await sidecar.wait_for(lambda n: n.channel == channel and n.method == "claude/delta")
    await sidecar.request("claude/interrupt", {"channelId": channel})
    ended = await turn_ended(sidecar, channel, 0)

    assert ended["outcome"] == "interrupted"
    assert "error" not in ended and "ede_diagnostic" not in repr(ended)


async def test_an_api_error_ends_the_turn_with_kind_api_and_the_status(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    channel = await sidecar.new_channel(str(workspace))

    ended = (await sidecar.turn(channel, "fail now")).ended

    assert ended["outcome"] == "error"
    assert ended["error"]["kind"] == "api" and ended["error"]["status"] == 500
    assert "scripted failure" in ended["error"]["message"]


async def test_max_turns_ends_the_turn_with_outcome_max_turns(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    channel = await sidecar.new_channel(str(workspace), maxTurns=1, permissionMode="acceptEdits")

    ended = (await sidecar.turn(channel, "write two files")).ended

    assert ended["outcome"] == "maxTurns"
    assert (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()


async def test_max_budget_ends_the_turn_with_outcome_max_budget(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    # One scripted model call costs about $0.05 at list prices.
    channel = await sidecar.new_channel(
        str(workspace), maxBudgetUsd=0.01, permissionMode="acceptEdits"
    )

    ended = (await sidecar.turn(channel, "write two files")).ended

    assert ended["outcome"] == "maxBudget"
    assert not (workspace / "b.txt").exists()


async def test_permission_wait_is_reported_apart_from_the_turn(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "write",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Write",
                                        "input": {"file_path": "{cwd}/a.txt", "content": "x\n"},
                                    }
                                }
                            ],
                            [{"text": "Done."}],
                        ],
                    }
                ]
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.send(channel, "write it")
    ask = await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/permissionRequest"
    )
    await asyncio.sleep(0.5)
    await sidecar.request(
        "claude/respondPermission",
        {"channelId": channel, "requestId": ask.params["requestId"], "decision": "allow"},
    )
    ended = await turn_ended(sidecar, channel, 0)

    assert ended["outcome"] == "success"
    assert ended["durationMs"] >= ended["permissionWaitMs"] >= 500


async def test_a_cli_killed_mid_turn_ends_the_turn_with_cli_exited(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    import os
    import signal

    model.set_scenario(load_scenario(SCENARIO))
    opened = await sidecar.open_channel(cwd=str(workspace))
    channel = opened["channelId"]

    await sidecar.send(channel, "slow please")
    await sidecar.wait_for(lambda n: n.channel == channel and n.method == "claude/delta")
    os.kill(opened["pid"], signal.SIGKILL)
    ended = await turn_ended(sidecar, channel, 0)
    await sidecar.wait_for_state(channel, "exited")

    assert ended["outcome"] == "error" and ended["error"]["kind"] == "cliExited"
    assert (
        ended["error"]["message"] == "the CLI exited during the turn (killed by SIGKILL, signal 9)"
    )


async def test_status_shows_the_clis_retry_and_clears_it_when_the_model_answers(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    channel = await sidecar.new_channel(str(workspace))

    ended = (await sidecar.turn(channel, "are you busy?")).ended

    statuses = [n.params for n in sidecar.of(channel, "claude/status")]
    retrying = [s for s in statuses if "retry" in s]
    assert len(retrying) == 1
    retry = retrying[0]["retry"]
    assert retry["attempt"] == 1 and retry["maxRetries"] >= 1
    assert retry["retryInMs"] > 0 and retry["errorStatus"] == 529 and retry["error"]
    after = statuses[statuses.index(retrying[0]) + 1]
    assert "retry" not in after and after["state"] == "running", "cleared on the answer"
    assert ended["outcome"] == "success"
    assert sidecar.text(channel) == "Answered on the second try."
