"""What an ACP session says of itself beside the conversation: the CLI's slash commands,
the context meter and cost, the title; against the real CLI and the stand-in model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.client import RecordingClient, acp_agent, text
from tests.acp.conftest import Acp


def wire_order(
    client: RecordingClient, session_id: str, kinds: tuple[str, ...] | None = None
) -> list[str]:
    """What the client got for ``session_id``, in order: each update's kind (of
    ``kinds``, when given), and ``answer`` for each answer to a request (answers name no
    session: all are listed)."""
    order: list[str] = []
    for message in client.incoming:
        params = message.get("params") or {}
        if message.get("method") == "session/update" and params["sessionId"] == session_id:
            kind = params["update"]["sessionUpdate"]
            if kinds is None or kind in kinds:
                order.append(kind)
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
    order = wire_order(acp.client, session, ("available_commands_update",))
    assert order[:3] == ["answer", "answer", "available_commands_update"]
    # The load's answer, then the commands again, then the fork's answer.
    assert order[-3:] == ["answer", "available_commands_update", "answer"]
    assert commands(forked[0]) == by_name and commands(resumed[0]) == by_name
    assert wire_order(fresh, session, ("available_commands_update",)) == [
        "answer",
        "answer",
        "available_commands_update",
    ]


async def test_each_turn_ends_with_the_context_meter_and_cost_and_the_first_prompt_titles(
    acp: Acp, workspace: Path
) -> None:
    session = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    long = "hello " + "and a long first prompt " * 6
    first = await acp.conn.prompt(session_id=session, prompt=[text(long)])
    (meter,) = acp.client.of(session, "usage_update")
    second = await acp.conn.prompt(session_id=session, prompt=[text("hello again")])
    meters = acp.client.of(session, "usage_update")
    infos = acp.client.of(session, "session_info_update")

    assert 0 < meter["used"] < meter["size"] == meters[1]["size"]
    assert meters[1]["used"] > meter["used"], "the second exchange takes room"
    assert meter["cost"] == {
        "amount": first.field_meta["claudeSidecar"]["totalCostUsd"],
        "currency": "USD",
    }
    assert meters[1]["cost"]["amount"] == second.field_meta["claudeSidecar"]["totalCostUsd"]
    assert meters[1]["cost"]["amount"] > meter["cost"]["amount"] > 0
    titled = [i for i in infos if "title" in i]
    assert [i["title"] for i in titled] == [" ".join(long.split())[:79].rstrip() + "…"]
    assert [sorted(i) for i in infos] == [
        ["sessionUpdate", "title"],
        ["sessionUpdate", "updatedAt"],
        ["sessionUpdate", "updatedAt"],
    ]
    assert infos[1]["updatedAt"] <= infos[2]["updatedAt"]
    # The initialize and session/new answers, the title, then each turn's meter and
    # activity before its prompt's answer.
    assert wire_order(acp.client, session, ("usage_update", "session_info_update")) == [
        "answer",
        "answer",
        "session_info_update",
        *["usage_update", "session_info_update", "answer"] * 2,
    ]


async def test_a_resumed_session_hears_the_meter_and_cost_its_last_turn_left(
    daemon_env: dict[str, str], acp: Acp, workspace: Path
) -> None:
    session = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    await acp.conn.prompt(session_id=session, prompt=[text("hello")])
    await acp.conn.prompt(session_id=session, prompt=[text("hello again")])
    live = acp.client.of(session, "usage_update")[-1]
    async with acp_agent(daemon_env) as (conn, _, fresh):
        await conn.resume_session(cwd=str(workspace), session_id=session)
        (resumed,) = await fresh.wait(lambda: fresh.of(session, "usage_update"))

    assert resumed == live
    assert wire_order(fresh, session, ("usage_update",)) == ["answer", "answer", "usage_update"]


async def test_a_loaded_session_is_titled_as_session_list_shows_it(
    daemon_env: dict[str, str], acp: Acp, workspace: Path
) -> None:
    session = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    await acp.conn.prompt(session_id=session, prompt=[text("hello stored session")])
    await acp.conn.close_session(session_id=session)
    (listed,) = (await acp.conn.list_sessions(cwd=str(workspace))).sessions

    async with acp_agent(daemon_env) as (conn, _, fresh):
        await conn.load_session(cwd=str(workspace), session_id=session, mcp_servers=[])
        (info,) = await fresh.wait(lambda: fresh.of(session, "session_info_update"))

    assert info == {
        "sessionUpdate": "session_info_update",
        "title": listed.title,
        "updatedAt": listed.updated_at,
    }
    assert listed.title == "hello stored session"
