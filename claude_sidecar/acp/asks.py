"""A permission ask as ACP options, and the option the client chose as the daemon's answer.

Pure: no I/O. The option ids name the daemon's decisions (docs/acp.md): ``allow``,
``allowAlways``, ``deny``; for ``ExitPlanMode`` the mode to go on in
(``allow:acceptEdits``, ``allow:default``); for an ``AskUserQuestion`` with one question
the answer's index (``answer:<i>``).
"""

from __future__ import annotations

from acp.schema import PermissionOption

from ..api import PermissionDecision, PermissionMode, PermissionRequest, RespondPermissionParams

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


def respond(
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
