"""A client that stops reading: the daemon's memory stays bounded and nothing is lost.

Policy: the daemon writes each notification to the client synchronously. When the
client does not read, the write blocks, the daemon stops reading the CLIs' output, and
the CLIs block on their own full pipes: back-pressure all the way to the CLI, memory
bounded by the pipe buffers, and every notification still delivered once the client
reads again.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.harness import FAKE_CLI, RawClient

pytestmark = pytest.mark.same_on_every_cli("runs the fake CLI, whatever CLI is under test")

DELTAS = 200_000


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def blocked_writing_to_a_pipe(pid: int) -> bool:
    """True if a thread of ``pid`` sleeps in a write to a full pipe."""
    for wchan in Path(f"/proc/{pid}/task").glob("*/wchan"):
        try:
            if "pipe_write" in wchan.read_text():
                return True
        except OSError:  # the thread ended meanwhile
            continue
    return False


# It reads the daemon's memory and where its threads block.
@pytest.mark.real_daemon_process
def test_a_client_that_stops_reading_holds_memory_bounded_and_loses_nothing(
    daemon_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    streamed = tmp_path / "streamed"
    client = RawClient(
        {
            **daemon_env,
            "FAKE_CLI_DELTAS": str(DELTAS),
            "FAKE_CLI_STREAMED": str(streamed),
            "FAKE_CLI_ANSWERS": os.devnull,
            "FAKE_CLI_LINES": os.devnull,
        }
    )
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"capabilities": {}, "initializationOptions": {"cliPath": str(FAKE_CLI)}},
        }
    )
    client.reply_to(0)
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "claude/newChannel",
            "params": {"cwd": str(workspace)},
        }
    )
    opened = client.reply_to(1)["result"]
    channel, cli = opened["channelId"], opened["pid"]
    before = rss_mib(client.process.pid)

    client.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "claude/sendMessage",
            "params": {"channelId": channel, "text": "go"},
        }
    )
    # The client reads nothing while the CLI streams at full speed, until the back-pressure
    # reaches the CLI: the daemon blocked writing to the client and the CLI blocked writing
    # to the daemon (or, were the daemon to buffer without bound, the CLI wrote everything).
    # Polls, with a hang guard: another process's sleeping in a write is no event to await.
    deadline = time.monotonic() + 120
    while not streamed.exists() and not (
        blocked_writing_to_a_pipe(client.process.pid) and blocked_writing_to_a_pipe(cli)
    ):
        assert time.monotonic() < deadline, "neither back-pressure nor the whole stream"
        time.sleep(0.05)
    stalled = rss_mib(client.process.pid)

    texts, seqs = [], []
    while True:
        message = client.receive()
        if message.get("method") == "claude/delta":
            texts.append(message["params"]["text"])
        if "params" in message and "seq" in message.get("params", {}):
            seqs.append(message["params"]["seq"])
        if message.get("method") == "claude/turnEnded":
            break

    assert stalled - before < 30, f"daemon grew {stalled - before:.0f} MiB while stalled"
    assert texts == [f"{i} " for i in range(DELTAS)]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    client.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    client.reply_to(3)
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert client.process.wait(20) == 0
