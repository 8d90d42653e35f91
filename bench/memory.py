"""Section (c): the daemon's resident memory, idle and with 16 busy channels.

Run through run.py: ``uv run python bench/run.py --only c [--quick]``.

The daemon is started as ``python -m claude_sidecar --stdio`` directly (no ``uv`` in
between), so the pid read is the daemon's own Python process; VmRSS (resident now) and
VmHWM (the peak so far) come from /proc/<pid>/status, in MiB. The CLIs are separate
processes (synthetic_cli.py here), so they are not counted.

- idle: after ``initialize``, no channel;
- 16 channels: 16 channels open, after each streamed a burst of a few thousand text
  deltas through the daemon to the client (all at once).

Peer, measured the same way: a Python process with ``claude_agent_sdk`` imported
(idle, before any client connects) and then with 16 ``ClaudeSDKClient`` connected to the
same synthetic CLI, each after one turn of the same burst (sdk_peer.py reads its own
/proc/self/status).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import msgspec

import synthetic_cli
from relay import pump
from rpc_client import Daemon, proc_status, track

HERE = os.path.dirname(os.path.abspath(__file__))
CHANNELS = 16


def _mib(status: dict[str, int]) -> dict[str, float]:
    return {"rss_mib": status["VmRSS"] / 1024, "hwm_mib": status["VmHWM"] / 1024}


def daemon_memory(cli: str, burst: int, tmp: str) -> dict[str, Any]:
    daemon = Daemon(cli=cli, stderr_path=os.path.join(tmp, "daemon.log"))
    try:
        # rawMessages: pump counts the turns by their result lines (claude/message).
        daemon.initialize({"clientName": "bench", "rawMessages": True})
        with open(f"/proc/{daemon.pid}/cmdline", "rb") as f:
            cmdline = f.read().split(b"\0")
        if b"claude_sidecar" not in cmdline:
            raise AssertionError(f"pid {daemon.pid} is not the daemon: {cmdline!r}")
        time.sleep(0.5)
        idle = proc_status(daemon.pid)
        workspace = tempfile.mkdtemp(prefix="ws-", dir=tmp)
        requests = [
            daemon.request_frame(
                "claude/newChannel", {"cwd": workspace, "env": {"SYNTH_BURST": str(burst)}}
            )
            for _ in range(CHANNELS)
        ]
        daemon.write(b"".join(data for _, data in requests))
        channels = [
            daemon.wait_response(request_id, "claude/newChannel")["channelId"]
            for request_id, _ in requests
        ]
        daemon.write(
            b"".join(
                daemon.request_frame("claude/sendMessage", {"channelId": c, "text": "burst"})[1]
                for c in channels
            )
        )
        stream = pump(daemon, time.monotonic_ns(), CHANNELS)
        if stream.notifications != CHANNELS * burst:
            raise AssertionError(
                f"{stream.notifications} deltas arrived, {CHANNELS * burst} were sent"
            )
        time.sleep(0.5)
        loaded = proc_status(daemon.pid)
    finally:
        daemon.shutdown()
    return {"idle": _mib(idle), "loaded": _mib(loaded)}


def sdk_memory(cli: str, burst: int, tmp: str) -> dict[str, Any]:
    with open(os.path.join(tmp, "sdk.log"), "ab") as log:
        process = track(
            subprocess.Popen(
                [
                    sys.executable,
                    os.path.join(HERE, "sdk_peer.py"),
                    "--cli",
                    cli,
                    "--channels",
                    str(CHANNELS),
                    "--deltas",
                    str(burst),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
                stderr=log,
            )
        )
    assert process.stdin is not None and process.stdout is not None

    def ask(command: str | None) -> dict[str, Any]:
        if command is not None:
            process.stdin.write(command + "\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
        line = process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise EOFError(f"the SDK peer exited; see {tmp}/sdk.log")
        return msgspec.json.decode(line, type=dict[str, Any])

    try:
        idle = ask(None)["idle"]
        turn = ask("burst")
        if turn["deltas"] != CHANNELS * burst:
            raise AssertionError(f"SDK: {turn['deltas']} deltas, {CHANNELS * burst} sent")
        time.sleep(0.5)
        loaded = ask("status")
    finally:
        process.stdin.close()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return {"idle": _mib(idle), "loaded": _mib(loaded)}


def measure(quick: bool, log: Callable[[str], None] = print) -> dict[str, Any]:
    burst = 1000 if quick else 3000
    tmp = tempfile.mkdtemp(prefix="bench-memory-")
    cli = synthetic_cli.wrapper(tmp)
    log(f"(c) daemon: idle, then {CHANNELS} channels x {burst} deltas ...")
    daemon = daemon_memory(cli, burst, tmp)
    log(f"(c) SDK: idle, then {CHANNELS} clients x {burst} deltas ...")
    sdk = sdk_memory(cli, burst, tmp)
    shutil.rmtree(tmp, ignore_errors=True)  # kept, with the logs, when something failed
    return {"channels": CHANNELS, "deltas_per_channel": burst, "daemon": daemon, "sdk": sdk}


if __name__ == "__main__":
    print("run this through run.py: uv run python bench/run.py --only c", file=sys.stderr)
    print(json.dumps(measure(True), indent=1))
