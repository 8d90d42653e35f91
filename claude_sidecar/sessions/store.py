"""The stored sessions of one environment, as the daemon's requests use them.

Each operation runs its file I/O in a thread (a listing or a history can read many MB)
and turns what can go wrong into the protocol's errors: a bad cursor names the field,
a missing file is ``SessionNotFound``, a file that cannot be changed says why.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from claude_sidecar.cli.paths import (
    claude_home,
    existing_project_dir,
    find_session_files,
    project_dir,
    session_exists,
    session_file,
    session_files,
)
from claude_sidecar.conversation.stored import unreadable_notice
from claude_sidecar.protocol.api import Entry, History, SessionPage, SessionSummary
from claude_sidecar.protocol.errors import SessionNotFound, SidecarError
from claude_sidecar.sessions.edits import ConfigDirMismatch, delete_session, rename_session
from claude_sidecar.sessions.footers import FooterLog, place_footers
from claude_sidecar.sessions.history import exchange_end, read_history
from claude_sidecar.sessions.listing import (
    listed_page,
    recorded_cwd,
    summarize_session,
)
from claude_sidecar.sessions.summary_index import index_path

log = logging.getLogger(__name__)


class SessionStore:
    """The sessions the CLI stores under the config home of ``env`` (None: the daemon's)."""

    def __init__(self, env: Mapping[str, str] | None) -> None:
        self._env = env
        # The turn footers the daemon records beside the sessions.
        self.footers = FooterLog(env)

    def _home(self) -> tuple[Path, Path | None]:
        return claude_home(os.environ if self._env is None else self._env)

    def _index(self) -> Path:
        """The listing's index of this environment (:mod:`.summary_index`)."""
        return index_path(os.environ if self._env is None else self._env)

    async def exists(self, cwd: str, session_id: str) -> bool:
        """Whether the CLI has stored anything of ``session_id`` yet."""
        home, config_dir = self._home()
        return await asyncio.to_thread(session_exists, home, cwd, session_id, config_dir=config_dir)

    async def size(self, cwd: str, session_id: str) -> int | None:
        """How many bytes the session file of ``session_id`` has (None: there is none)."""
        home, config_dir = self._home()

        def measure() -> int | None:
            try:
                return session_file(home, cwd, session_id, config_dir).stat().st_size
            except (OSError, ValueError):
                return None

        return await asyncio.to_thread(measure)

    async def file(self, cwd: str, session_id: str) -> Path | None:
        """The session file of ``session_id`` (None: there is none)."""
        home, config_dir = self._home()

        def find() -> Path | None:
            try:
                return session_file(home, cwd, session_id, config_dir)
            except (OSError, ValueError):
                return None

        return await asyncio.to_thread(find)

    async def locate(self, session_id: str) -> str | None:
        """The directory stored session ``session_id`` was recorded in (None: no such
        session, or it recorded none): for requests that name a session without its
        directory (ACP's ``session/delete``)."""
        home, config_dir = self._home()

        def find() -> str | None:
            for path in find_session_files(home, session_id, config_dir):
                cwd = recorded_cwd(path, index=self._index())
                if cwd is not None:
                    return cwd
            return None

        return await asyncio.to_thread(find)

    async def move_all(self, source_cwd: str, target_cwd: str) -> builtins.list[str]:
        """Move every session stored for ``source_cwd`` (each file with its folder of
        sub-agent transcripts) to where the CLI keeps ``target_cwd``'s: the sessions of a
        worktree about to disappear, kept where its checkout lists and resumes them. A
        session the target has already stays where it was. The ids moved."""
        home, config_dir = self._home()

        def move() -> builtins.list[str]:
            source = existing_project_dir(home, source_cwd, config_dir)
            if source is None:
                return []
            target = existing_project_dir(home, target_cwd, config_dir) or project_dir(
                home, target_cwd, config_dir=config_dir
            )
            moved: builtins.list[str] = []
            for path in sorted(session_files(source)):
                if (target / path.name).exists():
                    continue
                target.mkdir(parents=True, exist_ok=True)
                folder = path.with_suffix("")
                if folder.is_dir() and not (target / folder.name).exists():
                    os.replace(folder, target / folder.name)
                os.replace(path, target / path.name)
                moved.append(path.stem)
            return moved

        return await asyncio.to_thread(move)

    async def list(self, cwd: str | None, limit: int, cursor: str | None) -> SessionPage:
        """The sessions the CLI stored for ``cwd`` (None: every directory), newest first."""
        home, config_dir = self._home()
        return await listed_page(
            home, cwd, limit, cursor, config_dir=config_dir, index=self._index()
        )

    async def summary(self, session_id: str, cwd: str) -> SessionSummary | None:
        """Stored session ``session_id`` of ``cwd`` as ``list`` shows it (None: not stored)."""
        home, config_dir = self._home()
        return await asyncio.to_thread(
            summarize_session, home, cwd, session_id, config_dir=config_dir, index=self._index()
        )

    async def history(self, session_id: str, cwd: str) -> History:
        """A stored session's conversation; warnings list what could not be read."""
        home, config_dir = self._home()
        try:
            history = await asyncio.to_thread(
                read_history, home, cwd, session_id, config_dir=config_dir
            )
        except FileNotFoundError as e:
            raise SessionNotFound(session_id, cwd) from e
        footers = await asyncio.to_thread(self.footers.load, session_id)
        history.entries = await asyncio.to_thread(place_footers, history.entries, footers)
        return history

    async def stored(self, session_id: str, cwd: str) -> builtins.list[Entry]:
        """A stored session's entries for a channel that continues it, led by a notice of
        what could not be read (the client has no other way to learn of it); none when
        there is no such session (the CLI resumed what it found: a session of another
        directory, or none)."""
        try:
            history = await self.history(session_id, cwd)
        except SessionNotFound:
            log.info("session %s: no stored history in %s to show", session_id, cwd)
            return []
        notice = unreadable_notice(history.warnings)
        return history.entries if notice is None else [notice, *history.entries]

    async def exchange_end(self, session_id: str, cwd: str, message_id: str) -> str | None:
        """The last message of the exchange ``message_id`` opened (None: no such prompt
        with an answer, or no such session)."""
        try:
            history = await self.history(session_id, cwd)
        except SessionNotFound:
            return None
        return exchange_end(history, message_id)

    async def rename(self, session_id: str, cwd: str, title: str) -> None:
        """Give a stored session a custom title; a live channel's session too (its CLI
        keeps appending to the same file and the title stays the last one)."""
        home, config_dir = self._home()
        await self._edit(
            session_id, cwd, rename_session, home, cwd, session_id, title, config_dir=config_dir
        )

    async def delete(self, session_id: str, cwd: str) -> None:
        """Delete a stored session (the caller checks that no channel uses it)."""
        home, config_dir = self._home()
        await self._edit(
            session_id, cwd, delete_session, home, cwd, session_id, config_dir=config_dir
        )
        await asyncio.to_thread(self.footers.forget, session_id)

    @staticmethod
    async def _edit(
        session_id: str, cwd: str, edit: Callable[..., None], *args: Any, **kwargs: Any
    ) -> None:
        """Run a session edit (synchronous file I/O) in a thread, its failures as errors."""
        try:
            await asyncio.to_thread(edit, *args, **kwargs)
        except FileNotFoundError as e:
            raise SessionNotFound(session_id, cwd) from e
        except ConfigDirMismatch as e:
            raise SidecarError(str(e), sessionId=session_id) from e
        except OSError as e:
            raise SidecarError(
                f"the session file of `{session_id}` could not be changed "
                f"({e}); check its permissions and the free disk space",
                sessionId=session_id,
                cwd=cwd,
            ) from e
