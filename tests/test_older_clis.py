"""What the daemon does for CLIs older than the pinned one, played by tests/fakes/fake_cli.py
(the compatibility run checks the same against a real older CLI)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from claude_sidecar import sessions, transcript_wait

from tests.harness import FAKE_CLI, Note, Sidecar, StartSidecar

pytestmark = pytest.mark.same_on_every_cli("runs the fake CLI, whatever CLI is under test")

ANSWER = str(uuid.uuid4())


StartFake = Callable[[str | None], Awaitable[Sidecar]]


@pytest.fixture
def start_fake(sidecar_with: StartSidecar, tmp_path: Path) -> StartFake:
    """Starts a daemon whose CLI is the fake playing CLI ``version`` (None: one that cannot
    tell its version); each answer is an assistant message, then a result."""

    async def start(version: str | None) -> Sidecar:
        lines = tmp_path / "lines.bin"
        lines.write_text(
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": ANSWER,
                    "parent_tool_use_id": None,
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
                }
            )
            + "\n"
        )
        answers = tmp_path / "answers.jsonl"
        answers.touch()
        return await sidecar_with(
            {"cliPath": str(FAKE_CLI)},
            FAKE_CLI_LINES=str(lines),
            FAKE_CLI_ANSWERS=str(answers),
            FAKE_CLI_VERSION=version or "",  # empty: a CLI that cannot tell its version
        )

    return start


def first(daemon: Sidecar, channel: str, method: str, kind: str | None = None) -> Note:
    return next(
        n for n in daemon.of(channel, method) if kind is None or n.message.get("type") == kind
    )


async def open_and_send(daemon: Sidecar, workspace: Path) -> tuple[str, str]:
    opened = await daemon.open_channel(cwd=str(workspace))
    await daemon.send(opened["channelId"], "go")
    return opened["channelId"], opened["sessionId"]


async def test_an_older_cli_s_turn_ends_once_its_transcript_holds_the_turn(
    start_fake: StartFake, workspace: Path, home: Path
) -> None:
    daemon = await start_fake("2.1.233")
    channel, session = await open_and_send(daemon, workspace)
    await daemon.wait_for(
        lambda n: n.channel == channel
        and n.method == "claude/message"
        and n.message.get("type") == "assistant"
    )
    await asyncio.sleep(0.2)  # the CLI writes its session file after the result
    path = sessions.transcript_path(home, str(workspace), session)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"type": "assistant", "uuid": ANSWER}) + "\n")
    written = time.monotonic()
    ended = await daemon.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")
    info = await daemon.request("claude/channelInfo", {"channelId": channel})

    assert ended.at >= written, "the turn ended before its transcript was written"
    assert first(daemon, channel, "claude/message", "result").at >= written
    assert info["cliVersion"] == "2.1.233", (
        "the daemon asks `--version` of a CLI that does not report it"
    )


async def test_an_older_cli_s_message_that_never_reaches_the_file_holds_the_turn_briefly(
    start_fake: StartFake, workspace: Path
) -> None:
    daemon = await start_fake("2.1.233")
    channel, _ = await open_and_send(daemon, workspace)
    ended = await daemon.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")

    held = ended.at - first(daemon, channel, "claude/message", "assistant").at
    assert transcript_wait.SETTLED * 0.9 <= held < transcript_wait.WAIT + 2


@pytest.mark.parametrize("version", ["2.1.330", None])
async def test_a_current_cli_s_turn_ends_with_its_result(
    start_fake: StartFake, workspace: Path, version: str | None
) -> None:
    daemon = await start_fake(version)
    channel, _ = await open_and_send(daemon, workspace)
    ended = await daemon.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")
    info = await daemon.request("claude/channelInfo", {"channelId": channel})

    held = ended.at - first(daemon, channel, "claude/message", "assistant").at
    assert held < transcript_wait.SETTLED * 0.9, "no session file to wait for"
    assert info["cliVersion"] == version
