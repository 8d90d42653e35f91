"""Every tool use the CLI asks about is decided in the editor, and nothing slips through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Note, Sidecar, StartSidecar, tool_results, wait_until_dead

# The daemon's side of a chat, as a client of the release before or after relies on it.
pytestmark = pytest.mark.cross_release


def write_twice(first: str = "note.txt", second: str | None = None) -> dict[str, Any]:
    steps: list[list[dict[str, Any]]] = [
        [
            {
                "tool_use": {
                    "name": "Write",
                    "input": {"file_path": "{cwd}/" + first, "content": "original\n"},
                }
            }
        ]
    ]
    if second:
        steps.append(
            [
                {
                    "tool_use": {
                        "name": "Write",
                        "input": {"file_path": "{cwd}/" + second, "content": "second\n"},
                    }
                }
            ]
        )
    steps.append([{"text": "Finished."}])
    return {"rules": [{"match": "(?i)write", "steps": steps}], "default": [[{"text": "Hello!"}]]}


async def next_request(sidecar: Sidecar, channel: str, after: int = 0) -> Note:
    return await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/permissionRequest", after=after
    )


async def respond(
    sidecar: Sidecar, channel: str, request: Note, decision: str, **extra: Any
) -> Any:
    return await sidecar.request(
        "claude/respondPermission",
        {
            "channelId": channel,
            "requestId": request.params["requestId"],
            "decision": decision,
            **extra,
        },
    )


@pytest.fixture
def writes(model: ScriptedModel) -> ScriptedModel:
    model.set_scenario(load_scenario(write_twice()))
    return model


async def test_a_write_asks_first_and_a_deny_keeps_the_file_from_existing(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write a note")

    request = await next_request(sidecar, channel)
    await respond(sidecar, channel, request, "deny", message="Not in this folder, please.")
    result = await sidecar.wait_for_result(channel)

    assert request.params["toolName"] == "Write"
    assert request.params["input"]["file_path"] == f"{workspace}/note.txt"
    assert not (workspace / "note.txt").exists()
    denied = tool_results(writes)[-1]
    assert denied["is_error"] is True and "Not in this folder, please." in str(denied["content"])
    assert result["subtype"] == "success"


async def test_an_allowed_write_creates_the_file(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write a note")

    await respond(sidecar, channel, await next_request(sidecar, channel), "allow")
    await sidecar.wait_for_result(channel)

    assert (workspace / "note.txt").read_text() == "original\n"


async def test_an_edited_input_is_what_the_tool_runs_with(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write a note")
    request = await next_request(sidecar, channel)

    edited = {**request.params["input"], "content": "edited by the user\n"}
    await respond(sidecar, channel, request, "allow", updatedInput=edited)
    await sidecar.wait_for_result(channel)

    assert (workspace / "note.txt").read_text() == "edited by the user\n"


async def test_allow_always_keeps_the_rule_so_the_next_write_is_not_asked(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(write_twice("a.txt", "b.txt")))
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write two notes")

    first = await next_request(sidecar, channel)
    assert first.params["suggestions"], "the CLI offers a rule to keep"
    await respond(sidecar, channel, first, "allowAlways")
    await sidecar.wait_for_result(channel)

    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
    assert len(sidecar.of(channel, "claude/permissionRequest")) == 1


async def test_accept_edits_mode_writes_without_asking(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace), permissionMode="acceptEdits")
    await sidecar.turn(channel, "write a note")

    assert (workspace / "note.txt").read_text() == "original\n"
    assert sidecar.of(channel, "claude/permissionRequest") == []


@pytest.mark.same_on_every_cli(
    "the daemon's own state and checks around a request tested on every CLI"
)
async def test_a_pending_request_shows_in_the_state_and_in_list_channels(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write a note")
    request = await next_request(sidecar, channel)

    listed = (await sidecar.request("claude/listChannels"))["channels"][0]

    assert listed["state"] == "awaitingPermission"
    pending = listed["pendingPermissions"]
    assert [p["requestId"] for p in pending] == [request.params["requestId"]]
    assert pending[0]["toolName"] == "Write"
    answered = len(sidecar.notes)
    await respond(sidecar, channel, request, "allow")
    await sidecar.wait_for_state(channel, "idle", after=answered)
    states = [n.params["state"] for n in sidecar.of(channel, "claude/status")]
    assert "awaitingPermission" in states
    assert states[states.index("awaitingPermission") + 1] == "running"


async def test_an_edit_request_carries_the_diff_it_would_make(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "greeting.txt").write_text("hello\nworld\n")
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)edit",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Edit",
                                        "input": {
                                            "file_path": "{cwd}/greeting.txt",
                                            "old_string": "world",
                                            "new_string": "there",
                                        },
                                    }
                                }
                            ],
                            [{"text": "Edited."}],
                        ],
                    }
                ]
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "edit the greeting")

    request = await next_request(sidecar, channel)

    path = f"{workspace}/greeting.txt"
    assert request.params["preview"] == (
        f"--- {path}\n+++ {path}\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n"
    )
    assert (workspace / "greeting.txt").read_text() == "hello\nworld\n", "nothing ran yet"
    await respond(sidecar, channel, request, "allow")
    await sidecar.wait_for_result(channel)
    assert (workspace / "greeting.txt").read_text() == "hello\nthere\n"


@pytest.mark.same_on_every_cli(
    "the daemon's own state and checks around a request tested on every CLI"
)
async def test_a_new_file_preview_is_a_diff_from_dev_null(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write a note")

    request = await next_request(sidecar, channel)

    assert request.params["preview"].startswith(f"--- /dev/null\n+++ {workspace}/note.txt\n")
    assert "+original\n" in request.params["preview"]
    await respond(sidecar, channel, request, "deny")


async def test_interrupt_while_a_request_is_pending_cancels_it_and_the_channel_still_works(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write a note")
    request = await next_request(sidecar, channel)

    await sidecar.request("claude/interrupt", {"channelId": channel})
    cancelled = await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/permissionCancelled"
    )
    await sidecar.wait_for_result(channel)

    assert cancelled.params["requestId"] == request.params["requestId"]
    assert cancelled.params["reason"] == "interrupted"
    assert not (workspace / "note.txt").exists()
    late = await sidecar.error(
        "claude/respondPermission",
        {"channelId": channel, "requestId": request.params["requestId"], "decision": "allow"},
    )
    assert late.code == -32008
    assert (await sidecar.turn(channel, "hello")).result["subtype"] == "success"


@pytest.mark.same_on_every_cli(
    "the daemon's own state and checks around a request tested on every CLI"
)
async def test_a_second_answer_is_refused_and_never_reaches_the_cli(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write a note")
    request = await next_request(sidecar, channel)

    await respond(sidecar, channel, request, "deny")
    duplicate = await sidecar.error(
        "claude/respondPermission",
        {"channelId": channel, "requestId": request.params["requestId"], "decision": "allow"},
    )
    await sidecar.wait_for_result(channel)

    assert duplicate.code == -32008
    assert duplicate.data == {
        "name": "permissionRequestNotFound",
        "channelId": channel,
        "requestId": request.params["requestId"],
    }
    assert not (workspace / "note.txt").exists()


async def test_closing_a_channel_with_a_pending_request_denies_it_and_ends_the_cli(
    sidecar: Sidecar, writes: ScriptedModel, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "write a note")
    request = await next_request(sidecar, channel)

    await sidecar.request("claude/closeChannel", {"channelId": channel})

    cancelled = sidecar.of(channel, "claude/permissionCancelled")
    assert [(c.params["requestId"], c.params["reason"]) for c in cancelled] == [
        (request.params["requestId"], "closed")
    ]
    assert not (workspace / "note.txt").exists()
    assert await wait_until_dead(sidecar.pids[-1:]) == []


async def test_plan_approval_switches_to_the_chosen_mode_and_the_work_proceeds(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)plan",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Write",
                                        "input": {
                                            "file_path": "{plan_file}",
                                            "content": "# Plan\n1. Create plan_out.txt\n",
                                        },
                                    }
                                }
                            ],
                            [{"tool_use": {"name": "ExitPlanMode", "input": {}}}],
                            [
                                {
                                    "tool_use": {
                                        "name": "Write",
                                        "input": {
                                            "file_path": "{cwd}/plan_out.txt",
                                            "content": "done\n",
                                        },
                                    }
                                }
                            ],
                            [{"text": "Implemented the plan."}],
                        ],
                    }
                ]
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace), permissionMode="plan")
    await sidecar.send(channel, "plan the work")

    request = await next_request(sidecar, channel)
    while request.params["toolName"] != "ExitPlanMode":
        await respond(sidecar, channel, request, "allow")
        request = await next_request(sidecar, channel, after=sidecar.notes.index(request) + 1)
    assert request.params["input"]["plan"] == "# Plan\n1. Create plan_out.txt\n"
    assert request.params["requiresUserInteraction"] is True
    await respond(sidecar, channel, request, "allow", mode="acceptEdits")
    await sidecar.wait_for_result(channel)

    assert (workspace / "plan_out.txt").read_text() == "done\n"
    asked = [n.params["toolName"] for n in sidecar.of(channel, "claude/permissionRequest")]
    assert asked[-1] == "ExitPlanMode", "the Write after approval was not asked"
    assert sidecar.of(channel, "claude/status")[-1].params["permissionMode"] == "acceptEdits"
    approved = [r for r in tool_results(model) if "approved your plan" in str(r["content"])]
    assert approved


async def test_a_question_is_answered_with_the_chosen_option(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    question = "Which colour should the button be?"
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)button",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "AskUserQuestion",
                                        "input": {
                                            "questions": [
                                                {
                                                    "question": question,
                                                    "header": "Colour",
                                                    "multiSelect": False,
                                                    "options": [
                                                        {"label": "red", "description": "warm"},
                                                        {"label": "blue", "description": "cool"},
                                                    ],
                                                }
                                            ]
                                        },
                                    }
                                }
                            ],
                            [{"text": "Blue it is."}],
                        ],
                    }
                ]
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.send(channel, "style the button")

    request = await next_request(sidecar, channel)
    missing = await sidecar.error(
        "claude/respondPermission",
        {"channelId": channel, "requestId": request.params["requestId"], "decision": "allow"},
    )
    await respond(sidecar, channel, request, "allow", answers={question: "blue"})
    await sidecar.wait_for_result(channel)

    assert request.params["toolName"] == "AskUserQuestion"
    assert request.params["input"]["questions"][0]["options"][1]["label"] == "blue"
    assert missing.code == -32602 and missing.data["field"] == "answers"
    answered = str(tool_results(model)[-1]["content"])
    assert f'"{question}"="blue"' in answered


async def test_client_rules_allow_a_tool_without_a_round_trip(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret of the outside\n")
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)read",
                        "steps": [
                            [{"tool_use": {"name": "Read", "input": {"file_path": str(outside)}}}],
                            [{"text": "Read it."}],
                        ],
                    }
                ]
            }
        )
    )
    daemon = await sidecar_with({"autoAllowTools": ["Read", "Glob", "Grep"]})
    channel = await daemon.new_channel(str(workspace))
    await daemon.turn(channel, "read the outside file")

    reported = daemon.of(channel, "claude/permissionRequest")
    assert [(r.params["toolName"], r.params["autoDecision"]) for r in reported] == [
        ("Read", "allow")
    ]
    assert "secret of the outside" in str(tool_results(model)[-1]["content"])


async def test_bypass_permissions_runs_tools_without_asking_when_the_client_opted_in(
    sidecar_with: StartSidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)touch",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Bash",
                                        "input": {"command": "touch bypassed.txt"},
                                    }
                                }
                            ],
                            [{"text": "Touched."}],
                        ],
                    }
                ]
            }
        )
    )
    # As root the CLI allows bypassPermissions only inside a declared sandbox.
    daemon = await sidecar_with({"allowDangerouslySkipPermissions": True}, IS_SANDBOX="1")
    channel = await daemon.new_channel(str(workspace), permissionMode="bypassPermissions")
    await daemon.turn(channel, "touch a file")
    listed = (await daemon.request("claude/listChannels"))["channels"][0]

    assert (workspace / "bypassed.txt").exists()
    assert daemon.of(channel, "claude/permissionRequest") == []
    assert listed["permissionMode"] == "bypassPermissions"
