"""A permission ask as ACP options, and the option the client chose as the daemon's answer.

Pure: no I/O. The option ids name the daemon's decisions (docs/acp.md): ``allow``,
``allowAlways``, ``deny``; for ``ExitPlanMode`` the mode to go on in
(``allow:acceptEdits``, ``allow:default``); for each question of an ``AskUserQuestion``
the answer's index (``answer:<i>``).
"""

from __future__ import annotations

from typing import Any

from acp.schema import PermissionOption

from claude_sidecar.protocol.api import (
    PermissionDecision,
    PermissionMode,
    PermissionRequest,
    RespondPermissionParams,
)

_OPTION_DECISIONS: dict[str, tuple[PermissionDecision, PermissionMode | None]] = {
    "allow": ("allow", None),
    "allowAlways": ("allowAlways", None),
    "deny": ("deny", None),
    "allow:acceptEdits": ("allow", "acceptEdits"),
    "allow:default": ("allow", "default"),
}
_ANSWER = "answer:"


def permission_options(request: PermissionRequest) -> list[PermissionOption]:
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
    options = [PermissionOption(option_id="allow", name="Allow", kind="allow_once")]
    if request.suggestions:
        # Only when the CLI offers a rule to keep: "always" must mean something.
        options.append(
            PermissionOption(option_id="allowAlways", name="Always allow", kind="allow_always")
        )
    options.append(PermissionOption(option_id="deny", name="Reject", kind="reject_once"))
    return options


def questions(request: PermissionRequest) -> list[dict[str, Any]]:
    """The questions of an ``AskUserQuestion`` ask, in order ([] for any other ask): the
    client is asked one permission request per question."""
    asked = request.input.get("questions")
    if request.tool_name != "AskUserQuestion" or not isinstance(asked, list):
        return []
    return [q for q in asked if isinstance(q, dict)]


def question_options(question: dict[str, Any]) -> list[PermissionOption]:
    """One question's answers as options (``answer:<i>``), and a way to skip it."""
    options = question.get("options")
    return [
        PermissionOption(option_id=f"{_ANSWER}{i}", name=str(o.get("label")), kind="allow_once")
        for i, o in enumerate(options if isinstance(options, list) else [])
        if isinstance(o, dict)
    ] + [PermissionOption(option_id="deny", name="Skip the question", kind="reject_once")]


def answer_label(question: dict[str, Any], option_id: str | None) -> str | None:
    """The label of the answer the client chose for ``question`` (None: skipped, cancelled
    or not one of its answers)."""
    if option_id is None or not option_id.startswith(_ANSWER):
        return None
    options = question.get("options")
    index = option_id[len(_ANSWER) :]
    if not index.isdigit() or not isinstance(options, list) or int(index) >= len(options):
        return None
    option = options[int(index)]
    return str(option.get("label")) if isinstance(option, dict) else None


def respond_answers(
    channel_id: str, request: PermissionRequest, answers: dict[str, str] | None
) -> RespondPermissionParams:
    """The daemon's answer to an ``AskUserQuestion`` ask: allow with every question's
    answer, or deny (None: a question was skipped or the ask cancelled)."""
    if answers is None:
        return respond(channel_id, request, None)
    return RespondPermissionParams(
        channel_id=channel_id, request_id=request.request_id, decision="allow", answers=answers
    )


def respond(
    channel_id: str, request: PermissionRequest, option_id: str | None
) -> RespondPermissionParams:
    """The daemon's answer to an ask for the option the client chose (None: cancelled)."""
    decision, mode = _OPTION_DECISIONS.get(option_id or "deny", ("deny", None))
    return RespondPermissionParams(
        channel_id=channel_id, request_id=request.request_id, decision=decision, mode=mode
    )
