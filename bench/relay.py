"""Sections (a) and (b): how fast and how promptly the daemon relays CLI deltas.

Both drive the daemon (``python -m claude_sidecar --stdio``) on the synthetic CLI
(synthetic_cli.py) and read it with the minimal client of rpc_client.py. Run them
through run.py: ``uv run python bench/run.py --only a,b [--quick]``.

(a) Relay throughput. Every channel's CLI streams a burst of text deltas (1 channel x
    100,000; 8 channels x 25,000 at once) as fast as the pipe takes them. Figure:
    ``claude/delta`` notifications per second arriving at the client, from writing the
    ``claude/sendMessage`` requests to the arrival of the last delta of every channel
    (median of the repeats). Peers in the same run, on the same CLI and the same bursts:

    - SDK: ``claude_agent_sdk.ClaudeSDKClient`` x N in one process (sdk_peer.py), stream
      events counted from the first ``query`` to the last delta;
    - relay: msgspec_relay.py, the least a relay can do (decode each line once, encode
      one frame, one write per read chunk) for notifications the daemon's size (the same
      ``entryId``): the practical limit on this machine.

    Every channel first plays one untimed 1-delta turn (first-turn work, such as the
    daemon's warm pool starting a spare CLI, is not what is measured). Ratios:
    daemon/SDK and daemon/relay (1.0 = as fast), of the medians, and "paired": the
    median over repeats of daemon/relay within one repeat (the two run back to back, so
    a slow spell of a shared machine touches both sides of a pair; which goes first
    alternates, and the pairs of each order are reported apart too). Also CPU per delta
    (user+sys of the relaying process's threads, /proc/<pid>/task/*/schedstat in ns,
    divided by the deltas), which is less disturbed by other load than wall time. With
    coalescing (``initializationOptions`` ``coalesceDeltasMs``) the daemon merges deltas:
    then notifications/s drops by design and the figure to compare is characters of delta
    text per second.

(b) Added latency. 8 channels each stream 200 deltas/s for 5 s; the CLI writes
    ``time.monotonic_ns()`` into each delta's text just before it writes the line, the
    client takes ``time.monotonic_ns()`` when the read completing the frame returns
    (CLOCK_MONOTONIC is system-wide on Linux). Figures: p50, p99 and max of arrival -
    write over all deltas, in ms, for the daemon and for the msgspec relay under the same
    load (after the same untimed warm-up turn as in (a)); with coalescing, for every
    delta merged into a notification, so the interval bounds the added wait.

The client's own ceiling (frames/s it can split and count on one core) is measured too,
so a peer near it would show up; figures are never checked against fixed numbers.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

import synthetic_cli
from rpc_client import Daemon, Framer, Peer, RpcError, kill_all, track

HERE = os.path.dirname(os.path.abspath(__file__))
COALESCE_MS = 16
TEXT_LEN = len(synthetic_cli.burst_text(0))
TICKS = os.sysconf("SC_CLK_TCK")


class _Params(msgspec.Struct):
    text: str = ""


class _Note(msgspec.Struct):
    params: _Params


_delta_decoder = msgspec.json.Decoder(_Note)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of ``pid``'s threads so far, in ns steps: the sum of
    /proc/<pid>/task/*/schedstat (the time each thread ran), where the kernel keeps it;
    else /proc/<pid>/stat, in clock ticks (10 ms: ~8% of a 1-channel turn's CPU). A thread
    that ends between two readings leaves the sum: none does during a measured turn."""
    try:
        ran_ns = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ran_ns += int(f.read().split()[0])
        return ran_ns / 1e9
    except (OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS


@dataclass
class Stream:
    """What one turn on every channel delivered to the client."""

    notifications: int = 0
    chars: int = 0
    elapsed_s: float = 0.0
    cpu_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def per_s(self) -> float:
        return self.notifications / self.elapsed_s if self.elapsed_s else 0.0

    @property
    def chars_per_s(self) -> float:
        return self.chars / self.elapsed_s if self.elapsed_s else 0.0


def pump(
    peer: Peer,
    started_ns: int,
    results: int,
    *,
    decode_text: bool = False,
    latency: bool = False,
    timeout: float = 120,
) -> Stream:
    """Read frames until ``results`` turn results came; count (and time) the deltas.

    Bodies are not decoded, except the text of deltas when ``decode_text`` (coalesced
    deltas carry a variable amount of text) or ``latency`` (the text is the timestamps);
    otherwise every delta carries one burst text of known length.
    """
    stream = Stream()
    seen = last = 0
    lat = stream.latencies_ms
    for now, body in peer.bodies(timeout):
        if b'"claude/delta"' in body:
            stream.notifications += 1
            last = now
            if latency:
                text = _delta_decoder.decode(body).params.text
                for stamp in text.split("|")[:-1]:
                    lat.append((now - int(stamp)) / 1e6)
                stream.chars += len(text)
            elif decode_text:
                stream.chars += len(_delta_decoder.decode(body).params.text)
            else:
                stream.chars += TEXT_LEN
        elif b'"type":"result"' in body:
            seen += 1
            if seen == results:
                break
        elif b'"error":{' in body:
            message = json.loads(body)
            if "error" in message:
                raise RpcError(str(message.get("id")), message["error"])
    stream.elapsed_s = (last - started_ns) / 1e9
    return stream


# ------------------------------------------------------------ the three relays


class DaemonRelay:
    """The daemon with N channels on the synthetic CLI."""

    name = "daemon"

    def __init__(
        self, cli: str, channels: int, burst: int, tmp: str, coalesce_ms: int | None = None
    ) -> None:
        self.channels: list[str] = []
        self.coalesce_ms = coalesce_ms
        self.unavailable: str | None = None
        self.peer = Daemon(cli=cli, stderr_path=os.path.join(tmp, "daemon.log"))
        try:
            self.peer.initialize(
                # rawMessages: the relay forwards every CLI line too, so both do the same work.
                {"clientName": "bench", "rawMessages": True}
                | ({"coalesceDeltasMs": coalesce_ms} if coalesce_ms else {})
            )
        except RpcError as e:
            self.unavailable = str(e)
            return
        workspace = tempfile.mkdtemp(prefix="ws-", dir=tmp)
        ids = [
            self.peer.request_frame(
                "claude/newChannel", {"cwd": workspace, "env": {"SYNTH_BURST": str(burst)}}
            )
            for _ in range(channels)
        ]
        self.peer.write(b"".join(data for _, data in ids))
        for request_id, _ in ids:
            self.channels.append(
                self.peer.wait_response(request_id, "claude/newChannel")["channelId"]
            )

    def turn(self, text: str, *, decode_text: bool = False, latency: bool = False) -> Stream:
        frames = b"".join(
            self.peer.request_frame("claude/sendMessage", {"channelId": c, "text": text})[1]
            for c in self.channels
        )
        cpu = cpu_seconds(self.peer.pid)
        started = time.monotonic_ns()
        self.peer.write(frames)
        stream = pump(
            self.peer, started, len(self.channels), decode_text=decode_text, latency=latency
        )
        stream.cpu_s = cpu_seconds(self.peer.pid) - cpu
        return stream

    def close(self) -> None:
        self.peer.shutdown()


class MsgspecRelay:
    """msgspec_relay.py with N synthetic CLIs: the practical limit."""

    name = "relay"

    def __init__(self, cli: str, channels: int, burst: int, tmp: str) -> None:
        self.channels = channels
        self.peer = Peer(
            [
                sys.executable,
                os.path.join(HERE, "msgspec_relay.py"),
                "--cli",
                cli,
                "--channels",
                str(channels),
            ],
            env={**os.environ, "SYNTH_BURST": str(burst)},
            stderr_path=os.path.join(tmp, "relay.log"),
        )
        next(self.peer.bodies(60))  # relay/ready

    def turn(self, text: str, *, decode_text: bool = False, latency: bool = False) -> Stream:
        cpu = cpu_seconds(self.peer.pid)
        started = time.monotonic_ns()
        self.peer.write(b"go %s\n" % text.encode())
        stream = pump(self.peer, started, self.channels, decode_text=decode_text, latency=latency)
        stream.cpu_s = cpu_seconds(self.peer.pid) - cpu
        return stream

    def close(self) -> None:
        self.peer.close()


class SdkRelay:
    """sdk_peer.py: N ClaudeSDKClient in one process."""

    name = "SDK"

    def __init__(self, cli: str, channels: int, burst: int, tmp: str) -> None:
        with open(os.path.join(tmp, "sdk.log"), "ab") as log:
            self.process = track(
                subprocess.Popen(
                    [
                        sys.executable,
                        os.path.join(HERE, "sdk_peer.py"),
                        "--cli",
                        cli,
                        "--channels",
                        str(channels),
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
        self.ask(None)

    def ask(self, command: str | None) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        if command is not None:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise EOFError("the SDK peer exited; see sdk.log")
        return msgspec.json.decode(line, type=dict[str, Any])

    def turn(self, text: str, **_: Any) -> Stream:
        cpu = cpu_seconds(self.process.pid)
        answer = self.ask(text)
        deltas = answer["deltas"]
        return Stream(
            notifications=deltas,
            chars=deltas * TEXT_LEN,
            elapsed_s=answer["elapsed_ns"] / 1e9,
            cpu_s=cpu_seconds(self.process.pid) - cpu,
        )

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def warm_up(relays: list[Any]) -> None:
    """One untimed 1-delta turn on every channel of every relay, then a pause: the
    figures are for the steady state, not for first-turn work (the daemon starts a
    spare CLI for its warm pool when a channel's first turn ends)."""
    for relay in relays:
        if not getattr(relay, "unavailable", None):
            relay.turn("burst 1")
    time.sleep(1.0)


def client_ceiling(frames: int = 200_000) -> float:
    """Frames/s this client splits and counts on one core (the same loop as ``pump``)."""
    body = (
        b'{"method":"claude/delta","params":{"channelId":"ch-1","seq":123456,'
        b'"kind":"text","index":0,"text":"w000123 "},"jsonrpc":"2.0"}'
    )
    data = b"Content-Length: %d\r\n\r\n%s" % (len(body), body) * frames
    chunks = [data[i : i + 65536] for i in range(0, len(data), 65536)]
    framer, count, last = Framer(), 0, 0
    started = time.perf_counter()
    for chunk in chunks:
        now = time.monotonic_ns()
        for body in framer.feed(chunk):
            if b'"claude/delta"' in body:
                count += 1
                last = now
            elif b'"type":"result"' in body:
                pass
    elapsed = time.perf_counter() - started
    return count / elapsed if last else 0.0


# ------------------------------------------------------------ (a)


def _median_stream(streams: list[Stream]) -> dict[str, Any]:
    """Median figures over repeats (each figure its own median) plus every repeat."""
    return {
        "per_s": statistics.median(s.per_s for s in streams),
        "best_per_s": max(s.per_s for s in streams),
        "chars_per_s": statistics.median(s.chars_per_s for s in streams),
        "notifications": streams[0].notifications,
        "cpu_us_per_delta": None,  # filled by the caller, who knows the delta count
        "runs": [
            {
                "notifications": s.notifications,
                "chars": s.chars,
                "elapsed_s": round(s.elapsed_s, 4),
                "cpu_s": s.cpu_s,
            }
            for s in streams
        ],
    }


def _paired(daemon: list[Stream], relay: list[Stream]) -> dict[str, Any]:
    """daemon/relay per repeat (the two ran one after the other), then the median: a
    slow spell of a shared machine touches both sides of a pair, unlike two medians
    taken apart. Also the range over the repeats, and the medians of the repeats the
    daemon ran first (even ones) and of those the relay ran first (odd ones)."""
    per_s = [d.per_s / r.per_s for d, r in zip(daemon, relay, strict=True)]
    cpu = [d.cpu_s / r.cpu_s for d, r in zip(daemon, relay, strict=True)]
    return {
        "per_s": statistics.median(per_s),
        "cpu": statistics.median(cpu),
        "per_s_range": [min(per_s), max(per_s)],
        "cpu_range": [min(cpu), max(cpu)],
        "daemon_first": {
            "per_s": statistics.median(per_s[::2]),
            "cpu": statistics.median(cpu[::2]),
        },
        "relay_first": (
            {"per_s": statistics.median(per_s[1::2]), "cpu": statistics.median(cpu[1::2])}
            if len(per_s) > 1
            else None
        ),
    }


def throughput(quick: bool, repeats: int, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Section (a): every relay on every configuration, repeats interleaved."""
    configs = [(1, 20_000), (8, 5_000)] if quick else [(1, 100_000), (8, 25_000)]
    tmp = tempfile.mkdtemp(prefix="bench-relay-")
    cli = synthetic_cli.wrapper(tmp)
    out: dict[str, Any] = {
        "client_ceiling_frames_per_s": client_ceiling(),
        "coalesce_ms": COALESCE_MS,
        "configs": [],
    }
    for channels, burst in configs:
        total = channels * burst
        log(f"(a) {channels} channel(s) x {burst} deltas ...")
        relays: list[Any] = []
        try:
            # The daemon and the relay back to back in each repeat: they are paired.
            relays.append(DaemonRelay(cli, channels, burst, tmp))
            relays.append(MsgspecRelay(cli, channels, burst, tmp))
            relays.append(DaemonRelay(cli, channels, burst, tmp, coalesce_ms=COALESCE_MS))
            relays.append(SdkRelay(cli, channels, burst, tmp))
            warm_up(relays)
            keys = ["daemon", "relay", "daemon_coalesced", "sdk"]
            streams: dict[str, list[Stream]] = {k: [] for k in keys}
            for repeat in range(repeats):
                # The daemon and the relay swap places every repeat (the daemon first on
                # even ones), so neither always runs in the warmer or the cooler slot.
                order = [0, 1, 2, 3] if repeat % 2 == 0 else [1, 0, 2, 3]
                for key, relay in ((keys[i], relays[i]) for i in order):
                    if getattr(relay, "unavailable", None):
                        continue
                    stream = relay.turn("burst", decode_text=(key == "daemon_coalesced"))
                    if stream.chars != total * TEXT_LEN:
                        raise AssertionError(
                            f"{key}: {stream.chars} characters of delta "
                            f"text arrived, {total * TEXT_LEN} were sent"
                        )
                    streams[key].append(stream)
                    time.sleep(0.2)
            row: dict[str, Any] = {"channels": channels, "deltas_per_channel": burst}
            for key in keys:
                if not streams[key]:
                    row[key] = None
                    continue
                figures = _median_stream(streams[key])
                figures["cpu_us_per_delta"] = (
                    statistics.median(s.cpu_s for s in streams[key]) / total * 1e6
                )
                row[key] = figures
            if streams["daemon"] and streams["relay"]:
                row["paired"] = _paired(streams["daemon"], streams["relay"])
            coalesced = relays[2]
            if coalesced.unavailable:
                row["coalescing"] = f"not available: {coalesced.unavailable}"
            elif row["daemon_coalesced"]["notifications"] >= total:
                row["coalescing"] = "no effect: one notification per delta"
            else:
                row["coalescing"] = "on"
            out["configs"].append(row)
        except BaseException:
            kill_all()
            raise
        finally:
            for relay in relays:
                relay.close()
    shutil.rmtree(tmp, ignore_errors=True)  # kept, with the logs, when something failed
    return out


# ------------------------------------------------------------ (b)


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    n = len(ordered)
    return {
        "p50_ms": ordered[n // 2],
        "p99_ms": ordered[min(n - 1, int(n * 0.99))],
        "max_ms": ordered[-1],
        "samples": n,
    }


def latency(quick: bool, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Section (b): paced deltas on 8 channels through the daemon (coalescing off, on)
    and through the msgspec relay, one after the other."""
    channels, rate = 8, 200
    seconds = 2 if quick else 5
    tmp = tempfile.mkdtemp(prefix="bench-latency-")
    cli = synthetic_cli.wrapper(tmp)
    command = f"paced {rate} {seconds}"
    out: dict[str, Any] = {
        "channels": channels,
        "rate_per_channel": rate,
        "seconds": seconds,
        "coalesce_ms": COALESCE_MS,
    }
    makers: list[tuple[str, Callable[[], DaemonRelay | MsgspecRelay]]] = [
        ("daemon", lambda: DaemonRelay(cli, channels, 0, tmp)),
        ("daemon_coalesced", lambda: DaemonRelay(cli, channels, 0, tmp, COALESCE_MS)),
        ("relay", lambda: MsgspecRelay(cli, channels, 0, tmp)),
    ]
    for key, make in makers:
        log(f"(b) {key}: {channels} channels x {rate} deltas/s for {seconds} s ...")
        relay = make()
        try:
            if unavailable := getattr(relay, "unavailable", None):
                out[key] = None
                out["coalescing"] = f"not available: {unavailable}"
                continue
            warm_up([relay])
            stream = relay.turn(command, latency=True)
            expected = channels * rate * seconds
            if len(stream.latencies_ms) != expected:
                raise AssertionError(
                    f"{key}: {len(stream.latencies_ms)} timestamps arrived, {expected} were sent"
                )
            out[key] = {
                **_percentiles(stream.latencies_ms),
                "notifications": stream.notifications,
                "cpu_s": stream.cpu_s,
            }
            if key == "daemon_coalesced":
                out["coalescing"] = (
                    "on"
                    if stream.notifications < expected
                    else "no effect: one notification per delta"
                )
        finally:
            relay.close()
    shutil.rmtree(tmp, ignore_errors=True)  # kept, with the logs, when something failed
    return out


if __name__ == "__main__":
    print("run these through run.py: uv run python bench/run.py --only a,b", file=sys.stderr)
    try:
        print(json.dumps({"a": throughput(True, 1), "b": latency(True)}, indent=1))
    finally:
        kill_all()
