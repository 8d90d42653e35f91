"""A model stream cut off mid-answer: the client sees the CLI retry, and the turn completes.

The CLI (2.1.330) retries a broken stream and then falls back to a non-streaming request,
which the stand-in answers in full: the user gets the whole answer, and the client gets
`system/api_retry` notices (as claude/message) to show what happened.
"""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import StartSidecar


async def test_a_stream_cut_mid_answer_is_retried_visibly_and_the_channel_keeps_working(
    model: ScriptedModel, workspace: Path, sidecar_with: StartSidecar
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)cut",
                        "steps": [[{"text": "This answer will never finish " * 10}]],
                        "chunk": 5,
                        "cut_after_events": 6,
                    },
                    {"match": "(?i)hello", "steps": [[{"text": "Back to normal."}]]},
                ]
            }
        )
    )
    # The CLI retries a broken stream (10 times by default, with backoff); one retry
    # shows the retry notices without making the test wait a minute.
    sidecar = await sidecar_with({}, CLAUDE_CODE_MAX_RETRIES="1")
    channel = await sidecar.new_channel(str(workspace))
    cut = (await sidecar.turn(channel, "cut me off", timeout=60)).result
    second = await sidecar.turn(channel, "hello")
    recovered, mark = second.result, second.start

    retries = [
        n.message
        for n in sidecar.of(channel, "claude/message")
        if n.message.get("subtype") == "api_retry"
    ]
    assert retries, "the client sees the CLI retrying"
    assert cut["subtype"] == "success"
    assert cut["result"] == "This answer will never finish " * 10
    assert recovered["subtype"] == "success"
    assert sidecar.text(channel, after=mark) == "Back to normal."
    sidecar.assert_seq_contiguous()
