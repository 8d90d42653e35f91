"""Waiting for an older CLI's session file to hold the turn it just ended.

A CLI before 2.1.330 (``compat.WRITES_TRANSCRIPT_BEFORE_RESULT``) writes a turn's
transcript after its ``result`` line, within its 100 ms write interval. The daemon holds
the result until the turn's last message is in the session file (at most ``WAIT``
seconds, or until the file has not changed for ``SETTLED`` seconds: a message the CLI
does not store). Then the turn ends, and the session is as the next request finds it
(rename, list, history, resume, or a kill right after the turn).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path

from claude_sidecar.cli import paths, wire

log = logging.getLogger(__name__)

WAIT = 3.0
SETTLED = 0.5
POLL = 0.02


class TranscriptWait:
    """The last message of a turn an older CLI may not have written yet, and the wait for it."""

    def __init__(self, env: Mapping[str, str], cwd: str) -> None:
        self._env = env
        self._cwd = cwd
        # The uuid of the turn's last stored message, until the result line comes.
        self.unwritten: str | None = None
        # How far the session file was read (it only grows, unless rewritten).
        self._read: tuple[Path | None, int] = (None, 0)

    def saw(self, line: wire.CliLine, queued_prompt: bool) -> None:
        """Note a ``user`` or ``assistant`` line: an answer or a tool result of the main
        conversation is stored in the session file. (Not a prompt's echo, ``queued_prompt``:
        a prompt queued for the next turn is stored with that turn.)"""
        if line.uuid and line.parent_tool_use_id is None and not queued_prompt:
            self.unwritten = line.uuid

    async def written(self, channel_id: str, session_id: str) -> None:
        """Wait until the session file holds ``unwritten`` (see the module docstring)."""
        marker, self.unwritten = self.unwritten, None
        if marker is None:
            return
        try:
            await self._wait(channel_id, session_id, marker)
        except Exception:
            # The wait is a courtesy: a bug in it must not cost the result line.
            log.exception("channel %s: waiting for the session file failed", channel_id)

    async def _wait(self, channel_id: str, session_id: str, marker: str) -> None:
        home, config_dir = paths.claude_home(self._env)
        needle = marker.encode()
        started = changed = time.monotonic()
        size = -2
        while True:
            try:
                path = paths.transcript_path(home, self._cwd, session_id, config_dir=config_dir)
            except ValueError:
                return
            now_size, found = self._scan(path, needle)
            now = time.monotonic()
            if found:
                log.debug(
                    "channel %s: transcript written %.0f ms after the result",
                    channel_id,
                    (now - started) * 1000,
                )
                return
            if now_size != size:
                size, changed = now_size, now
            if now - changed >= SETTLED or now - started >= WAIT:
                log.info(
                    "channel %s: message %s is not in the session file %s; going on",
                    channel_id,
                    marker,
                    path,
                )
                return
            await asyncio.sleep(POLL)

    def _scan(self, path: Path, needle: bytes) -> tuple[int, bool]:
        """The session file's size and whether ``needle`` is in what was added to it since
        the last look (-1: no file yet)."""
        seen, offset = self._read
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if seen != path or size < offset:
                    offset = 0  # another file, or the CLI rewrote it
                f.seek(max(0, offset - len(needle)))
                data = f.read()
        except OSError:
            return -1, False
        self._read = (path, size)
        return size, needle in data
