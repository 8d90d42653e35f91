"""The warm pool: spare initialized CLIs serve the next claude/newChannel at once."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar, StartSidecar, child_pids, wait_until_dead


async def spares(sidecar: Sidecar, count: int = 1, timeout: float = 60) -> set[int]:
    """Wait until the daemon has ``count`` CLI processes that serve no channel.

    Polls, with ``timeout`` as a hang guard: a spare is started and ended inside the
    daemon, which publishes nothing about it (a spare has no channel, hence no feed)."""
    deadline = time.monotonic() + timeout
    while True:
        channels = await sidecar.request("claude/listChannels", {})
        spare = child_pids(sidecar.process.pid) - {c["pid"] for c in channels["channels"]}
        if len(spare) == count or time.monotonic() > deadline:
            assert len(spare) == count, f"expected {count} spare CLI(s), found {sorted(spare)}"
            return spare
        await asyncio.sleep(0.1)


async def test_a_new_chat_takes_the_spare_started_after_the_previous_one(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    sidecar = await sidecar_with({"warmPool": {"size": 1}})
    first = await sidecar.open_channel(cwd=str(workspace))
    await sidecar.turn(first["channelId"], "hello")
    (spare,) = await spares(sidecar)

    second = await sidecar.open_channel(cwd=str(workspace))
    result = (await sidecar.turn(second["channelId"], "hello")).result

    assert second["pid"] == spare and first["pid"] != spare
    assert result["subtype"] == "success"
    assert sidecar.text(second["channelId"]) == "Hello from the stand-in model!"
    assert result["session_id"] == second["sessionId"]
    statuses = sidecar.of(second["channelId"], "claude/status")
    assert statuses[0].params["seq"] == 1 and statuses[0].params["state"] == "idle"


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
async def test_a_spare_is_started_at_initialize_for_the_editors_workspace(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace)}})
    (spare,) = await spares(sidecar)

    opened = await sidecar.open_channel(cwd=str(workspace))

    assert opened["pid"] == spare


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
async def test_a_spare_takes_the_model_and_permission_mode_of_the_chat(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path
) -> None:
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace)}})
    (spare,) = await spares(sidecar)

    opened = await sidecar.open_channel(
        cwd=str(workspace), model="claude-haiku-4-5", permissionMode="plan"
    )
    channel = opened["channelId"]
    await sidecar.turn(channel, "hello")

    assert opened["pid"] == spare
    init = next(
        n.message
        for n in sidecar.of(channel, "claude/message")
        if n.message.get("subtype") == "init"
    )
    assert init["permissionMode"] == "plan"
    assert model.requests[-1]["model"] == "claude-haiku-4-5"
    status = sidecar.of(channel, "claude/status")[0].params
    assert status["model"] == "claude-haiku-4-5" and status["permissionMode"] == "plan"


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
async def test_a_chat_with_other_options_starts_its_own_cli_and_the_spare_is_replaced(
    sidecar_with: StartSidecar, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace), "size": 1}})
    (spare,) = await spares(sidecar)

    opened = await sidecar.open_channel(cwd=str(other))
    await sidecar.turn(opened["channelId"], "hello")
    (replacement,) = await spares(sidecar)
    assert await wait_until_dead([spare]) == [], "the pool holds one spare at most"

    assert opened["pid"] != spare and replacement != spare
    assert (await sidecar.open_channel(cwd=str(other)))["pid"] == replacement


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
async def test_the_next_spare_waits_until_the_new_chats_first_turn_is_over(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [],
                "default": [
                    [{"text": "Half"}, {"wait_for_prompt": "^go on$", "timeout": 90}, {"text": "!"}]
                ],
            }
        )
    )
    sidecar = await sidecar_with({"warmPool": {"size": 1}})
    opened = await sidecar.open_channel(cwd=str(workspace))
    start = len(sidecar.notes)
    await sidecar.send(opened["channelId"], "hello")
    # The turn is running, its reply held by the model: a spare started with the chat
    # (at its open, before the CLI even had the message) would be a process by now.
    await sidecar.wait_for(
        lambda n: n.channel == opened["channelId"] and n.method == "claude/delta", after=start
    )
    await spares(sidecar, count=0)

    model.release("go on")
    await sidecar.wait_for(
        lambda n: n.channel == opened["channelId"] and n.method == "claude/turnEnded",
        after=start,
    )

    await spares(sidecar, count=1)


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
async def test_an_idle_spare_is_closed_after_idle_seconds(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace), "idleSeconds": 1}})
    (spare,) = await spares(sidecar)

    assert await wait_until_dead([spare]) == []
    await spares(sidecar, count=0)


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
async def test_a_spare_that_died_is_not_used(sidecar_with: StartSidecar, workspace: Path) -> None:
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace)}})
    (spare,) = await spares(sidecar)
    os.kill(spare, signal.SIGKILL)
    assert await wait_until_dead([spare]) == []

    opened = await sidecar.open_channel(cwd=str(workspace))
    result = (await sidecar.turn(opened["channelId"], "hello")).result

    assert opened["pid"] != spare and result["subtype"] == "success"


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
async def test_no_spare_outlives_the_daemon(sidecar_with: StartSidecar, workspace: Path) -> None:
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace)}})
    (spare,) = await spares(sidecar)

    await sidecar.stop()

    assert await wait_until_dead([spare]) == []


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
# It kills the daemon's own process.
@pytest.mark.real_daemon_process
async def test_no_spare_outlives_a_killed_daemon(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace)}})
    (spare,) = await spares(sidecar)

    sidecar.process.kill()
    await sidecar.process.wait()

    assert await wait_until_dead([spare]) == []


@pytest.mark.same_on_every_cli(
    "the warm pool's policy: which process a chat gets, when spares start and end"
)
async def test_resumed_chats_never_take_a_spare(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace)}})
    session_id, _ = await sidecar.chat(str(workspace), "hello")
    spare = await spares(sidecar)

    resumed = await sidecar.open_channel(cwd=str(workspace), resume=session_id)

    assert resumed["pid"] not in spare and resumed["sessionId"] == session_id


async def test_a_primed_spare_has_built_its_context_and_writes_no_session_until_used(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path, home: Path
) -> None:
    sidecar = await sidecar_with({"warmPool": {"cwd": str(workspace), "primeContext": True}})
    (spare,) = await spares(sidecar)
    counted = await asyncio.to_thread(model.wait_for_token_counts, 1, 60)
    assert counted, "the spare did not count its context's tokens"
    assert not list(home.glob(".claude/projects/*/*.jsonl")), "priming wrote a session"

    opened = await sidecar.open_channel(cwd=str(workspace))
    result = (await sidecar.turn(opened["channelId"], "hello")).result

    assert opened["pid"] == spare and result["subtype"] == "success"
    assert sidecar.text(opened["channelId"]) == "Hello from the stand-in model!"
    assert len(list(home.glob(".claude/projects/*/*.jsonl"))) == 1


async def priming_spare(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path, log: Path
) -> tuple[Sidecar, int]:
    """A daemon logging into ``log`` whose spare is priming: its ``count_tokens`` calls are
    held (``model.hold_token_counts(False)`` releases them). Returns it and the spare's pid."""
    model.hold_token_counts()
    sidecar = await sidecar_with(
        {"warmPool": {"cwd": str(workspace), "primeContext": True}}, args=("--log-file", str(log))
    )
    (spare,) = await spares(sidecar)
    assert await asyncio.to_thread(model.wait_for_token_counts, 1, 60), "no priming began"
    return sidecar, spare


async def test_closing_the_daemon_ends_a_spare_still_priming_without_waiting_for_it(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "daemon.log"
    sidecar, spare = await priming_spare(sidecar_with, model, workspace, log)

    await sidecar.stop()

    assert await wait_until_dead([spare]) == []
    # Had shutdown waited for the priming, it would have ended by its timeout, not by us.
    assert "priming spare" not in log.read_text()
    assert "warm pool: closing a spare CLI (the daemon is closing)" in log.read_text()


async def test_a_new_chat_takes_a_spare_still_priming_without_waiting_for_its_model_call(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "daemon.log"
    sidecar, spare = await priming_spare(sidecar_with, model, workspace, log)

    opened = await sidecar.open_channel(cwd=str(workspace))

    # Had the chat waited for the priming, it would have got the spare once that timed out.
    assert opened["pid"] == spare and "priming spare" not in log.read_text()
    # The first turn may wait for the CLI's counting (CLI 2.1.233 does): released now.
    model.hold_token_counts(False)
    result = (await sidecar.turn(opened["channelId"], "hello")).result
    assert result["subtype"] == "success"
