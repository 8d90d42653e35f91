"""Background tasks (a shell the agent left running) are listed and can be stopped."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar, descendant_pids, pid_alive, wait_until_dead

BACKGROUND = {
    "rules": [
        {
            "match": "background",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {
                                "command": "sleep 300",
                                "run_in_background": True,
                                "description": "a long sleep",
                            },
                        }
                    }
                ],
                [{"text": "It runs in the background."}],
            ],
        }
    ]
}


@pytest.fixture
async def running_task(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> tuple[str, dict[str, str]]:
    """A channel whose agent started `sleep 300` in the background; its id and task."""
    model.set_scenario(load_scenario(BACKGROUND))
    channel = await sidecar.new_channel(str(workspace), allowedTools=["Bash"])
    await sidecar.turn(channel, "start it in the background")
    listed = (await sidecar.request("claude/listChannels"))["channels"][0]
    return channel, listed["tasks"][0]


async def test_list_channels_shows_a_running_background_task(
    running_task: tuple[str, dict[str, str]],
) -> None:
    _, task = running_task

    assert task["taskType"] == "local_bash" and task["description"] == "a long sleep"


def sleepers(sidecar: Sidecar) -> list[int]:
    """Live `sleep 300` processes (the background task's shell command) of this test's
    daemon: only its descendants, not another test's running in parallel."""
    found = []
    for pid in sorted(descendant_pids(sidecar.process.pid)):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.split(b"\0")[:2] == [b"sleep", b"300"] and pid_alive(pid):
            found.append(pid)
    return found


async def test_stop_task_stops_it_and_the_cli_reports_it_stopped(
    sidecar: Sidecar, running_task: tuple[str, dict[str, str]]
) -> None:
    channel, task = running_task
    # The CLI lists the task as soon as it spawned its shell; `sleep` is exec'd a moment later.
    deadline = time.monotonic() + 60
    # Polls: a process of the CLI's appearing is not an event the test can await.
    while not (running := sleepers(sidecar)) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    assert running, "the shell command runs"
    mark = len(sidecar.notes)

    await sidecar.request("claude/stopTask", {"channelId": channel, "taskId": task["taskId"]})
    stopped = await sidecar.wait_for(
        lambda n: n.channel == channel and n.message.get("subtype") == "task_notification",
        after=mark,
    )
    listed = (await sidecar.request("claude/listChannels"))["channels"][0]

    assert stopped.message["task_id"] == task["taskId"]
    assert stopped.message["status"] == "stopped"
    assert listed.get("tasks", []) == []
    assert await wait_until_dead(running) == [], "the shell command ended"


async def test_stop_task_of_an_unknown_task_names_the_running_ones(
    sidecar: Sidecar, running_task: tuple[str, dict[str, str]]
) -> None:
    channel, task = running_task

    error = await sidecar.error("claude/stopTask", {"channelId": channel, "taskId": "nope"})

    assert error.code == -32010
    assert error.data["running"] == [task["taskId"]] and task["taskId"] in error.message


@pytest.mark.same_on_every_cli("the daemon checks the params before any CLI is asked")
async def test_stop_task_needs_a_task_id(sidecar: Sidecar) -> None:
    error = await sidecar.error("claude/stopTask", {"channelId": "ch-1"})

    assert error.code == -32602 and error.data["field"] == "taskId"
