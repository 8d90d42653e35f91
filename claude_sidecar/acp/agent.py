"""The ACP front end: an ``acp.Agent`` over the daemon's hub, one channel per session.

Like the ``claude/*`` server it is the hub's ``Subscriber``: each channel's events come
to the ``Session`` that owns the channel, already turned into conversation entries by
the channel's ``LiveConversation``; ``updates.SessionUpdates`` says them as ACP
``session/update``s. A prompt is a message on the channel and is answered when the turn
that took it up ends (``TurnEnded``); a permission ask is a ``session/request_permission``
to the client, withdrawn with ``$/cancel_request`` when the CLI or ``session/cancel``
makes it moot.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import uuid as uuidlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ParamSpec, TypeVar

import msgspec
from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AuthenticateResponse,
    AuthMethodAgent,
    ClientCapabilities,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TerminalAuthMethod,
    ToolCallUpdate,
)

from .. import __version__
from ..api import (
    DeltaKind,
    InitializationOptions,
    NewChannelParams,
    PermissionDecision,
    PermissionMode,
    PermissionRequest,
    RespondPermissionParams,
    ToolEntry,
    WarmPoolOptions,
)
from ..background import Background
from ..errors import InvalidParams, SidecarError
from ..events import (
    ChannelEvent,
    CliMessage,
    EntryChanged,
    FileUpdated,
    PermissionAsked,
    PermissionWithdrawn,
    StatusChanged,
    TurnEnded,
)
from ..files import snapshot
from ..hub import Hub
from .prompt import PromptBlock, cli_content, invalid
from .prompt import mcp_servers as to_cli_servers
from .rpc import StdioTransport
from .updates import META, SessionUpdates, Update, proposed_diffs, stop_reason

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

_OPTION_DECISIONS: dict[str, tuple[PermissionDecision, PermissionMode | None]] = {
    "allow": ("allow", None),
    "allowAlways": ("allowAlways", None),
    "deny": ("deny", None),
    "allow:acceptEdits": ("allow", "acceptEdits"),
    "allow:default": ("allow", "default"),
}
_ANSWER = "answer:"
# How long session/cancel waits for the interrupted turn to end (the CLI ends it at once;
# one that does not is hung, and the prompt is answered cancelled anyway).
CANCEL_TURN_END = 5.0
_AUTH_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_CLOUD_VARIABLES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

P = ParamSpec("P")
R = TypeVar("R")


def _as_acp_errors(method: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """The daemon's errors as ACP errors (``Invalid params`` naming the field and fix)."""

    @functools.wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except InvalidParams as e:
            field = str(e.data.get("field", "params"))
            said = e.message.split(f"`{field}` ", 1)[-1]
            problem, _, fix = said.rpartition("; ")
            raise invalid(field, problem or said, fix or "see docs/acp.md") from e
        except SidecarError as e:
            raise RequestError(e.code, e.message, e.data) from e

    return call


def _permission_options(request: PermissionRequest) -> list[PermissionOption]:
    """What the client may answer an ask with (the option ids name our decisions)."""
    if request.tool_name == "ExitPlanMode":
        return [
            PermissionOption(
                option_id="allow:acceptEdits", name="Yes, and accept edits", kind="allow_always"
            ),
            PermissionOption(
                option_id="allow:default", name="Yes, and ask before edits", kind="allow_once"
            ),
            PermissionOption(option_id="deny", name="No, keep planning", kind="reject_once"),
        ]
    questions = request.input.get("questions")
    if request.tool_name == "AskUserQuestion" and isinstance(questions, list):
        options = questions[0].get("options", []) if len(questions) == 1 else []
        return [
            PermissionOption(option_id=f"{_ANSWER}{i}", name=str(o.get("label")), kind="allow_once")
            for i, o in enumerate(options)
            if isinstance(o, dict)
        ] + [PermissionOption(option_id="deny", name="Skip the question", kind="reject_once")]
    options = [PermissionOption(option_id="allow", name="Allow", kind="allow_once")]
    if request.suggestions:
        # Only when the CLI offers a rule to keep: "always" must mean something.
        options.append(
            PermissionOption(option_id="allowAlways", name="Always allow", kind="allow_always")
        )
    options.append(PermissionOption(option_id="deny", name="Reject", kind="reject_once"))
    return options


def _respond(
    channel_id: str, request: PermissionRequest, option_id: str | None
) -> RespondPermissionParams:
    """The daemon's answer to an ask for the option the client chose (None: cancelled)."""
    if option_id is not None and option_id.startswith(_ANSWER):
        question = request.input["questions"][0]
        label = question["options"][int(option_id[len(_ANSWER) :])]["label"]
        return RespondPermissionParams(
            channel_id=channel_id,
            request_id=request.request_id,
            decision="allow",
            answers={str(question.get("question", "")): str(label)},
        )
    decision, mode = _OPTION_DECISIONS.get(option_id or "deny", ("deny", None))
    return RespondPermissionParams(
        channel_id=channel_id, request_id=request.request_id, decision=decision, mode=mode
    )


class Session:
    """One ACP session: a channel's feed (``events.Feed``) and its prompts and asks.

    Created by the hub's ``open_feed`` before its channel exists; what the channel
    publishes until the session has its id (``attach``) is kept and then sent.
    """

    def __init__(self, agent: SidecarAgent, channel_id: str) -> None:
        self.agent = agent
        self.channel_id = channel_id
        self.id = ""
        self.updates = SessionUpdates()
        self.mode: str | None = None
        self._held: list[Callable[[], None]] | None = []
        self._prompts: dict[str, asyncio.Future[PromptResponse]] = {}
        self._asks: dict[str, asyncio.Task[None]] = {}
        self._cli_stop_reason: str | None = None
        # Set when a turn ends (or the CLI exits): session/cancel waits for it.
        self._turn_over = asyncio.Event()

    # ------------------------------------------------------------ Feed / OpenedFeed

    def publish(self, event: ChannelEvent) -> None:
        """Take one channel event (see the module's docstring for what each becomes)."""
        if self._held is not None:
            self._held.append(functools.partial(self._event, event))
        else:
            self._event(event)

    def delta(
        self,
        kind: DeltaKind,
        index: int,
        text: str,
        parent_tool_use_id: str | None,
        entry_id: str | None = None,
    ) -> None:
        """A streamed piece of text or thinking: one chunk to the client."""
        if self._held is not None:
            self._held.append(
                functools.partial(self.delta, kind, index, text, parent_tool_use_id, entry_id)
            )
            return
        update = self.updates.delta(kind, text, parent_tool_use_id, entry_id)
        if update is not None:
            self._send(update)

    def release(self) -> None:
        """The channel has started; its events wait for the session's id (``attach``)."""

    def discard(self) -> list[bytes]:
        """The channel never started: drop what it published."""
        dropped, self._held = self._held or [], []
        return [repr(held).encode() for held in dropped]

    def attach(self, session_id: str) -> None:
        """Take the session id and send what was kept."""
        self.id = session_id
        held, self._held = self._held or [], None
        for send in held:
            send()

    # ------------------------------------------------------------ requests

    async def prompt(self, content: list[dict[str, Any]]) -> PromptResponse:
        """Send a prompt on the channel; answered when the turn that takes it up ends."""
        hub = self.agent.hub
        channel = hub.get(self.channel_id)
        if channel.exit is not None:
            # The CLI died: a new one continues the session, as claude/sendMessage does.
            channel = await hub.restart(self.channel_id)
        message_id = str(uuidlib.uuid4())
        answered: asyncio.Future[PromptResponse] = asyncio.get_running_loop().create_future()
        self._prompts[message_id] = answered
        self.updates.own_prompts.add(message_id)
        try:
            channel.send_user_message(content, message_id)
            return await answered
        finally:
            self._prompts.pop(message_id, None)

    async def cancel(self) -> None:
        """``session/cancel``: withdraw the asks, interrupt the turn, end the prompts
        with ``cancelled``."""
        for request_id in list(self._asks):
            self._withdraw(request_id)
        try:
            channel = self.agent.hub.get(self.channel_id)
            if channel.exit is None and channel.state in ("running", "awaitingPermission"):
                self._turn_over.clear()
                await channel.interrupt()
                # ACP wants the turn's last updates (its tools stopped) before the answer.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._turn_over.wait(), CANCEL_TURN_END)
        except SidecarError as e:
            log.warning("session %s: interrupt failed: %s", self.id, e.message)
        finally:
            for answered in self._prompts.values():
                if not answered.done():
                    answered.set_result(PromptResponse(stop_reason="cancelled"))

    # ------------------------------------------------------------ channel events

    def _send(self, update: Update) -> None:
        self.agent.transport.notify("session/update", {"sessionId": self.id, "update": update})

    def _event(self, event: ChannelEvent) -> None:
        if isinstance(event, EntryChanged):
            for update in self.updates.entry(event.entry):
                self._send(update)
        elif isinstance(event, CliMessage):
            # Only a result line is decoded (a cheap scan of the others).
            if b'"result"' in event.raw:
                try:
                    line = msgspec.json.decode(event.raw, type=_Result)
                except msgspec.MsgspecError:
                    return
                if line.type == "result":
                    self._cli_stop_reason = line.stop_reason
        elif isinstance(event, FileUpdated):
            for update in self.updates.file_changed(event.change):
                self._send(update)
        elif isinstance(event, PermissionAsked):
            if event.request.auto_decision is None:
                self._ask(event.request)
        elif isinstance(event, PermissionWithdrawn):
            self._withdraw(event.request_id)
        elif isinstance(event, TurnEnded):
            self._turn_ended(event)
        elif isinstance(event, StatusChanged):
            self._status(event)

    def _status(self, status: StatusChanged) -> None:
        mode = status.permission_mode
        if mode is not None and mode != self.mode:
            told = self.mode is not None
            self.mode = mode
            if told:
                self._send({"sessionUpdate": "current_mode_update", "currentModeId": mode})
        if status.state == "exited":
            self._turn_over.set()
            for answered in self._prompts.values():
                if not answered.done():
                    answered.set_exception(
                        RequestError(
                            -32603,
                            "the Claude Code CLI of this session exited; send the prompt again "
                            "to restart it with the session",
                            {"exit": msgspec.to_builtins(status.exit)},
                        )
                    )

    def _turn_ended(self, ended: TurnEnded) -> None:
        self._turn_over.set()
        reason = stop_reason(ended.outcome, self._cli_stop_reason)
        self._cli_stop_reason = None
        meta = {
            META: {
                "outcome": ended.outcome,
                "durationMs": ended.duration_ms,
                "costUsd": ended.cost_usd,
                "totalCostUsd": ended.total_cost_usd,
            }
        }
        for message_id in ended.message_ids:
            answered = self._prompts.get(message_id)
            if answered is None or answered.done():
                continue
            if reason is not None:
                answered.set_result(PromptResponse(stop_reason=reason, field_meta=meta))  # type: ignore[arg-type]
            else:
                error = ended.error
                answered.set_exception(
                    RequestError(
                        -32603,
                        f"the turn failed: {error.message if error else 'unknown error'}",
                        {**meta[META], "error": msgspec.to_builtins(error)},
                    )
                )

    # ------------------------------------------------------------ permission asks

    def _ask(self, request: PermissionRequest) -> None:
        task = self.agent.background.spawn(self._asking(request), f"ask-{request.request_id}")
        self._asks[request.request_id] = task

    async def _asking(self, request: PermissionRequest) -> None:
        tool_id = request.tool_use_id or f"request:{request.request_id}"
        fields = self.updates.tool_call(
            ToolEntry(
                id=tool_id,
                name=request.tool_name,
                status="awaitingPermission",
                input=request.input,
                parent_id=request.parent_tool_use_id,
            )
        )
        fields["status"] = "pending"
        fields["content"] = self._proposed(request) + [
            c for c in fields["content"] if c.get("type") != "diff"
        ]
        option: str | None = None
        try:
            answer = await self.agent.conn.request_permission(
                session_id=self.id,
                tool_call=ToolCallUpdate.model_validate(fields),
                options=_permission_options(request),
                **{META: {"requestId": request.request_id}},
            )
            if isinstance(answer.outcome, AllowedOutcome):
                option = answer.outcome.option_id
        except (RequestError, ConnectionError) as e:
            log.warning("session %s: the permission request failed (%s); denying", self.id, e)
        finally:
            self.agent.transport.forget_ask(request.request_id)
            self._asks.pop(request.request_id, None)
        try:
            channel = self.agent.hub.get(self.channel_id)
            channel.respond_permission(_respond(channel.id, request, option))
        except SidecarError as e:
            # Withdrawn meanwhile (the CLI's or an interrupt's deny went first).
            log.info(
                "session %s: answer to %s not sent: %s", self.id, request.request_id, e.message
            )

    @staticmethod
    def _proposed(request: PermissionRequest) -> list[dict[str, Any]]:
        """The proposed edit's diffs; a ``Write`` over an existing file shows its text."""
        diffs = proposed_diffs(request.tool_name, request.input)
        if request.tool_name == "Write":
            for diff in diffs:
                diff["oldText"] = snapshot(diff["path"])[0]
        return diffs

    def _withdraw(self, request_id: str) -> None:
        task = self._asks.pop(request_id, None)
        if task is not None:
            self.agent.transport.cancel_ask(request_id)
            task.cancel()


class _Result(msgspec.Struct):
    type: str = ""
    stop_reason: str | None = None


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
            auth_methods=await self._auth_methods(),
            agent_info=Implementation(
                name="claude-sidecar", title="Claude Code (claude-sidecar)", version=__version__
            ),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Check again whether the CLI can authenticate (the user logs in with it)."""
        if await self._auth_methods():
            from ..doctor import LOGIN_FIX

            raise RequestError.auth_required({"fix": LOGIN_FIX})
        return AuthenticateResponse()

    @_as_acp_errors
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

    @_as_acp_errors
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

    @_as_acp_errors
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

    async def _auth_methods(self) -> list[EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent]:
        """None when the CLI has credentials; else how to get some."""
        env = os.environ if self._env is None else self._env
        if any(env.get(v) for v in (*_AUTH_VARIABLES, *_CLOUD_VARIABLES)):
            return []
        from ..doctor import LOGIN_FIX, examine

        report = await asyncio.to_thread(examine, self.hub.cli_path, env)
        if report.auth.logged_in is not False:
            return []
        return [AuthMethodAgent(id="claude-login", name="Log in to Claude", description=LOGIN_FIX)]
