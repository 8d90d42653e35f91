"""What a client receives for each recorded stream, and the rule it renders them by.

tests/data/streams/<name>.client.jsonl is every notification a client gets for the
stream (raw CLI messages off, the default). The clients' tests (Neovim, VS Code, Kotlin)
feed them to their stores and expect <name>.entries.json; the reference store here is
the rule they follow: ``claude/entry`` replaces the entry with its id (or adds it, in
place for the id; queued prompts are listed last, and one the CLI takes up moves
to the end), ``claude/delta`` appends to ``entryId``'s text
(or a tool's ``partialInput``). Rewrite with ``UPDATE_GOLDEN=1 uv run pytest tests/conversation``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from .replay import STREAMS, client_stream

NAMES = sorted(p.stem for p in STREAMS.glob("*.jsonl") if not p.stem.endswith(".client"))


def _render(notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference client store: upsert by id, append deltas, queued prompts last."""
    entries: dict[str, dict[str, Any]] = {}
    for note in notes:
        params = note["params"]
        if note["method"] == "claude/entry":
            entry = params["entry"]
            old = entries.get(entry["id"])
            if old is not None and old.get("queued") and not entry.get("queued"):
                del entries[entry["id"]]  # taken up: it moves to the end
            entries[entry["id"]] = entry
        elif note["method"] == "claude/delta" and params.get("entryId") in entries:
            entry = entries[params["entryId"]]
            field = "partialInput" if entry["kind"] == "tool" else "text"
            entries[params["entryId"]] = {**entry, field: entry.get(field, "") + params["text"]}
    listed = list(entries.values())
    return [e for e in listed if not e.get("queued")] + [e for e in listed if e.get("queued")]


@pytest.mark.parametrize("name", NAMES)
def test_a_client_stream_is_what_the_outbox_sends_for_its_recording(name: str) -> None:
    notes = client_stream(name)
    path = STREAMS / f"{name}.client.jsonl"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text("".join(json.dumps(n, ensure_ascii=False) + "\n" for n in notes))
    assert notes == [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("name", NAMES)
def test_upserting_entries_and_appending_deltas_gives_the_golden_entries(name: str) -> None:
    lines = (STREAMS / f"{name}.client.jsonl").read_text().splitlines()
    notes = [json.loads(line) for line in lines]
    assert _render(notes) == json.loads((STREAMS / f"{name}.entries.json").read_text())


@pytest.mark.parametrize("name", NAMES)
def test_no_client_stream_carries_raw_cli_messages(name: str) -> None:
    methods = {n["method"] for n in client_stream(name)}
    assert "claude/message" not in methods
    assert "claude/entry" in methods
