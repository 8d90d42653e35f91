"""How long the shared daemon and its chats live: started by the first ``connect``, chats
closed when idle with nobody attached, the daemon gone once unused, nothing left behind by
a crash, and a stop that will not end a running turn unless forced."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon, StartShared, kill_group, seqs
from tests.env import both_platform_paths
from tests.harness import Sidecar, descendant_pids, wait_until_dead


def held(prompt: str, release: str) -> dict[str, object]:
    return {
        "match": prompt,
        "steps": [[{"text": "a" * 40}, {"wait_for_prompt": release, "timeout": 60}, {"text": "b"}]],
        "chunk": 2,
    }


async def test_connect_starts_the_daemon_and_the_daemon_ends_when_unused(
    socket_dir: Path, daemon_env: dict[str, str], workspace: Path
) -> None:
    socket_path = socket_dir / "daemon.sock"
    log_file = socket_dir / "daemon.log"
    client = Sidecar(
        daemon_env,
        command=(
            "connect",
            "--socket",
            str(socket_path),
            "--daemon-log",
            str(log_file),
            "--linger=1",
            "--warm-pool=0",
        ),
    )
    await client.start()
    channel = await client.new_channel(str(workspace))
    await client.turn(channel, "hello")
    daemon_pid = int((socket_dir / "daemon.sock.lock").read_text().split()[0])
    await client.request("claude/closeChannel", {"channelId": channel})
    await client.stop()

    assert await wait_until_dead([daemon_pid], timeout=30) == [], "no chat, no client: it ends"
    assert not socket_path.exists()
    assert "serving" in log_file.read_text()


async def test_a_chat_nobody_is_attached_to_closes_when_idle_and_keeps_its_session(
    start_shared: StartShared, workspace: Path
) -> None:
    daemon = await start_shared("--idle-close", "1")
    client = await daemon.client()
    opened = await client.open_channel(cwd=str(workspace))
    await client.turn(opened["channelId"], "hello")
    await client.request("claude/detach", {"channelId": opened["channelId"]})

    assert await wait_until_dead([opened["pid"]], timeout=30) == [], "its CLI ends"
    assert (await client.request("claude/listChannels"))["channels"] == []
    sessions = await client.request("claude/listSessions", {"cwd": str(workspace)})
    assert opened["sessionId"] in [s["sessionId"] for s in sessions["sessions"]]


async def test_a_killed_bridge_detaches_its_client_and_the_turn_goes_on(
    shared: SharedDaemon, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario({"rules": [held("^long$", "^go on$")], "default": [[{"text": "ok"}]]})
    )
    doomed = await shared.client(name="doomed")
    channel = await doomed.new_channel(str(workspace))
    await doomed.send(channel, "long")
    await doomed.wait_for(lambda n: n.channel == channel and n.method == "claude/delta")
    kill_group(doomed.process.pid)  # the bridge dies mid-stream, as with a crashed editor

    other = await shared.client(name="other")
    await other.request("claude/attach", {"channelId": channel})
    side = await other.new_channel(str(workspace))
    await other.turn(side, "go on")
    ended = await other.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")

    assert ended.params["outcome"] == "success"
    listed = (await other.request("claude/listChannels"))["channels"]
    chat = next(c for c in listed if c["channelId"] == channel)
    assert [c["clientName"] for c in chat["clients"]] == ["other"]


async def test_stopping_the_daemon_is_refused_mid_turn_unless_forced(
    shared: SharedDaemon, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario({"rules": [held("^long$", "^never$")], "default": [[{"text": "ok"}]]})
    )
    client = await shared.client()
    opened = await client.open_channel(cwd=str(workspace))
    await client.send(opened["channelId"], "long")
    await client.wait_for_state(opened["channelId"], "running")

    refused = await client.error("claude/stopDaemon", {})
    stopped = await client.request("claude/stopDaemon", {"force": True})

    assert refused.data == {"name": "chatsRunning", "channelIds": [opened["channelId"]]}
    assert stopped == {"closedChannels": 1}
    assert shared.process is not None
    assert await asyncio.wait_for(shared.process.wait(), 30) == 0
    assert await wait_until_dead([opened["pid"]]) == []


@both_platform_paths
async def test_a_killed_daemon_leaves_no_cli_and_the_next_one_resumes_the_chat(
    start_shared: StartShared, workspace: Path, model: ScriptedModel
) -> None:
    model.set_scenario(
        load_scenario({"rules": [held("^long$", "^never$")], "default": [[{"text": "ok"}]]})
    )
    daemon = await start_shared()
    client = await daemon.client()
    opened = await client.open_channel(cwd=str(workspace))
    await client.turn(opened["channelId"], "hello, my name is Ada")
    streaming = await client.new_channel(str(workspace))
    await client.send(streaming, "long")
    # Mid-turn, a CLI does not end when its input does: only the daemon's guard ends it.
    await client.wait_for(lambda n: n.channel == streaming and n.method == "claude/delta")
    assert daemon.process is not None
    clis = descendant_pids(daemon.process.pid)

    os.kill(daemon.process.pid, signal.SIGKILL)
    await daemon.process.wait()

    assert await wait_until_dead(sorted(clis), timeout=30) == [], "no CLI outlives the daemon"
    assert daemon.socket.exists(), "a killed daemon leaves its socket file behind"
    await daemon.start()  # the next daemon replaces it
    client = await daemon.client(name="reopened")
    resumed = await client.open_channel(cwd=str(workspace), resume=opened["sessionId"])
    assert "attached" not in resumed, "a new CLI resumes the stored session"
    turn = await client.turn(resumed["channelId"], "what is my name?")
    assert turn.result["subtype"] == "success"
    assert seqs(client, resumed["channelId"])[0] == 1


async def test_the_private_daemon_refuses_the_shared_methods(sidecar: Sidecar) -> None:
    refused = await sidecar.error("claude/attach", {"channelId": "ch-1"})

    assert refused.data == {"name": "notShared", "method": "claude/attach"}
    assert "claude-sidecar connect" in refused.message
