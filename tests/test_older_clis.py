"""What the daemon does for CLIs older than the pinned one, played by tests/fakes/fake_cli.py
(the compatibility run checks the same against a real older CLI)."""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Protocol

import pytest
from claude_sidecar.cli import paths, transcript_wait

from tests.harness import FAKE_CLI, Note, Sidecar, StartSidecar

pytestmark = pytest.mark.same_on_every_cli("runs the fake CLI, whatever CLI is under test")

ANSWER = str(uuid.uuid4())


HANG_GUARD = 300.0
"""What a test puts in place of the daemon's bounds on its wait for a session file
(``transcript_wait.WAIT`` and ``SETTLED``: 3 and 0.5 s): no run needs so long, so a wait
that should end without that bound shows as a hang instead of passing by its timing."""


class StartFake(Protocol):
    def __call__(
        self, version: str | None, *, patient: tuple[str, ...] = ()
    ) -> Awaitable[Sidecar]: ...


def patient_daemon(bounds: tuple[str, ...]) -> tuple[str, ...]:
    """The command line of a daemon whose wait for a session file has ``HANG_GUARD`` for
    each of the ``transcript_wait`` bounds named."""
    patch = "".join(f"transcript_wait.{bound} = {HANG_GUARD}; " for bound in bounds)
    return (
        sys.executable,
        "-c",
        "import sys; from claude_sidecar.commands.main import main; "
        f"from claude_sidecar.cli import transcript_wait; {patch}sys.exit(main())",
        "--log-level",
        "DEBUG",
        "--stdio",
    )


@pytest.fixture
def start_fake(sidecar_with: StartSidecar, tmp_path: Path) -> StartFake:
    """Starts a daemon whose CLI is the fake playing CLI ``version`` (None: one that cannot
    tell its version); each answer is an assistant message, then a result. The ``patient``
    bounds of its wait for a session file are ``HANG_GUARD``."""

    async def start(version: str | None, *, patient: tuple[str, ...] = ()) -> Sidecar:
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
            argv=patient_daemon(patient) if patient else None,
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
    daemon = await start_fake("2.1.233", patient=("WAIT", "SETTLED"))
    channel, session = await open_and_send(daemon, workspace)
    await daemon.wait_for(
        lambda n: n.channel == channel
        and n.method == "claude/message"
        and n.message.get("type") == "assistant"
    )
    # The CLI writes its session file after the result: here, once the answer is shown.
    path = paths.transcript_path(home, str(workspace), session)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"type": "assistant", "uuid": ANSWER}) + "\n")
    written = len(daemon.notes)  # what came before the file held the answer
    ended = await daemon.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")
    info = await daemon.request("claude/channelInfo", {"channelId": channel})

    notes = daemon.notes
    assert notes.index(ended) >= written, "the turn ended before its transcript was written"
    assert notes.index(first(daemon, channel, "claude/message", "result")) >= written
    assert info["cliVersion"] == "2.1.233", (
        "the daemon asks `--version` of a CLI that does not report it"
    )


async def test_an_older_cli_s_message_that_never_reaches_the_file_holds_the_turn_briefly(
    start_fake: StartFake, workspace: Path
) -> None:
    daemon = await start_fake("2.1.233", patient=("WAIT",))
    sent = time.monotonic()
    channel, _ = await open_and_send(daemon, workspace)
    # It ends once the file has been still for SETTLED s: were it held until WAIT, which is
    # HANG_GUARD here, the wait would fail.
    ended = await daemon.wait_for(
        lambda n: n.channel == channel and n.method == "claude/turnEnded",
        timeout=HANG_GUARD / 5,
    )

    # A lower bound only, which load cannot break: the daemon waited SETTLED s after the
    # result, which came after the send.
    assert ended.at - sent >= transcript_wait.SETTLED


@pytest.mark.parametrize("version", ["2.1.330", None])
async def test_a_current_cli_s_turn_ends_with_its_result(
    start_fake: StartFake, workspace: Path, version: str | None
) -> None:
    daemon = await start_fake(version, patient=("WAIT", "SETTLED"))
    channel, _ = await open_and_send(daemon, workspace)
    # No session file to wait for: the fake writes none, so a wait would last HANG_GUARD.
    await daemon.wait_for(
        lambda n: n.channel == channel and n.method == "claude/turnEnded",
        timeout=HANG_GUARD / 5,
    )
    info = await daemon.request("claude/channelInfo", {"channelId": channel})

    assert info["cliVersion"] == version
