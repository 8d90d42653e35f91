"""Serving the ACP agent on stdin/stdout, and the life of the process.

stdout carries JSON-RPC only (``stdio.claim_stdout``). When the client closes stdin or
its end of stdout goes away, every CLI is closed before the process exits; if the event
loop itself ends abnormally, every CLI is killed (and a CLI whose agent dies gets
SIGKILL from the kernel: ``transport``'s ``PR_SET_PDEATHSIG``; elsewhere from the
watchdog, ``cli.watchdog``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Mapping
from typing import BinaryIO, cast

from acp import Agent
from acp.agent.connection import AgentSideConnection
from acp.meta import AGENT_METHODS
from acp.router import MessageRouter
from acp.schema import DeleteSessionRequest
from acp.utils import normalize_result

from claude_sidecar.cli.transport import prepare_spawning
from claude_sidecar.frontends.acp.agent import SidecarAgent
from claude_sidecar.frontends.acp.rpc import StdioTransport
from claude_sidecar.runtime import diagnostics, heap
from claude_sidecar.runtime.stdout import FrameWriter, claim_stdout

log = logging.getLogger(__name__)

# What one message from the client may hold (images come base64 in a prompt).
_LINE_LIMIT = 64 * 1024 * 1024


async def _serve(agent: SidecarAgent, rpc_out: BinaryIO) -> None:
    heap.settle_after_imports()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    gone = asyncio.Event()

    def lose_client(error: OSError | ValueError) -> None:
        log.error("the client's stream is gone (%s); shutting down", error)
        gone.set()

    # `kill -USR1 <pid>` logs what the agent holds, as the claude/* daemon does.
    loop.add_signal_handler(
        signal.SIGUSR1, lambda: diagnostics.log_snapshot(agent.hub.channel_count)
    )
    frames = FrameWriter(rpc_out, lose_client)
    transport = agent.services.transport = StdioTransport(reader, frames)
    transport.on_opened = agent.opened
    # Checked now (a few ms) rather than on the first session's way to its first answer.
    prepare_spawning()
    serving = asyncio.ensure_future(_run(agent))
    lost = asyncio.ensure_future(gone.wait())
    try:
        await asyncio.wait({serving, lost}, return_when=asyncio.FIRST_COMPLETED)
        if serving.done() and not serving.cancelled() and serving.exception() is None:
            log.info("client closed stdin")
    finally:
        serving.cancel()
        lost.cancel()
        await agent.close(grace=2.0)
        frames.close()


async def _run(agent: SidecarAgent) -> None:
    """Serve the client (``acp.run_agent``, with what SDK 0.12.1 leaves out)."""
    # The SDK routes session/resume, session/close and session/fork only with its
    # unstable switch (its schema, 1.19.0, has resume and close stable).
    conn = AgentSideConnection(
        cast(Agent, agent), agent.services.transport, listening=False, use_unstable_protocol=True
    )
    _route_delete(conn, agent)
    try:
        await conn.listen()
    finally:
        await asyncio.shield(conn.close())


def _route_delete(conn: AgentSideConnection, agent: SidecarAgent) -> None:
    """Route ``session/delete``: SDK 0.12.1 has its types (``DeleteSessionRequest``, the
    ``sessionCapabilities.delete`` capability) but no route. Its router is reached
    through the connection's private ``_conn._handler``; an SDK that moves it fails the
    agent's start (and the tests), not a client's request."""
    router = conn._conn._handler
    if not isinstance(router, MessageRouter):
        raise RuntimeError(f"the ACP SDK's router is not where SDK 0.12.1 has it: {router!r}")
    router.route_request(
        AGENT_METHODS["session_delete"],
        DeleteSessionRequest,
        agent,
        "delete_session",
        adapt_result=normalize_result,
    )


def serve_acp(
    *,
    cli_path: str | None = None,
    env: Mapping[str, str] | None = None,
    warm_pool: int = 1,
    warm_pool_cwd: str | None = None,
    allow_bypass: bool = False,
) -> int:
    """Run the ACP agent on stdin/stdout until the client closes stdin.

    ``warm_pool_cwd``: where the first spare CLI starts (default: the working directory,
    where editors start their agents: the project).
    """
    rpc_out = claim_stdout()
    if warm_pool_cwd is None:
        cwd = os.getcwd()
        warm_pool_cwd = None if cwd == os.path.abspath(os.sep) else cwd
    agent = SidecarAgent(
        cli_path=cli_path,
        env=env,
        warm_pool=warm_pool,
        warm_pool_cwd=warm_pool_cwd,
        allow_bypass=allow_bypass,
    )
    try:
        asyncio.run(_serve(agent, rpc_out))
    except BrokenPipeError:
        log.error("the client's end of stdout is gone; shutting down")
        return 1
    finally:
        agent.kill_now()
    return 0
