"""Section (e): how long after an Edit lands on disk the client gets ``claude/fileUpdated``.

Run through run.py: ``uv run python bench/run.py --only e [--quick]``.

The real Claude Code CLI (found as the daemon finds it: the one bundled with
claude-agent-sdk) talks to the stand-in model (``claude_sidecar.scripted``), whose
scenario answers a prompt with one ``Edit`` tool use: ``old_string`` is the prompt (a
unique line of the file), ``new_string`` that line with a suffix; then "Edited.". The
channel runs in ``acceptEdits``, so nothing asks. Every turn edits a different line;
each channel first plays one untimed turn without an edit, then a 3 s pause (the end of
a first turn makes the daemon start a spare CLI for its warm pool).

Figure: arrival of ``claude/fileUpdated`` at the client (``time.time_ns()`` when the read
completing its frame returned) minus the file's ``st_mtime_ns`` after the edit. This
covers the CLI calling the PostToolUse hook after its write, the daemon reading the file
and diffing it against the PreToolUse copy, and encoding and sending a notification that
carries both contents and the diff. p50 and max over the edits, in ms, for a
10,000-line file and (the peer row) for a 10-line file, each in its own channel.

Caveat: Linux stamps mtime with the coarse real-time clock (resolution reported in the
JSON as ``mtime_resolution_ms``, typically 1-4 ms), so each figure may read up to that
much too high; it hits both rows alike.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from claude_sidecar.scripted import ScriptedModel, load_scenario

from first_token import daemon_env
from rpc_client import Daemon

SUFFIX = " (edited by the bench)"
SCENARIO = {
    "rules": [
        {
            "name": "edit",
            "match": "^line [0-9]+:",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Edit",
                            "input": {
                                "file_path": "{cwd}/target.txt",
                                "old_string": "{prompt}",
                                "new_string": "{prompt}" + SUFFIX,
                            },
                        }
                    }
                ],
                [{"text": "Edited."}],
            ],
        }
    ],
    "default": [[{"text": "?"}]],
}
CLOCK_REALTIME_COARSE = 5  # Linux


def line(i: int) -> str:
    return f"line {i:05d}: the quick brown fox jumps over the lazy dog, number {i}"


def turn(daemon: Daemon, channel: str, text: str) -> None:
    """One turn, not timed: send and read until its result."""
    daemon.request("claude/sendMessage", {"channelId": channel, "text": text})
    for _, body in daemon.bodies(120):
        if b'"claude/turnEnded"' in body[:64]:
            return


def edit_latencies(daemon: Daemon, channel: str, workspace: str, lines: list[int]) -> list[float]:
    """Edit each of ``lines`` in ``workspace``/target.txt, one turn each; latencies in ms."""
    path = os.path.join(workspace, "target.txt")
    latencies = []
    for i in lines:
        daemon.request("claude/sendMessage", {"channelId": channel, "text": line(i)})
        arrived = None
        for now, body in daemon.bodies(120, clock=time.time_ns):
            if b'"claude/fileUpdated"' in body[:64]:
                arrived = now
                update = json.loads(body)["params"]
                mtime = os.stat(path).st_mtime_ns
                if update["path"] != path or SUFFIX not in (update["newContent"] or ""):
                    raise AssertionError(f"unexpected update: {str(update)[:300]}")
                latencies.append((arrived - mtime) / 1e6)
            elif b'"claude/turnEnded"' in body[:64]:
                break
        if arrived is None:
            raise AssertionError(
                f"no claude/fileUpdated for the edit of line {i} (the scenario's Edit failed?)"
            )
    return latencies


def measure(quick: bool, log: Callable[[str], None] = print) -> dict[str, Any]:
    edits = 2 if quick else 5
    tmp = tempfile.mkdtemp(prefix="bench-file-updated-")
    files = {"big": 10_000, "small": 10}
    workspaces = {}
    for name, count in files.items():
        workspaces[name] = os.path.join(tmp, name)
        os.mkdir(workspaces[name])
        with open(os.path.join(workspaces[name], "target.txt"), "w") as f:
            f.write("".join(line(i) + "\n" for i in range(1, count + 1)))
    home = os.path.join(tmp, "home")
    os.mkdir(home)
    out: dict[str, Any] = {
        "edits": edits,
        "mtime_resolution_ms": time.clock_getres(CLOCK_REALTIME_COARSE) * 1e3,
    }
    with ScriptedModel(load_scenario(SCENARIO)) as model:
        daemon = Daemon(
            env=daemon_env(model.url, home), stderr_path=os.path.join(tmp, "daemon.log")
        )
        try:
            daemon.initialize({"clientName": "bench"})
            channels = {
                name: daemon.new_channel(workspaces[name], permissionMode="acceptEdits")[
                    "channelId"
                ]
                for name in files
            }
            # An untimed first turn on each channel, then a pause: a channel's first turn
            # ending makes the daemon start a spare CLI (its warm pool), which is not
            # what is measured here.
            for channel in channels.values():
                turn(daemon, channel, "warm up")
            time.sleep(3.0)
            for name, count in files.items():
                # Different lines each time, from the middle of the file.
                middle = count // 2
                lines = [middle + k * (1 if count < 100 else 37) - edits // 2 for k in range(edits)]
                log(f"(e) {edits} edits of a {count}-line file (real CLI) ...")
                latencies = edit_latencies(daemon, channels[name], workspaces[name], lines)
                out[name] = {
                    "lines": count,
                    "latencies_ms": latencies,
                    "p50_ms": statistics.median(latencies),
                    "max_ms": max(latencies),
                    "bytes": os.path.getsize(os.path.join(workspaces[name], "target.txt")),
                }
        finally:
            daemon.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)  # kept, with the logs, when something failed
    return out


if __name__ == "__main__":
    print("run this through run.py: uv run python bench/run.py --only e", file=sys.stderr)
    print(json.dumps(measure(True), indent=1))
