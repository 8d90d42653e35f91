"""(m) The overview of every chat (claude/watchChannels) while 8 chats stream: what keeping
it current costs the client that shows it.

The shared daemon (``claude-sidecar serve``) runs the synthetic CLI (synthetic_cli.py). An
editor (its ``claude-sidecar connect`` bridge, read by a thread of this process) opens 8
chats and sends each a prompt that streams RATE deltas a second for SECONDS (``paced``),
all at once; a second client, the overview, sent ``claude/watchChannels`` first and only
reads. Measured at the overview, from the first prompt's send to the last chat's turn end:

- ``claude/channelsChanged`` notifications: how many, per second, their bytes, and the
  chats they carried (a chat is re-sent when its state changes, at once, and while it only
  streams at most every 2 s);
- how late the overview heard of each chat going ``running`` and back to ``idle`` after
  the editor did (the editor's ``claude/status`` arrival to the overview's
  ``claude/channelsChanged`` arrival showing the same state, both clocks of this machine);
- beside them, the editor's ``claude/delta`` notifications in the same span: what the
  overview is spared.

Run: ``uv run python bench/overview.py [--chats 8] [--rate 200] [--seconds 10]``. Nothing
asserts a figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import synthetic_cli
from rpc_client import Peer
from shared import SharedRun, _wait_for_socket

ROOT = Path(__file__).resolve().parents[1]


def _read_overview(overview: Peer, stop: threading.Event, seen: list[tuple[int, bytes]]) -> None:
    """Every notification of the overview, with its arrival, until ``stop``."""
    while not stop.is_set():
        try:
            for now, body in overview.bodies(1.0):
                seen.append((now, body))
                if stop.is_set():
                    return
        except TimeoutError:
            continue  # a quiet second: look at ``stop`` again


def run(chats: int = 8, rate: float = 200, seconds: float = 10) -> dict[str, Any]:
    """One round: ``chats`` chats streaming ``rate`` deltas/s for ``seconds``, watched."""
    tmp = tempfile.mkdtemp(prefix="bench-overview-")
    cli = synthetic_cli.wrapper(tmp)
    shared = SharedRun(cli, tmp)
    try:
        _wait_for_socket(shared.socket)
        editor = shared.client("editor")
        overview = shared.client("overview")
        workspace = tempfile.mkdtemp(prefix="ws-", dir=tmp)
        ids = [
            editor.request("claude/newChannel", {"cwd": workspace})["channelId"]
            for _ in range(chats)
        ]
        watched = overview.request("claude/watchChannels", {})
        stop = threading.Event()
        seen: list[tuple[int, bytes]] = []
        reader = threading.Thread(target=_read_overview, args=(overview, stop, seen), daemon=True)
        reader.start()
        started = time.monotonic_ns()
        for channel in ids:
            editor.send(
                {
                    "jsonrpc": "2.0",
                    "id": f"send-{channel}",
                    "method": "claude/sendMessage",
                    "params": {"channelId": channel, "text": f"paced {rate} {seconds}"},
                }
            )
        deltas = 0
        states: dict[tuple[str, str], int] = {}  # (chat, state) -> when the editor heard it
        ended: set[str] = set()
        for now, body in editor.bodies(seconds + 60):
            if b'"claude/delta"' in body:
                deltas += 1
                continue
            if b'"claude/status"' in body or b'"claude/turnEnded"' in body:
                message = json.loads(body)
                params = message["params"]
                if message["method"] == "claude/status":
                    # Each state's first time after the prompts went out (the chats'
                    # opening statuses came before).
                    if now >= started:
                        states.setdefault((params["channelId"], params["state"]), now)
                else:
                    ended.add(params["channelId"])
                    if len(ended) == chats:
                        break
        finished = time.monotonic_ns()
        # The last idle status reaches the overview within the coalescing window: wait
        # until it has, or give up after 5 s.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            idle = sum(1 for _, body in seen if b'"idle"' in body)
            if idle and all(
                any(
                    c["channelId"] == chat and c["state"] == "idle"
                    for _, body in seen
                    for c in json.loads(body)["params"]["channels"]
                )
                for chat in ids
            ):
                break
            time.sleep(0.05)
        stop.set()
        reader.join(5)
    finally:
        shared.close()
    notes = [(at, json.loads(body)) for at, body in seen if b'"claude/channelsChanged"' in body]
    span_s = (finished - started) / 1e9
    late: dict[str, list[float]] = {"running": [], "idle": []}
    for (chat, state), editor_at in states.items():
        if state not in late:
            continue
        heard = next(
            (
                at
                for at, note in notes
                if any(
                    c["channelId"] == chat and c["state"] == state
                    for c in note["params"]["channels"]
                )
                and at >= editor_at - 50_000_000
            ),
            None,
        )
        if heard is not None:
            late[state].append((heard - editor_at) / 1e6)
    during = [note for at, note in notes if started <= at <= finished]
    return {
        "chats": chats,
        "rate": rate,
        "seconds": seconds,
        "watched_at_start": len(watched["channels"]),
        "span_s": span_s,
        "overview_notifications": len(during),
        "overview_per_s": len(during) / span_s,
        "overview_bytes": sum(len(json.dumps(n)) for n in during),
        "overview_chats_carried": sum(len(n["params"]["channels"]) for n in during),
        "editor_deltas": deltas,
        "editor_deltas_per_s": deltas / span_s,
        "running_late_ms": late["running"],
        "idle_late_ms": late["idle"],
    }


def format_m(result: dict[str, Any]) -> str:
    """The figures as a few lines."""

    def spread(values: list[float]) -> str:
        if not values:
            return "-"
        return f"median {statistics.median(values):.0f} ms, max {max(values):.0f} ms"

    return "\n".join(
        [
            f"(m) overview while {result['chats']} chats stream {result['rate']:.0f} deltas/s "
            f"for {result['seconds']:.0f} s (shared daemon, synthetic CLI), "
            f"{result['span_s']:.1f} s from the first send to the last turn's end:",
            f"  overview: {result['overview_notifications']} claude/channelsChanged "
            f"({result['overview_per_s']:.1f}/s, {result['overview_bytes'] / 1e3:.1f} KB, "
            f"{result['overview_chats_carried']} chats carried)",
            f"  editor, same span: {result['editor_deltas']} claude/delta "
            f"({result['editor_deltas_per_s']:.0f}/s)",
            f"  overview heard a chat go running: {spread(result['running_late_ms'])}; "
            f"idle: {spread(result['idle_late_ms'])} after the editor did",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=8)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    result = run(args.chats, args.rate, args.seconds)
    print(format_m(result))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "overview.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
