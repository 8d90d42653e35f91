"""A CLI that hangs cannot hang the daemon: interrupt answers, close ends the process, a
start given up on ends its CLI."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from lsprotocol.types import CancelParams
from pygls.exceptions import JsonRpcException

from tests.harness import FAKE_CLI, StartSidecar, pid_alive, wait_until_dead

pytestmark = pytest.mark.same_on_every_cli("runs the fake CLI, whatever CLI is under test")


async def test_interrupt_answers_and_close_escalates_to_sigkill_for_a_hung_cli(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    daemon = await sidecar_with(
        {"cliPath": str(FAKE_CLI)},
        FAKE_CLI_HANG="1",
        FAKE_CLI_ANSWERS=os.devnull,
        FAKE_CLI_LINES=os.devnull,
    )
    channel = await daemon.new_channel(str(workspace))
    await daemon.send(channel, "hang now")

    # Both requests answer at all: each has the harness's 60 s hang guard, far above the
    # daemon's own 5 s (interrupt) and 10 s (close) timeouts; how fast is not asserted.
    interrupt = await daemon.error("claude/interrupt", {"channelId": channel})
    closed = await daemon.request("claude/closeChannel", {"channelId": channel})

    assert interrupt.code == -32007 and interrupt.data["subtype"] == "interrupt"
    assert closed["exit"]["signal"] == 9, "SIGTERM was ignored, SIGKILL ended it"
    assert not pid_alive(daemon.pids[-1])


async def written(path: Path, timeout: float = 60) -> str:
    """The text of ``path`` once it exists (polled; ``timeout`` is a hang guard)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} was never written"
        await asyncio.sleep(0.05)
    return path.read_text()


async def test_a_new_channel_cancelled_while_its_cli_starts_ends_that_cli(
    sidecar_with: StartSidecar, workspace: Path, tmp_path: Path
) -> None:
    started = tmp_path / "cli.pid"
    daemon = await sidecar_with(
        {"cliPath": str(FAKE_CLI)},
        FAKE_CLI_SILENT_START=str(started),
        FAKE_CLI_ANSWERS=os.devnull,
        FAKE_CLI_LINES=os.devnull,
    )
    protocol = daemon.client.protocol
    opening = asyncio.ensure_future(
        protocol.send_request_async("claude/newChannel", {"cwd": str(workspace)}, "open-1")
    )
    pid = int(await written(started))  # the CLI has its `initialize` and will not answer

    protocol.notify("$/cancelRequest", CancelParams(id="open-1"))

    with pytest.raises(JsonRpcException) as cancelled:
        await asyncio.wait_for(opening, 60)
    assert cancelled.value.code == -32800
    assert await wait_until_dead([pid]) == [], "the CLI outlived the start given up on"
    assert (await daemon.request("claude/listChannels", {}))["channels"] == []
