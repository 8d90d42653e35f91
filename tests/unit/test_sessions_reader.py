"""A stored session as the daemon keeps it (claude_sidecar.sessions.reader): read from the
end as far as the pages asked for reach, what a channel would keep of its history."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import msgspec
import pytest
from claude_sidecar.conversation.live import carried_over
from claude_sidecar.protocol.api import TurnEntry
from claude_sidecar.protocol.errors import SessionNotFound
from claude_sidecar.sessions import reader
from claude_sidecar.sessions.reader import history_page, read_resumed, read_whole_history
from claude_sidecar.sessions.store import SessionStore

from tests.unit.test_sessions import BRANCHED, COMPACTED, CWD, OTHER_ID, PARALLEL, install

SESSIONS = ["c8605bc9-22b5-4cd5-a2d6-cf4fd7a0de7b", PARALLEL]


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / "state")}


@pytest.mark.parametrize("session_id", SESSIONS)
async def test_a_resumed_session_is_what_the_channel_would_keep_of_its_history(
    tmp_path: Path, session_id: str
) -> None:
    install(tmp_path, session_id)
    env = environment(tmp_path)
    store = SessionStore(env)

    resumed = await read_resumed(store, session_id, CWD, env)

    expected = carried_over(await store.stored(session_id, CWD))
    assert resumed.before.read(0, 10_000) == expected.read(0, 10_000)
    assert (resumed.turns, resumed.cost_usd, resumed.context) == (0, 0.0, None)


@pytest.fixture(params=["child", "here"])
def where(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The recorded turns counted by a process of their own (whatever the file's size), or
    (no Python to run it) by this one."""
    monkeypatch.setattr(reader, "READ_APART_FROM", 0)
    if request.param == "here":
        monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    return str(request.param)


async def test_a_resumed_session_counts_the_turns_recorded_for_its_prompts(
    tmp_path: Path, where: str
) -> None:
    session_id = "c8605bc9-22b5-4cd5-a2d6-cf4fd7a0de7b"
    install(tmp_path, session_id)
    env = environment(tmp_path)
    store = SessionStore(env)
    for i, prompt in enumerate(["f73b1b78-ddae-4611-9d5e-3f2ffe1f7e45", "not-in-the-file"]):
        footer = TurnEntry(
            id=f"turn:{i}", outcome="success", duration_ms=5, permission_wait_ms=0, cost_usd=0.5
        )
        store.footers.record(session_id, [prompt], footer)

    resumed = await read_resumed(store, session_id, CWD, env)

    assert (resumed.turns, resumed.cost_usd) == (1, 0.5)
    assert "turn:0" in [e.id for e in resumed.before.read(0, 100)]


@pytest.mark.parametrize("session_id", SESSIONS)
async def test_history_pages_are_get_historys_entries(tmp_path: Path, session_id: str) -> None:
    install(tmp_path, session_id)
    store = SessionStore(environment(tmp_path))

    whole = await history_page(store, session_id, CWD, None, None)

    history = await store.history(session_id, CWD)
    assert whole.entries == history.entries
    assert whole.warnings == history.warnings


async def test_no_such_session_is_nothing_to_resume_and_not_found_for_history(
    tmp_path: Path,
) -> None:
    store = SessionStore(environment(tmp_path))

    resumed = await read_resumed(store, OTHER_ID, CWD, None)

    assert len(resumed.before) == 0 and resumed.before.complete
    with pytest.raises(SessionNotFound):
        await history_page(store, OTHER_ID, CWD, None, 5)


@pytest.mark.parametrize("session_id", [*SESSIONS, COMPACTED, BRANCHED])
async def test_the_whole_history_read_from_the_end_is_the_history_read_whole(
    tmp_path: Path, session_id: str
) -> None:
    install(tmp_path, session_id)
    store = SessionStore(environment(tmp_path))

    whole = await read_whole_history(store, session_id, CWD, None)

    history = await store.history(session_id, CWD)
    assert msgspec.json.decode(whole.joined()) == msgspec.to_builtins(history)


async def test_a_history_cursor_finds_its_entry_again_after_the_session_grew(
    tmp_path: Path,
) -> None:
    session_id = "c8605bc9-22b5-4cd5-a2d6-cf4fd7a0de7b"
    path = install(tmp_path, session_id)
    store = SessionStore(environment(tmp_path))
    last = await history_page(store, session_id, CWD, None, 2)
    older = await history_page(store, session_id, CWD, last.next_cursor, 2)
    prompt = {
        "type": "user",
        "uuid": "7d0e8f6a-3b1c-4d2e-9f5a-6b7c8d9e0f1a",
        "parentUuid": "9d928231-e91e-4375-9051-8b60548a31eb",
        "message": {"role": "user", "content": "one more"},
    }
    with path.open("a") as f:
        f.write(msgspec.json.encode(prompt).decode() + "\n")

    again = await history_page(store, session_id, CWD, last.next_cursor, 2)
    grown = await history_page(store, session_id, CWD, None, 1)

    assert again.entries == older.entries and again.next_cursor is not None
    assert [e.id for e in grown.entries] == [prompt["uuid"]]
