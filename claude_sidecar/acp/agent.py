"""The ACP front end: an ``acp.Agent`` over the daemon's hub, one channel per session.

It is the hub's ``Subscriber``: each new channel's feed is the ``session.Session`` that
owns it. The methods here check the client's params and go through the hub; what a
session sends the client is ``session``'s and ``updates``'s.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from .. import __version__
from ..api import InitializationOptions, NewChannelParams, PermissionMode, WarmPoolOptions
from ..background import Background
from ..hub import Hub
from .auth import auth_methods
from .errors import as_acp_errors, invalid
from .prompt import PromptBlock, cli_content
from .prompt import mcp_servers as to_cli_servers
from .rpc import StdioTransport
from .session import Session
from .updates import META

log = logging.getLogger(__name__)

MODES: dict[str, tuple[str, str]] = {
    "default": ("Ask", "Asks before each edit and command"),
    "acceptEdits": ("Accept edits", "Edits files without asking; asks before commands"),
    "plan": ("Plan", "Reads and plans; changes nothing until you approve the plan"),
    "dontAsk": ("Don't ask", "Runs only what settings allow; denies anything else"),
    "auto": ("Auto", "The CLI decides what needs asking"),
    "bypassPermissions": ("Bypass permissions", "Runs every tool without asking"),
}
"""The permission modes a session offers (``session/new``'s ``modes``), by mode id."""

START_MODE: PermissionMode = "default"
"""Every session starts in the mode that asks."""


class SidecarAgent:
    """The ACP agent: ``initialize``, sessions, prompts, permission asks, cancellation."""

    def __init__(
        self,
        *,
        cli_path: str | None = None,
        env: Mapping[str, str] | None = None,
        warm_pool: int = 1,
        allow_bypass: bool = False,
    ) -> None:
        self.hub = Hub(self, cli_path=cli_path, env=env)
        self.hub.configure(
            InitializationOptions(
                client_name="acp",
                allow_dangerously_skip_permissions=allow_bypass,
                warm_pool=WarmPoolOptions(size=warm_pool),
            )
        )
        self._env = env
        self._allow_bypass = allow_bypass
        self.sessions: dict[str, Session] = {}
        self.background = Background("acp")
        self.transport: StdioTransport
        self.conn: Client

    # ------------------------------------------------------------ the hub's subscriber

    def open_feed(self, channel_id: str) -> Session:
        """A new channel's feed: the session that will own it."""
        return Session(self, channel_id)

    def on_connect(self, conn: Client) -> None:
        """The SDK's connection to the client (requests to it go there)."""
        self.conn = conn

    # ------------------------------------------------------------ ACP methods

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """What this agent implements, who it is, and how to log in if the CLI cannot."""
        if client_info is not None:
            log.info("initialized by %s %s", client_info.name, client_info.version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True, acp=False),
            ),
            auth_methods=await auth_methods(self.hub.cli_path, self._env),
            agent_info=Implementation(
                name="claude-sidecar", title="Claude Code (claude-sidecar)", version=__version__
            ),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Check again whether the CLI can authenticate (the user logs in with it)."""
        if await auth_methods(self.hub.cli_path, self._env):
            from ..doctor import LOGIN_FIX

            raise RequestError.auth_required({"fix": LOGIN_FIX})
        return AuthenticateResponse()

    @as_acp_errors
    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A session on a new channel (from the warm pool when a spare fits)."""
        options = NewChannelParams(
            cwd=cwd,
            permission_mode=START_MODE,
            mcp_servers=to_cli_servers(mcp_servers),
            add_dirs=additional_directories or None,
        )
        channel = await self.hub.new_channel(options)
        session = channel.feed
        assert isinstance(session, Session)
        self.sessions[channel.session_id] = session
        session.mode = channel.settings.permission_mode or START_MODE
        session.attach(channel.session_id)
        return NewSessionResponse(
            session_id=channel.session_id,
            modes=self._modes(session.mode),
            field_meta={META: {"pid": channel.pid}},
        )

    @as_acp_errors
    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        """Switch the session's permission mode."""
        session = self._session(session_id)
        if mode_id not in self._mode_ids():
            raise invalid(
                "modeId",
                f"is {mode_id!r}, not a mode of this session",
                f"use one of: {', '.join(self._mode_ids())}",
            )
        await self.hub.get(session.channel_id).set_permission_mode(mode_id)
        return SetSessionModeResponse()

    @as_acp_errors
    async def prompt(
        self, prompt: list[PromptBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run one prompt; answered with the stop reason when its turn ends."""
        session = self._session(session_id)
        return await session.prompt(cli_content(prompt))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel`` (a notification: an unknown session is only logged)."""
        session = self.sessions.get(session_id)
        if session is None:
            log.warning("session/cancel for unknown session %r", session_id)
            return
        await session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods yet (``_claude-sidecar/*`` comes later)."""
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""
        log.info("ignoring extension notification _%s", method)

    # ------------------------------------------------------------ life

    async def close(self, grace: float = 2.0) -> None:
        """End every CLI (each given ``grace`` seconds to exit)."""
        self.background.cancel()
        await self.hub.close_all(grace=grace)

    def kill_now(self) -> None:
        """SIGKILL every CLI at once; the last resort when the event loop is gone."""
        self.hub.kill_all_now()

    # ------------------------------------------------------------ helpers

    def _session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid(
                "sessionId",
                f"is {session_id!r}, not a session of this agent",
                "use a sessionId that session/new returned",
            )
        return session

    def _mode_ids(self) -> list[str]:
        return [m for m in MODES if m != "bypassPermissions" or self._allow_bypass]

    def _modes(self, current: str) -> SessionModeState:
        return SessionModeState(
            current_mode_id=current,
            available_modes=[
                SessionMode(id=m, name=MODES[m][0], description=MODES[m][1])
                for m in self._mode_ids()
            ],
        )
