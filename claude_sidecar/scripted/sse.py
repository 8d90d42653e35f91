"""Anthropic Messages API wire shapes: SSE event sequences and JSON bodies.

Pure functions from resolved blocks (see :func:`matching.plan_reply`) to the
events a real model stream would carry:

``message_start``, then per block ``content_block_start`` /
``content_block_delta``... / ``content_block_stop``, then ``message_delta``
(``stop_reason`` and final usage) and ``message_stop``.  A ``ping`` follows the
first ``content_block_start``, as on the real API, so clients are exercised
with it.  ``wait_for_prompt`` blocks send nothing: they hold the next event.
"""

from __future__ import annotations

from typing import Any

import msgspec

from claude_sidecar.scripted.scenario import Block

__all__ = [
    "SseEvent",
    "encode_event",
    "error_body",
    "error_event",
    "message_body",
    "split_chunks",
    "stop_reason",
    "stream_events",
]

# The CLI keeps the signature and sends it back with the thinking block on the
# next call; only the real API verifies it, so any non-empty string works.
DEFAULT_SIGNATURE = "c2NyaXB0ZWQtc3RhbmQtaW4tc2lnbmF0dXJl"  # base64("scripted-stand-in-signature")


class SseEvent(msgspec.Struct):
    """One server-sent event; ``delay`` is how long to wait before sending it.

    ``waits`` are the ``wait_for_prompt`` blocks written just before this event's
    block: the server sends it only once each has seen its prompt.
    """

    event: str
    data: dict[str, Any]
    delay: float = 0.0
    waits: list[Block] = msgspec.field(default_factory=list)


def split_chunks(text: str, size: int) -> list[str]:
    """Split ``text`` into pieces of ``size`` characters (``size`` 0: one piece).

    Always returns at least one piece, so an empty text still gets one delta.
    """
    if size <= 0 or len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def stop_reason(blocks: list[Block]) -> str:
    """``tool_use`` if any block is a tool call, else ``end_turn``."""
    return "tool_use" if any(b.tool_use is not None for b in blocks) else "end_turn"


def _tool_json(block: Block) -> str:
    assert block.tool_use is not None
    return msgspec.json.encode(block.tool_use.input).decode()


def _start_block(block: Block) -> dict[str, Any]:
    if block.text is not None:
        return {"type": "text", "text": ""}
    if block.thinking is not None:
        return {"type": "thinking", "thinking": "", "signature": ""}
    assert block.tool_use is not None
    return {"type": "tool_use", "id": block.tool_use.id, "name": block.tool_use.name, "input": {}}


def _deltas(block: Block) -> list[dict[str, Any]]:
    size = block.chunk or 0
    if block.text is not None:
        return [{"type": "text_delta", "text": c} for c in split_chunks(block.text, size)]
    if block.thinking is not None:
        out: list[dict[str, Any]] = [
            {"type": "thinking_delta", "thinking": c} for c in split_chunks(block.thinking, size)
        ]
        out.append({"type": "signature_delta", "signature": block.signature or DEFAULT_SIGNATURE})
        return out
    return [
        {"type": "input_json_delta", "partial_json": c}
        for c in split_chunks(_tool_json(block), size)
    ]


def _message_skeleton(message_id: str, model: str) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
    }


def stream_events(
    blocks: list[Block],
    *,
    message_id: str,
    model: str,
    usage: dict[str, int],
) -> list[SseEvent]:
    """The full SSE event sequence for one assistant message made of ``blocks``.

    ``usage`` holds ``input_tokens``, ``output_tokens`` and the two cache
    counts; input and cache counts go in ``message_start``, the output count in
    ``message_delta``.  Each delta carries its block's ``delay``.  A
    ``wait_for_prompt`` block becomes no event: it is put on the next event's
    ``waits`` (content blocks are numbered without it).
    """
    start_usage = {
        "input_tokens": usage.get("input_tokens", 0),
        "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
        "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
        # The real API reports a token or so here; the final count comes in message_delta.
        "output_tokens": 1,
    }
    message = _message_skeleton(message_id, model) | {"usage": start_usage}
    events = [SseEvent("message_start", {"type": "message_start", "message": message})]
    waits: list[Block] = []
    index = -1
    for block in blocks:
        if block.wait_for_prompt is not None:
            waits.append(block)
            continue
        index += 1
        events.append(
            SseEvent(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": _start_block(block),
                },
                waits=waits,
            )
        )
        waits = []
        if index == 0:
            events.append(SseEvent("ping", {"type": "ping"}))
        for delta in _deltas(block):
            events.append(
                SseEvent(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    delay=block.delay or 0.0,
                )
            )
        events.append(
            SseEvent("content_block_stop", {"type": "content_block_stop", "index": index})
        )
    events.append(
        SseEvent(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason(blocks), "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
            waits=waits,
        )
    )
    events.append(SseEvent("message_stop", {"type": "message_stop"}))
    return events


def encode_event(event: SseEvent) -> bytes:
    """The wire form: ``event: NAME\\ndata: JSON\\n\\n`` (JSON on one line)."""
    return (
        b"event: " + event.event.encode() + b"\ndata: " + msgspec.json.encode(event.data) + b"\n\n"
    )


def _final_block(block: Block) -> dict[str, Any]:
    if block.text is not None:
        return {"type": "text", "text": block.text}
    if block.thinking is not None:
        return {
            "type": "thinking",
            "thinking": block.thinking,
            "signature": block.signature or DEFAULT_SIGNATURE,
        }
    assert block.tool_use is not None
    return {
        "type": "tool_use",
        "id": block.tool_use.id,
        "name": block.tool_use.name,
        "input": block.tool_use.input,
    }


def message_body(
    blocks: list[Block],
    *,
    message_id: str,
    model: str,
    usage: dict[str, int],
) -> dict[str, Any]:
    """The JSON answer to a non-streaming request: the complete message."""
    return _message_skeleton(message_id, model) | {
        "content": [_final_block(b) for b in blocks if b.is_content],
        "stop_reason": stop_reason(blocks),
        "usage": {
            "input_tokens": usage.get("input_tokens", 0),
            "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
            "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
        },
    }


def error_event(error_type: str, message: str) -> SseEvent:
    """The ``error`` event the API sends when a stream fails after it started."""
    return SseEvent("error", error_body(error_type, message))


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The Anthropic error JSON: ``{"type":"error","error":{"type":..,"message":..}}``."""
    return {"type": "error", "error": {"type": error_type, "message": message}}
