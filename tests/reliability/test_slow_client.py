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


def test_a_client_that_stops_reading_holds_memory_bounded_and_loses_nothing(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    client = RawClient(
        {
            **daemon_env,
            "FAKE_CLI_DELTAS": str(DELTAS),
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
    channel = client.reply_to(1)["result"]["channelId"]
    before = rss_mib(client.process.pid)

    client.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "claude/sendMessage",
            "params": {"channelId": channel, "text": "go"},
        }
    )
    time.sleep(3)  # the client reads nothing while the CLI streams at full speed
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
