"""The session listing's scan and index: the same summaries as decoding the whole file.

The reference (``whole_file_summary``) is how the listing summarized a session before the
index: every line decoded, the chain rendered (:func:`render_conversation`), the
listing's fields folded over every line. Every summary the scan and the index give,
whether the file was read at once or in parts as it grew, must equal it.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.cli.paths import project_dir
from claude_sidecar.protocol.api import SessionSummary
from claude_sidecar.sessions import listing, summary_index, summary_scan
from claude_sidecar.sessions.history import render_conversation
from claude_sidecar.sessions.listing import list_sessions, prompt_title
from claude_sidecar.sessions.render import Renderer
from claude_sidecar.sessions.summary_index import SummaryIndex, index_path
from claude_sidecar.sessions.summary_scan import (
    Scan,
    advance,
    iso,
    link_keys,
    message_count,
    take_lines,
    tally,
)

DATA = Path(__file__).parent.parent / "data" / "sessions"
WRITE = "c8605bc9-22b5-4cd5-a2d6-cf4fd7a0de7b"  # hello + a Write tool use
COMPACTED = "d1f3ce72-7d3c-4abf-89a9-1ecb98ca36a3"  # interrupt, /compact, /rename, resume
BRANCHED = "08db6f3a-7584-4dc1-8d26-3bada228e9b5"  # --resume-session-at made a branch
PARALLEL = "f0cd8d40-d1f2-45cf-9c9b-dd440c68021f"  # parallel Writes, a background sub-agent
CWD = "/workspace/demo"
SESSION = "5e55e55e-0000-4000-8000-000000000001"


def whole_file_summary(path: Path) -> SessionSummary | None:
    """The listing entry as the listing made it before its index (the reference)."""
    renderer, file = render_conversation(path)
    first = command = None
    titles: dict[str, str] = {}
    cwd = branch = None
    stamps: list[str] = []
    for line in file.lines:
        e = line.entry
        if e.is_sidechain:
            continue
        if (stamp := iso(e.timestamp)) is not None:
            stamps.append(stamp)
        for key, value in (
            ("custom-title", e.custom_title),
            ("ai-title", e.ai_title),
            ("summary", e.summary),
        ):
            if e.type == key and isinstance(value, str) and value.strip():
                titles[key] = value
        if cwd is None and isinstance(e.cwd, str):
            cwd = e.cwd
        if isinstance(e.git_branch, str) and e.git_branch:
            branch = e.git_branch
        if first is None and e.type == "user":
            probe = Renderer([])
            probe.render(line)
            first = probe.first_prompt
            command = command or probe.first_command
    prompt = first or command
    if prompt is None:
        return None
    mtime = iso(file.mtime) or ""
    title = next(
        (titles[k].strip() for k in ("custom-title", "ai-title", "summary") if k in titles), None
    ) or prompt_title(prompt)
    text = " ".join(prompt.split())
    return SessionSummary(
        session_id=path.stem,
        title=title,
        first_prompt=text if len(text) <= 200 else text[:199].rstrip() + "…",
        updated_at=max(stamps) if stamps else mtime,
        created_at=min(stamps) if stamps else mtime,
        message_count=renderer.prompts + len(renderer.responses),
        custom_title=titles["custom-title"].strip() if "custom-title" in titles else None,
        cwd=cwd,
        git_branch=branch,
    )


def lines_of(session_id: str) -> list[str]:
    return (DATA / f"{session_id}.jsonl").read_text().splitlines(keepends=True)


def entry(**fields: Any) -> str:
    return json.dumps({"isSidechain": False, "timestamp": "2026-11-21T17:00:00.000Z", **fields})


def prompt(uid: str, parent: str | None, text: str, **more: Any) -> str:
    message = {"role": "user", "content": text}
    return entry(type="user", uuid=uid, parentUuid=parent, message=message, **more) + "\n"


def answer(uid: str, parent: str | None, mid: str, *blocks: dict[str, Any], **more: Any) -> str:
    content = list(blocks) or [{"type": "text", "text": "ok"}]
    message = {"id": mid, "role": "assistant", "content": content}
    return entry(type="assistant", uuid=uid, parentUuid=parent, message=message, **more) + "\n"


def last_uuid(lines: list[str], kinds: tuple[str, ...] = ("user", "assistant")) -> str:
    for line in reversed(lines):
        e = json.loads(line)
        if e.get("type") in kinds and not e.get("isSidechain"):
            return str(e["uuid"])
    raise AssertionError("no entry")


def uuid_at(lines: list[str], i: int) -> str:
    return str(json.loads(lines[i])["uuid"])


def edge_cases() -> dict[str, list[str]]:
    """Session texts (as lines) beyond the real files: each a way the chain can go."""
    write = lines_of(WRITE)
    first_answer = uuid_at(write, 13)
    tip = last_uuid(write)
    cases: dict[str, list[str]] = {}
    # A rewind: a prompt on the first answer after the whole second turn.
    cases["branch after the end"] = [*write, prompt(str(uuid.uuid4()), first_answer, "again")]
    # Sidechain entries in the main file (older CLIs), one of them last.
    side = [
        line.replace('"isSidechain":false', '"isSidechain":true').replace(WRITE[:8], "5151c0de")
        for line in write
        if '"type":"user"' in line or '"type":"assistant"' in line
    ]
    cases["sidechains in the main file"] = [*write[:15], *side, *write[15:], *side[:2]]
    # A response split into entries, one of them shown only by a later sibling.
    a, b, c = (str(uuid.uuid4()) for _ in range(3))
    cases["a response in parts"] = [
        *write,
        prompt(a, tip, "parts"),
        answer(b, a, "msg_parts", {"type": "redacted_thinking", "data": "x"}),
        answer(c, a, "msg_parts", {"type": "text", "text": "sibling"}),
    ]
    # A parallel turn: the walk passes by a response's shown part (counted all the same).
    a, b, c, d = (str(uuid.uuid4()) for _ in range(4))
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}],
    }
    cases["a parallel turn passed by"] = [
        *write,
        prompt(a, tip, "parallel"),
        answer(b, a, "msg_par", {"type": "redacted_thinking", "data": "x"}),
        answer(c, a, "msg_par", {"type": "tool_use", "id": "t", "name": "X", "input": {}}),
        entry(type="user", uuid=d, parentUuid=b, message=result) + "\n",
    ]
    # An API error stand-in, a meta prompt, a reminder, an image, a command, a notice.
    ids = [str(uuid.uuid4()) for _ in range(7)]
    cases["what is not a message"] = [
        *write,
        prompt(ids[0], tip, "<system-reminder>x</system-reminder>"),
        prompt(ids[1], ids[0], "meta", isMeta=True),
        answer(ids[2], ids[1], "msg_err", {"type": "text", "text": "boom"}, isApiErrorMessage=True),
        prompt(ids[3], ids[2], "<command-name>/model</command-name><command-args>x</command-args>"),
        entry(type="system", uuid=ids[4], parentUuid=ids[3], subtype="local_command", content="o")
        + "\n",
        prompt(ids[5], ids[4], "[Request interrupted by user]"),
        answer(ids[6], ids[5], "msg_tool", {"type": "tool_use", "id": "t1", "name": "X"}),
    ]
    # Lines that are not entries, a parent that is missing, a loop, an unknown type.
    loop_a, loop_b, stray, odd = (str(uuid.uuid4()) for _ in range(4))
    cases["broken links"] = [
        *write,
        "not json\n",
        '{"type": "user", "message": {"role": "user", "content": "no uuid"}}\n',
        entry(type="future-kind", uuid=odd, parentUuid=tip) + "\n",
        prompt(stray, str(uuid.uuid4()), "missing parent"),
        answer(loop_a, loop_b, "msg_loop"),
        prompt(loop_b, loop_a, "loop"),
    ]
    # A parent written after its child (bridged until it comes), an entry written twice.
    q, p, r = (str(uuid.uuid4()) for _ in range(3))
    cases["a parent written late"] = [
        *write,
        prompt(q, p, "child first"),
        answer(p, tip, "msg_late_parent"),
        answer(r, q, "msg_after"),
        write[13],
        prompt(str(uuid.uuid4()), uuid_at(write, 13), "on the copy"),
    ]
    # A compaction appended: the chain starts again at its boundary.
    compacted = lines_of(COMPACTED)
    boundary = next(i for i, line in enumerate(compacted) if "compact_boundary" in line)
    cases["a compaction later"] = [*write, *compacted[boundary:]]
    # Titles and a branch written late, a line without its end.
    cases["titles late, a line being written"] = [
        *write,
        entry(type="ai-title", aiTitle="Generated") + "\n",
        entry(type="custom-title", customTitle="  Mine ") + "\n",
        prompt(str(uuid.uuid4()), tip, "half", gitBranch="feature").rstrip("\n"),
    ]
    return cases


def corpus() -> list[tuple[str, list[str]]]:
    real = [(p.stem[:8], p.read_text().splitlines(keepends=True)) for p in DATA.glob("*.jsonl")]
    return sorted(real) + sorted(edge_cases().items())


CORPUS = corpus()


@pytest.fixture(autouse=True)
def _fresh_memory_cache() -> None:
    listing._cache.clear()


def install(home: Path, text: str) -> Path:
    folder = project_dir(home, CWD)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text(text)
    return path


def record_reads(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The bytes of each part of a session file the listing decodes from now on."""
    read: list[bytes] = []
    take = summary_scan.take_lines

    def recorded(data: bytes, scan: Scan) -> None:
        read.append(data)
        take(data, scan)

    monkeypatch.setattr(summary_scan, "take_lines", recorded)
    return read


def listed(home: Path, index: Path | None) -> SessionSummary | None:
    listing._cache.clear()  # a new daemon: only the index remembers
    sessions = list_sessions(home, CWD, index=index).sessions
    return sessions[0] if sessions else None


@pytest.mark.parametrize(("name", "lines"), CORPUS, ids=[name for name, _ in CORPUS])
def test_the_scan_counts_what_the_renderer_counts(
    tmp_path: Path, name: str, lines: list[str]
) -> None:
    path = install(tmp_path, "".join(lines))
    renderer, _ = render_conversation(path)
    scan = Scan()
    take_lines(path.read_bytes(), scan)

    assert message_count(scan.links) == renderer.prompts + len(renderer.responses)


@pytest.mark.parametrize(("name", "lines"), CORPUS, ids=[name for name, _ in CORPUS])
def test_a_file_listed_as_it_grows_lists_as_if_read_whole(
    tmp_path: Path, name: str, lines: list[str]
) -> None:
    index = tmp_path / "index.sqlite"
    path = install(tmp_path, "")
    for end in range(len(lines) + 1):
        path.write_text("".join(lines[:end]))
        os.utime(path, ns=(end, end * 1_000_000_000))

        assert listed(tmp_path, index) == whole_file_summary(path), f"after line {end}"
        assert listed(tmp_path, None) == whole_file_summary(path), f"after line {end}"


@pytest.mark.parametrize(("name", "lines"), CORPUS, ids=[name for name, _ in CORPUS])
def test_an_appended_part_advances_the_tally_to_that_of_the_whole(
    name: str, lines: list[str]
) -> None:
    data = "".join(lines).encode()
    cuts = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    for cut in cuts:
        before, after = Scan(), Scan()
        take_lines(data[:cut], before)
        take_lines(data[cut:], after)
        grown = tally(before.links)
        whole = tally(before.links + after.links)
        if advance(grown, after.links, set(link_keys(before.links))):
            assert grown == whole, f"cut at byte {cut}"


def test_a_turn_appended_to_a_long_session_extends_the_tally_without_rereading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = lines_of(WRITE)
    turns = [*write]
    for _ in range(20):
        tip, ask, reply = last_uuid(turns), str(uuid.uuid4()), str(uuid.uuid4())
        turns += [prompt(ask, tip, "more"), answer(reply, ask, f"msg_{reply}")]
    index = tmp_path / "index.sqlite"
    path = install(tmp_path, "".join(turns))
    assert listed(tmp_path, index) == whole_file_summary(path)
    read = record_reads(monkeypatch)
    ask = str(uuid.uuid4())
    more = prompt(ask, last_uuid(turns), "one more") + answer(str(uuid.uuid4()), ask, "msg_more")
    with path.open("a") as f:
        f.write(more)

    assert listed(tmp_path, index) == whole_file_summary(path)
    assert read == [more.encode()]


def test_a_branch_appended_to_an_indexed_session_is_recounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = lines_of(WRITE)
    index = tmp_path / "index.sqlite"
    path = install(tmp_path, "".join(write))
    assert listed(tmp_path, index) == whole_file_summary(path)
    read = record_reads(monkeypatch)
    with path.open("a") as f:
        f.write(prompt(str(uuid.uuid4()), uuid_at(write, 13), "from the first answer"))

    summary = listed(tmp_path, index)

    assert summary == whole_file_summary(path)
    assert summary is not None and summary.message_count == 3
    assert read[-1] == path.read_bytes()  # read whole again


def test_a_rewritten_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite"
    write = lines_of(WRITE)
    path = install(tmp_path, "".join(write))
    assert listed(tmp_path, index) == whole_file_summary(path)

    path.write_text("".join(write[:20]) + "".join(write[19:]))  # longer, same start
    assert listed(tmp_path, index) == whole_file_summary(path)
    path.write_text("".join(write[:20]))  # shorter
    assert listed(tmp_path, index) == whole_file_summary(path)
    path.unlink()
    path.write_text("".join(lines_of(BRANCHED)))  # another file in its place
    assert listed(tmp_path, index) == whole_file_summary(path)


def test_an_index_that_cannot_be_used_only_costs_a_whole_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = install(tmp_path, "".join(lines_of(COMPACTED)))
    (tmp_path / "cache").write_text("a file where the index's folder would be")

    with caplog.at_level(logging.WARNING):
        assert listed(tmp_path, tmp_path / "cache" / "index.sqlite") == whole_file_summary(path)
    assert "listing index" in caplog.text


def test_a_new_index_another_connection_is_switching_to_wal_is_waited_for_not_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = install(tmp_path, "".join(lines_of(COMPACTED)))
    index = tmp_path / "index.sqlite"
    # Another connection (the workspace's indexing, the reader process) holds the new file's
    # lock as it switches it to WAL: SQLite fails this one's switch at once, a deadlock to it.
    other = sqlite3.connect(index, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    waits: list[float] = []

    def other_done(seconds: float) -> None:
        waits.append(seconds)
        if other.in_transaction:
            other.execute("COMMIT")

    monkeypatch.setattr(summary_index, "_pause", other_done)

    with caplog.at_level(logging.WARNING):
        assert listed(tmp_path, index) == whole_file_summary(path)
    assert "listing index" not in caplog.text
    assert len(waits) == 1
    other.close()
    read = record_reads(monkeypatch)
    assert listed(tmp_path, index) == whole_file_summary(path)
    assert read == []  # the first listing used the index


def test_an_index_file_that_is_not_a_database_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = install(tmp_path, "".join(lines_of(COMPACTED)))
    index = tmp_path / "index.sqlite"
    index.write_bytes(b"not a database" * 100)

    assert listed(tmp_path, index) == whole_file_summary(path)
    read = record_reads(monkeypatch)
    assert listed(tmp_path, index) == whole_file_summary(path)
    assert read == []


def test_the_index_is_kept_in_the_users_cache_directory(tmp_path: Path) -> None:
    assert index_path({"HOME": str(tmp_path)}) == (
        tmp_path / ".cache" / "claude-sidecar" / "listing-v1.sqlite"
    )
    assert index_path({"HOME": "/h", "XDG_CACHE_HOME": str(tmp_path)}) == (
        tmp_path / "claude-sidecar" / "listing-v1.sqlite"
    )


def test_a_real_turn_written_line_by_line_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = lines_of(WRITE)
    index = tmp_path / "index.sqlite"
    path = install(tmp_path, "".join(write[:17]))  # the first turn
    assert listed(tmp_path, index) == whole_file_summary(path)
    read = record_reads(monkeypatch)
    for line in write[17:]:  # the second, as the CLI wrote it
        with path.open("a") as f:
            f.write(line)

        assert listed(tmp_path, index) == whole_file_summary(path)
        assert read[-1] == line.encode()
    assert len(read) == len(write) - 17


def test_the_index_forgets_a_deleted_session(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite"
    path = install(tmp_path, "".join(lines_of(WRITE)))
    assert listed(tmp_path, index) is not None
    opened = SummaryIndex(index)
    assert opened.get(path) is not None
    path.unlink()

    assert listed(tmp_path, index) is None
    assert opened.get(path) is None
    opened.close()
