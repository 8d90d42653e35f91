"""A long stored session made at test time: a real short session's turns repeated with
fresh ids on one parent chain (what a session kept for days looks like to the daemon).

The base is tests/data/sessions/c8605bc9-… ("hello there", then a Write: 7 entries per
copy); every copy gets new uuids, message ids and tool use ids, and its first entry's
parent is the last entry of the copy before.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

BASE = Path(__file__).parent / "data" / "sessions" / "c8605bc9-22b5-4cd5-a2d6-cf4fd7a0de7b.jsonl"
ENTRIES_PER_COPY = 7
"""The entries of the conversation each copy of the base adds."""


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string that is a key of ``names`` replaced by its value."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    return value


def write_long_session(path: Path, copies: int, session_id: str | None = None) -> int:
    """Write ``copies`` copies of the base session's conversation to ``path`` as one
    chain; returns how many entries its history has (``copies * ENTRIES_PER_COPY``)."""
    base = [json.loads(line) for line in BASE.read_text().splitlines() if line.strip()]
    old_session = base[0]["sessionId"]
    chained = [e for e in base if e.get("uuid")]
    uuids = {e["uuid"] for e in chained}
    ids = set(uuids)
    for e in chained:
        message = e.get("message")
        if isinstance(message, dict):
            if isinstance(message.get("id"), str):
                ids.add(message["id"])
            for block in message.get("content") or ():
                if isinstance(block, dict) and isinstance(block.get("id"), str):
                    ids.add(block["id"])
    first, last = chained[0]["uuid"], chained[-1]["uuid"]
    new_session = session_id or old_session
    previous: str | None = None
    with path.open("w") as out:
        for copy in range(copies):
            names = {i: str(uuid.uuid4()) if i in uuids else f"{i}_{copy}" for i in ids}
            names[old_session] = new_session
            for e in base if copy == 0 else chained:
                line = _renamed(e, names)
                if e.get("uuid") == first:
                    line["parentUuid"] = previous
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
            previous = names[last]
    return copies * ENTRIES_PER_COPY
