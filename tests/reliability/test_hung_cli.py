"""A CLI that hangs cannot hang the daemon: interrupt answers, close ends the process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.harness import FAKE_CLI, StartSidecar, pid_alive

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
