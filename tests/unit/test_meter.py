"""The context meter read from the CLI's lines. Pure: no CLI."""

from __future__ import annotations

import json

from claude_sidecar.channel.meter import ContextMeter
from claude_sidecar.protocol.api import ContextReading


def assistant(model: str, **usage: int) -> bytes:
    return json.dumps({"type": "assistant", "message": {"model": model, "usage": usage}}).encode()


def result(**windows: int) -> bytes:
    usage = {model: {"contextWindow": size} for model, size in windows.items()}
    return json.dumps({"type": "result", "modelUsage": usage}).encode()


def test_the_meter_is_the_last_calls_context_of_its_models_window() -> None:
    meter = ContextMeter()
    meter.assistant(assistant("big", input_tokens=10, output_tokens=5))
    meter.assistant(
        assistant(
            "big",
            input_tokens=1000,
            cache_creation_input_tokens=500,
            cache_read_input_tokens=500,
            output_tokens=99,
        )
    )

    assert meter.reading is None, "no window before the turn's result"
    meter.result(result(small=200_000, big=1_000_000))
    # Its output is left out: the line carries the usage of its message's start.
    assert meter.reading == ContextReading(total_tokens=2000, max_tokens=1_000_000, percentage=0.2)


def test_a_seeded_meter_reads_as_recorded_until_a_new_call() -> None:
    recorded = ContextReading(total_tokens=50_000, max_tokens=200_000, percentage=25.0)
    meter = ContextMeter(recorded)

    assert meter.reading == recorded
    meter.assistant(assistant("m", input_tokens=60_000))
    meter.result(b'{"type": "result", "is_error": true}')
    assert meter.reading == ContextReading(total_tokens=60_000, max_tokens=200_000, percentage=30.0)
