"""The `claude/newChannel` options the official extension uses reach the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar, tool_results


async def test_effort_is_sent_to_the_model(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace), effort="low")

    await sidecar.turn(channel, "hello")

    assert model.main_requests[-1]["output_config"]["effort"] == "low"
    info = await sidecar.request("claude/channelInfo", {"channelId": channel})
    assert info["effort"] == "low"


async def test_fallback_model_answers_when_the_main_model_stays_overloaded(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "busy",
                        "steps": [
                            [
                                {
                                    "error": {
                                        "status": 529,
                                        "type": "overloaded_error",
                                        "retry": True,
                                        "times": 3,
                                    }
                                },
                                {"text": "The fallback answered."},
                            ]
                        ],
                    }
                ]
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace), fallbackModel="haiku")

    result = (await sidecar.turn(channel, "busy?")).result

    assert result["subtype"] == "success"
    assert "haiku" in model.main_requests[-1]["model"]
    assert "haiku" not in model.main_requests[0]["model"]


async def test_agent_runs_the_channel_as_a_project_agent(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\n---\n"
        "You are REVIEWER-7, a strict code reviewer.\n"
    )
    channel = await sidecar.new_channel(str(workspace), agent="reviewer")

    await sidecar.turn(channel, "hello")

    assert "REVIEWER-7" in json.dumps(model.main_requests[-1]["system"])


async def test_an_unknown_agent_is_refused_with_the_known_ones(
    sidecar: Sidecar, workspace: Path
) -> None:
    error = await sidecar.error("claude/newChannel", {"cwd": str(workspace), "agent": "nobody"})

    assert error.code == -32602 and error.data["field"] == "agent"
    assert "Explore" in error.message
    assert (await sidecar.request("claude/listChannels"))["channels"] == []


async def test_output_style_is_applied_and_reported(sidecar: Sidecar, workspace: Path) -> None:
    opened = await sidecar.open_channel(cwd=str(workspace), outputStyle="Explanatory")

    assert opened["info"]["outputStyle"] == "Explanatory"


async def test_an_unknown_output_style_is_refused_with_the_available_ones(
    sidecar: Sidecar, workspace: Path
) -> None:
    error = await sidecar.error(
        "claude/newChannel", {"cwd": str(workspace), "outputStyle": "Pirate"}
    )

    assert error.data["field"] == "outputStyle" and "Explanatory" in error.message


async def test_settings_apply_to_the_channel(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "write",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Write",
                                        "input": {"file_path": "{cwd}/a.txt", "content": "x\n"},
                                    }
                                }
                            ],
                            [{"text": "Tried."}],
                        ],
                    }
                ]
            }
        )
    )
    channel = await sidecar.new_channel(
        str(workspace), settings={"permissions": {"deny": ["Write"]}}
    )

    result = (await sidecar.turn(channel, "write it")).result

    assert not (workspace / "a.txt").exists()
    assert tool_results(model)[-1]["is_error"] is True
    assert not sidecar.of(channel, "claude/permissionRequest"), "denied by the setting"
    assert result["subtype"] == "success"


async def test_setting_sources_leave_out_the_projects_settings(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Write"]}})
    )
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "write",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Write",
                                        "input": {"file_path": "{cwd}/a.txt", "content": "x\n"},
                                    }
                                }
                            ],
                            [{"text": "Done."}],
                        ],
                    }
                ]
            }
        )
    )
    with_project = await sidecar.new_channel(str(workspace))
    user_only = await sidecar.new_channel(str(workspace), settingSources=["user"])

    await sidecar.turn(with_project, "write it")
    mark = len(sidecar.notes)
    await sidecar.send(user_only, "write it")
    ask = await sidecar.wait_for(
        lambda n: n.channel == user_only and n.method == "claude/permissionRequest", after=mark
    )

    assert not sidecar.of(with_project, "claude/permissionRequest"), "the project denies Write"
    assert ask.params["toolName"] == "Write", "without project settings the CLI asks"
    await sidecar.request(
        "claude/respondPermission",
        {"channelId": user_only, "requestId": ask.params["requestId"], "decision": "deny"},
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"effort": "extreme"}, "effort"),
        ({"maxTurns": 0}, "maxTurns"),
        ({"maxBudgetUsd": 0}, "maxBudgetUsd"),
        ({"maxBudgetUsd": "1"}, "maxBudgetUsd"),
        ({"fallbackModel": ""}, "fallbackModel"),
        ({"model": "sonnet", "fallbackModel": "sonnet"}, "fallbackModel"),
        ({"agent": ""}, "agent"),
        ({"settings": "/etc/settings.json"}, "settings"),
        ({"settingSources": ["user", "team"]}, "settingSources"),
        ({"settingSources": ["user", "user"]}, "settingSources"),
        ({"outputStyle": ""}, "outputStyle"),
        ({"outputStyle": "Concise", "settings": {"outputStyle": "Learning"}}, "outputStyle"),
    ],
)
@pytest.mark.same_on_every_cli("the daemon checks the params before any CLI is asked")
async def test_bad_channel_options_name_the_field(
    sidecar: Sidecar, workspace: Path, params: dict[str, Any], field: str
) -> None:
    error = await sidecar.error("claude/newChannel", {"cwd": str(workspace), **params})

    assert error.code == -32602
    assert error.data["field"].split("[")[0] == field, error.message


@pytest.mark.parametrize("effort", ["high", "max"])
async def test_set_model_with_effort_changes_the_effort_of_the_next_turn(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path, effort: str
) -> None:
    channel = await sidecar.new_channel(str(workspace), effort="low")
    await sidecar.turn(channel, "hello")

    await sidecar.request(
        "claude/setModel", {"channelId": channel, "model": "sonnet", "effort": effort}
    )
    await sidecar.turn(channel, "again")

    assert model.main_requests[-1]["output_config"]["effort"] == effort
    assert "sonnet" in model.main_requests[-1]["model"]
    info = await sidecar.request("claude/channelInfo", {"channelId": channel})
    assert info["effort"] == effort
