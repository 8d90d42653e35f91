"""A stored session read by a process of its own (claude_sidecar.sessions.reader): the
child's documents are what the daemon would make itself, on the real session files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import msgspec
import pytest
from claude_sidecar.conversation.live import carried_over
from claude_sidecar.protocol.errors import SessionNotFound
from claude_sidecar.sessions import reader
from claude_sidecar.sessions.reader import encoded, read_history_entries, read_resumed
from claude_sidecar.sessions.store import SessionStore

from tests.unit.test_sessions import CWD, OTHER_ID, PARALLEL, install

SESSIONS = ["c8605bc9-22b5-4cd5-a2d6-cf4fd7a0de7b", PARALLEL]


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / "state")}


@pytest.fixture(params=["child", "here"])
def where(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Read by the child process (whatever the file's size), or (no Python to run it) by
    this one."""
    monkeypatch.setattr(reader, "READ_HERE_BELOW", 0)
    if request.param == "here":
        monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    return str(request.param)


@pytest.mark.parametrize("session_id", SESSIONS)
async def test_a_resumed_session_is_what_the_channel_would_keep_of_its_history(
    tmp_path: Path, where: str, session_id: str
) -> None:
    install(tmp_path, session_id)
    env = environment(tmp_path)
    store = SessionStore(env)

    resumed = await read_resumed(store, session_id, CWD, env)

    expected = carried_over(await store.stored(session_id, CWD))
    kept = encoded(resumed.entries)
    assert kept.ids == expected.ids and kept.read(0, len(kept)) == expected.read(0, len(kept))
    assert (resumed.turns, resumed.cost_usd, resumed.context) == (0, 0.0, None)


@pytest.mark.parametrize("session_id", SESSIONS)
async def test_history_entries_are_get_historys(
    tmp_path: Path, where: str, session_id: str
) -> None:
    install(tmp_path, session_id)
    env = environment(tmp_path)
    store = SessionStore(env)

    read = await read_history_entries(store, session_id, CWD, env)

    history = await store.history(session_id, CWD)
    assert [msgspec.json.decode(bytes(e)) for e in read.entries] == msgspec.to_builtins(
        history.entries
    )
    assert read.warnings == history.warnings


async def test_no_such_session_is_nothing_to_resume_and_not_found_for_history(
    tmp_path: Path, where: str
) -> None:
    env = environment(tmp_path)
    store = SessionStore(env)

    resumed = await read_resumed(store, OTHER_ID, CWD, env)

    assert resumed.entries == []
    with pytest.raises(SessionNotFound):
        await read_history_entries(store, OTHER_ID, CWD, env)
