"""(k) The shared daemon: fan-out to several clients, catching up after being away, and
what the replay window costs. Synthetic CLI (synthetic_cli.py), clients read with the
minimal client of rpc_client.py.

- **Fan-out.** One chat streams a burst of N deltas (``rawMessages`` on, as in (a)) while 1,
  then 4 clients are attached, each through its own ``claude-sidecar connect`` bridge, each
  read by a thread of this process: notifications/s at each client, from the
  ``claude/sendMessage`` to the client's last delta. Peer, same run: the private daemon
  (``--stdio``, no bridge, one client), as in (a).
- **Catching up.** A client detaches, the chat streams 10,000 deltas (another client
  attached drives it and sees the turn end), then the first client sends ``claude/attach``
  with the last ``seq`` it saw: the time until the answer (every missed notification comes
  before it) and the notifications it got.
- **Replay window.** The shared daemon's VmRSS after its chat streamed, against the private
  daemon's after the same stream: what keeping the window (``--replay-window``, 4 MiB) costs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import synthetic_cli
from relay import Stream, pump
from rpc_client import Daemon, Peer, track

CONNECT = [sys.executable, "-m", "claude_sidecar", "connect"]


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class SharedRun:
    """``claude-sidecar serve`` on a socket of its own, with the synthetic CLI."""

    def __init__(self, cli: str, tmp: str) -> None:
        self.cli = cli
        self.socket = os.path.join(tempfile.mkdtemp(prefix="cs-", dir="/tmp"), "d.sock")
        self.log = os.path.join(tmp, "shared.log")
        with open(self.log, "ab") as log:
            self.serve = track(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "claude_sidecar",
                        "serve",
                        "--socket",
                        self.socket,
                        "--warm-pool=0",
                        f"--cli={cli}",
                    ],
                    stdin=subprocess.DEVNULL,
                    stderr=log,
                )
            )
        self.clients: list[Peer] = []

    def client(self, name: str) -> Peer:
        peer = Peer([*CONNECT, "--socket", self.socket], stderr_path=self.log)
        peer.request(
            "initialize",
            {
                "capabilities": {},
                "initializationOptions": {"clientName": name, "rawMessages": True},
            },
        )
        self.clients.append(peer)
        return peer

    def close(self) -> None:
        for peer in self.clients:
            peer.close()
        self.serve.terminate()
        self.serve.wait(30)


def _wait_for_socket(path: str) -> None:
    for _ in range(600):
        if os.path.exists(path):
            return
        time.sleep(0.05)
    raise TimeoutError(f"no daemon on {path}")


def _fan_out(run: SharedRun, clients: int, burst: int, workspace: str) -> list[Stream]:
    peers = [run.client(f"c{i}") for i in range(clients)]
    opened = peers[0].request(
        "claude/newChannel", {"cwd": workspace, "env": {"SYNTH_BURST": str(burst)}}
    )
    channel = opened["channelId"]
    for peer in peers[1:]:
        peer.request("claude/attach", {"channelId": channel})
    streams: list[Stream] = [Stream() for _ in peers]
    started = time.monotonic_ns()

    def read(i: int) -> None:
        streams[i] = pump(peers[i], started, 1)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(1, len(peers))]
    for thread in threads:
        thread.start()
    _, data = peers[0].request_frame("claude/sendMessage", {"channelId": channel, "text": "burst"})
    started = time.monotonic_ns()
    peers[0].write(data)
    streams[0] = pump(peers[0], started, 1)
    for thread in threads:
        thread.join(120)
    peers[0].request("claude/closeChannel", {"channelId": channel})
    for peer in peers:
        peer.close()
        run.clients.remove(peer)
    return streams


def _catch_up(run: SharedRun, missed: int, workspace: str) -> dict[str, Any]:
    away, driver = run.client("away"), run.client("driver")
    channel = away.request(
        "claude/newChannel", {"cwd": workspace, "env": {"SYNTH_BURST": str(missed)}}
    )["channelId"]
    driver.request("claude/attach", {"channelId": channel})
    # Attached again without afterSeq: the answer's seq is the last one it has seen.
    seen = away.request("claude/attach", {"channelId": channel})["seq"]
    away.request("claude/detach", {"channelId": channel})
    driver.request("claude/sendMessage", {"channelId": channel, "text": "burst"})
    pump(driver, time.monotonic_ns(), 1)
    started = time.monotonic()
    got: list[int] = []
    answer = away.request(
        "claude/attach",
        {"channelId": channel, "afterSeq": seen},
        on_other=lambda m: got.append(1),
    )
    elapsed = time.monotonic() - started
    if len(got) != answer["replayed"]:
        raise AssertionError(f"replayed {answer['replayed']}, but {len(got)} arrived")
    rss = _rss_kib(run.serve.pid)
    return {
        "missed": answer["replayed"],
        "caught_up_ms": elapsed * 1000,
        "per_s": answer["replayed"] / elapsed if elapsed else 0.0,
        "rss_kib": rss,
    }


def measure(quick: bool, log: Any = print) -> dict[str, Any]:
    """Every figure of (k), with the private daemon as the peer."""
    tmp = tempfile.mkdtemp(prefix="bench-shared-")
    cli = synthetic_cli.wrapper(tmp)
    workspace = tempfile.mkdtemp(prefix="ws-", dir=tmp)
    burst = 20_000 if quick else 100_000
    result: dict[str, Any] = {"burst": burst}

    log(f"(k) private daemon, 1 client, {burst} deltas")
    private = Daemon(cli=cli, stderr_path=os.path.join(tmp, "private.log"))
    private.initialize({"clientName": "bench", "rawMessages": True})
    channel = private.request(
        "claude/newChannel", {"cwd": workspace, "env": {"SYNTH_BURST": str(burst)}}
    )["channelId"]
    _, data = private.request_frame("claude/sendMessage", {"channelId": channel, "text": "burst"})
    started = time.monotonic_ns()
    private.write(data)
    result["private"] = pump(private, started, 1).per_s
    result["private_rss_kib"] = _rss_kib(private.pid)
    private.shutdown()

    run = SharedRun(cli, tmp)
    try:
        _wait_for_socket(run.socket)
        for clients in (1, 4):
            log(f"(k) shared daemon, {clients} client(s), {burst} deltas")
            streams = _fan_out(run, clients, burst, workspace)
            result[f"shared_{clients}"] = [s.per_s for s in streams]
        result["shared_rss_kib"] = _rss_kib(run.serve.pid)
        log("(k) catching up after 10,000 missed deltas")
        result["catch_up"] = _catch_up(run, 10_000, workspace)
    finally:
        run.close()
    return result


def table(result: dict[str, Any]) -> list[list[str]]:
    """Rows for run.py's table: what, shared daemon, peer."""
    one = result["shared_1"][0]
    four = result["shared_4"]
    catch = result["catch_up"]
    return [
        ["notifications/s, 1 client", f"{one:,.0f}", f"{result['private']:,.0f} (--stdio)"],
        [
            "notifications/s, 4 clients (each: min-max)",
            f"{min(four):,.0f}-{max(four):,.0f}",
            f"{one:,.0f} (1 client)",
        ],
        [
            f"attach after {catch['missed']:,} missed: caught up",
            f"{catch['caught_up_ms']:.0f} ms ({catch['per_s']:,.0f}/s)",
            "",
        ],
        [
            "daemon VmRSS after streaming",
            f"{result['shared_rss_kib'] / 1024:.1f} MiB",
            f"{result['private_rss_kib'] / 1024:.1f} MiB (--stdio)",
        ],
    ]
