"""Notifications are numbered per channel and framed with an exact Content-Length."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from claude_sidecar.feed.events import CliMessage, Progress, StatusChanged
from claude_sidecar.frontends.server.outbox import Outbox, frame
from claude_sidecar.protocol.api import DeltaNotification

from tests.harness import json_object


def _decode(frame: bytes) -> dict[str, Any]:
    header, body = frame.split(b"\r\n\r\n", 1)
    assert int(header.split(b": ")[1]) == len(body)
    return json_object(json.loads(body))


def test_seq_is_per_channel_and_starts_at_one() -> None:
    frames: list[bytes] = []
    a, b = Outbox("ch-1", frames.append), Outbox("ch-2", frames.append)

    a.delta("text", 0, "Hel", None)
    b.message(b'{"type":"system"}')
    a.delta("text", 0, "lo", None)
    a.publish(StatusChanged("idle", "sid", None, "default"))

    seqs = [(n["params"]["channelId"], n["params"]["seq"]) for n in map(_decode, frames)]
    assert seqs == [("ch-1", 1), ("ch-2", 1), ("ch-1", 2), ("ch-1", 3)]


def test_cli_messages_travel_verbatim_and_unicode_survives() -> None:
    frames: list[bytes] = []
    raw = '{"type":"assistant","text":"héllo ✓ \\u2028"}'.encode()

    Outbox("ch-1", frames.append).message(raw)

    assert raw in frames[0]
    assert _decode(frames[0]) == {
        "jsonrpc": "2.0",
        "method": "claude/message",
        "params": {"channelId": "ch-1", "seq": 1, "message": json.loads(raw)},
    }


def test_without_raw_messages_cli_lines_are_not_sent_and_take_no_seq() -> None:
    frames: list[bytes] = []
    outbox = Outbox("ch-1", frames.append, raw_messages=False)

    outbox.publish(CliMessage(b'{"type":"system"}'))
    outbox.publish(Progress(b'{"type":"system","subtype":"thinking_tokens"}'))
    outbox.delta("text", 0, "Hi", None)

    assert [(n["method"], n["params"]["seq"]) for n in map(_decode, frames)] == [
        ("claude/delta", 1)
    ]


def test_optional_fields_are_omitted_when_unset() -> None:
    frames: list[bytes] = []

    Outbox("ch-1", frames.append).delta("thinking", 2, "hmm", None)

    assert _decode(frames[0])["params"] == {
        "channelId": "ch-1",
        "seq": 1,
        "kind": "thinking",
        "index": 2,
        "text": "hmm",
    }


def _params(frames: list[bytes]) -> list[dict[str, Any]]:
    return [_decode(f)["params"] for f in frames]


async def test_without_coalescing_every_delta_is_its_own_notification() -> None:
    frames: list[bytes] = []
    outbox = Outbox("ch-1", frames.append)

    for word in ("a", "b", "c"):
        outbox.delta("text", 0, word, None)

    assert [p["text"] for p in _params(frames)] == ["a", "b", "c"]


async def test_coalescing_sends_the_first_delta_at_once_and_merges_the_rest() -> None:
    frames: list[bytes] = []
    outbox = Outbox("ch-1", frames.append, coalesce=0.02)

    for word in ("Hel", "lo", ", wor", "ld"):
        outbox.delta("text", 0, word, None)
    sent_at_once = len(frames)
    await asyncio.sleep(0.05)

    assert sent_at_once == 1
    assert [(p["seq"], p["text"]) for p in _params(frames)] == [(1, "Hel"), (2, "lo, world")]


async def test_coalescing_never_lets_another_notification_overtake_waiting_text() -> None:
    frames: list[bytes] = []
    outbox = Outbox("ch-1", frames.append, coalesce=10.0)

    outbox.delta("text", 0, "first", None)
    outbox.delta("text", 0, " second", None)
    outbox.message(b'{"type":"assistant"}')

    assert [(p["seq"], p.get("text")) for p in _params(frames)] == [
        (1, "first"),
        (2, " second"),
        (3, None),
    ]


async def test_coalescing_keeps_blocks_and_kinds_apart() -> None:
    frames: list[bytes] = []
    outbox = Outbox("ch-1", frames.append, coalesce=10.0)

    outbox.delta("thinking", 0, "hmm", None)
    outbox.delta("thinking", 0, " ok", None)
    outbox.delta("text", 1, "Hi", None)
    outbox.delta("text", 1, " there", None)
    outbox.delta("text", 1, "!", "toolu_sub")
    outbox.flush()

    assert [
        (p["kind"], p["index"], p["text"], p.get("parentToolUseId")) for p in _params(frames)
    ] == [
        ("thinking", 0, "hmm", None),
        ("thinking", 0, " ok", None),
        ("text", 1, "Hi there", None),
        ("text", 1, "!", "toolu_sub"),
    ]


async def test_coalescing_sends_at_most_one_delta_per_interval() -> None:
    frames: list[bytes] = []
    loop = asyncio.get_running_loop()
    sent_at: list[float] = []

    def sink(data: bytes) -> None:
        frames.append(data)
        sent_at.append(loop.time())

    outbox = Outbox("ch-1", sink, coalesce=0.05)

    # Four bursts of ten deltas: the loop runs nothing in between the deltas of a burst, so
    # at most its first goes at once and the rest wait, however slow the machine.
    for burst in range(4):
        for i in range(10 * burst, 10 * burst + 10):
            outbox.delta("text", 0, f"{i} ", None)
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.06)  # the loop runs the flush timer (due within 0.05) before this

    assert "".join(p["text"] for p in _params(frames)) == "".join(f"{i} " for i in range(40))
    gaps = [b - a for a, b in itertools.pairwise(sent_at)]
    assert len(frames) <= 8 and min(gaps) >= 0.045  # (asyncio may run a timer a tick early)


async def test_coalescing_keeps_only_the_last_progress_message_of_a_frame() -> None:
    frames: list[bytes] = []
    outbox = Outbox("ch-1", frames.append, coalesce=10.0)

    for n, word in enumerate(("Let", " me", " think"), start=1):
        outbox.progress(b'{"type":"system","subtype":"thinking_tokens","estimated_tokens":%d}' % n)
        outbox.delta("thinking", 0, word, None)
    outbox.flush()

    assert [
        (p["seq"], p.get("text") or p["message"]["estimated_tokens"]) for p in _params(frames)
    ] == [(1, 1), (2, "Let"), (3, 3), (4, " me think")]


def test_a_delta_frame_is_the_generic_frame_of_its_notification_at_any_length() -> None:
    frames: list[bytes] = []
    outbox = Outbox("ch-1", frames.append)
    # Short and long bodies (the header cache stops at 4096), multibyte text, a sub-agent.
    texts = ["", "a", "héllo ✓", "x" * 5000, "é" * 3000, '"quoted" \\ \n']
    for n, text in enumerate(texts):
        outbox.delta("toolInput", n, text, "toolu_1" if n % 2 else None)

    expected = [
        frame(
            "claude/delta",
            DeltaNotification("ch-1", n + 1, "toolInput", n, text, "toolu_1" if n % 2 else None),
        )
        for n, text in enumerate(texts)
    ]
    assert frames == expected
    assert [p["text"] for p in _params(frames)] == texts
