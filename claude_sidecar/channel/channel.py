"""One conversation: the verbs a front end calls, over the parts that each do one job.

A channel is made of parts that each do one job: its ``link`` moves lines to and from
the CLI process (and correlates control requests), its ``turns`` tracker keeps the state
machine and the turns' prompts and cost, its ``settings`` hold the session, model, mode
and what the CLI reports, ``permissions`` the pending asks, ``edits`` the file changes.
Its ``lines`` router reads every stdout line once and hands it to the part it concerns
(``routing``). Every state change is logged and published (``events.StatusChanged``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid as uuidlib
from collections.abc import Callable
from typing import Any

import msgspec

from claude_sidecar.channel import channel_info, permissions
from claude_sidecar.channel.editor_tools import EditorToolServer, serve_mcp
from claude_sidecar.channel.files import EDIT_HOOKS, EditLog
from claude_sidecar.channel.meter import ContextMeter
from claude_sidecar.channel.routing import LineRouter
from claude_sidecar.channel.settings import ChannelSettings
from claude_sidecar.channel.turns import TurnTracker
from claude_sidecar.cli import wire
from claude_sidecar.cli.control import Route
from claude_sidecar.cli.launch import LaunchSpec
from claude_sidecar.cli.link import CliLink
from claude_sidecar.cli.transport import ProcessExit, Spawn, Transport
from claude_sidecar.conversation import LiveConversation
from claude_sidecar.feed.changes import FileChange
from claude_sidecar.feed.events import (
    NOWHERE,
    ChannelEvent,
    CliMessage,
    Feed,
    FileUpdated,
    PromptSent,
)
from claude_sidecar.protocol.api import (
    ChannelInfo,
    ChannelState,
    ContextReading,
    ContextUsageResult,
    Effort,
    ExitInfo,
    NewChannelParams,
    RespondPermissionParams,
)
from claude_sidecar.protocol.errors import ChannelExited, TaskNotFound

log = logging.getLogger(__name__)

CONTROL_TIMEOUT = 30.0
# The CLI answers an interrupt at once; one that does not is hung, and the client must
# hear so quickly (the channel can then be closed, which escalates to SIGKILL).
INTERRUPT_TIMEOUT = 5.0


class Channel:
    """One CLI process serving one conversation."""

    def __init__(
        self,
        channel_id: str,
        options: NewChannelParams,
        session_id: str,
        feed: Feed = NOWHERE,
        rules: permissions.Rules | None = None,
        fork: bool = False,
        editor_tools: EditorToolServer | None = None,
        spawn: Spawn = Transport.spawn,
    ) -> None:
        self.id = channel_id
        self.settings = ChannelSettings(options, session_id, fork=fork)
        self.turns = TurnTracker(self._name)
        self.lines = LineRouter(self)
        self.link = CliLink(
            self._name, spawn, self.lines.route_all, self._show, self._exited, EDIT_HOOKS
        )
        self.permissions = permissions.PendingAsks(
            self._name,
            self.link.send,
            self._publish,
            self._asks_waiting,
            rules or permissions.Rules(),
        )
        self.edits = EditLog()
        # How full the context window is, from the CLI's lines.
        self.meter = ContextMeter()
        # Set when the first turn ends (or the CLI exits): the warm pool waits for it.
        self.first_turn_done = asyncio.Event()
        self._use(LiveConversation(feed))
        self._editor_tools = editor_tools
        self._closing = False
        # Called when the agent may have changed files: after an edit tool's result and at
        # each state change (a turn's end). The hub watches a worktree chat's files so.
        self.files_may_have_changed: Callable[[], None] | None = None
        self.link.serve("can_use_tool", Route(wire.can_use_tool_decoder, self.permissions.ask))
        self.link.serve("hook_callback", Route(wire.hook_callback_decoder, self._run_hook))
        serve_mcp(self.link, editor_tools)

    def _name(self) -> str:
        return self.id

    @property
    def session_id(self) -> str:
        """The CLI session this channel continues."""
        return self.settings.session_id

    @property
    def cwd(self) -> str:
        """The directory the CLI runs in."""
        return self.settings.cwd

    @property
    def state(self) -> ChannelState:
        """Where the channel is in its life (``claude/status``)."""
        return self.turns.state

    @property
    def exit(self) -> ExitInfo | None:
        """How the CLI ended (None while it runs)."""
        return self.link.exit

    @property
    def pid(self) -> int:
        """The CLI's process id (0 before it is spawned)."""
        return self.link.pid

    @property
    def feed(self) -> Feed:
        """The front end's feed of this channel's events (kept across a restart)."""
        return self.conversation.feed

    @property
    def has_editor_tools(self) -> bool:
        """Whether the daemon serves the editor's tools to this channel's CLI."""
        return self._editor_tools is not None

    # ------------------------------------------------------------ life cycle

    async def start(self, launch: LaunchSpec) -> None:
        """Spawn the CLI and complete the ``initialize`` handshake.

        Raises ``CliStartFailed`` if the process cannot start or exits before answering.
        """
        self.settings.started(await self.link.start(launch))
        self.set_state("idle")

    def adopt(self, channel_id: str, options: NewChannelParams, feed: Feed) -> None:
        """Make a spare from the warm pool the channel a client asked for: it takes the
        client's id, options and feed, and announces its state there."""
        log.info("channel %s: is spare %s (pid %d)", channel_id, self.id, self.pid)
        self.id, self.settings.options, self.conversation.feed = channel_id, options, feed
        self._use(self.conversation)
        self.link.background.owner = channel_id
        self.publish_status()

    def continue_from(self, old: Channel) -> None:
        """Carry on ``old``'s conversation, cost and context meter (a restart of its CLI)."""
        self._use(old.conversation)
        self.turns.cost_before = old.turns.total_cost
        self.meter = old.meter

    def carry_on(self, cost_usd: float, context: ContextReading | None) -> None:
        """Start from what a resumed or forked session's recorded turns cost and left in
        its context (before this channel's first turn)."""
        self.turns.cost_before = cost_usd
        self.meter = ContextMeter(context)

    def info(self) -> ChannelInfo:
        """``claude/channelInfo``: what the CLI reported at start, the current model, mode
        and effort, the cost so far and the context meter."""
        return msgspec.structs.replace(
            self.settings.info(), total_cost_usd=self.turns.total_cost, context=self.meter.reading
        )

    def _use(self, conversation: LiveConversation) -> None:
        # Every event passes through the conversation on its way to the front end.
        self.conversation = conversation
        self._feed: Feed = conversation
        self.lines.use(conversation)

    async def close(self, grace: float = 5.0) -> ExitInfo:
        """Shut the CLI down (stdin EOF, grace, SIGTERM, SIGKILL) and wait for the reader."""
        if self.exit is None:
            self._closing = True
            self.permissions.cancel_all("closed", permissions.DENIED_ON_CLOSE)
        ended = await self.link.close(grace)
        if self._editor_tools is not None:
            await self._editor_tools.close()
        return ended

    def kill_now(self) -> None:
        """SIGKILL the CLI's process group; used when the daemon itself is going away."""
        self.link.kill_now()

    # ------------------------------------------------------------ requests

    def send_user_message(self, content: list[dict[str, Any]], message_id: str | None) -> str:
        """Queue a user turn; returns its uuid. Messages sent during a turn queue up."""
        self._require_alive()
        message_id = message_id or str(uuidlib.uuid4())
        self.link.send(wire.user_message(content, message_id))
        self.turns.queue(message_id)
        text = "\n".join(b["text"] for b in content if b.get("type") == "text")
        images = sum(1 for b in content if b.get("type") == "image")
        self._publish(PromptSent(message_id, text, images))
        if self.state == "idle":
            self.set_state("running")
        return message_id

    async def interrupt(self) -> None:
        """Stop the running turn; the channel stays usable.

        The CLI withdraws pending permission asks itself; any it leaves are denied here, so
        no ask outlives the turn.
        """
        self.lines.interrupting = True
        self.turns.interrupting()
        try:
            await self.control("interrupt", INTERRUPT_TIMEOUT)
        finally:
            self.lines.interrupting = False
            self.permissions.cancel_all("interrupted", permissions.DENIED_ON_INTERRUPT)

    def respond_permission(self, p: RespondPermissionParams) -> None:
        """Send the client's decision on a pending ask; each ask is answered once."""
        self._require_alive()
        self.permissions.answer(p)

    async def set_model(self, model: str | None, effort: Effort | None = None) -> None:
        """Switch the model (and, when given, the effort) for the following turns."""
        await self.control("set_model", CONTROL_TIMEOUT, model=model)
        self.settings.model = self.settings.requested_model = model
        if effort is not None:
            # The CLI has no set_effort request; its flag settings layer takes effortLevel
            # at runtime (what `/effort` changes), and the next turn sends it.
            await self.control(
                "apply_flag_settings", CONTROL_TIMEOUT, settings={"effortLevel": effort}
            )
            self.settings.effort = effort
        self.publish_status()

    async def set_permission_mode(self, mode: str) -> None:
        """Switch the permission mode."""
        await self.control("set_permission_mode", CONTROL_TIMEOUT, mode=mode)
        self.settings.permission_mode = mode
        self.publish_status()

    async def stop_task(self, task_id: str) -> None:
        """Stop one background task; the CLI reports its end as ``system/task_*`` lines."""
        self._require_alive()
        if task_id not in self.settings.tasks:
            raise TaskNotFound(self.id, task_id, sorted(self.settings.tasks))
        await self.control("stop_task", CONTROL_TIMEOUT, task_id=task_id)

    async def context_usage(self) -> ContextUsageResult:
        """The CLI's breakdown of the context window (``/context``)."""
        return channel_info.context_usage(await self.control("get_context_usage", CONTROL_TIMEOUT))

    async def control(self, subtype: str, timeout: float, **fields: Any) -> msgspec.Raw:
        """Send a control request to the CLI and wait for its answer (empty if it had none)."""
        self._require_alive()
        return await self.link.control(subtype, timeout, **fields)

    def report_file_change(self, change: FileChange) -> None:
        """Record a change made outside the edit tools (e.g. a rewind) and tell the client."""
        self.edits.changes.append(change)
        self._publish(FileUpdated(change))

    def _require_alive(self) -> None:
        if self.exit is not None:
            raise ChannelExited(self.id, self.exit.code, self.exit.signal)

    # ------------------------------------------------------------ the CLI's requests

    def _run_hook(self, request_id: str, hook: wire.HookCallback) -> None:
        change = self.edits.hook(hook)
        if change is not None:
            self._publish(FileUpdated(change))
            if self.files_may_have_changed is not None:
                self.files_may_have_changed()
        # An empty hook output: no opinion, the tool proceeds as it would have.
        self.link.send(wire.control_success(request_id, {}))

    def _asks_waiting(self, waiting: bool) -> None:
        if waiting:
            self.set_state("awaitingPermission")
        elif self.state == "awaitingPermission":
            self.set_state("running")

    # ------------------------------------------------------------ events

    def set_state(self, state: ChannelState) -> None:
        """Move the state machine; a change is logged and published."""
        if self.turns.move(state):
            self.publish_status()
            if self.files_may_have_changed is not None:
                self.files_may_have_changed()

    def _publish(self, event: ChannelEvent) -> None:
        self._feed.publish(event)

    def _show(self, raw: bytes) -> None:
        self._feed.publish(CliMessage(raw))

    def publish_status(self) -> None:
        """Publish the channel's status (``claude/status``)."""
        self._feed.publish(self.settings.status(self.state, self.exit))

    def _exited(self, ended: ProcessExit) -> None:
        self.first_turn_done.set()
        self.permissions.cancel_all("closed", deny_message=None)
        self.settings.retry = None
        if (event := self.turns.exited(self._closing, ended.code, ended.signal)) is not None:
            self._publish(event)
        self.set_state("exited")
