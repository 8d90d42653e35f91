"""``claude/listSessions`` with ``allowPartial`` over the protocol: a long session never
listed comes from its head and tail at once, the daemon reads it in the background and
says so (``claude/sessionsChanged``), and the next listing is exact."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest
from claude_sidecar.cli.paths import project_dir
from claude_sidecar.scripted import ScriptedModel, load_scenario
from claude_sidecar.sessions import listing
from claude_sidecar.sessions.listing import Budget, list_sessions
from claude_sidecar.sessions.summary_edges import EDGE
from claude_sidecar.sessions.summary_index import SummaryIndex, index_path

from tests.harness import Sidecar, StartSidecar
from tests.repeated_session import write_long_session

DATA = Path(__file__).resolve().parent / "data" / "sessions"
SMALL = "d1f3ce72-7d3c-4abf-89a9-1ecb98ca36a3"  # renamed "My Custom Title", compacted


def long_session(home: Path, workspace: Path) -> str:
    """Store, among ``workspace``'s sessions, a small one and a ~6 MB one (more than one
    listing reads); the long one's id."""
    folder = project_dir(home, str(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / f"{SMALL}.jsonl", folder / f"{SMALL}.jsonl")
    session_id = str(uuid.uuid4())
    write_long_session(folder / f"{session_id}.jsonl", 500, session_id)
    return session_id


@pytest.mark.same_on_every_cli("the daemon reads stored files, no CLI runs")
async def test_a_long_session_is_listed_partial_at_once_then_exact_after_sessions_changed(
    sidecar: Sidecar, home: Path, workspace: Path
) -> None:
    long_id = long_session(home, workspace)
    params = {"cwd": str(workspace), "allowPartial": True}

    first = await sidecar.request("claude/listSessions", params)
    changed = await sidecar.wait_for(lambda n: n.method == "claude/sessionsChanged")
    again = await sidecar.request("claude/listSessions", params)
    whole = await sidecar.request("claude/listSessions", {"cwd": str(workspace)})

    by_id = {s["sessionId"]: s for s in first["sessions"]}
    assert by_id[long_id]["partial"] is True
    assert by_id[long_id]["messageCount"] == 0
    assert "partial" not in by_id[SMALL]
    assert changed.params == {"cwd": str(workspace), "sessionIds": [long_id]}
    assert again == whole
    assert all("partial" not in s for s in again["sessions"])
    long_whole = next(s for s in whole["sessions"] if s["sessionId"] == long_id)
    assert {**by_id[long_id], "messageCount": long_whole["messageCount"]} == {
        **long_whole,
        "partial": True,
    }


@pytest.mark.same_on_every_cli("the daemon reads stored files, no CLI runs")
async def test_a_listing_without_allow_partial_is_exact_and_sends_no_sessions_changed(
    sidecar: Sidecar, home: Path, workspace: Path
) -> None:
    long_id = long_session(home, workspace)

    page = await sidecar.request("claude/listSessions", {"cwd": str(workspace)})
    await sidecar.request("claude/listChannels")

    assert all("partial" not in s for s in page["sessions"])
    assert next(s for s in page["sessions"] if s["sessionId"] == long_id)["messageCount"] > 0
    assert not [n for n in sidecar.notes if n.method == "claude/sessionsChanged"]


async def indexed(index: Path, path: Path) -> None:
    """Wait until ``index`` holds ``path`` as it is (read whole by the daemon)."""
    size = path.stat().st_size
    for _ in range(1200):
        known = None
        if index.exists():
            opened = SummaryIndex(index)
            try:
                known = opened.get(path)
            except sqlite3.Error:
                known = None  # being created
            finally:
                opened.close()
        if known is not None and known.size == size:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} was not indexed within 60 s")


@pytest.mark.same_on_every_cli("the daemon reads stored files, no CLI runs")
async def test_the_workspace_named_at_initialize_is_indexed_before_the_first_listing(
    sidecar_with: StartSidecar, daemon_env: dict[str, str], home: Path, workspace: Path
) -> None:
    """With ``warmPool.cwd`` the daemon reads that folder's sessions into the index at
    once, unasked: the first listing is then exact, and nothing more is sent."""
    long_id = long_session(home, workspace)
    daemon = await sidecar_with({"warmPool": {"size": 0, "cwd": str(workspace)}})
    path = project_dir(home, str(workspace)) / f"{long_id}.jsonl"

    await indexed(index_path(daemon_env), path)
    page = await daemon.request(
        "claude/listSessions", {"cwd": str(workspace), "allowPartial": True}
    )
    await daemon.request("claude/listChannels")

    assert all("partial" not in s for s in page["sessions"])
    assert next(s for s in page["sessions"] if s["sessionId"] == long_id)["messageCount"] > 0
    assert not [n for n in daemon.notes if n.method == "claude/sessionsChanged"]


async def test_the_cli_writes_a_title_set_mid_file_again_at_the_end_when_it_resumes(
    sidecar: Sidecar, model: ScriptedModel, home: Path, workspace: Path
) -> None:
    """What the head-and-tail listing counts on: a title line far from the end (a
    ``/rename`` of long ago) is written again near the end once the CLI resumes the
    session, so the last 64 KiB hold it."""
    folder = project_dir(home, str(workspace))
    folder.mkdir(parents=True)
    session_id = str(uuid.uuid4())
    path = folder / f"{session_id}.jsonl"
    write_long_session(path, 20, session_id)  # ~250 KB
    lines = path.read_text().splitlines(keepends=True)
    title = {"type": "custom-title", "customTitle": "Named long ago", "sessionId": session_id}
    lines.insert(40, json.dumps(title, separators=(",", ":")) + "\n")
    path.write_text("".join(lines))
    before = path.read_bytes()
    assert before.rindex(b'"custom-title"') < len(before) - EDGE
    model.set_scenario(load_scenario({"rules": [{"match": "again", "steps": [[{"text": "ok"}]]}]}))

    await sidecar.chat(str(workspace), "again", resume=session_id)

    after = path.read_bytes()
    assert after.startswith(before)
    assert after.rindex(b'"customTitle":"Named long ago"') > len(after) - EDGE
    listing._cache.clear()
    page = list_sessions(home, str(workspace), index=home / "index.sqlite", budget=Budget(0))
    (summary,) = page.sessions
    assert summary.partial
    assert (summary.title, summary.custom_title) == ("Named long ago", "Named long ago")
