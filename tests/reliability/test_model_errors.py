"""API errors from the model reach the client as error results; the channel keeps working."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import StartSidecar


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit_error"), (500, "api_error"), (529, "overloaded_error")]
)
async def test_an_api_error_ends_the_turn_with_an_error_result_and_the_channel_recovers(
    sidecar_with: StartSidecar,
    daemon_env: dict[str, str],
    model: ScriptedModel,
    workspace: Path,
    status: int,
    kind: str,
) -> None:
    # The error, not the CLI's retries: CLI 2.1.233 retries a 529 ten times with a growing
    # backoff (minutes); retries have tests of their own.
    daemon_env["CLAUDE_CODE_MAX_RETRIES"] = "0"
    sidecar = await sidecar_with({})
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)fail",
                        "steps": [
                            [
                                {
                                    "error": {
                                        "status": status,
                                        "type": kind,
                                        "message": f"scripted {status}",
                                    }
                                }
                            ]
                        ],
                    },
                    {"match": "(?i)hello", "steps": [[{"text": "Back to normal."}]]},
                ]
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace))

    first = await sidecar.turn(channel, "please fail")
    failed = first.result
    # From before the send: the idle status may already have come with the result.
    await sidecar.wait_for_state(channel, "idle", after=first.start)
    second = await sidecar.turn(channel, "hello")
    recovered, mark = second.result, second.start

    assert failed["is_error"] is True
    assert str(status) in failed.get("result", "") or failed.get("api_error_status") == status
    assert recovered["subtype"] == "success" and recovered["is_error"] is False
    assert sidecar.text(channel, after=mark) == "Back to normal."
