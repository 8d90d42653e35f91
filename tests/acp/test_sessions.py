"""ACP sessions beyond session/new: load (with its replay), resume, list, close, delete,
fork, against the real CLI and the stand-in model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.acp.client import RecordingClient, acp_agent, text
from tests.acp.conftest import Acp
from tests.harness import child_pids, json_object, wait_until_dead

CONVERSATION = {
    # Thinking and text, a Write that asks (allowed), text after it; "hello" answers.
    "rules": [
        {
            "match": "(?i)write",
            "steps": [
                [
                    {"thinking": "A file is wanted."},
                    {"text": "Writing it now."},
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{cwd}/note.txt", "content": "new\n"},
                        }
                    },
                ],
                [{"text": "Finished."}],
            ],
        }
    ],
    "default": [[{"text": "Hello!"}]],
}
CHUNKS = ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk")
# What a session says of itself after its answers and turns, not part of its conversation.
SESSION_STATE = ("available_commands_update", "usage_update", "session_info_update")


def updates_of(
    client: RecordingClient, session_id: str, until_answer: int | None = None
) -> list[dict[str, Any]]:
    """The ``session/update``s of one session as they came on the wire (before the
    answer to the request with JSON-RPC id ``until_answer``, when given)."""
    found: list[dict[str, Any]] = []
    for message in client.incoming:
        method, params = message.get("method"), message.get("params") or {}
        if method is None and until_answer is not None and message.get("id") == until_answer:
            break
        if method == "session/update" and params["sessionId"] == session_id:
            found.append(params["update"])
    return found


def last_request_id(client: RecordingClient) -> int:
    """The JSON-RPC id of the newest answer the client got."""
    return max(int(m["id"]) for m in client.incoming if "id" in m and "method" not in m)


def shown(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation a client shows from ``updates``: consecutive chunks of one kind
    joined, each tool call with its later updates applied, in order of appearance (what
    the session says of itself left out)."""
    items: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}
    for update in updates:
        kind = update["sessionUpdate"]
        if kind in SESSION_STATE:
            continue
        if kind in CHUNKS:
            if items and items[-1]["sessionUpdate"] == kind:
                items[-1]["text"] += update["content"]["text"]
            else:
                items.append({"sessionUpdate": kind, "text": update["content"]["text"]})
        elif kind == "tool_call_update":
            tools[update["toolCallId"]].update(
                {k: v for k, v in update.items() if k != "sessionUpdate"}
            )
        else:
            items.append(dict(update))
            if kind == "tool_call":
                tools[update["toolCallId"]] = items[-1]
    return items


async def new_session(acp: Acp, workspace: Path) -> str:
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])
    return str(opened.session_id)


async def test_load_in_a_fresh_agent_replays_what_the_live_updates_showed_then_goes_on(
    daemon_env: dict[str, str], model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(CONVERSATION))
    async with acp_agent(daemon_env) as (conn, _, live):
        session = str((await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id)
        prompting = asyncio.ensure_future(conn.prompt(session_id=session, prompt=[text("write")]))
        (ask,) = await live.wait(lambda: live.asks)
        ask.answer("allow")
        wrote = await prompting
        assert wrote.stop_reason == "end_turn"
    assert (workspace / "note.txt").read_text() == "new\n"

    async with acp_agent(daemon_env) as (conn, process, loaded):
        answer = await conn.load_session(cwd=str(workspace), session_id=session, mcp_servers=[])
        replay = updates_of(loaded, session, until_answer=last_request_id(loaded))
        after = await conn.prompt(session_id=session, prompt=[text("hello")])
        clis = child_pids(process.pid)

    # Documented differences: the replay says the client's own prompt (live, the client
    # had it), and sends each entry whole (live: streamed chunks, then tool call updates).
    said = [u for u in shown(replay) if u["sessionUpdate"] != "user_message_chunk"]
    assert [u["text"] for u in shown(replay) if u["sessionUpdate"] == "user_message_chunk"] == [
        "write"
    ]
    assert said == shown(updates_of(live, session))
    assert [u["sessionUpdate"] for u in said] == [
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "agent_message_chunk",
    ]
    assert said[2]["status"] == "completed" and said[2]["kind"] == "edit"
    (prompt,) = [u for u in replay if u["sessionUpdate"] == "user_message_chunk"]
    assert prompt["messageId"] == wrote.field_meta["claudeSidecar"]["messageId"]
    assert len([u for u in replay if u["sessionUpdate"] == "tool_call_update"]) == 0
    assert answer.modes.current_mode_id == "default"
    assert answer.field_meta["claudeSidecar"]["pid"] in clis
    assert after.stop_reason == "end_turn"
    assert loaded.text(session).endswith("Hello!")


async def test_repeated_loads_of_one_session_never_leave_two_clis_on_it(
    daemon_env: dict[str, str], acp: Acp, workspace: Path
) -> None:
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])
    session, live_pid = opened.session_id, opened.field_meta["claudeSidecar"]["pid"]
    await acp.conn.prompt(session_id=session, prompt=[text("hello")])

    again = await asyncio.gather(
        *(
            acp.conn.load_session(cwd=str(workspace), session_id=session, mcp_servers=[])
            for _ in range(2)
        )
    )

    assert [a.field_meta["claudeSidecar"]["pid"] for a in again] == [live_pid, live_pid]
    assert child_pids(acp.process.pid) == {live_pid}
    replayed = [u["content"]["text"] for u in acp.client.of(session, "user_message_chunk")]
    assert replayed == ["hello", "hello"], "each load replays the conversation"
    await acp.client.wait(lambda: acp.client.text(session).count("stand-in model!") == 3)

    # A fresh agent: two loads at once of a stored session start one CLI.
    async with acp_agent(daemon_env) as (conn, process, _client):
        both = await asyncio.gather(
            *(
                conn.load_session(cwd=str(workspace), session_id=session, mcp_servers=[])
                for _ in range(2)
            )
        )
        pids = {a.field_meta["claudeSidecar"]["pid"] for a in both}
        clis = child_pids(process.pid)
        answer = await conn.prompt(session_id=session, prompt=[text("hello")])

    assert len(pids) == 1 and clis == pids
    assert answer.stop_reason == "end_turn"


async def test_resume_sends_no_replay_and_the_model_sees_the_earlier_turns(
    daemon_env: dict[str, str], model: ScriptedModel, workspace: Path
) -> None:
    async with acp_agent(daemon_env) as (conn, _, _client):
        session = str((await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id)
        await conn.prompt(session_id=session, prompt=[text("hello there")])

    async with acp_agent(daemon_env) as (conn, _, client):
        resumed = await conn.resume_session(cwd=str(workspace), session_id=session)
        before = updates_of(client, session, until_answer=last_request_id(client))
        answer = await conn.prompt(session_id=session, prompt=[text("hello again")])

    assert before == [], "resume replays nothing"
    assert resumed.modes.current_mode_id == "default"
    assert {o.id for o in resumed.config_options or []} >= {"model"}
    assert answer.stop_reason == "end_turn"
    sent = str(model.main_requests[-1]["messages"])
    assert "hello there" in sent and "hello again" in sent


async def test_list_pages_the_stored_sessions_newest_first_with_their_titles(
    acp: Acp, workspace: Path
) -> None:
    sessions = []
    for words in ("hello one", "hello two", "hello three"):
        sessions.append(await new_session(acp, workspace))
        await acp.conn.prompt(session_id=sessions[-1], prompt=[text(words)])

    first = await acp.conn.list_sessions(cwd=str(workspace), claudeSidecar={"limit": 2})
    rest = await acp.conn.list_sessions(cwd=str(workspace), cursor=first.next_cursor)

    listed = [*first.sessions, *rest.sessions]
    assert [s.session_id for s in listed] == sessions[::-1]
    assert [s.title for s in listed] == ["hello three", "hello two", "hello one"]
    assert all(s.cwd == str(workspace) and s.updated_at for s in listed)
    assert first.next_cursor and rest.next_cursor is None
    assert listed[0].field_meta["claudeSidecar"]["messageCount"] == 2


async def test_list_without_a_cwd_lists_the_sessions_of_every_directory(
    acp: Acp, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    here = await new_session(acp, workspace)
    await acp.conn.prompt(session_id=here, prompt=[text("hello here")])
    there = await new_session(acp, other)
    await acp.conn.prompt(session_id=there, prompt=[text("hello there")])

    listed = await acp.conn.list_sessions()

    assert [(s.session_id, s.cwd, s.title) for s in listed.sessions] == [
        (there, str(other), "hello there"),
        (here, str(workspace), "hello here"),
    ]


async def test_close_ends_the_running_prompt_cancelled_and_the_cli(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)long",
                        "steps": [
                            [{"text": "Half"}, {"wait_for_prompt": "^never sent$", "timeout": 90}]
                        ],
                    }
                ]
            }
        )
    )
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])
    session, pid = opened.session_id, opened.field_meta["claudeSidecar"]["pid"]
    prompting = asyncio.ensure_future(
        acp.conn.prompt(session_id=session, prompt=[text("a long one")])
    )
    await acp.client.wait(lambda: acp.client.text(session) == "Half")

    await acp.conn.close_session(session_id=session)
    answer = await asyncio.wait_for(prompting, 30)

    assert answer.stop_reason == "cancelled"
    assert await wait_until_dead([pid]) == []
    with pytest.raises(RequestError) as raised:
        await acp.conn.prompt(session_id=session, prompt=[text("hello")])
    assert json_object(raised.value.data)["field"] == "sessionId"


async def test_delete_removes_a_closed_session_and_refuses_an_open_one(
    acp: Acp, workspace: Path
) -> None:
    session = await new_session(acp, workspace)
    await acp.conn.prompt(session_id=session, prompt=[text("hello")])
    delete = acp.conn._conn.send_request  # SDK 0.12.1's client has no delete_session

    with pytest.raises(RequestError) as refused:
        await delete("session/delete", {"sessionId": session})
    await acp.conn.close_session(session_id=session)
    await delete("session/delete", {"sessionId": session})
    listed = await acp.conn.list_sessions(cwd=str(workspace))
    with pytest.raises(RequestError) as gone:
        await delete("session/delete", {"sessionId": session})

    assert json_object(refused.value.data)["field"] == "sessionId"
    assert "session/close" in json_object(refused.value.data)["fix"]
    assert listed.sessions == []
    assert json_object(gone.value.data)["field"] == "sessionId"


async def test_fork_continues_a_copy_in_a_new_session_that_starts_in_the_mode_that_asks(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    session = await new_session(acp, workspace)
    await acp.conn.set_session_mode(session_id=session, mode_id="acceptEdits")
    await acp.conn.prompt(session_id=session, prompt=[text("hello source")])

    fork = await acp.conn.fork_session(session_id=session, cwd=str(workspace), mcp_servers=[])
    answer = await acp.conn.prompt(session_id=fork.session_id, prompt=[text("hello fork")])

    assert fork.session_id != session
    assert fork.modes.current_mode_id == "default"
    assert answer.stop_reason == "end_turn"
    sent = str(model.main_requests[-1]["messages"])
    assert "hello source" in sent and "hello fork" in sent
    assert len(child_pids(acp.process.pid)) == 2


async def test_session_requests_with_bad_params_name_the_field(acp: Acp, workspace: Path) -> None:
    errors: list[RequestError] = []
    for call in (
        acp.conn.load_session(cwd=str(workspace), session_id="not-a-uuid", mcp_servers=[]),
        acp.conn.load_session(
            cwd=str(workspace), session_id="00000000-0000-4000-8000-000000000000", mcp_servers=[]
        ),
        acp.conn.resume_session(cwd="relative", session_id="00000000-0000-4000-8000-000000000000"),
        acp.conn.list_sessions(cwd="relative"),
        acp.conn.list_sessions(cwd=str(workspace), cursor="garbled"),
        acp.conn.close_session(session_id="no-such-session"),
    ):
        with pytest.raises(RequestError) as raised:
            await call
        errors.append(raised.value)

    data = [json_object(e.data) for e in errors]
    assert [d["field"] for d in data] == [
        "sessionId",
        "sessionId",
        "cwd",
        "cwd",
        "cursor",
        "sessionId",
    ]
    assert all(e.code == -32602 and json_object(e.data)["fix"] for e in errors)
    assert child_pids(acp.process.pid) == set(), "no CLI was started for a bad request"
