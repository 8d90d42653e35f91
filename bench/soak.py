"""Endurance: one daemon, many chats, minutes of use; does everything come back?

Eight workers (``--channels``) each keep a chat busy for their share of ``--turns`` turns,
cycling through what an editor session does: plain streamed answers, a Write the user
allows, a Bash the user denies, a long answer interrupted mid-stream, a fork (one turn on
it, then closed) and a rewind of the last write (dry run, then for real); every
``--churn`` turns a worker closes its chat and opens a new one. The real CLI runs against
the stand-in model.

At the start (after ``initialize``) and at the end (every chat closed, a few seconds to
settle) the daemon's own counts are read with ``kill -USR1`` (claude_sidecar/runtime/diagnostics.py:
open file descriptors, asyncio tasks, child processes, channels, RSS). Printed side by side;
then the checks: every message sent got its ``claude/turnEnded`` (nothing lost), every
channel's ``seq`` ran 1, 2, 3, ... (gap-free), descriptors, tasks and children back to the
baseline, and no CLI process outlives the daemon (zero orphans). RSS is reported, not
judged: CPython keeps freed memory in its arenas.

Run: ``uv run python bench/soak.py [--channels 8] [--turns 600] [--churn 12]``; one to a few
minutes on 2 cores. Exit status 1 if a check failed. Figures go to
``bench/results/soak-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import itertools
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from claude_sidecar.protocol import api
from claude_sidecar.scripted import ScriptedModel, load_scenario
from lsprotocol.converters import get_converter

from first_token import DaemonClient

RESULTS = Path(__file__).resolve().parent / "results"

SCENARIO = {
    "rules": [
        {
            "match": "(?i)write",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {
                                "file_path": "{cwd}/notes.md",
                                "content": "# Notes\nwritten in the soak\n",
                            },
                        }
                    }
                ],
                [{"text": "Written."}],
            ],
        },
        {
            "match": "(?i)bash",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {"command": "echo soak", "description": "echo"},
                        }
                    }
                ],
                [{"text": "Not run, as you wish."}],
            ],
        },
        {"match": "(?i)long", "steps": [[{"text": "word " * 300}]], "chunk": 5, "delay": 0.01},
    ],
    "default": [[{"thinking": "A short thought."}, {"text": "A plain streamed answer."}]],
    "chunk": 16,
}

ACTIONS = ("plain", "write", "bash", "interrupt", "fork", "rewind")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class Soak(DaemonClient):
    """The daemon under a pygls client, with the bookkeeping the checks need."""

    def __init__(self, log_file: Path) -> None:
        super().__init__("soak")
        self.log_file = log_file
        self.seqs: dict[str, list[int]] = defaultdict(list)
        self.sent: dict[str, str] = {}  # messageId -> channelId
        self.ended: set[str] = set()  # messageIds with a turnEnded
        self.outcomes: dict[str, int] = defaultdict(int)
        self.cli_pids: set[int] = set()
        self.deny: set[str] = set()  # channels whose next ask is denied
        self.asks = 0
        self._turn_waiters: dict[str, asyncio.Future[dict[str, Any]]] = {}
        # respondPermission answers in flight (kept so none is collected mid-way).
        self._answers: set[asyncio.Future[Any]] = set()
        self._deltas: dict[str, asyncio.Event] = {}
        for method in api.NOTIFICATIONS:
            # pygls tags handlers with attributes: a fresh function per method.
            self.client.feature(method)(self._recorder(method))

    def _recorder(self, method: str) -> Any:
        def record(params: Any) -> None:
            p = params if isinstance(params, dict) else get_converter().unstructure(params)
            channel = p["channelId"]
            self.seqs[channel].append(p["seq"])
            if method == "claude/delta":
                event = self._deltas.get(channel)
                if event:
                    event.set()
            elif method == "claude/turnEnded":
                self.outcomes[p["outcome"]] += 1
                for message_id in p.get("messageIds") or []:
                    self.ended.add(message_id)
                    waiter = self._turn_waiters.pop(message_id, None)
                    if waiter and not waiter.done():
                        waiter.set_result(p)
            elif method == "claude/permissionRequest" and p.get("autoDecision") is None:
                self.asks += 1
                decision = "deny" if channel in self.deny else "allow"
                self.deny.discard(channel)
                answer = asyncio.ensure_future(
                    self.request(
                        "claude/respondPermission",
                        {
                            "channelId": channel,
                            "requestId": p["requestId"],
                            "decision": decision,
                            **({"message": "not in the soak"} if decision == "deny" else {}),
                        },
                    )
                )
                self._answers.add(answer)
                answer.add_done_callback(self._answers.discard)

        return record

    async def open(self, cwd: str) -> str:
        result = await self.request("claude/newChannel", {"cwd": cwd})
        self.cli_pids.add(result["pid"])
        channel_id = result["channelId"]
        assert isinstance(channel_id, str), result
        return channel_id

    async def turn(
        self, channel: str, text: str, interrupt: bool = False
    ) -> tuple[str, dict[str, Any]]:
        """Send ``text``; with ``interrupt``, stop it at its first delta.

        Waits for its turnEnded.
        """
        self._deltas[channel] = asyncio.Event()
        sent = await self.request("claude/sendMessage", {"channelId": channel, "text": text})
        message_id = sent["messageId"]
        self.sent[message_id] = channel
        waiter = asyncio.get_running_loop().create_future()
        if message_id in self.ended:
            return message_id, {}
        self._turn_waiters[message_id] = waiter
        if interrupt:
            await asyncio.wait_for(self._deltas[channel].wait(), 60)
            await self.request("claude/interrupt", {"channelId": channel})
        return message_id, await asyncio.wait_for(waiter, 120)

    async def stats(self) -> dict[str, int]:
        """The daemon's own counts (``kill -USR1``: one ``stats:`` log line)."""
        before = self.log_file.stat().st_size if self.log_file.exists() else 0
        os.kill(self.pid, signal.SIGUSR1)
        for _ in range(200):
            await asyncio.sleep(0.05)
            text = self.log_file.read_text()[before:]
            if match := re.search(r"stats: (.*)", text):
                return {k: int(v) for k, v in (pair.split("=") for pair in match.group(1).split())}
        raise RuntimeError("the daemon logged no stats line")

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()  # type: ignore[no-untyped-call]  # pygls's Client.stop is unannotated


async def worker(
    soak: Soak, index: int, turns: int, churn: int, root: Path, counts: dict[str, int]
) -> None:
    cwd = root / f"w{index}"
    cwd.mkdir()
    channel = await soak.open(str(cwd))
    last_write: str | None = None
    actions = itertools.islice(itertools.cycle(ACTIONS), index, None)
    for n in range(turns):
        if n and n % churn == 0:
            await soak.request("claude/closeChannel", {"channelId": channel})
            channel = await soak.open(str(cwd))
            counts["reopened"] += 1
            last_write = None
        action = next(actions)
        if action == "write":
            last_write, _ = await soak.turn(channel, "write the notes")
        elif action == "bash":
            soak.deny.add(channel)
            await soak.turn(channel, "run bash")
        elif action == "interrupt":
            await soak.turn(channel, "something long", interrupt=True)
        elif action == "fork":
            await soak.turn(channel, "hello before a fork")
            fork = await soak.request("claude/forkSession", {"channelId": channel})
            soak.cli_pids.add(fork["pid"])
            await soak.turn(fork["channelId"], "hello on the fork")
            await soak.request("claude/closeChannel", {"channelId": fork["channelId"]})
            counts["forks"] += 1
        elif action == "rewind" and last_write:
            await soak.request(
                "claude/rewindFiles",
                {"channelId": channel, "messageId": last_write, "dryRun": True},
            )
            await soak.request(
                "claude/rewindFiles", {"channelId": channel, "messageId": last_write}
            )
            counts["rewinds"] += 1
            await soak.turn(channel, "hello after the rewind")
        else:
            await soak.turn(channel, "hello")
        counts["turns"] += 1
    await soak.request("claude/closeChannel", {"channelId": channel})


def _gaps(seqs: dict[str, list[int]]) -> dict[str, str]:
    bad = {}
    for channel, got in seqs.items():
        if got != list(range(1, len(got) + 1)):
            bad[channel] = f"{got[:5]}... ({len(got)} notifications)"
    return bad


async def run(channels: int, turns: int, churn: int) -> tuple[dict[str, Any], list[str]]:
    root = Path(tempfile.mkdtemp(prefix="soak-"))
    with ScriptedModel(load_scenario(SCENARIO)) as model:
        soak = Soak(root / "daemon.log")
        await soak.start(
            model.url,
            {"clientName": "soak", "warmPool": {"size": 0}},
            log_level="INFO",
            log_file=str(soak.log_file),
        )
        await asyncio.sleep(1.0)
        start = await soak.stats()
        log(f"start: {start}")
        counts: dict[str, int] = defaultdict(int)
        began = time.monotonic()
        per = [turns // channels + (i < turns % channels) for i in range(channels)]

        async def progress() -> None:
            while True:
                await asyncio.sleep(15)
                log(f"  {counts['turns']}/{turns} turns, {time.monotonic() - began:.0f} s")

        reporter = asyncio.ensure_future(progress())
        try:
            await asyncio.gather(
                *(worker(soak, i, per[i], churn, root, counts) for i in range(channels))
            )
        finally:
            reporter.cancel()
        elapsed = time.monotonic() - began
        await asyncio.sleep(3.0)  # closed CLIs exit, background tasks finish
        end = await soak.stats()
        log(f"end:   {end}")
        daemon_pid = soak.pid
        await soak.stop()
        await asyncio.sleep(1.0)
        orphans = sorted(p for p in soak.cli_pids | {daemon_pid} if _alive(p))

    lost = sorted(m for m in soak.sent if m not in soak.ended)
    gaps = _gaps(soak.seqs)
    failures = []
    if lost:
        failures.append(f"{len(lost)} messages got no turnEnded: {lost[:5]}")
    if gaps:
        failures.append(f"seq gaps on {len(gaps)} channels: {dict(list(gaps.items())[:3])}")
    for key in ("fds", "tasks", "children", "channels"):
        if end[key] != start[key]:
            failures.append(f"{key}: {start[key]} at the start, {end[key]} at the end")
    if orphans:
        failures.append(f"processes outlived the daemon: {orphans}")
    figures = {
        "channels": channels,
        "turns": counts["turns"],
        "elapsedSeconds": round(elapsed, 1),
        "messagesSent": len(soak.sent),
        "turnsEnded": len(soak.ended),
        "outcomes": dict(soak.outcomes),
        "permissionAsks": soak.asks,
        "chatsOpened": channels + counts["reopened"],
        "forks": counts["forks"],
        "rewinds": counts["rewinds"],
        "cliProcesses": len(soak.cli_pids),
        "start": start,
        "end": end,
        "seqChecked": sum(len(v) for v in soak.seqs.values()),
        "orphans": orphans,
    }
    return figures, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument(
        "--churn", type=int, default=12, help="turns of a chat before it is closed and reopened"
    )
    args = parser.parse_args()
    figures, failures = asyncio.run(run(args.channels, args.turns, args.churn))
    start, end = figures["start"], figures["end"]
    print(
        f"soak: {figures['channels']} channels, {figures['turns']} turns in "
        f"{figures['elapsedSeconds']} s; {figures['chatsOpened']} chats opened, "
        f"{figures['forks']} forks, {figures['rewinds']} rewinds, "
        f"{figures['permissionAsks']} permission asks, outcomes {figures['outcomes']}, "
        f"{figures['cliProcesses']} CLI processes"
    )
    print(f"{'':14}{'start':>10}{'end':>10}")
    for key, label in (
        ("fds", "open fds"),
        ("tasks", "asyncio tasks"),
        ("children", "children"),
        ("channels", "channels"),
        ("rssKib", "RSS (KiB)"),
    ):
        print(f"{label:14}{start[key]:>10}{end[key]:>10}")
    print(
        f"nothing lost: {figures['turnsEnded']}/{figures['messagesSent']} messages ended; "
        f"{figures['seqChecked']} notifications gap-free; orphans: {len(figures['orphans'])}"
    )
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    (RESULTS / f"soak-{stamp}.json").write_text(
        json.dumps({"figures": figures, "failures": failures}, indent=2)
    )
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
