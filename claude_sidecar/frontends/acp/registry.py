"""The agent's sessions by id: opening (new, load, resume, fork), closing, deleting, listing.

One CLI per session id: a ``session/load`` or ``session/resume`` of a session that is
live in this agent takes the live one (a load replays its conversation again), and two
that come at once for a session not live yet share one start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

import msgspec
from acp.schema import ListSessionsResponse, SessionInfo

from claude_sidecar.channel.channel import Channel
from claude_sidecar.frontends.acp.config import START_MODE
from claude_sidecar.frontends.acp.errors import invalid
from claude_sidecar.frontends.acp.prompt import mcp_servers as to_cli_servers
from claude_sidecar.frontends.acp.session import Session
from claude_sidecar.frontends.acp.updates import META
from claude_sidecar.hub.hub import Hub
from claude_sidecar.protocol.api import (
    Entry,
    ForkSessionParams,
    NewChannelParams,
    SessionSummary,
    WorktreeOptions,
    decode_params,
    is_absolute_path,
    is_uuid,
)
from claude_sidecar.protocol.errors import InvalidParams

log = logging.getLogger(__name__)

PAGE_SIZE = 50
"""Sessions per ``session/list`` page."""


def session_options(
    cwd: str,
    additional_directories: list[str] | None,
    mcp_servers: list[Any] | None,
    resume: str | None = None,
) -> NewChannelParams:
    """A session's channel options: the client's directories and MCP servers, the mode
    that asks; ``resume``: the session to load, resume or fork."""
    if resume is not None and not is_uuid(resume):
        raise invalid("sessionId", f"is {resume!r}, not a UUID", LIST_FIX)
    return NewChannelParams(
        cwd=cwd,
        permission_mode=START_MODE,
        mcp_servers=to_cli_servers(mcp_servers),
        add_dirs=additional_directories or None,
        resume=resume,
    )


def worktree_options(value: Any) -> WorktreeOptions:
    """``session/new``'s ``_meta.claudeSidecar.worktree`` (``name``, ``baseRef``); an
    error names the field as ``claude/newChannel``'s do (``worktree.name``)."""
    try:
        return decode_params("session/new", WorktreeOptions, value)
    except InvalidParams as e:
        name = "worktree." + str(e.data["field"]).removeprefix("worktree.")
        raise invalid(name, e.message.split("` ", 1)[-1], "see docs/acp.md") from e


class SessionRegistry:
    """The sessions of one agent, each on its own channel of ``hub``."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self._sessions: dict[str, Session] = {}
        # Session id -> the start under way of a loaded or resumed session.
        self._opening: dict[str, asyncio.Future[Session]] = {}

    def find(self, session_id: str) -> Session | None:
        """The live session ``session_id`` (None: not open in this agent)."""
        return self._sessions.get(session_id)

    def get(self, session_id: str) -> Session:
        """The live session ``session_id``, or ``Invalid params`` naming ``sessionId``."""
        session = self._sessions.get(session_id)
        if session is None:
            raise invalid(
                "sessionId",
                f"is {session_id!r}, not a session of this agent",
                "use a sessionId that session/new, session/load or session/resume returned",
            )
        return session

    def describe(self) -> list[dict[str, Any]]:
        """Each live session's CLI, for ``_claude-sidecar/diagnostics``."""
        described = []
        for session_id, session in self._sessions.items():
            channel = self._hub.get(session.channel_id)
            described.append(
                {
                    "sessionId": session_id,
                    "pid": channel.pid,
                    "state": channel.state,
                    "cwd": channel.cwd,
                    "model": channel.settings.model,
                    "permissionMode": channel.settings.permission_mode,
                    "exit": msgspec.to_builtins(channel.exit),
                }
            )
        return described

    # ------------------------------------------------------------ opening

    async def new(self, options: NewChannelParams) -> Session:
        """A session on a new channel (from the warm pool when a spare fits)."""
        return self._attach(await self._hub.new_channel(options), None)

    async def load(self, options: NewChannelParams, *, replay: bool) -> Session:
        """The stored session ``options.resume`` on a CLI that resumes it, its
        conversation sent first when ``replay``; the live one if it is open here."""
        session_id = options.resume
        assert session_id is not None
        live = self._sessions.get(session_id) or await self._started(session_id)
        if live is not None:
            log.info(
                "session %s is live here: %s it", session_id, "replaying" if replay else "using"
            )
            if replay:
                conversation = self._hub.get(live.channel_id).conversation
                live.replay(await conversation.each())
            return live
        opening: asyncio.Future[Session] = asyncio.get_running_loop().create_future()
        self._opening[session_id] = opening
        try:
            if not await self._hub.sessions.exists(options.cwd, session_id):
                raise invalid(
                    "sessionId",
                    f"is {session_id!r}, not a stored session of {options.cwd}",
                    LIST_FIX,
                )
            channel = await self._hub.new_channel(options)
            # The stored conversation is read beside the CLI's start: the replay, the
            # title and the context meter the client gets next need it.
            await channel.conversation.ready()
            # Replayed as it is decoded, a page at a time: never held decoded whole.
            whole = await channel.conversation.each() if replay else None
            session = self._attach(channel, whole)
            opening.set_result(session)
            return session
        except BaseException as e:
            opening.set_exception(e)
            opening.exception()  # the one waiting (if any) gets it; no "never retrieved"
            raise
        finally:
            self._opening.pop(session_id, None)

    async def fork(
        self, session_id: str, options: NewChannelParams, at_message_id: str | None = None
    ) -> Session:
        """A new session continuing a copy of ``session_id``'s conversation (live here or
        stored in ``options.cwd``; through the exchange of ``at_message_id`` when given),
        with ``options``' mode, MCP servers and directories."""
        if not is_uuid(session_id):
            raise invalid("sessionId", f"is {session_id!r}, not a UUID", LIST_FIX)
        live = self._sessions.get(session_id)
        if live is None and not await self._hub.sessions.exists(options.cwd, session_id):
            raise invalid(
                "sessionId", f"is {session_id!r}, not a stored session of {options.cwd}", LIST_FIX
            )
        params = ForkSessionParams(
            channel_id=live.channel_id if live is not None else None,
            session_id=None if live is not None else session_id,
            cwd=options.cwd,
            at_message_id=at_message_id,
        )
        channel = await self._hub.fork(
            params,
            permission_mode=options.permission_mode,
            mcp_servers=options.mcp_servers,
            add_dirs=options.add_dirs,
        )
        return self._attach(channel, None)

    async def _started(self, session_id: str) -> Session | None:
        pending = self._opening.get(session_id)
        return None if pending is None else await asyncio.shield(pending)

    def _attach(self, channel: Channel, replay: Iterable[Entry] | None) -> Session:
        session = channel.feed
        assert isinstance(session, Session)
        self._sessions[channel.session_id] = session
        session.mode = channel.settings.permission_mode
        session.attach(channel.session_id, replay)
        return session

    # ------------------------------------------------------------ closing

    async def close(self, session_id: str) -> None:
        """End the session's prompts (``cancelled``) and close its CLI."""
        session = self.get(session_id)
        session.close()
        del self._sessions[session_id]
        await self._hub.close_channel(session.channel_id)

    def forget(self, session_id: str) -> None:
        """End the session whose channel the hub closed (its worktree was removed)."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.close()

    async def delete(self, session_id: str) -> None:
        """Delete a stored session for good (not one open here: its CLI would write it
        again)."""
        if session_id in self._sessions:
            raise invalid(
                "sessionId",
                f"is {session_id!r}, a session open in this agent",
                "close it first (session/close), then delete it",
            )
        cwd = await self._hub.sessions.locate(session_id) if is_uuid(session_id) else None
        if cwd is None:
            raise invalid("sessionId", f"is {session_id!r}, not a stored session", LIST_FIX)
        await self._hub.sessions.delete(session_id, cwd)

    # ------------------------------------------------------------ listing

    async def list(
        self, cwd: str | None, cursor: str | None, limit: object = PAGE_SIZE
    ) -> ListSessionsResponse:
        """A page of ``limit`` sessions stored for ``cwd`` (None: every directory),
        newest first."""
        if not isinstance(limit, int) or isinstance(limit, bool) or not 0 < limit <= 1000:
            raise invalid(
                f"_meta.{META}.limit", f"is {limit!r}", "pass a whole number from 1 to 1000"
            )
        if cwd is not None and not is_absolute_path(cwd):
            raise invalid(
                "cwd",
                f"is {cwd!r}, not an absolute path",
                "pass the workspace's absolute path, or leave it out for every directory",
            )
        page = await self._hub.sessions.list(cwd, limit, cursor)
        return ListSessionsResponse(
            sessions=[_info(summary, cwd) for summary in page.sessions],
            next_cursor=page.next_cursor,
        )


LIST_FIX = "session/list lists the stored sessions of a directory"


def _info(summary: SessionSummary, cwd: str | None) -> SessionInfo:
    extra = msgspec.to_builtins(summary)
    for shown in ("sessionId", "title", "updatedAt", "cwd"):
        extra.pop(shown, None)
    return SessionInfo(
        session_id=summary.session_id,
        # Listed for every directory only when it recorded its own.
        cwd=summary.cwd or cwd or "",
        title=summary.title,
        updated_at=summary.updated_at,
        field_meta={META: extra},
    )
