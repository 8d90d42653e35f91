"""One conversation: the verbs a front end calls, and the routing of the CLI's lines.

A channel is made of parts that each do one job: its ``link`` moves lines to and from
the CLI process (and correlates control requests), its ``turns`` tracker keeps the state
machine and the turns' prompts and cost, its ``settings`` hold the session, model, mode
and what the CLI reports, ``permissions`` the pending asks, ``edits`` the file changes.
The channel reads every stdout line once (``_route``) and hands it to the part it
concerns: content deltas go to ``Feed.delta``, everything else is published verbatim.
Every state change is logged and published (``events.StatusChanged``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid as uuidlib
from typing import Any

import msgspec

from . import channel_info, permissions, wire
from .api import (
    CancelReason,
    ChannelState,
    ContextUsageResult,
    DeltaKind,
    Effort,
    ExitInfo,
    NewChannelParams,
    RespondPermissionParams,
)
from .control import Route
from .conversation import LiveConversation
from .editor_tools import EditorToolServer, serve_mcp
from .errors import ChannelExited, TaskNotFound
from .events import NOWHERE, ChannelEvent, CliMessage, Feed, FileUpdated, Progress, PromptSent
from .files import EditLog, FileChange
from .launch import LaunchSpec
from .link import CliLink
from .settings import NOTED_SYSTEM, ChannelSettings
from .transport import ProcessExit, Spawn, Transport
from .turns import TurnTracker, read_result

log = logging.getLogger(__name__)

CONTROL_TIMEOUT = 30.0
# The CLI answers an interrupt at once; one that does not is hung, and the client must
# hear so quickly (the channel can then be closed, which escalates to SIGKILL).
INTERRUPT_TIMEOUT = 5.0

_STREAM_EVENT = wire.STREAM_EVENT_PREFIX
_decode_stream_event = wire.stream_event_decoder.decode

# A stream delta's type -> the claude/delta kind and the delta's field holding the text.
_DELTA_KINDS: dict[str, tuple[DeltaKind, str]] = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "input_json_delta": ("toolInput", "partial_json"),
}


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
        self.link = CliLink(self._name, spawn, self._route, self._show, self._exited)
        self.permissions = permissions.PendingAsks(
            self._name,
            self.link.send,
            self._publish,
            self._asks_waiting,
            rules or permissions.Rules(),
        )
        self.edits = EditLog()
        # Set when the first turn ends (or the CLI exits): the warm pool waits for it.
        self.first_turn_done = asyncio.Event()
        self._use(LiveConversation(feed))
        self._editor_tools = editor_tools
        self._closing = False
        self._interrupting = False
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
        self._set_state("idle")

    def adopt(self, channel_id: str, options: NewChannelParams, feed: Feed) -> None:
        """Make a spare from the warm pool the channel a client asked for: it takes the
        client's id, options and feed, and announces its state there."""
        log.info("channel %s: is spare %s (pid %d)", channel_id, self.id, self.pid)
        self.id, self.settings.options, self.conversation.feed = channel_id, options, feed
        self._use(self.conversation)
        self.link.background.owner = channel_id
        self._publish_status()

    def continue_from(self, old: Channel) -> None:
        """Carry on ``old``'s conversation and cost (a restart of its CLI)."""
        self._use(old.conversation)
        self.turns.cost_before = old.turns.total_cost

    def _use(self, conversation: LiveConversation) -> None:
        # Every event passes through the conversation on its way to the front end; the
        # hot path of _route reaches past it (the lists deltas append to, the front end).
        self.conversation = conversation
        self._feed: Feed = conversation
        self._main_open = conversation.main_open
        self._sub_open = conversation.sub_open
        self._front_delta = conversation.feed.delta

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
            self._set_state("running")
        return message_id

    async def interrupt(self) -> None:
        """Stop the running turn; the channel stays usable.

        The CLI withdraws pending permission asks itself; any it leaves are denied here, so
        no ask outlives the turn.
        """
        self._interrupting = True
        self.turns.interrupting()
        try:
            await self.control("interrupt", INTERRUPT_TIMEOUT)
        finally:
            self._interrupting = False
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
        self._publish_status()

    async def set_permission_mode(self, mode: str) -> None:
        """Switch the permission mode."""
        await self.control("set_permission_mode", CONTROL_TIMEOUT, mode=mode)
        self.settings.permission_mode = mode
        self._publish_status()

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
        # An empty hook output: no opinion, the tool proceeds as it would have.
        self.link.send(wire.control_success(request_id, {}))

    def _asks_waiting(self, waiting: bool) -> None:
        if waiting:
            self._set_state("awaitingPermission")
        elif self.state == "awaitingPermission":
            self._set_state("running")

    # ------------------------------------------------------------ events

    def _set_state(self, state: ChannelState) -> None:
        if self.turns.move(state):
            self._publish_status()

    def _publish(self, event: ChannelEvent) -> None:
        self._feed.publish(event)

    def _show(self, raw: bytes) -> None:
        self._feed.publish(CliMessage(raw))

    def _publish_status(self) -> None:
        self._feed.publish(self.settings.status(self.state, self.exit))

    def _exited(self, ended: ProcessExit) -> None:
        self.first_turn_done.set()
        self.permissions.cancel_all("closed", deny_message=None)
        self.settings.retry = None
        if (event := self.turns.exited(self._closing, ended.code, ended.signal)) is not None:
            self._publish(event)
        self._set_state("exited")

    # ------------------------------------------------------------ the CLI's lines

    def _route(self, raw: bytes) -> None:
        line: wire.StreamEventLine | wire.CliLine | None = None
        if raw.startswith(_STREAM_EVENT):
            # Most of a turn's lines: decoded for their routing fields only. (try, not
            # contextlib.suppress: a context manager per line costs ~15% here.)
            try:
                line = _decode_stream_event(raw)
            except msgspec.MsgspecError:
                line = None  # the general path says what is wrong with it
        if line is None and (line := self._decode(raw)) is None:
            return
        kind = line.type
        if kind == "stream_event":
            # The hot path: written out, no call but the feed's.
            if self.settings.retry is not None:
                self._retry_over()
            event = line.event
            if event is not None and event.type == "content_block_delta":
                delta = event.delta
                known = _DELTA_KINDS.get(delta.type) if delta is not None else None
                if known is not None:
                    text = getattr(delta, known[1])
                    if text is not None:
                        # The conversation's delta, inline: append to the open entry,
                        # hand the delta with the entry's id to the front end.
                        index = event.index or 0
                        parent = line.parent_tool_use_id
                        if parent is None:
                            opened = self._main_open.get(index)
                        else:
                            opened = self._sub_open.get((parent, index))
                        entry_id = None
                        if opened is not None:
                            entry_id = opened[0]
                            opened[1].append(text)
                        self._front_delta(known[0], index, text, parent, entry_id)
                        return
            self._feed.publish(CliMessage(raw))
            return
        assert isinstance(line, wire.CliLine)
        if self.settings.retry is not None and kind in ("assistant", "result"):
            self._retry_over()
        if kind == "control_response" and line.response is not None:
            self.link.resolve(line.response)
        elif kind == "control_request" and line.request_id is not None:
            self.link.receive(line.request_id, line.request, raw)
        elif kind == "control_cancel_request" and line.request_id in self.permissions:
            assert line.request_id is not None
            reason: CancelReason = "interrupted" if self._interrupting else "withdrawn"
            self.permissions.withdraw(line.request_id, reason)
        elif kind == "system" and line.subtype == "thinking_tokens":
            self._feed.publish(Progress(raw))
        else:
            self._feed.publish(CliMessage(raw))
            self._note(kind, line, raw)

    def _decode(self, raw: bytes) -> wire.CliLine | None:
        """A line's routing fields; None for a line that has nothing to route."""
        if not raw or raw.isspace():  # isspace: no copy of a many-MB line, unlike strip()
            return None
        try:
            return wire.line_decoder.decode(raw)
        except msgspec.ValidationError:
            # Valid JSON that is not a typed message: pass it on, the client may know it.
            self._feed.publish(CliMessage(raw))
        except msgspec.DecodeError:
            log.warning("channel %s: skipping non-JSON line: %.200r", self.id, raw)
        return None

    def _retry_over(self) -> None:
        # The model answered again: the retry the CLI was waiting for is over.
        self.settings.retry = None
        self._publish_status()

    def _note(self, kind: str, line: wire.CliLine, raw: bytes) -> None:
        """Update the parts a published line concerns."""
        if kind in ("user", "assistant") and (transcript := self.link.transcript) is not None:
            transcript.saw(line, self.turns.is_queued(line.uuid))
        if kind == "system" and line.subtype in ("init", "status"):
            if self.settings.reported_line(line):
                self._publish_status()
            if line.subtype == "init" and self.state == "idle":
                # A turn the CLI started by itself, e.g. when a background agent ends.
                self._set_state("running")
        elif kind == "system" and line.subtype in NOTED_SYSTEM:
            if self.settings.reported_system(line.subtype, raw):
                self._publish_status()
        elif kind == "user" and line.uuid is not None and self.turns.is_queued(line.uuid):
            self.turns.take_up(line.uuid)
            self.edits.prompt(line.uuid)
        elif kind == "assistant" and line.parent_tool_use_id is not None:
            uses = wire.assistant_tool_uses_decoder.decode(raw).tool_use_ids()
            self.edits.made_by_subagent(uses, line.parent_tool_use_id)
        elif kind == "result":
            self.first_turn_done.set()
            # Not while starting: e.g. a `resume` of an unknown session, which the CLI
            # answers with an error result before it exits.
            if self.state != "starting":
                ended, state = self.turns.result(read_result(raw, self.id))
                self._publish(ended)
                self._set_state(state)
