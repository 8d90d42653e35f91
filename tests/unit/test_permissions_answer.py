"""The client's decision becomes exactly the answer the CLI expects."""

from __future__ import annotations

from typing import Any

import pytest
from claude_sidecar.channel.permissions import Rules, answer
from claude_sidecar.cli.wire import CanUseTool
from claude_sidecar.protocol.api import (
    PermissionDecision,
    PermissionRequest,
    RespondPermissionParams,
)
from claude_sidecar.protocol.errors import InvalidParams

SUGGESTION = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}


def request(
    tool: str = "Write", suggestions: list[dict[str, Any]] | None = None
) -> PermissionRequest:
    return PermissionRequest(
        request_id="r1",
        tool_name=tool,
        tool_use_id="t1",
        input={"file_path": "/w/a.txt", "content": "x"},
        suggestions=suggestions if suggestions is not None else [SUGGESTION],
    )


def params(decision: PermissionDecision, **extra: Any) -> RespondPermissionParams:
    return RespondPermissionParams(channel_id="ch-1", request_id="r1", decision=decision, **extra)


def test_allow_sends_the_original_input() -> None:
    assert answer(request(), params("allow")) == {
        "behavior": "allow",
        "updatedInput": {"file_path": "/w/a.txt", "content": "x"},
    }


def test_allow_always_keeps_the_cli_suggestions_unless_the_client_picks() -> None:
    picked = {
        "type": "addRules",
        "rules": [{"toolName": "Write"}],
        "behavior": "allow",
        "destination": "localSettings",
    }

    assert answer(request(), params("allowAlways"))["updatedPermissions"] == [SUGGESTION]
    assert answer(request(), params("allowAlways", updated_permissions=[picked]))[
        "updatedPermissions"
    ] == [picked]


def test_allow_always_without_any_rule_is_refused() -> None:
    with pytest.raises(InvalidParams) as raised:
        answer(request(suggestions=[]), params("allowAlways"))
    assert raised.value.data["field"] == "decision"


def test_deny_carries_the_message_and_the_interrupt_flag() -> None:
    assert answer(request(), params("deny", message="no", interrupt=True)) == {
        "behavior": "deny",
        "message": "no",
        "interrupt": True,
    }


def test_answers_go_into_the_question_tool_input() -> None:
    ask = PermissionRequest(
        request_id="r1",
        tool_name="AskUserQuestion",
        tool_use_id="t",
        input={"questions": []},
        suggestions=[],
    )

    result = answer(ask, params("allow", answers={"Q?": "a, b"}))

    assert result["updatedInput"] == {"questions": [], "answers": {"Q?": "a, b"}}


def test_plan_approval_with_a_mode_adds_a_session_mode_update() -> None:
    plan = PermissionRequest(
        request_id="r1",
        tool_name="ExitPlanMode",
        tool_use_id="t",
        input={"plan": "# P"},
        suggestions=[],
    )

    result = answer(plan, params("allow", mode="acceptEdits"))

    assert result["updatedPermissions"] == [SUGGESTION]


def test_deny_with_allow_only_fields_is_invalid() -> None:
    with pytest.raises(InvalidParams):
        params("deny", updated_input={"a": 1})
    with pytest.raises(InvalidParams):
        params("allow", interrupt=True)
    with pytest.raises(InvalidParams):
        params("allow", message="a reason only a deny can give")
    with pytest.raises(InvalidParams):
        params("allow", annotations={"Q?": {"notes": "n"}})


def test_rules_match_names_and_patterns_but_never_user_questions() -> None:
    rules = Rules(["Read", "mcp__editor__*"])

    assert rules.allows(CanUseTool(tool_name="Read"))
    assert rules.allows(CanUseTool(tool_name="mcp__editor__getDiagnostics"))
    assert not rules.allows(CanUseTool(tool_name="Write"))
    assert not rules.allows(CanUseTool(tool_name="Read", requires_user_interaction=True))
