"""Odd CLI output (garbage, huge lines, unknown types, stray control traffic) is survived.

The real CLI cannot be made to print garbage on cue, so these use tests/fakes/fake_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import FAKE_CLI, Sidecar, StartSidecar

pytestmark = pytest.mark.same_on_every_cli("runs the fake CLI, whatever CLI is under test")

Fake = tuple[Sidecar, Path, Path]
"""A daemon whose CLI is the fake, the file of lines it prints and the one of its answers."""


@pytest.fixture
async def fake(sidecar_with: StartSidecar, tmp_path: Path) -> Fake:
    lines = tmp_path / "lines.bin"
    answers = tmp_path / "answers.jsonl"
    answers.touch()
    daemon = await sidecar_with(
        {"cliPath": str(FAKE_CLI)}, FAKE_CLI_LINES=str(lines), FAKE_CLI_ANSWERS=str(answers)
    )
    return daemon, lines, answers


async def test_non_json_lines_are_skipped_and_everything_else_arrives_in_order(
    fake: Fake, workspace: Path
) -> None:
    daemon, lines, _ = fake
    big = "x" * (20 * 1024 * 1024)
    lines.write_bytes(
        b"\n".join(
            [
                b"this is not json",
                b'{"type": "brand_new_type", "payload": [1, 2, 3]}',
                b"\xff\xfe garbage bytes",
                json.dumps(
                    {"type": "assistant", "message": {"content": [{"type": "text", "text": big}]}}
                ).encode(),
                b"[1, 2, 3]",
                b'{"no_type_field": true}',
                b'{"type": "control_response", "response": {"subtype": "success", '
                b'"request_id": "req_unknown", "response": {}}}',
                b"{truncated json",
            ]
        )
        + b"\n"
    )
    channel = await daemon.new_channel(str(workspace))

    await daemon.turn(channel, "go")

    messages = [n.message for n in daemon.of(channel, "claude/message")]
    kinds = [m.get("type", "<none>") for m in messages if isinstance(m, dict)]
    assert kinds[:3] == ["brand_new_type", "assistant", "<none>"]
    assert messages[1]["message"]["content"][0]["text"] == big
    assert kinds[-1] == "result"
    assert [1, 2, 3] in messages, "valid JSON of another shape is passed through"


async def test_an_unsupported_control_request_from_the_cli_is_refused_not_left_hanging(
    fake: Fake, workspace: Path
) -> None:
    daemon, lines, answers = fake
    lines.write_bytes(
        json.dumps(
            {
                "type": "control_request",
                "request_id": "cli_1",
                "request": {"subtype": "brand_new_request"},
            }
        ).encode()
        + b"\n"
    )
    channel = await daemon.new_channel(str(workspace))

    await daemon.turn(channel, "go")

    forwarded = [
        n.message
        for n in daemon.of(channel, "claude/message")
        if n.message["type"] == "control_request"
    ]
    assert forwarded and forwarded[0]["request_id"] == "cli_1"
    # The fake CLI writes the daemon's answer to a file when it reads it, and reads its
    # stdin in order: its answer to a later control request says it has read the first.
    await daemon.request("claude/setModel", {"channelId": channel, "model": "claude-haiku-4-5"})
    answer = json.loads(answers.read_text().splitlines()[0])
    assert answer["response"]["subtype"] == "error"
    assert answer["response"]["request_id"] == "cli_1"
    assert "brand_new_request" in answer["response"]["error"]


async def test_a_cli_refusing_a_control_request_is_reported_and_the_channel_stays_usable(
    fake: Fake, workspace: Path
) -> None:
    daemon, lines, _ = fake
    lines.write_bytes(b"")
    channel = await daemon.new_channel(str(workspace))

    error = await daemon.error("claude/setModel", {"channelId": channel, "model": "refuse-me"})

    assert error.code == -32006
    assert error.data == {
        "name": "controlRequestFailed",
        "subtype": "set_model",
        "cliError": "model refuse-me is not available",
    }
    assert (await daemon.turn(channel, "still there?")).result["subtype"] == "success"
