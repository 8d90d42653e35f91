"""An ACP client for the tests: the SDK's client side, recording what the agent sends.

``AcpAgent`` starts ``python -m claude_sidecar acp`` with the test's environment through
the SDK's ``spawn_agent_process`` and keeps every ``session/update``, every permission
request (answered by the test, through ``answer``) and every message the agent wrote
(``incoming``: the SDK's stream observer, which also sees ``$/cancel_request``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.interfaces import Agent, Client
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.env import daemon_argv


@dataclass
class Ask:
    """One ``session/request_permission`` as the client got it; ``answer`` replies."""

    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    reply: asyncio.Future[RequestPermissionResponse] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def answer(self, option_id: str | None) -> None:
        """Choose ``option_id`` (None: the ``cancelled`` outcome)."""
        outcome: AllowedOutcome | DeniedOutcome = (
            DeniedOutcome(outcome="cancelled")
            if option_id is None
            else AllowedOutcome(outcome="selected", option_id=option_id)
        )
        self.reply.set_result(RequestPermissionResponse(outcome=outcome))

    @property
    def option_ids(self) -> list[str]:
        return [o.option_id for o in self.options]


class RecordingClient:
    """The ``acp.Client`` of the tests: keeps updates and asks, wakes waiters."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.asks: list[Ask] = []
        self.incoming: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update.model_dump(by_alias=True, exclude_none=True)))
        self._changed.set()

    async def request_permission(
        self,
        options: list[PermissionOption],
        session_id: str,
        tool_call: ToolCallUpdate,
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        ask = Ask(session_id, tool_call, options)
        self.asks.append(ask)
        self._changed.set()
        return await ask.reply

    def observe(self, event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            self.incoming.append(event.message)
            self._changed.set()

    def on_connect(self, conn: Agent) -> None:
        pass

    async def wait(self, ready: Callable[[], Any], timeout: float = 60) -> Any:
        """Wait until ``ready()`` returns something truthy and return it."""
        deadline = time.monotonic() + timeout
        while not (found := ready()):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"not within {timeout} s; last updates: {self.updates[-5:]}"
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)
        return found

    def of(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The updates of one session (of one ``sessionUpdate`` kind)."""
        return [
            u
            for s, u in self.updates
            if s == session_id and (kind is None or u["sessionUpdate"] == kind)
        ]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"]["text"] for u in self.of(session_id, kind))

    def tool_calls(self, session_id: str) -> dict[str, dict[str, Any]]:
        """Each tool call as the client sees it now: its ``tool_call`` with every later
        ``tool_call_update`` applied."""
        calls: dict[str, dict[str, Any]] = {}
        for update in self.of(session_id):
            if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                calls.setdefault(update["toolCallId"], {}).update(update)
        return calls


@contextlib.asynccontextmanager
async def acp_agent(
    env: dict[str, str], *args: str, log_file: Path | None = None
) -> AsyncIterator[tuple[Any, asyncio.subprocess.Process, RecordingClient]]:
    """Start ``claude-sidecar acp`` and initialize it; yields the SDK's connection, the
    process and the recording client. On the way out the connection closes (the agent
    sees stdin end) and the process must exit. ``log_file``: where the agent logs (else
    stderr)."""
    client = RecordingClient()
    command, *rest = daemon_argv(
        "--log-level",
        "DEBUG",
        *(("--log-file", str(log_file)) if log_file is not None else ()),
        "acp",
        "--warm-pool",
        "0",
        *args,
    )
    async with spawn_agent_process(
        cast(Client, client),
        command,
        *rest,
        env=env,
        # After stdin ends the agent closes its CLIs (each given 2 s), which under load
        # takes longer than the SDK's default 2 s before it terminates the agent (and then
        # races its exit: ProcessLookupError at teardown). A hang guard, not a wait.
        transport_kwargs={"shutdown_timeout": 30.0},
        observers=[client.observe],
    ) as (conn, process):
        await asyncio.wait_for(
            conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="pytest", version="1"),
            ),
            60,
        )
        yield conn, process, client


def text(value: str) -> Any:
    """A prompt's text block."""
    return text_block(value)
