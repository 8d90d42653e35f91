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

from claude_sidecar.runtime.processes import children_of, open_fds, rss_kib

log = logging.getLogger(__name__)


def snapshot(channels: int) -> dict[str, int]:
    """The daemon's counts: ``fds``, ``tasks`` (asyncio, this one included), ``children``
    (live child processes: CLIs, MCP servers), ``channels``, ``rssKib``."""
    return {
        "fds": open_fds(),
        "tasks": len(asyncio.all_tasks()),
        "children": len(children_of(os.getpid())),
        "channels": channels,
        "rssKib": rss_kib(),
    }


def log_snapshot(channels: int) -> None:
    """Log the snapshot as one ``stats: k=v ...`` line (INFO, so it shows at the default level)."""
    stats = snapshot(channels)
    log.info("stats: %s", " ".join(f"{k}={v}" for k, v in stats.items()))
