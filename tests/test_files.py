"""Every file the agent changes reaches the editor as a diff, and edits can be undone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar

WRITE_THEN_EDIT = {
    "rules": [
        {
            "match": "(?i)create",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {
                                "file_path": "{cwd}/notes.md",
                                "content": "# Notes\nfirst line\n",
                            },
                        }
                    }
                ],
                [{"text": "Created."}],
            ],
        },
        {
            "match": "(?i)change",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Edit",
                            "input": {
                                "file_path": "{cwd}/notes.md",
                                "old_string": "first line",
                                "new_string": "edited line",
                            },
                        }
                    }
                ],
                [
                    {
                        "tool_use": {
                            "name": "Edit",
                            "input": {
                                "file_path": "{cwd}/existing.txt",
                                "old_string": "v1",
                                "new_string": "v2",
                            },
                        }
                    }
                ],
                [{"text": "Changed."}],
            ],
        },
    ],
    "default": [[{"text": "?"}]],
}


def updates(sidecar: Sidecar, channel: str, after: int = 0) -> list[dict[str, Any]]:
    return [
        n.params
        for n in sidecar.notes[after:]
        if n.channel == channel and n.method == "claude/fileUpdated"
    ]


async def test_write_then_edit_of_one_file_send_two_updates_with_old_new_and_diff(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(WRITE_THEN_EDIT))
    (workspace / "existing.txt").write_text("v1\n")
    channel = await sidecar.new_channel(str(workspace), permissionMode="acceptEdits")

    first = (await sidecar.turn(channel, "create the notes")).message_id
    second = (await sidecar.turn(channel, "change the notes")).message_id

    path = str(workspace / "notes.md")
    notes = [u for u in updates(sidecar, channel) if u["path"] == path]
    assert [(u["toolName"], u["messageId"]) for u in notes] == [("Write", first), ("Edit", second)]
    created, edited = notes
    assert created["oldContent"] is None
    assert created["newContent"] == "# Notes\nfirst line\n"
    assert created["diff"] == (
        f"--- /dev/null\n+++ {path}\n@@ -0,0 +1,2 @@\n+# Notes\n+first line\n"
    )
    assert edited["oldContent"] == "# Notes\nfirst line\n"
    assert edited["newContent"] == "# Notes\nedited line\n"
    assert "-first line\n+edited line\n" in edited["diff"]
    assert edited["toolUseId"] and edited["toolUseId"] != created["toolUseId"]


async def test_a_file_update_arrives_after_the_change_is_on_disk_and_before_the_result(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(WRITE_THEN_EDIT))
    channel = await sidecar.new_channel(str(workspace), permissionMode="acceptEdits")

    await sidecar.send(channel, "create the notes")
    update = await sidecar.wait_for(lambda n: n.method == "claude/fileUpdated")
    on_disk = (workspace / "notes.md").read_text()
    await sidecar.wait_for_result(channel)

    assert on_disk == update.params["newContent"]
    kinds = [
        n.method if n.method != "claude/message" else n.message.get("type")
        for n in sidecar.of(channel)
    ]
    assert kinds.index("claude/fileUpdated") < kinds.index("result")


async def test_rewind_dry_run_reports_files_and_counts_without_touching_disk(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(WRITE_THEN_EDIT))
    (workspace / "existing.txt").write_text("v1\n")
    channel = await sidecar.new_channel(str(workspace), permissionMode="acceptEdits")
    first = (await sidecar.turn(channel, "create the notes")).message_id
    await sidecar.turn(channel, "change the notes")
    mark = len(sidecar.notes)

    preview = await sidecar.request(
        "claude/rewindFiles", {"channelId": channel, "messageId": first, "dryRun": True}
    )

    notes, existing = str(workspace / "notes.md"), str(workspace / "existing.txt")
    assert preview["canRewind"] is True
    assert sorted(preview["filesChanged"]) == sorted([notes, existing])
    assert (preview["insertions"], preview["deletions"]) == (1, 3)
    by_path = {d["path"]: d["diff"] for d in preview["diffs"]}
    assert by_path[notes] == (
        f"--- {notes}\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-# Notes\n-edited line\n"
    )
    assert "-v2\n+v1\n" in by_path[existing]
    assert (workspace / "notes.md").read_text() == "# Notes\nedited line\n"
    assert (workspace / "existing.txt").read_text() == "v2\n"
    assert updates(sidecar, channel, after=mark) == []


async def test_rewind_to_the_first_message_deletes_a_created_file_and_restores_an_edited_one(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(WRITE_THEN_EDIT))
    (workspace / "existing.txt").write_text("v1\n")
    channel = await sidecar.new_channel(str(workspace), permissionMode="acceptEdits")
    first = (await sidecar.turn(channel, "create the notes")).message_id
    await sidecar.turn(channel, "change the notes")
    mark = len(sidecar.notes)

    result = await sidecar.request("claude/rewindFiles", {"channelId": channel, "messageId": first})

    assert result["canRewind"] is True
    assert not (workspace / "notes.md").exists()
    assert (workspace / "existing.txt").read_text() == "v1\n"
    restored = {u["path"]: u for u in updates(sidecar, channel, after=mark)}
    notes = restored[str(workspace / "notes.md")]
    assert (notes["toolName"], notes["oldContent"], notes["newContent"]) == (
        "rewindFiles",
        "# Notes\nedited line\n",
        None,
    )
    existing = restored[str(workspace / "existing.txt")]
    assert (existing["oldContent"], existing["newContent"]) == ("v2\n", "v1\n")


async def test_rewind_to_a_message_that_is_not_a_user_message_is_a_clear_error(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(WRITE_THEN_EDIT))
    channel = await sidecar.new_channel(str(workspace), permissionMode="acceptEdits")
    await sidecar.turn(channel, "create the notes")

    error = await sidecar.error(
        "claude/rewindFiles",
        {"channelId": channel, "messageId": "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"},
    )

    assert error.code == -32602 and error.data["field"] == "messageId"
    assert "claude/sendMessage" in error.message
    assert (workspace / "notes.md").exists()


async def test_an_edit_made_by_a_sub_agent_is_reported_with_its_parent_tool_use(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "SUBTASK",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Write",
                                        "input": {
                                            "file_path": "{cwd}/sub.txt",
                                            "content": "from the sub-agent\n",
                                        },
                                    }
                                }
                            ],
                            [{"text": "sub done"}],
                        ],
                    },
                    {
                        "match": "(?i)delegate",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "Agent",
                                        "input": {
                                            "description": "write a file",
                                            "prompt": "SUBTASK: write sub.txt",
                                            "subagent_type": "general-purpose",
                                        },
                                    }
                                }
                            ],
                            [{"text": "Delegated."}],
                        ],
                    },
                ],
                "default": [[{"text": "Noted."}]],
            }
        )
    )
    channel = await sidecar.new_channel(str(workspace), permissionMode="acceptEdits")

    await sidecar.send(channel, "delegate the file")
    update = await sidecar.wait_for(lambda n: n.method == "claude/fileUpdated")

    agent_calls = [
        b["id"]
        for n in sidecar.of(channel, "claude/message")
        if n.message.get("type") == "assistant"
        for b in n.message["message"]["content"]
        if b.get("type") == "tool_use" and b["name"] == "Agent"
    ]
    assert update.params["path"] == str(workspace / "sub.txt")
    assert update.params["newContent"] == "from the sub-agent\n"
    assert update.params["parentToolUseId"] == agent_calls[0]
    await sidecar.wait_for_state(channel, "idle", after=sidecar.notes.index(update))
