"""Permission requests: turning the CLI's ``can_use_tool`` asks into decisions.

The CLI asks before a tool runs; the daemon either decides at once from the client's
rules (``autoAllowTools``) or asks the person in the editor and waits. Every ask gets
exactly one answer: the client's, or a deny the daemon sends itself when the turn is
interrupted or the channel closes. A second answer never reaches the CLI.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any

from .api import PermissionRequest, RespondPermissionParams
from .errors import InvalidParams
from .files import preview_edit
from .wire import CanUseTool

DENIED_BY_USER = "The user denied this tool use."
DENIED_ON_INTERRUPT = "The turn was interrupted before the user decided."
DENIED_ON_CLOSE = "The chat was closed before the user decided."


def describe(request_id: str, ask: CanUseTool, parent_tool_use_id: str | None) -> PermissionRequest:
    """The client's view of an ask, with a diff preview for edit tools."""
    preview = preview_edit(ask.tool_name, ask.input)
    return PermissionRequest(
        request_id=request_id, tool_name=ask.tool_name, tool_use_id=ask.tool_use_id,
        input=ask.input, suggestions=ask.permission_suggestions or [],
        display_name=ask.display_name, blocked_path=ask.blocked_path,
        description=ask.description, decision_reason=ask.decision_reason,
        requires_user_interaction=ask.requires_user_interaction,
        preview=preview.diff if preview else None, preview_note=preview.note if preview else None,
        parent_tool_use_id=parent_tool_use_id)


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
        raise InvalidParams("answers", "is required to answer AskUserQuestion",
                            "pass {question text: chosen label}; join several labels with ', '")
    result = allow(tool_input)
    updates = list(p.updated_permissions or [])
    if p.decision == "allowAlways" and not updates:
        updates = list(request.suggestions)
        if not updates:
            raise InvalidParams("decision", "is allowAlways but the CLI offered no rule to keep",
                                "answer `allow`, or pass `updatedPermissions` yourself")
    if p.mode is not None:
        updates.append({"type": "setMode", "mode": p.mode, "destination": "session"})
    if updates:
        result["updatedPermissions"] = updates
    return result
