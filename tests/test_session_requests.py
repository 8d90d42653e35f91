"""claude/listSessions and claude/getHistory serve the CLI's stored sessions to the client."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar
from tests.test_permissions import next_request, respond, write_twice
from tests.test_resume_fork import THREE_EXCHANGES, texts_of


async def test_list_sessions_pages_newest_first(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    older, _ = await sidecar.chat(str(workspace), "one")
    newer, _ = await sidecar.chat(str(workspace), "two", "three")

    page = await sidecar.request("claude/listSessions", {"cwd": str(workspace), "limit": 1})
    rest = await sidecar.request(
        "claude/listSessions", {"cwd": str(workspace), "limit": 1, "cursor": page["nextCursor"]}
    )

    assert [s["sessionId"] for s in page["sessions"]] == [newer]
    assert page["sessions"][0]["firstPrompt"] == "two"
    assert page["sessions"][0]["messageCount"] == 4
    assert [s["sessionId"] for s in rest["sessions"]] == [older]
    assert rest["nextCursor"] is None


async def test_get_history_returns_prompts_with_their_message_ids_and_the_answers(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    session, ids = await sidecar.chat(str(workspace), "one", "two")

    history = await sidecar.request(
        "claude/getHistory", {"sessionId": session, "cwd": str(workspace)}
    )

    shown = [(m["kind"], m.get("text")) for m in history["messages"]]
    assert shown == [
        ("userPrompt", "one"),
        ("assistantText", "answer one"),
        ("userPrompt", "two"),
        ("assistantText", "answer two"),
    ]
    prompts = [m["uuid"] for m in history["messages"] if m["kind"] == "userPrompt"]
    assert prompts == ids
    assert history["warnings"] == []


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_unknown_sessions_and_bad_cursors_get_documented_errors(
    sidecar: Sidecar, workspace: Path
) -> None:
    missing = await sidecar.error(
        "claude/getHistory",
        {"sessionId": "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b", "cwd": str(workspace)},
    )
    cursor = await sidecar.error(
        "claude/listSessions", {"cwd": str(workspace), "cursor": "not a cursor"}
    )
    traversal = await sidecar.error(
        "claude/getHistory", {"sessionId": "../../etc/passwd", "cwd": str(workspace)}
    )

    assert missing.code == -32009 and missing.data["name"] == "sessionNotFound"
    assert cursor.code == -32602 and cursor.data["field"] == "cursor"
    assert traversal.code == -32602 and traversal.data["field"] == "sessionId"


async def test_fork_of_a_stored_session_at_a_message_keeps_the_history_up_to_it(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    session, ids = await sidecar.chat(str(workspace), "one", "two", "three")

    fork = await sidecar.open_channel(
        "claude/forkSession", sessionId=session, cwd=str(workspace), atMessageId=ids[0]
    )
    await sidecar.turn(fork["channelId"], "after the fork")

    assert texts_of(model.main_requests[-1]) == ["one", "answer one", "after the fork"]


async def _stored_chat(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path, home: Path
) -> tuple[str, list[str], Path]:
    """A chat of two exchanges: its session id, its prompts' ids and its session file."""
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    session, ids = await sidecar.chat(str(workspace), "one", "two")
    (stored,) = home.glob(f".claude/projects/*/{session}.jsonl")
    return session, ids, stored


async def test_a_truncated_session_file_yields_what_can_be_read_and_a_warning(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path, home: Path
) -> None:
    session, ids, stored = await _stored_chat(sidecar, model, workspace, home)
    data = stored.read_bytes()
    stored.write_bytes(data[: len(data) - len(data.splitlines()[-1]) // 2 - 1])

    history = await sidecar.request(
        "claude/getHistory", {"sessionId": session, "cwd": str(workspace)}
    )
    listed = await sidecar.request("claude/listSessions", {"cwd": str(workspace)})

    assert history["messages"][0] == {
        **history["messages"][0],
        "kind": "userPrompt",
        "text": "one",
        "uuid": ids[0],
    }
    assert history["warnings"], "the damage is reported"
    assert [s["sessionId"] for s in listed["sessions"]] == [session]


async def test_a_chat_resumed_from_a_damaged_session_file_starts_with_a_notice_of_what_was_not_read(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path, home: Path
) -> None:
    session, _, stored = await _stored_chat(sidecar, model, workspace, home)
    lines = stored.read_bytes().splitlines(keepends=True)
    stored.write_bytes(b"".join([*lines[:2], b"{not json\n", *lines[2:]]))
    history = await sidecar.request(
        "claude/getHistory", {"sessionId": session, "cwd": str(workspace)}
    )

    resumed = await sidecar.open_channel(cwd=str(workspace), resume=session)
    transcript = await sidecar.request("claude/getTranscript", {"channelId": resumed["channelId"]})

    first, *rest = transcript["entries"]
    assert (first["kind"], first["subtype"], first["level"]) == (
        "notice",
        "unreadableHistory",
        "warn",
    )
    assert "line 3: not valid JSON" in first["text"]
    assert [w for w in history["warnings"] if w in first["text"]] == history["warnings"]
    assert [e["kind"] for e in rest][:2] == ["prompt", "text"], "the rest as it was stored"


@pytest.mark.pinned_cli(
    "CLI 2.1.233 does not store the user's permission decision "
    "(permissionDecision) in the session file; its history has no "
    "`permission` on tool results"
)
async def test_history_says_how_the_user_answered_each_permission_request(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(write_twice("kept.txt", "refused.txt")))
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write two files")
    first = await next_request(sidecar, channel)
    await respond(sidecar, channel, first, "allow")
    second = await next_request(sidecar, channel, after=sidecar.notes.index(first) + 1)
    await respond(sidecar, channel, second, "deny")
    await sidecar.wait_for_result(channel)
    session = sidecar.of(channel, "claude/status")[-1].params["sessionId"]

    history = await sidecar.request(
        "claude/getHistory", {"sessionId": session, "cwd": str(workspace)}
    )

    results = [m for m in history["messages"] if m["kind"] == "toolResult"]
    assert [m.get("permission") for m in results] == ["allowed", "denied"]
