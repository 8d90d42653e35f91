"""Channels start, interrupt, switch model and mode, close; no CLI outlives them."""

from __future__ import annotations

import asyncio
import os
import signal
from datetime import UTC, datetime
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import both_platform_paths
from tests.harness import RawClient, Sidecar, pid_alive, wait_until_dead

STREAMED = "word " * 40
# A long answer: STREAMED, then held (no prompt says that) until the turn is interrupted or its
# CLI ends, so it is always still streaming when a test acts on its first delta.
LONG_ANSWER = [
    {"text": STREAMED},
    {"wait_for_prompt": "^no prompt says this$", "timeout": 90},
    {"text": "and the rest"},
]
SLOW = {
    "rules": [
        {"match": "(?i)long", "steps": [LONG_ANSWER], "chunk": 5},
        {"match": "(?i)hello", "steps": [[{"text": "Hello again!"}]]},
    ],
    "default": [[{"text": "?"}]],
}


async def test_new_channel_reports_its_pid_session_and_state(
    sidecar: Sidecar, workspace: Path
) -> None:
    result = await sidecar.open_channel(cwd=str(workspace))

    assert pid_alive(result["pid"])
    listed = (await sidecar.request("claude/listChannels"))["channels"]
    assert listed == [
        {
            "channelId": result["channelId"],
            "pid": result["pid"],
            "sessionId": result["sessionId"],
            "cwd": str(workspace),
            "state": "idle",
            "permissionMode": "default",
            "lastEventAt": listed[0]["lastEventAt"],
        }
    ]
    assert datetime.fromisoformat(listed[0]["lastEventAt"]) <= datetime.now(UTC)


async def test_interrupt_mid_stream_ends_the_turn_and_keeps_the_channel_usable(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SLOW))
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "tell me something long")
    await sidecar.wait_for(lambda n: n.channel == channel and n.method == "claude/delta")

    assert await sidecar.request("claude/interrupt", {"channelId": channel}) == {"ok": True}
    result = await sidecar.wait_for_result(channel, timeout=20)

    assert result["subtype"] == "error_during_execution"
    streamed = sidecar.text(channel)
    assert streamed and STREAMED.startswith(streamed)
    turn = await sidecar.turn(channel, "hello")
    follow_up = turn.result
    assert follow_up["subtype"] == "success"
    assert sidecar.text(channel, after=turn.start) == "Hello again!"


async def test_set_model_and_permission_mode_reach_the_cli_and_the_status(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.request("claude/setModel", {"channelId": channel, "model": "claude-sonnet-4-5"})
    await sidecar.request("claude/setPermissionMode", {"channelId": channel, "mode": "plan"})
    await sidecar.turn(channel, "hello")

    assert model.main_requests[-1]["model"] == "claude-sonnet-4-5"
    status = sidecar.of(channel, "claude/status")[-1].params
    assert status["model"] == "claude-sonnet-4-5"
    assert status["permissionMode"] == "plan"
    listed = (await sidecar.request("claude/listChannels"))["channels"][0]
    assert (listed["model"], listed["permissionMode"]) == ("claude-sonnet-4-5", "plan")


async def test_close_channel_ends_the_cli_and_forgets_the_channel(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    pid = sidecar.pids[-1]

    result = await sidecar.request("claude/closeChannel", {"channelId": channel})

    assert result["exit"]["code"] == 0 and result["exit"]["signal"] is None
    assert not pid_alive(pid)
    assert sidecar.of(channel, "claude/status")[-1].params["state"] == "exited"
    assert (await sidecar.request("claude/listChannels"))["channels"] == []


async def test_close_channel_mid_turn_ends_the_cli(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SLOW))
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "something long")
    await sidecar.wait_for(lambda n: n.channel == channel and n.method == "claude/delta")

    await sidecar.request("claude/closeChannel", {"channelId": channel})

    assert not pid_alive(sidecar.pids[-1])


async def test_a_cli_that_dies_is_reported_and_the_next_message_resumes_the_conversation(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SLOW))
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.turn(channel, "hello, my name is Ada")
    session = sidecar.of(channel, "claude/status")[-1].params["sessionId"]
    # Counted before the send: on a loaded machine the answer may stream in before it returns.
    sent = len(sidecar.notes)
    await sidecar.send(channel, "tell me something long")
    await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/delta", after=sent
    )

    os.kill(sidecar.pids[-1], signal.SIGKILL)  # mid-turn
    exited = await sidecar.wait_for_state(channel, "exited")
    refused = await sidecar.error("claude/interrupt", {"channelId": channel})
    result = (await sidecar.turn(channel, "what is my name?")).result
    listed = (await sidecar.request("claude/listChannels"))["channels"][0]
    sidecar.pids.append(listed["pid"])

    assert exited.params["exit"]["signal"] == signal.SIGKILL
    assert "stderrTail" in exited.params["exit"]
    assert refused.code == -32003 and refused.data["name"] == "channelExited"
    assert result["subtype"] == "success"
    assert (listed["channelId"], listed["sessionId"]) == (channel, session)
    history = repr(model.main_requests[-1]["messages"])
    assert "my name is Ada" in history and "Hello again!" in history
    assert "what is my name?" in history


async def test_a_cli_that_dies_before_the_first_message_starts_again_with_the_same_session(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    session = sidecar.of(channel, "claude/status")[-1].params["sessionId"]

    os.kill(sidecar.pids[-1], signal.SIGKILL)  # nothing stored yet: there is nothing to resume
    await sidecar.wait_for_state(channel, "exited")
    result = (await sidecar.turn(channel, "hello")).result
    listed = (await sidecar.request("claude/listChannels"))["channels"][0]
    sidecar.pids.append(listed["pid"])

    assert result["subtype"] == "success"
    assert (listed["sessionId"], result["session_id"]) == (session, session)


@pytest.mark.same_on_every_cli(
    "the daemon's process handling: every CLI process ends with the daemon"
)
async def test_shutdown_and_exit_end_every_cli(daemon_env: dict[str, str], tmp_path: Path) -> None:
    daemon = Sidecar(daemon_env)
    await daemon.start()
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        await daemon.new_channel(str(tmp_path / name))

    await daemon.client.shutdown_session()

    assert daemon.process.returncode == 0
    assert await wait_until_dead(daemon.pids) == []
    await daemon.client.stop()


@pytest.mark.same_on_every_cli(
    "the daemon's process handling: every CLI process ends with the daemon"
)
async def test_client_closing_stdin_ends_every_cli(
    daemon_env: dict[str, str], tmp_path: Path
) -> None:
    daemon = Sidecar(daemon_env)
    await daemon.start()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        await daemon.new_channel(str(tmp_path / name))

    stdin = daemon.process.stdin
    assert stdin is not None
    stdin.close()
    await asyncio.wait_for(daemon.process.wait(), 20)

    assert await wait_until_dead(daemon.pids) == []
    await daemon.client.stop()


@pytest.mark.same_on_every_cli(
    "the daemon's process handling: every CLI process ends with the daemon"
)
@both_platform_paths
# It kills the daemon's own process.
@pytest.mark.real_daemon_process
async def test_a_killed_daemon_takes_its_clis_with_it(
    daemon_env: dict[str, str], workspace: Path, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(SLOW))
    daemon = Sidecar(daemon_env)
    await daemon.start()
    await daemon.new_channel(str(workspace))
    streaming = await daemon.new_channel(str(workspace))
    await daemon.send(streaming, "a long answer")
    # Mid-turn, a CLI does not end when its input does: only the daemon's guard ends it.
    await daemon.wait_for(lambda n: n.channel == streaming and n.method == "claude/delta")

    daemon.process.kill()
    await daemon.process.wait()

    assert await wait_until_dead(daemon.pids) == []
    await daemon.client.stop()


@pytest.mark.same_on_every_cli(
    "the daemon's process handling: every CLI process ends with the daemon"
)
async def test_a_client_that_vanishes_without_closing_stdin_ends_the_daemon_and_its_clis(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    client = RawClient(daemon_env)
    client.initialize()
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "claude/newChannel",
            "params": {"cwd": str(workspace)},
        }
    )
    reply = client.reply_to(1)
    pid = reply["result"]["pid"]

    # The editor's reading end goes away; its writing end stays open.
    assert client.process.stdout is not None
    client.process.stdout.close()
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "claude/sendMessage",
            "params": {"channelId": reply["result"]["channelId"], "text": "hello"},
        }
    )

    assert await asyncio.to_thread(client.process.wait, 20) is not None
    assert await wait_until_dead([pid]) == []
