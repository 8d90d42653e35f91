"""The ACP front end: an ``acp.Agent`` over the daemon's hub, one channel per session.

It is the hub's ``Subscriber``: each new channel's feed is the ``session.Session`` that
owns it. The methods here check the client's params and go through the hub; what a
session sends the client is ``session``'s and ``updates``'s.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import msgspec
from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from claude_sidecar import __version__
from claude_sidecar.frontends.acp import extensions
from claude_sidecar.frontends.acp.auth import auth_methods, methods_as_json
from claude_sidecar.frontends.acp.config import EFFORT, MODEL, mode_ids
from claude_sidecar.frontends.acp.errors import as_acp_errors, invalid
from claude_sidecar.frontends.acp.prompt import PromptBlock, cli_content
from claude_sidecar.frontends.acp.registry import (
    PAGE_SIZE,
    SessionRegistry,
    session_options,
    worktree_options,
)
from claude_sidecar.frontends.acp.services import AgentServices
from claude_sidecar.frontends.acp.session import Session
from claude_sidecar.frontends.acp.updates import META
from claude_sidecar.hub.hub import Hub
from claude_sidecar.protocol.api import (
    InitializationOptions,
    WarmPoolOptions,
)

log = logging.getLogger(__name__)


class SidecarAgent:
    """The ACP agent: ``initialize``, sessions, prompts, permission asks, cancellation."""

    def __init__(
        self,
        *,
        cli_path: str | None = None,
        env: Mapping[str, str] | None = None,
        warm_pool: int = 1,
        warm_pool_cwd: str | None = None,
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
        self._warm_pool_cwd = warm_pool_cwd
        # What the sessions and the extension methods use of the agent.
        self.services = AgentServices(self.hub, allow_bypass=allow_bypass)
        self.sessions = SessionRegistry(self.hub)

    # ------------------------------------------------------------ the hub's subscriber

    def open_feed(self, channel_id: str, client: InitializationOptions) -> Session:
        """A new channel's feed: the session that will own it (``client``: the agent's own
        options, the only client there is)."""
        return Session(self.services, channel_id)

    def on_connect(self, conn: Client) -> None:
        """The SDK's connection to the client (requests to it go there)."""
        self.services.conn = conn

    def opened(self, session_id: str) -> None:
        """The answer that opened ``session_id`` was sent: the session says what it
        offers (its slash commands)."""
        session = self.sessions.find(session_id)
        if session is not None:
            session.opened()

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
        if self._warm_pool_cwd is not None and os.path.isdir(self._warm_pool_cwd):
            # The first session/new would otherwise wait for a whole CLI start; later
            # ones find the spare started after the previous session's first turn.
            self.hub.pool.prepare(session_options(self._warm_pool_cwd, None, None))
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    delete=SessionDeleteCapabilities(),
                    fork=SessionForkCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True, acp=False),
            ),
            auth_methods=await auth_methods(self.hub.cli_path, self._env),
            agent_info=Implementation(
                name="claude-sidecar", title="Claude Code (claude-sidecar)", version=__version__
            ),
            field_meta={META: extensions.advertised()},
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Check again whether the CLI can authenticate (the user logs in with it)."""
        if methods := await auth_methods(self.hub.cli_path, self._env):
            from claude_sidecar.cli.signin import login_fix

            raise RequestError.auth_required(
                {"fix": login_fix(self._env), "authMethods": methods_as_json(methods)}
            )
        return AuthenticateResponse()

    @as_acp_errors
    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A session on a new channel (from the warm pool when a spare fits); in a git
        worktree of its own with ``_meta.claudeSidecar.worktree``."""
        options = session_options(cwd, additional_directories, mcp_servers)
        ours = kwargs.get(META)
        if isinstance(ours, dict) and ours.get("worktree") is not None:
            options = msgspec.structs.replace(options, worktree=worktree_options(ours["worktree"]))
        session = await self.sessions.new(options)
        return NewSessionResponse(session_id=session.id, **session.opened_fields())

    @as_acp_errors
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """A stored session on a CLI that resumes it; its conversation is sent as
        ``session/update``s before the answer."""
        options = session_options(cwd, additional_directories, mcp_servers, resume=session_id)
        session = await self.sessions.load(options, replay=True)
        return LoadSessionResponse(**session.opened_fields())

    @as_acp_errors
    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """``session/load`` without the replay."""
        options = session_options(cwd, additional_directories, mcp_servers, resume=session_id)
        session = await self.sessions.load(options, replay=False)
        return ResumeSessionResponse(**session.opened_fields())

    @as_acp_errors
    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """A new session whose conversation starts as a copy of ``session_id``'s."""
        options = session_options(cwd, additional_directories, mcp_servers)
        session = await self.sessions.fork(session_id, options)
        return ForkSessionResponse(session_id=session.id, **session.opened_fields())

    @as_acp_errors
    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """End the session's prompts (``cancelled``) and close its CLI."""
        await self.sessions.close(session_id)
        return CloseSessionResponse()

    @as_acp_errors
    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Delete a stored session (``session/delete``; not one open in this agent)."""
        await self.sessions.delete(session_id)
        return DeleteSessionResponse()

    @as_acp_errors
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """A page of the sessions stored for ``cwd``, newest first (50, or
        ``_meta.claudeSidecar.limit``)."""
        ours = kwargs.get(META)
        limit = ours.get("limit", PAGE_SIZE) if isinstance(ours, dict) else PAGE_SIZE
        return await self.sessions.list(cwd, cursor, limit)

    @as_acp_errors
    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        """Switch the session's permission mode."""
        session = self.sessions.get(session_id)
        if mode_id not in mode_ids(self.services.allow_bypass):
            raise invalid(
                "modeId",
                f"is {mode_id!r}, not a mode of this session",
                f"use one of: {', '.join(mode_ids(self.services.allow_bypass))}",
            )
        await self.hub.get(session.channel_id).set_permission_mode(mode_id)
        return SetSessionModeResponse()

    @as_acp_errors
    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Switch the session's model or thought level (``Channel.set_model``)."""
        session = self.sessions.get(session_id)
        if config_id not in (MODEL, EFFORT):
            raise invalid(
                "configId",
                f"is {config_id!r}, not an option of this session",
                f"use {MODEL} or {EFFORT}",
            )
        return SetSessionConfigOptionResponse.model_validate(
            {"configOptions": await session.choose(config_id, value)}
        )

    @as_acp_errors
    async def prompt(
        self, prompt: list[PromptBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run one prompt; answered with the stop reason when its turn ends."""
        session = self.sessions.get(session_id)
        return await session.prompt(cli_content(prompt))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel`` (a notification: an unknown session is only logged)."""
        session = self.sessions.find(session_id)
        if session is None:
            log.warning("session/cancel for unknown session %r", session_id)
            return
        await session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """This agent's extension methods (``_claude-sidecar/*``: ``extensions``)."""
        name = method.removeprefix(extensions.PREFIX)
        if not method.startswith(extensions.PREFIX) or name not in extensions.METHODS:
            raise RequestError.method_not_found(f"_{method}")
        return await as_acp_errors(extensions.call)(self.sessions, self.hub, name, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""
        log.info("ignoring extension notification _%s", method)

    # ------------------------------------------------------------ life

    async def close(self, grace: float = 2.0) -> None:
        """End every CLI (each given ``grace`` seconds to exit)."""
        self.services.background.cancel()
        await self.hub.close_all(grace=grace)

    def kill_now(self) -> None:
        """SIGKILL every CLI at once; the last resort when the event loop is gone."""
        self.hub.kill_all_now()

    # ------------------------------------------------------------ helpers
