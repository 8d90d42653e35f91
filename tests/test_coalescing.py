"""Delta coalescing (initializationOptions.coalesceDeltasMs) against the real CLI."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import StartSidecar, assistant_text

pytestmark = pytest.mark.same_on_every_cli(
    "the outbox merges deltas; what the CLI streams is checked by test_streaming"
)

ANSWER = "Coalescing merges the deltas of one block into fewer notifications. " * 3
SLOW_STREAM = {
    "rules": [],
    "default": [
        [{"thinking": "Let me think about this carefully, step by step."}, {"text": ANSWER}]
    ],
    "chunk": 3,
    "delay": 0.01,
}


async def test_coalesced_deltas_carry_all_the_text_in_far_fewer_notifications(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SLOW_STREAM))
    sidecar = await sidecar_with({"coalesceDeltasMs": 100})
    channel = await sidecar.new_channel(str(workspace))

    started = time.monotonic()
    await sidecar.turn(channel, "explain coalescing")
    took = time.monotonic() - started

    messages = [n.message for n in sidecar.of(channel, "claude/message")]
    assert sidecar.text(channel) == assistant_text(messages)
    assert ANSWER.strip() in sidecar.text(channel)
    assert sidecar.text(channel, "thinking") == "Let me think about this carefully, step by step."
    # ~90 deltas of 3 characters over ~1 s. The daemon sends one delta notification per
    # 100 ms frame at most, plus one at once and one at the end of each of the two blocks,
    # all within the time the test waited for the turn: a loaded machine, streaming slower,
    # gets a bound as much larger (a fast one about 30).
    deltas = sidecar.of(channel, "claude/delta")
    bound = 2 * 2 + took / 0.1 + 1
    assert len(deltas) <= bound, f"{len(deltas)} notifications in {took:.1f} s: not merged"


async def test_coalesced_deltas_never_follow_the_message_that_ends_their_block(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SLOW_STREAM))
    sidecar = await sidecar_with({"coalesceDeltasMs": 1000})
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.turn(channel, "explain coalescing")

    notes = [n for n in sidecar.notes if n.channel == channel]
    block_stops = [
        i
        for i, n in enumerate(notes)
        if n.method == "claude/message"
        and n.message.get("event", {}).get("type") == "content_block_stop"
    ]
    last_delta = max(i for i, n in enumerate(notes) if n.method == "claude/delta")
    assert last_delta < block_stops[-1], "text arrived after the block had ended"
