"""Many channels streaming at once: every notification arrives, in order, nothing mixed."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import FAKE_CLI, Sidecar, StartSidecar, wait_until_dead

CHANNELS, DELTAS = 16, 2000


@pytest.mark.same_on_every_cli("runs the fake CLI, whatever CLI is under test")
async def test_sixteen_synthetic_channels_at_full_speed_lose_and_mix_nothing(
    sidecar_with: StartSidecar, tmp_path: Path
) -> None:
    daemon = await sidecar_with(
        {"cliPath": str(FAKE_CLI)},
        FAKE_CLI_DELTAS=str(DELTAS),
        FAKE_CLI_ANSWERS=os.devnull,
        FAKE_CLI_LINES=os.devnull,
    )
    channels = await asyncio.gather(*(daemon.new_channel(str(tmp_path)) for _ in range(CHANNELS)))
    await asyncio.gather(*(daemon.turn(c, "go", timeout=120) for c in channels))
    await daemon.stop()

    expected = "".join(f"{i} " for i in range(DELTAS))
    for channel in channels:
        assert daemon.text(channel) == expected, f"{channel} lost or reordered deltas"
    daemon.assert_seq_contiguous()
    assert await wait_until_dead(daemon.pids) == []


@pytest.mark.same_on_every_cli(
    "the daemon's routing of several channels (test_streaming runs on every CLI)"
)
async def test_four_real_cli_channels_stream_at_once(
    sidecar: Sidecar, model: ScriptedModel, tmp_path: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": f"channel {n}",
                        "steps": [[{"text": f"answer {n} " * 40}]],
                        "chunk": 7,
                    }
                    for n in range(4)
                ]
            }
        )
    )
    folders = [tmp_path / f"w{n}" for n in range(4)]
    for folder in folders:
        folder.mkdir()

    channels = await asyncio.gather(*(sidecar.new_channel(str(f)) for f in folders))
    turns = await asyncio.gather(*(sidecar.turn(c, f"channel {n}") for n, c in enumerate(channels)))
    results = [turn.result for turn in turns]

    assert [r["subtype"] for r in results] == ["success"] * 4
    for n, channel in enumerate(channels):
        assert sidecar.text(channel) == f"answer {n} " * 40
