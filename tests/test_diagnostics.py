"""``kill -USR1 <daemon pid>`` logs what the daemon holds: the soak benchmark and a user
chasing a leak read it."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from tests.acp.client import acp_agent
from tests.env import both_platform_paths
from tests.harness import RawClient, logged_stats

pytestmark = pytest.mark.same_on_every_cli("the daemon's own SIGUSR1 report")


@both_platform_paths
def test_sigusr1_logs_descriptors_tasks_children_channels_and_memory(
    daemon_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "daemon.log"
    client = RawClient(daemon_env, ("--log-file", str(log)))
    try:
        client.initialize()
        os.kill(client.process.pid, signal.SIGUSR1)
        idle = logged_stats(log, 0)
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
        busy = logged_stats(log, mark)
        assert busy["channels"] == 1 and busy["children"] == 1, "the channel's CLI is a child"
        assert busy["fds"] > idle["fds"] and busy["tasks"] > idle["tasks"]
    finally:
        assert client.process.stdin is not None
        client.process.stdin.close()
        client.process.wait(timeout=15)


async def test_sigusr1_logs_the_acp_agents_figures_too(
    daemon_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "agent.log"
    async with acp_agent(daemon_env, log_file=log) as (conn, process, _client):
        await conn.new_session(cwd=str(workspace), mcp_servers=[])
        os.kill(process.pid, signal.SIGUSR1)
        stats = await asyncio.to_thread(logged_stats, log, 0)

    assert stats["channels"] == 1 and stats["children"] == 1, "the session's CLI is a child"
    assert stats["rssKib"] > 10_000
