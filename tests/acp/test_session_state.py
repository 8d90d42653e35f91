"""What an ACP session says of itself beside the conversation: the CLI's slash commands,
the context meter and cost, the title; against the real CLI and the stand-in model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.client import RecordingClient, acp_agent, text
from tests.acp.conftest import Acp


def wire_order(client: RecordingClient, session_id: str) -> list[str]:
    """What the client got for ``session_id``, in order: each update's kind, and
    ``answer`` for each answer to a request (answers name no session: all are listed)."""
    order: list[str] = []
    for message in client.incoming:
        params = message.get("params") or {}
        if message.get("method") == "session/update" and params["sessionId"] == session_id:
            order.append(params["update"]["sessionUpdate"])
        elif "method" not in message and "result" in message:
            order.append("answer")
    return order


def commands(update: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in update["availableCommands"]}


async def test_every_opened_session_hears_the_clis_slash_commands_after_its_answer(
    daemon_env: dict[str, str], acp: Acp, workspace: Path
) -> None:
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])
    session = opened.session_id
    (listed,) = await acp.client.wait(lambda: acp.client.of(session, "available_commands_update"))
    await acp.conn.prompt(session_id=session, prompt=[text("hello")])
    await acp.conn.load_session(cwd=str(workspace), session_id=session, mcp_servers=[])
    await acp.client.wait(lambda: len(acp.client.of(session, "available_commands_update")) == 2)
    fork = await acp.conn.fork_session(session_id=session, cwd=str(workspace), mcp_servers=[])
    forked = await acp.client.wait(
        lambda: acp.client.of(fork.session_id, "available_commands_update")
    )
    async with acp_agent(daemon_env) as (conn, _, fresh):
        await conn.resume_session(cwd=str(workspace), session_id=session)
        resumed = await fresh.wait(lambda: fresh.of(session, "available_commands_update"))

    by_name = commands(listed)
    assert {"compact", "clear", "context"} <= set(by_name), "the CLI's built-in commands"
    assert all(not name.startswith("/") for name in by_name)
    assert any("input" in c and c["input"]["hint"] for c in by_name.values()), "input hints"
    assert all(isinstance(c["description"], str) for c in by_name.values())
    assert wire_order(acp.client, session)[:3] == ["answer", "answer", "available_commands_update"]
    # The load's answer, then the commands again, then the fork's answer.
    assert wire_order(acp.client, session)[-3:] == ["answer", "available_commands_update", "answer"]
    assert commands(forked[0]) == by_name and commands(resumed[0]) == by_name
    assert wire_order(fresh, session) == ["answer", "answer", "available_commands_update"]
