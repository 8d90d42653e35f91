"""Every recorded stream gives the conversation its golden entries.

The expected entries of tests/data/streams/<name>.jsonl are in <name>.entries.json,
reviewed by hand when written. After a deliberate change of the rules, rewrite them with
``UPDATE_GOLDEN=1 uv run pytest tests/conversation`` and review the diff.
"""

from __future__ import annotations

import json
import os

import msgspec
import pytest
from claude_sidecar.protocol import api

from .replay import STREAMS, replay

NAMES = sorted(p.stem for p in STREAMS.glob("*.jsonl") if not p.stem.endswith(".client"))


@pytest.mark.parametrize("name", NAMES)
def test_a_recorded_stream_gives_its_golden_entries(name: str) -> None:
    conversation, _ = replay(name)
    entries = msgspec.to_builtins(conversation.snapshot())
    golden = STREAMS / f"{name}.entries.json"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")
    assert entries == json.loads(golden.read_text())


@pytest.mark.parametrize("name", NAMES)
def test_the_last_change_of_every_entry_is_the_entry_as_it_ends(name: str) -> None:
    conversation, front = replay(name)
    last: dict[str, api.Entry] = {}
    for entry in front.entries_changed():
        last[entry.id] = entry
    assert list(last.values()) == conversation.snapshot()


@pytest.mark.parametrize("name", NAMES)
def test_every_event_and_delta_reaches_the_front_end(name: str) -> None:
    _, front = replay(name)
    lines = (STREAMS / f"{name}.jsonl").read_text().splitlines()
    methods = [json.loads(line)["method"] for line in lines]
    assert front.deltas == methods.count("claude/delta")
    entry_changes = len(front.entries_changed())
    assert len(front.events) - entry_changes == len(methods) - methods.count("claude/delta")


@pytest.mark.parametrize("name", NAMES)
def test_every_delta_names_the_entry_it_appends_to(name: str) -> None:
    conversation, front = replay(name)
    ids = {entry.id for entry in conversation.snapshot()}

    assert len(front.entry_ids) == front.deltas
    assert all(entry_id in ids for entry_id in front.entry_ids)
