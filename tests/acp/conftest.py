"""Fixtures of the ACP tests: ``claude-sidecar acp`` against the real CLI and the stand-in
model, driven by the ACP SDK's client side."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.acp.client import RecordingClient, acp_agent
from tests.harness import descendant_pids, wait_until_dead


@dataclass
class Acp:
    """A running agent: the SDK's connection to it, its process, what the client got."""

    conn: Any
    process: asyncio.subprocess.Process
    client: RecordingClient

    def clis(self) -> set[int]:
        """The agent's processes below it (its CLIs and what they run)."""
        return descendant_pids(self.process.pid)


@pytest.fixture
async def acp(daemon_env: dict[str, str]) -> AsyncIterator[Acp]:
    """An initialized agent (no warm pool); on teardown its stdin closes and no process
    it started may outlive it."""
    async with acp_agent(daemon_env) as (conn, process, client):
        agent = Acp(conn, process, client)
        yield agent
        started = agent.clis()
    await asyncio.wait_for(process.wait(), 30)
    assert await wait_until_dead(sorted(started)) == [], "CLI processes outlived the agent"
