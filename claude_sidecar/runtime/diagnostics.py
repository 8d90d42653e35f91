"""What the daemon holds right now, logged on request: ``kill -USR1 <daemon pid>`` writes one
``stats:`` line to the log (stderr or ``--log-file``).

For a daemon that has run for days in an editor: a leak shows as a count that only grows
(open file descriptors, asyncio tasks, child processes with no channel). The soak benchmark
(bench/soak.py) reads the same line at its start and end.
"""

from __future__ import annotations

import asyncio
import logging
import os

log = logging.getLogger(__name__)


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def live_children() -> dict[int, list[int]]:
    """Every live (not zombie) process by its parent's pid, from one scan of /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    state, ppid = f.read().rsplit(") ", 1)[1].split()[:2]
            except (OSError, ValueError):
                continue
            if state != "Z":
                parents.setdefault(int(ppid), []).append(int(entry))
    return parents


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    return live_children().get(pid, [])


def snapshot(channels: int) -> dict[str, int]:
    """The daemon's counts: ``fds``, ``tasks`` (asyncio, this one included), ``children``
    (live child processes: CLIs, MCP servers), ``channels``, ``rssKib``."""
    return {
        "fds": len(os.listdir("/proc/self/fd")),
        "tasks": len(asyncio.all_tasks()),
        "children": len(children_of(os.getpid())),
        "channels": channels,
        "rssKib": _rss_kib(),
    }


def log_snapshot(channels: int) -> None:
    """Log the snapshot as one ``stats: k=v ...`` line (INFO, so it shows at the default level)."""
    stats = snapshot(channels)
    log.info("stats: %s", " ".join(f"{k}={v}" for k, v in stats.items()))
