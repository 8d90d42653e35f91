"""One ACP session: a channel's feed, its prompts and its permission asks.

Like the ``claude/*`` server's outbox, a ``Session`` is the feed of one channel (the
hub's ``Subscriber`` opens it): the channel's events come already turned into
conversation entries by the channel's ``LiveConversation``, and ``updates.SessionUpdates``
says them as ACP ``session/update``s. A prompt is a message on the channel and is
answered when the turn that took it up ends (``TurnEnded``); a permission ask is a
``session/request_permission`` to the client, withdrawn with ``$/cancel_request`` when
the CLI or ``session/cancel`` makes it moot.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import uuid as uuidlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

import msgspec
from acp import RequestError
from acp.schema import AllowedOutcome, PermissionOption, PromptResponse, ToolCallUpdate

from claude_sidecar.feed.changes import snapshot
from claude_sidecar.feed.events import (
    ChannelEvent,
    CliMessage,
    EntryChanged,
    FileUpdated,
    PermissionAsked,
    PermissionWithdrawn,
    StatusChanged,
    TurnEnded,
    WorktreeChanged,
)
from claude_sidecar.frontends.acp.asks import (
    answer_label,
    permission_options,
    question_options,
    questions,
    respond,
    respond_answers,
)
from claude_sidecar.frontends.acp.auth import methods_as_json, sign_in_methods
from claude_sidecar.frontends.acp.config import DEFAULT, MODEL, START_MODE, Choice, modes
from claude_sidecar.frontends.acp.errors import invalid
from claude_sidecar.frontends.acp.meter import StopReason
from claude_sidecar.frontends.acp.updates import (
    META,
    SessionUpdates,
    Update,
    available_commands,
    proposed_diffs,
    session_info,
    stop_reason,
    usage,
)
from claude_sidecar.protocol.api import (
    DeltaKind,
    Effort,
    Entry,
    PermissionRequest,
    PromptEntry,
    ToolEntry,
)
from claude_sidecar.protocol.errors import SidecarError
from claude_sidecar.sessions.listing import iso_now, prompt_title

if TYPE_CHECKING:
    from claude_sidecar.frontends.acp.services import AgentServices

log = logging.getLogger(__name__)

# How long session/cancel waits for the interrupted turn to end (the CLI ends it at once;
# one that does not is hung, and the prompt is answered cancelled anyway).
CANCEL_TURN_END = 5.0


class Session:
    """One ACP session: a channel's feed (``events.Feed``) and its prompts and asks.

    Created by the hub's ``open_feed`` before its channel exists; what the channel
    publishes until the session has its id (``attach``) is kept and then sent.
    """

    def __init__(self, services: AgentServices, channel_id: str) -> None:
        self.services = services
        self.channel_id = channel_id
        self.id = ""
        self.updates = SessionUpdates()
        self.mode: str | None = None
        self._held: list[Callable[[], None]] | None = []
        self._prompts: dict[str, asyncio.Future[PromptResponse]] = {}
        self._asks: dict[str, asyncio.Task[None]] = {}
        # Set when a turn ends (or the CLI exits): session/cancel waits for it.
        self._turn_over = asyncio.Event()
        # After session/close the client hears nothing more of the session.
        self.closed = False
        # The configOptions the client has (config_option_update when they change).
        self._config: list[dict[str, Any]] | None = None
        # Whether the client was told the session's title (session_info_update).
        self._titled = False
        # The last turn's stop reason, read from the CLI's lines.
        self._stop_reason = StopReason()

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

    def attach(self, session_id: str, replay: Iterable[Entry] | None = None) -> None:
        """Take the session id, send the conversation so far (``replay``: a loaded
        session's), then what was kept."""
        self.id = session_id
        if replay is not None:
            self.updates = self.replay(replay)
        held, self._held = self._held or [], None
        for send in held:
            send()

    def replay(self, entries: Iterable[Entry]) -> SessionUpdates:
        """Send a conversation as the updates that say it (``session/load``): every
        prompt is the user's, each entry comes whole. Returns the mapping that said it."""
        replayed = SessionUpdates()
        for entry in entries:
            for update in replayed.entry(entry):
                self._send(update)
        return replayed

    def opened(self) -> None:
        """The client has the session (the answer that opened it was sent): tell it the
        slash commands the CLI reported at ``initialize``, and the context meter, cost and
        title of a session that has a conversation already (loaded, resumed, forked)."""
        channel = self.services.hub.get(self.channel_id)
        info = channel.info()
        self._send(available_commands(info.commands))
        if (context := info.context) is not None:
            self._send(usage(context.total_tokens, context.max_tokens, info.total_cost_usd))
        if channel.conversation.entries.known() and not self._titled:
            self._titled = True
            self.services.background.spawn(self._stored_title(), f"title-{self.id}")

    async def _stored_title(self) -> None:
        """Send the title ``session/list`` shows for this session (its custom or
        generated title, else its first prompt) and when it was last active."""
        channel = self.services.hub.get(self.channel_id)
        summary = await self.services.hub.sessions.summary(self.id, channel.cwd)
        if summary is not None:
            self._send(session_info(summary.title, summary.updated_at))
            return
        # (Only now the whole conversation: a long one is read from its end.)
        first = next(
            (
                e
                for e in await channel.conversation.whole()
                if isinstance(e, PromptEntry) and e.parent_id is None
            ),
            None,
        )
        if first is not None:
            self._send(session_info(prompt_title(first.text)))

    def close(self) -> None:
        """``session/close``: withdraw the asks, end the prompts with ``cancelled``; the
        client hears nothing more of this session (its CLI is closed by the caller)."""
        for request_id in list(self._asks):
            self._withdraw(request_id)
        self._end_prompts()
        self.closed = True

    # ------------------------------------------------------------ requests

    async def prompt(self, content: list[dict[str, Any]]) -> PromptResponse:
        """Send a prompt on the channel; answered when the turn that takes it up ends."""
        hub = self.services.hub
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
            channel = self.services.hub.get(self.channel_id)
            if channel.exit is None and channel.state in ("running", "awaitingPermission"):
                self._turn_over.clear()
                await channel.interrupt()
                # ACP wants the turn's last updates (its tools stopped) before the answer.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._turn_over.wait(), CANCEL_TURN_END)
        except SidecarError as e:
            log.warning("session %s: interrupt failed: %s", self.id, e.message)
        finally:
            self._end_prompts()

    def _end_prompts(self) -> None:
        for answered in self._prompts.values():
            if not answered.done():
                answered.set_result(PromptResponse(stop_reason="cancelled"))

    def opened_fields(self) -> dict[str, Any]:
        """What every answer that opens the session says of it: its modes, its config
        options, the CLI's pid."""
        channel = self.services.hub.get(self.channel_id)
        ours: dict[str, Any] = {"pid": channel.pid}
        if channel.settings.worktree is not None:
            ours["worktree"] = msgspec.to_builtins(channel.settings.worktree)
        return {
            "modes": modes(self.mode or START_MODE, self.services.allow_bypass),
            "config_options": self.config_options(),
            "field_meta": {META: ours},
        }

    def config_options(self) -> list[dict[str, Any]]:
        """The session's ``configOptions`` now (model, thought level); the client has them."""
        self._config = self._choice().options()
        return self._config

    async def choose(self, config_id: str, value: str | bool) -> list[dict[str, Any]]:
        """``session/set_config_option``: switch the model or the thought level; the
        options after the switch."""
        choice = self._choice()
        allowed = choice.model_values() if config_id == MODEL else choice.effort_values()
        if not isinstance(value, str) or value not in allowed:
            raise invalid(
                "value",
                f"is {value!r}, not a value of {config_id}",
                f"use one of: {', '.join(allowed)}",
            )
        model: str | None
        effort: Effort | None
        if config_id == MODEL:
            model, effort = value, choice.effort
        else:
            # "default" is offered only while no level was set: choosing it changes nothing.
            model, effort = choice.model, None if value == DEFAULT else cast(Effort, value)
        after = Choice(choice.models, model, effort).options()
        # What the channel's status event will show: the client asked for it, no update.
        before, self._config = self._config, after
        try:
            await self.services.hub.get(self.channel_id).set_model(model, effort)
        except BaseException:
            self._config = before
            raise
        return after

    def _choice(self) -> Choice:
        settings = self.services.hub.get(self.channel_id).settings
        return Choice(settings.info().models, settings.requested_model, settings.effort)

    # ------------------------------------------------------------ channel events

    def _send(self, update: Update) -> None:
        if self.closed:
            return
        self.services.transport.notify("session/update", {"sessionId": self.id, "update": update})

    def _event(self, event: ChannelEvent) -> None:
        if self.closed:
            return
        if isinstance(event, EntryChanged):
            entry = event.entry
            for update in self.updates.entry(entry):
                self._send(update)
            if (
                not self._titled
                and isinstance(entry, PromptEntry)
                and entry.parent_id is None
                and not entry.queued
            ):
                self._titled = True
                self._send(session_info(prompt_title(entry.text)))
        elif isinstance(event, CliMessage):
            self._stop_reason.see(event.raw)
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
        elif isinstance(event, WorktreeChanged):
            # ACP has no update for it: an extension notification, as claude/worktreeChanged.
            self.services.transport.notify(
                "_claude-sidecar/worktreeChanged",
                {"sessionId": self.id, **msgspec.to_builtins(event)},
            )

    def _meter(self, ended: TurnEnded) -> None:
        """After a turn: the context meter (the last model call's tokens of the window
        the CLI reported) with the cost so far, then when the session was last active."""
        if (context := ended.context) is not None:
            self._send(usage(context.total_tokens, context.max_tokens, ended.total_cost_usd))
        self._send(session_info(updated_at=iso_now()))

    def _status(self, status: StatusChanged) -> None:
        mode = status.permission_mode
        if mode is not None and mode != self.mode:
            told = self.mode is not None
            self.mode = mode
            if told:
                self._send({"sessionUpdate": "current_mode_update", "currentModeId": mode})
        if self._config is not None and status.state != "exited":
            config = self._choice().options()
            if config != self._config:
                self._config = config
                self._send({"sessionUpdate": "config_option_update", "configOptions": config})
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
        self._meter(ended)
        reason = stop_reason(ended.outcome, self._stop_reason.take())
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
                # The prompt's message id: what rewindFiles and forkSession take.
                own = {META: {**meta[META], "messageId": message_id}}
                answered.set_result(PromptResponse(stop_reason=reason, field_meta=own))  # type: ignore[arg-type]
            elif ended.error is not None and ended.error.kind == "authRequired":
                # ACP's own error for it, so that the client offers its sign-in.
                answered.set_exception(
                    RequestError.auth_required(
                        {
                            **(ended.error.data or {}),
                            "message": ended.error.message,
                            "authMethods": methods_as_json(sign_in_methods()),
                        }
                    )
                )
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
        task = self.services.background.spawn(self._asking(request), f"ask-{request.request_id}")
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
        try:
            if asked := questions(request):
                answers = await self._answers(request, fields, asked)
                reply = respond_answers(self.channel_id, request, answers)
            else:
                option = await self._choose(request, fields, permission_options(request))
                reply = respond(self.channel_id, request, option)
        finally:
            self._asks.pop(request.request_id, None)
        try:
            channel = self.services.hub.get(self.channel_id)
            channel.respond_permission(reply)
        except SidecarError as e:
            # Withdrawn meanwhile (the CLI's or an interrupt's deny went first).
            log.info(
                "session %s: answer to %s not sent: %s", self.id, request.request_id, e.message
            )

    async def _answers(
        self, request: PermissionRequest, fields: dict[str, Any], asked: list[dict[str, Any]]
    ) -> dict[str, str] | None:
        """Each question asked in turn; every answer by question, or None once one is
        skipped (the whole ask is declined)."""
        answers: dict[str, str] = {}
        for i, question in enumerate(asked):
            if len(asked) > 1:
                fields["title"] = f"{question.get('question', '')} ({i + 1}/{len(asked)})"
            option = await self._choose(request, fields, question_options(question))
            if (chosen := answer_label(question, option)) is None:
                return None
            answers[str(question.get("question", ""))] = chosen
        return answers

    async def _choose(
        self, request: PermissionRequest, fields: dict[str, Any], options: list[PermissionOption]
    ) -> str | None:
        """One ``session/request_permission``: the option the client chose (None: it
        cancelled, or the request failed)."""
        try:
            answer = await self.services.conn.request_permission(
                session_id=self.id,
                tool_call=ToolCallUpdate.model_validate(fields),
                options=options,
                **{META: {"requestId": request.request_id}},
            )
        except (RequestError, ConnectionError) as e:
            log.warning("session %s: the permission request failed (%s); denying", self.id, e)
            return None
        finally:
            self.services.transport.forget_ask(request.request_id)
        return answer.outcome.option_id if isinstance(answer.outcome, AllowedOutcome) else None

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
            self.services.transport.cancel_ask(request_id)
            task.cancel()
