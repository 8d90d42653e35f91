"""A listing within a read budget: a long session never indexed comes from its head and tail.

The folder is the one of issue 43's goal: 100 stored sessions, one of them ~100 MB (a real
short session's turns repeated with fresh ids on one chain: tests/repeated_session.py),
made once for the module. What is read is measured by the process's own count of bytes
read (``rchar`` of /proc/self/io), never by time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from claude_sidecar.cli.paths import project_dir
from claude_sidecar.protocol.api import SessionSummary
from claude_sidecar.sessions import listing
from claude_sidecar.sessions.edits import rename_session
from claude_sidecar.sessions.listing import Budget, list_sessions
from claude_sidecar.sessions.quick_listing import BUDGET

from tests.repeated_session import BASE, write_long_session

DATA = Path(__file__).resolve().parent.parent / "data" / "sessions"
BIG_COPIES = 8200
"""Copies of the base conversation in the big session: ~100 MB."""


def bytes_read() -> int:
    """What this process has read so far (``rchar``: every read call, cached or not)."""
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


class Folder:
    """A project folder of stored sessions, one of them big."""

    def __init__(self, home: Path, cwd: Path, big: Path) -> None:
        self.home, self.cwd, self.big = home, cwd, big

    def listed(self, index: Path | None, budget: Budget | None = None) -> list[SessionSummary]:
        """The folder's sessions as a listing gives them (none from this process's cache)."""
        listing._cache.clear()
        return list_sessions(self.home, str(self.cwd), 500, index=index, budget=budget).sessions

    def big_of(self, sessions: list[SessionSummary]) -> SessionSummary:
        return next(s for s in sessions if s.session_id == self.big.stem)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Folder]:
    root = tmp_path_factory.mktemp("listing-edges")
    home, cwd = root / "home", root / "workspace"
    cwd.mkdir()
    directory = project_dir(home, str(cwd))
    directory.mkdir(parents=True)
    big = directory / f"{uuid.uuid4()}.jsonl"
    write_long_session(big, BIG_COPIES, big.stem)
    small = sorted(DATA.glob("*.jsonl"))
    for i in range(99):
        template = small[i % len(small)]
        session_id = str(uuid.uuid4())
        text = template.read_bytes().replace(template.stem.encode(), session_id.encode())
        (directory / f"{session_id}.jsonl").write_bytes(text)
    yield Folder(home, cwd, big)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def exact(folder: Folder) -> list[SessionSummary]:
    """The folder's sessions read whole (no index, no budget): what is exact."""
    return folder.listed(None)


def test_the_first_listing_reads_the_big_session_at_its_head_and_tail_only(
    folder: Folder, exact: list[SessionSummary], tmp_path: Path
) -> None:
    budget = Budget(BUDGET)
    before = bytes_read()

    sessions = folder.listed(tmp_path / "index.sqlite", budget)

    read = bytes_read() - before
    assert folder.big.stat().st_size > 100_000_000
    assert read < BUDGET + 2 * 1024 * 1024  # the small files, the big one's edges, the index
    assert budget.deferred == [folder.big]
    big, whole = folder.big_of(sessions), folder.big_of(exact)
    assert big.partial and big.message_count == 0
    # All the head and the tail can say, they say as the whole read does.
    assert big == msgspec.structs.replace(whole, message_count=0, partial=True)
    assert [s for s in sessions if s is not big] == [s for s in exact if s is not whole]


def test_the_reader_process_completes_the_index_with_the_exact_summary(
    folder: Folder, exact: list[SessionSummary], tmp_path: Path
) -> None:
    index = tmp_path / "index.sqlite"
    budget = Budget(BUDGET)
    folder.listed(index, budget)

    subprocess.run(
        [sys.executable, "-m", "claude_sidecar.sessions.quick_listing", str(index)]
        + [str(p) for p in budget.deferred],
        check=True,
    )
    again = Budget(BUDGET)
    before = bytes_read()
    sessions = folder.listed(index, again)

    assert bytes_read() - before < 2 * 1024 * 1024
    assert again.deferred == []
    assert sessions == exact


def one_session(root: Path, copies: int) -> Folder:
    """A folder of one session of ``copies`` copies of the base conversation."""
    home, cwd = root / "home", root / "workspace"
    cwd.mkdir(parents=True)
    directory = project_dir(home, str(cwd))
    directory.mkdir(parents=True)
    big = directory / f"{uuid.uuid4()}.jsonl"
    write_long_session(big, copies, big.stem)
    return Folder(home, cwd, big)


def test_what_an_indexed_session_gained_is_read_from_its_old_end(tmp_path: Path) -> None:
    grown = one_session(tmp_path, 700)  # ~8 MB: more than a listing's budget
    index = tmp_path / "index.sqlite"
    listing.index_whole([grown.big], index)
    count = grown.big_of(grown.listed(index)).message_count
    append_copy(grown.big)

    budget = Budget(BUDGET)
    before = bytes_read()
    sessions = grown.listed(index, budget)

    # What it gained (~12 KB), the fingerprint's 8 KiB, the index's row of the file.
    assert bytes_read() - before < grown.big.stat().st_size // 20
    assert budget.deferred == []
    big = grown.big_of(sessions)
    assert not big.partial
    assert big.message_count > count
    assert big == grown.big_of(grown.listed(None))


def test_a_rename_at_the_end_is_the_title_of_the_partial_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renamed = one_session(tmp_path, 700)
    monkeypatch.setenv("HOME", str(renamed.home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    rename_session(renamed.home, str(renamed.cwd), renamed.big.stem, "The long one")

    big = renamed.big_of(renamed.listed(tmp_path / "index.sqlite", Budget(0)))

    assert big.partial
    assert (big.title, big.custom_title) == ("The long one", "The long one")


def append_copy(path: Path) -> None:
    """Append one more copy of the base conversation to ``path``, chained to its last
    entry (what a chat in use adds: two exchanges)."""
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - 65536))
        tail = f.read().splitlines()[1:]
    last = next(
        json.loads(line)["uuid"]
        for line in reversed(tail)
        if json.loads(line).get("type") in ("user", "assistant")
    )
    one = path.with_suffix(".one")
    write_long_session(one, 1, path.stem)
    lines = one.read_text().splitlines()
    one.unlink()
    base_lines = [json.loads(line) for line in BASE.read_text().splitlines() if line.strip()]
    first_chained = next(i for i, e in enumerate(base_lines) if e.get("uuid"))
    out = []
    for i, line in enumerate(lines):
        entry = json.loads(line)
        if i == first_chained:
            entry["parentUuid"] = last
        if i < first_chained or not entry.get("uuid"):
            continue  # the queue records and the like of the session's start
        out.append(json.dumps(entry, separators=(",", ":")))
    with path.open("a") as f:
        f.write("\n".join(out) + "\n")


def test_the_budget_goes_first_to_the_files_with_the_least_to_read(tmp_path: Path) -> None:
    """An indexed long session that gained a turn is read exactly (its turn is little to
    read) before never-read files that together exceed the budget, of which the ones
    past the budget come partial."""
    folder = one_session(tmp_path, 700)  # ~8 MB
    index = tmp_path / "index.sqlite"
    listing.index_whole([folder.big], index)
    append_copy(folder.big)
    directory = folder.big.parent
    for _ in range(20):
        session_id = str(uuid.uuid4())
        write_long_session(directory / f"{session_id}.jsonl", 25, session_id)  # ~300 KB

    budget = Budget(BUDGET)
    sessions = folder.listed(index, budget)

    assert not folder.big_of(sessions).partial
    partial = {s.session_id for s in sessions if s.partial}
    assert partial == {p.stem for p in budget.deferred}
    assert 0 < len(partial) < 20


def entry_line(kind: str, session_id: str, stamp: str, **fields: object) -> str:
    """One line of a session file of ``kind``, with a fresh uuid."""
    entry = {
        "parentUuid": None,
        "isSidechain": False,
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "timestamp": stamp,
        "cwd": "/workspace/demo",
        "sessionId": session_id,
        "gitBranch": "HEAD",
        **fields,
    }
    return json.dumps(entry, separators=(",", ":")) + "\n"


def test_edges_widen_past_a_first_and_a_last_line_longer_than_their_window(
    tmp_path: Path,
) -> None:
    """A first prompt after a large first entry, and a last entry larger than the tail's
    64 KiB (a long pasted text, a whole file in a tool result): each window widens until
    it holds a whole entry."""
    folder = one_session(tmp_path, 30)
    session_id = folder.big.stem
    middle = folder.big.read_text()
    pasted = {"role": "user", "content": [{"type": "tool_result", "content": "x" * 200_000}]}
    title = {"type": "custom-title", "customTitle": "Widened", "sessionId": session_id}
    folder.big.write_text(
        entry_line("attachment", session_id, "2026-11-20T10:00:00.000Z", content="a" * 150_000)
        + middle
        + json.dumps(title, separators=(",", ":"))
        + "\n"
        + entry_line("user", session_id, "2026-11-29T09:00:00.000Z", message=pasted)
    )

    big = folder.big_of(folder.listed(tmp_path / "index.sqlite", Budget(0)))

    assert big.partial
    assert (big.first_prompt, big.title) == ("hello there", "Widened")
    assert (big.created_at, big.updated_at) == (
        "2026-11-20T10:00:00.000Z",
        "2026-11-29T09:00:00.000Z",
    )
