"""``claude/listSessions`` with ``allowPartial``: an answer at once, the index completed later.

A listing reads at most :data:`BUDGET` bytes of session files on the request path (those
with the least to read first: what an indexed file gained since, a small file); a file it
cannot read within that is summarized from its head and tail (:mod:`.summary_edges`)
and marked ``partial``.
Those files are then read whole into the listing's index (:mod:`.summary_index`) off the
request path: by a child process, ``python -m claude_sidecar.sessions.quick_listing INDEX
PATH...``, one at a time, at a lower CPU priority (``nice`` 10), so the daemon's event loop
and the CLIs' streams never wait for it (a thread would hold the interpreter's lock for
the read). When it is done, each client whose listing had those files partial is told
(``claude/sessionsChanged``) and lists again: the answer is exact, from the index.

``warm`` does the same for a project folder before anyone lists it (the workspace a
client names at ``initialize``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sqlite3
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from claude_sidecar.cli.paths import claude_home, existing_project_dir
from claude_sidecar.protocol.api import SessionPage
from claude_sidecar.runtime.background import Background
from claude_sidecar.sessions.listing import (
    Budget,
    index_whole,
    listed_page,
    unindexed,
)
from claude_sidecar.sessions.summary_index import index_path
from claude_sidecar.worktrees import layout

log = logging.getLogger(__name__)

BUDGET = 4 * 1024 * 1024
"""How many bytes of session files one listing reads at most (some 40 ms of a core)."""

BATCH = 100
"""The most files one reader process is given (its command line stays short, and the
clients hear of the first files before the last are read)."""

NICE = 10
"""How much lower the reader's CPU priority is than the daemon's."""

Changed = Callable[[str, list[str]], None]
"""Told which sessions (``cwd``, session ids) of a partial listing are now read whole."""


class QuickListing:
    """The listings of one environment's stored sessions (None: the daemon's), answered
    within :data:`BUDGET` and completed by a reader process in the background."""

    def __init__(self, env: Mapping[str, str] | None) -> None:
        self._env = env
        self._background = Background("listing")
        # Files to read whole, in the order they were asked for.
        self._queue: dict[Path, None] = {}
        # Who listed each of them partial, and the folder they listed (a worktree's
        # session is listed with the worktree's folder and with its main checkout's).
        self._waiting: dict[Path, list[tuple[Changed, str]]] = {}
        self._reading: asyncio.Task[None] | None = None

    def _environ(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    @property
    def index(self) -> Path:
        """The listing's index of this environment."""
        return index_path(self._environ())

    async def page(
        self, cwd: str, limit: int, cursor: str | None, changed: Changed | None
    ) -> SessionPage:
        """A page of the sessions of ``cwd`` (``list_sessions``) within the budget; the
        files answered ``partial`` are queued for the reader, and ``changed`` is told when
        they have been read."""
        home, config_dir = claude_home(self._environ())
        budget = Budget(BUDGET)
        page = await listed_page(
            home, cwd, limit, cursor, config_dir=config_dir, index=self.index, budget=budget
        )
        self._enqueue(cwd, budget.deferred, changed)
        return page

    def warm(self, cwd: str) -> None:
        """Read into the index, in the background, the session files of ``cwd`` (and of the
        worktrees made from its checkout) that it does not hold as they are (so the first
        listing there is exact at once)."""

        async def find() -> None:
            home, config_dir = claude_home(self._environ())
            worktrees = await layout.worktree_folders(cwd)
            for folder in [cwd, *(f for _, f in worktrees)]:
                directory = await asyncio.to_thread(existing_project_dir, home, folder, config_dir)
                if directory is None:
                    continue
                try:
                    stale = await asyncio.to_thread(unindexed, directory, self.index)
                except sqlite3.Error as e:
                    log.warning("listing index %s not used: %s", self.index, e)
                    return
                self._enqueue(cwd, stale, None)

        self._background.spawn(find(), "warm")

    def forget(self, changed: Changed) -> None:
        """Stop telling ``changed`` (its client is gone)."""
        for waiting in self._waiting.values():
            waiting[:] = [w for w in waiting if w[0] != changed]

    def close(self) -> None:
        """Stop reading (the daemon ends); a reader process under way is killed."""
        self._background.cancel()
        self._queue.clear()
        self._waiting.clear()

    async def idle(self) -> None:
        """Wait until the queue is read (for tests and the bench)."""
        while self._reading is not None and not self._reading.done():
            await asyncio.shield(self._reading)

    def _enqueue(self, cwd: str, paths: list[Path], changed: Changed | None) -> None:
        if not paths:
            return
        for path in paths:
            self._queue.setdefault(path)
            if changed is not None:
                waiting = self._waiting.setdefault(path, [])
                if (changed, cwd) not in waiting:
                    waiting.append((changed, cwd))
        if self._reading is None or self._reading.done():
            self._reading = self._background.spawn(self._read_queue(), "read")

    async def _read_queue(self) -> None:
        """Read what is queued, a batch per reader process, and tell who waits for it."""
        while self._queue:
            batch = dict(itertools.islice(self._queue.items(), BATCH))
            for path in batch:
                del self._queue[path]
            if not await self._read(list(batch), self.index):
                for path in batch:
                    self._waiting.pop(path, None)  # told nothing: listing again would not help
                continue
            told: dict[Changed, dict[str, list[str]]] = {}
            for path in batch:
                for changed, cwd in self._waiting.pop(path, []):
                    told.setdefault(changed, {}).setdefault(cwd, []).append(path.stem)
            for changed, by_cwd in told.items():
                for cwd, session_ids in by_cwd.items():
                    changed(cwd, sorted(session_ids))

    @staticmethod
    async def _read(paths: list[Path], index: Path) -> bool:
        """Read ``paths`` whole into ``index`` in a reader process (in a thread here when
        none can be started); False when the index could not be written."""
        try:
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                __name__,
                str(index),
                *map(str, paths),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as e:
            log.warning("no listing reader process (%s); reading %d files here", e, len(paths))
            try:
                await asyncio.to_thread(index_whole, paths, index)
            except sqlite3.Error as e:
                log.warning("listing index %s not written: %s", index, e)
                return False
            return True
        try:
            _, err = await child.communicate()
        except BaseException:
            with contextlib.suppress(ProcessLookupError):  # (it may have just ended)
                child.kill()
            await child.wait()
            raise
        if child.returncode != 0:
            log.warning(
                "the listing reader exited with %s (%s)",
                child.returncode,
                err.decode(errors="replace").strip()[-500:],
            )
            return False
        return True


def main(argv: Sequence[str]) -> int:
    """The reader process: ``INDEX PATH...``, each session file read whole into the index."""
    if len(argv) < 1:
        print(f"usage: python -m {__name__} INDEX PATH...", file=sys.stderr)
        return 2
    with contextlib.suppress(OSError):
        os.nice(NICE)
    try:
        index_whole([Path(p) for p in argv[1:]], Path(argv[0]))
    except sqlite3.Error as e:
        print(f"listing index {argv[0]} not written: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
