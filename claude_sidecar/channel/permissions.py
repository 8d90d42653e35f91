"""Permission requests: turning the CLI's ``can_use_tool`` asks into decisions.

The CLI asks before a tool runs; the daemon either decides at once from the client's
rules (``autoAllowTools``) or asks the person in the editor and waits. Every ask gets
exactly one answer: the client's, or a deny the daemon sends itself when the turn is
interrupted or the channel closes. A second answer never reaches the CLI.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterable, ValuesView
from typing import Any

import msgspec

from claude_sidecar.channel.files import preview_edit
from claude_sidecar.cli import wire
from claude_sidecar.cli.wire import CanUseTool
from claude_sidecar.feed.events import ChannelEvent, PermissionAsked, PermissionWithdrawn
from claude_sidecar.protocol.api import CancelReason, PermissionRequest, RespondPermissionParams
from claude_sidecar.protocol.errors import InvalidParams, PermissionRequestNotFound

log = logging.getLogger(__name__)

DENIED_BY_USER = "The user denied this tool use."
DENIED_ON_INTERRUPT = "The turn was interrupted before the user decided."
DENIED_ON_CLOSE = "The chat was closed before the user decided."


def describe(request_id: str, ask: CanUseTool, parent_tool_use_id: str | None) -> PermissionRequest:
    """The client's view of an ask, with a diff preview for edit tools."""
    preview = preview_edit(ask.tool_name, ask.input)
    return PermissionRequest(
        request_id=request_id,
        tool_name=ask.tool_name,
        tool_use_id=ask.tool_use_id,
        input=ask.input,
        suggestions=ask.permission_suggestions or [],
        display_name=ask.display_name,
        blocked_path=ask.blocked_path,
        description=ask.description,
        decision_reason=ask.decision_reason,
        requires_user_interaction=ask.requires_user_interaction,
        preview=preview.diff if preview else None,
        preview_note=preview.note if preview else None,
        parent_tool_use_id=parent_tool_use_id,
    )


class Rules:
    """Client-side rules: tools the daemon allows without asking the client.

    A rule is a tool name (``Read``) or a shell-style pattern (``mcp__editor__*``). Tools
    that need the user's input (AskUserQuestion, ExitPlanMode) are never auto-allowed.
    """

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns = tuple(patterns)

    def allows(self, ask: CanUseTool) -> bool:
        if ask.requires_user_interaction:
            return False
        return any(fnmatch.fnmatchcase(ask.tool_name, p) for p in self.patterns)


def allow(tool_input: dict[str, Any]) -> dict[str, Any]:
    """The CLI answer that lets the tool run with ``tool_input``."""
    return {"behavior": "allow", "updatedInput": tool_input}


def deny(message: str, interrupt: bool = False) -> dict[str, Any]:
    """The CLI answer that refuses the tool; the model sees ``message``."""
    answer: dict[str, Any] = {"behavior": "deny", "message": message}
    if interrupt:
        answer["interrupt"] = True
    return answer


def answer(request: PermissionRequest, p: RespondPermissionParams) -> dict[str, Any]:
    """Build the CLI answer for the client's decision, or raise ``InvalidParams``."""
    if p.decision == "deny":
        return deny(p.message or DENIED_BY_USER, p.interrupt)
    tool_input = dict(p.updated_input if p.updated_input is not None else request.input)
    if p.answers is not None:
        tool_input["answers"] = p.answers
        if p.annotations is not None:
            tool_input["annotations"] = p.annotations
    if request.tool_name == "AskUserQuestion" and "answers" not in tool_input:
        raise InvalidParams(
            "answers",
            "is required to answer AskUserQuestion",
            "pass {question text: chosen label}; join several labels with ', '",
        )
    result = allow(tool_input)
    updates = list(p.updated_permissions or [])
    if p.decision == "allowAlways" and not updates:
        updates = list(request.suggestions)
        if not updates:
            raise InvalidParams(
                "decision",
                "is allowAlways but the CLI offered no rule to keep",
                "answer `allow`, or pass `updatedPermissions` yourself",
            )
    if p.mode is not None:
        updates.append({"type": "setMode", "mode": p.mode, "destination": "session"})
    if updates:
        result["updatedPermissions"] = updates
    return result


class PendingAsks:
    """The permission asks of one channel, from the CLI's ``can_use_tool`` to their answer.

    An ask a client rule allows is answered at once (the client is told, with its
    ``autoDecision``); any other waits here for the client's ``answer``. The CLI may
    ``withdraw`` an ask itself (it then needs no answer); ``cancel_all`` withdraws every
    ask from the client and denies it to the CLI when the turn is interrupted or the
    channel closes. After every change, ``waiting`` is told whether any ask still waits
    (the channel's state follows it).
    """

    def __init__(
        self,
        name: Callable[[], str],
        reply: Callable[[bytes], None],
        publish: Callable[[ChannelEvent], None],
        waiting: Callable[[bool], None],
        rules: Rules,
    ) -> None:
        # The channel's id, for log lines and errors (a warm-pool spare's changes when a
        # chat takes it).
        self._name = name
        self._reply = reply
        self._publish = publish
        self._told_waiting = waiting
        self._rules = rules
        self._waiting: dict[str, PermissionRequest] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._waiting

    def values(self) -> ValuesView[PermissionRequest]:
        """The asks waiting for the client, oldest first."""
        return self._waiting.values()

    def ask(self, request_id: str, ask: CanUseTool) -> None:
        """Take one ``can_use_tool``: answer it by a rule, or keep it for the client."""
        described = describe(request_id, ask, None)
        if self._rules.allows(ask):
            log.info("channel %s: %s allowed by a client rule", self._name(), ask.tool_name)
            self._reply(wire.control_success(request_id, allow(ask.input)))
            self._publish(
                PermissionAsked(msgspec.structs.replace(described, auto_decision="allow"))
            )
            return
        self._waiting[request_id] = described
        self._publish(PermissionAsked(described))
        self._told_waiting(True)

    def answer(self, p: RespondPermissionParams) -> None:
        """Send the client's decision on a waiting ask; each ask is answered once."""
        request = self._waiting.get(p.request_id)
        if request is None:
            raise PermissionRequestNotFound(self._name(), p.request_id)
        response = answer(request, p)
        del self._waiting[p.request_id]
        log.info(
            "channel %s: %s %s (%s)", self._name(), p.decision, request.tool_name, p.request_id
        )
        self._reply(wire.control_success(p.request_id, response))
        self._told_waiting(bool(self._waiting))

    def withdraw(self, request_id: str, reason: CancelReason) -> None:
        """The CLI cancelled an ask (no answer goes back); nothing if it was not waiting."""
        if self._waiting.pop(request_id, None) is None:
            return
        self._publish(PermissionWithdrawn(request_id, reason))
        self._told_waiting(bool(self._waiting))

    def cancel_all(self, reason: CancelReason, deny_message: str | None) -> None:
        """Withdraw every waiting ask from the client; deny it to the CLI unless
        ``deny_message`` is None (the CLI is gone)."""
        for request_id in list(self._waiting):
            del self._waiting[request_id]
            if deny_message is not None:
                # interrupt: the turn must end here, not go on to another model call.
                self._reply(wire.control_success(request_id, deny(deny_message, interrupt=True)))
            self._publish(PermissionWithdrawn(request_id, reason))
        self._told_waiting(False)
