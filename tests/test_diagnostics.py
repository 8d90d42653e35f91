"""``kill -USR1 <daemon pid>`` logs what the daemon holds: the soak benchmark and a user
chasing a leak read it."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

from tests.harness import RawClient

pytestmark = pytest.mark.same_on_every_cli("the daemon's own SIGUSR1 report")


def _stats(log: Path, after: int, timeout: float = 60) -> dict[str, int]:
    # Polls the log (a hang guard): the daemon's report goes to its log file only.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [m for m in re.finditer(r"stats: (.*)", log.read_text()) if m.start() >= after]
        if lines:
            return {k: int(v) for k, v in (pair.split("=") for pair in lines[-1].group(1).split())}
        time.sleep(0.05)
    raise AssertionError(f"no stats line in {log}: {log.read_text()[-2000:]}")


def test_sigusr1_logs_descriptors_tasks_children_channels_and_memory(
    daemon_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "daemon.log"
    client = RawClient(daemon_env, ("--log-file", str(log)))
    try:
        client.initialize()
        os.kill(client.process.pid, signal.SIGUSR1)
        idle = _stats(log, 0)
        assert set(idle) == {"fds", "tasks", "children", "channels", "rssKib"}
        assert idle["channels"] == 0 and idle["children"] == 0
        assert idle["fds"] > 2 and idle["tasks"] >= 1 and idle["rssKib"] > 10_000

        client.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "claude/newChannel",
                "params": {"cwd": str(workspace)},
            }
        )
        assert "result" in client.reply_to(1)
        mark = len(log.read_text())
        os.kill(client.process.pid, signal.SIGUSR1)
        busy = _stats(log, mark)
        assert busy["channels"] == 1 and busy["children"] == 1, "the channel's CLI is a child"
        assert busy["fds"] > idle["fds"] and busy["tasks"] > idle["tasks"]
    finally:
        assert client.process.stdin is not None
        client.process.stdin.close()
        client.process.wait(timeout=15)
