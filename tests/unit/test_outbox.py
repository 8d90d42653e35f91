"""Notifications are numbered per channel and framed with an exact Content-Length."""

from __future__ import annotations

import json

from claude_sidecar.outbox import Outbox


def _decode(frame: bytes) -> dict:
    header, body = frame.split(b"\r\n\r\n", 1)
    assert int(header.split(b": ")[1]) == len(body)
    return json.loads(body)


def test_seq_is_per_channel_and_starts_at_one() -> None:
    frames: list[bytes] = []
    a, b = Outbox("ch-1", frames.append), Outbox("ch-2", frames.append)

    a.delta("text", 0, "Hel", None)
    b.message(b'{"type":"system"}')
    a.delta("text", 0, "lo", None)
    a.status("idle", "sid", None, "default")

    seqs = [(n["params"]["channelId"], n["params"]["seq"]) for n in map(_decode, frames)]
    assert seqs == [("ch-1", 1), ("ch-2", 1), ("ch-1", 2), ("ch-1", 3)]


def test_cli_messages_travel_verbatim_and_unicode_survives() -> None:
    frames: list[bytes] = []
    raw = '{"type":"assistant","text":"héllo ✓ \\u2028"}'.encode()

    Outbox("ch-1", frames.append).message(raw)

    assert raw in frames[0]
    assert _decode(frames[0]) == {"jsonrpc": "2.0", "method": "claude/message", "params": {
        "channelId": "ch-1", "seq": 1, "message": json.loads(raw)}}


def test_optional_fields_are_omitted_when_unset() -> None:
    frames: list[bytes] = []

    Outbox("ch-1", frames.append).delta("thinking", 2, "hmm", None)

    assert _decode(frames[0])["params"] == {"channelId": "ch-1", "seq": 1, "kind": "thinking",
                                            "index": 2, "text": "hmm"}
