"""A stored session read from its end (claude_sidecar.sessions.tail): the same entries as
reading the whole file gives, an exchange at a time, newest first, reading back only as
far as the exchanges given; and what came before a compaction, before its boundary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_sidecar.protocol.api import Entry, NoticeEntry, PromptEntry, TextEntry
from claude_sidecar.sessions.backward import BLOCK
from claude_sidecar.sessions.history import render_conversation
from claude_sidecar.sessions.tail import TailReader

from tests.repeated_session import ENTRIES_PER_COPY, write_long_session
from tests.unit.test_sessions import BRANCHED, COMPACTED, WRITE, index_of, install, lines_of


def read_whole(path: Path) -> list[Entry]:
    """The conversation as reading the whole file gives it (no sub-agents here)."""
    renderer, _ = render_conversation(path)
    return renderer.stored.entries


def read_from_the_end(path: Path) -> list[list[Entry]]:
    """Every exchange ``TailReader`` gives, in the order it gives them (newest first)."""
    reader = TailReader(path)
    exchanges = []
    while (exchange := reader.older()) is not None:
        exchanges.append(exchange)
    reader.close()
    return exchanges


def flat(exchanges: list[list[Entry]]) -> list[Entry]:
    return [entry for exchange in reversed(exchanges) for entry in exchange]


def broken(name: str) -> str:
    """The WRITE session with one kind of damage (as tests/unit/test_sessions.py has)."""
    lines = lines_of(WRITE)
    if name == "garbage":
        lines[5:5] = ["this is not JSON {\n", '{"type":"user","uuid":5}\n', '{"no":"type"}\n']
    elif name == "truncated":
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
    elif name == "missing parent":
        del lines[index_of(lines, "2c77037a-28af-468d-a9a9-9c790599075f")]
    elif name == "loop":
        first = index_of(lines, "f73b1b78-ddae-4611-9d5e-3f2ffe1f7e45")
        lines[first] = lines[first].replace(
            '"parentUuid":null', '"parentUuid":"5527e1cf-2b95-4017-bde5-7d32b53e8c07"'
        )
    elif name == "unknown type":
        answer = index_of(lines, "c39ea52b-02b2-4909-a76d-b7f8fee7f365")
        odd = "aaaaaaaa-0000-4000-8000-000000000000"
        parent = '"parentUuid":"2c77037a-28af-468d-a9a9-9c790599075f"'
        lines[answer] = lines[answer].replace(parent, f'"parentUuid":"{odd}"')
        lines.insert(answer, json.dumps({"type": "hologram", "uuid": odd}) + "\n")
    return "".join(lines)


@pytest.mark.parametrize("session_id", [WRITE, BRANCHED])
def test_read_from_its_end_a_session_gives_what_reading_it_whole_gives(
    tmp_path: Path, session_id: str
) -> None:
    path = install(tmp_path, session_id)

    assert flat(read_from_the_end(path)) == read_whole(path)


@pytest.mark.parametrize(
    "damage", ["garbage", "truncated", "missing parent", "loop", "unknown type"]
)
def test_a_damaged_session_read_from_its_end_gives_what_reading_it_whole_gives(
    tmp_path: Path, damage: str
) -> None:
    path = install(tmp_path, WRITE, broken(damage))

    reader = TailReader(path)
    entries = reader.rest()

    assert entries == read_whole(path)
    assert len(reader.warnings) >= 1


def test_each_exchange_starts_with_its_prompt_and_they_come_newest_first(
    tmp_path: Path,
) -> None:
    path = install(tmp_path, WRITE)

    exchanges = read_from_the_end(path)

    assert [[type(e).__name__ for e in x] for x in exchanges] == [
        ["PromptEntry", "ThinkingEntry", "TextEntry", "ToolEntry", "TextEntry"],
        ["PromptEntry", "TextEntry"],
    ]


def test_the_last_exchange_of_a_long_session_is_read_from_the_files_last_block(
    tmp_path: Path,
) -> None:
    path = tmp_path / "long.jsonl"
    count = write_long_session(path, 2000)
    reader = TailReader(path)

    last = reader.older()

    read = reader.index.size - reader.index._unread
    assert last is not None and [e.text for e in last if isinstance(e, PromptEntry)] == [
        "please write a file"
    ]
    assert read <= BLOCK < reader.index.size // 10, "only the end of the file was read"
    assert len(reader.rest()) + len(last) == count == 2000 * ENTRIES_PER_COPY


def test_what_came_before_a_compaction_comes_before_its_boundary_once_each(
    tmp_path: Path,
) -> None:
    path = install(tmp_path, COMPACTED)

    entries = flat(read_from_the_end(path))

    boundary = next(
        i for i, e in enumerate(entries) if isinstance(e, NoticeEntry) and e.subtype == "compaction"
    )
    before = [
        (type(e).__name__, e.text)
        for e in entries[:boundary]
        if isinstance(e, PromptEntry | TextEntry)
    ]
    assert before == [
        ("PromptEntry", "hello one"),
        ("TextEntry", "Answer to: hello one"),
        ("PromptEntry", "two"),
        ("TextEntry", "Answer to: two"),
        ("PromptEntry", "slow please"),
    ]
    # What the compaction kept ("a long slow an", the interruption) stays after it, once.
    assert entries[boundary:] == read_whole(path)
    assert len({e.id for e in entries}) == len(entries)


@pytest.mark.parametrize(
    "damage", ["garbage", "truncated", "missing parent", "loop", "unknown type"]
)
def test_read_to_its_start_a_damaged_session_warns_as_reading_it_whole_does(
    tmp_path: Path, damage: str
) -> None:
    path = install(tmp_path, WRITE, broken(damage))
    _, whole = render_conversation(path)

    reader = TailReader(path)
    reader.rest()

    assert sorted(reader.warnings) == sorted(whole.warnings)
