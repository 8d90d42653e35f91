"""This agent's extension methods (``_claude-sidecar/*``): rewind with a dry run, fork at a
message, diagnostics; against the real CLI and the stand-in model."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.acp.client import acp_agent, text
from tests.acp.conftest import Acp
from tests.harness import json_object
from tests.worktree_repo import git, make_repo

WRITE = {
    "rules": [
        {
            "match": "(?i)write",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{cwd}/note.txt", "content": "new\n"},
                        }
                    }
                ],
                [{"text": "Finished."}],
            ],
        }
    ],
    "default": [[{"text": "Hello!"}]],
}


async def test_initialize_advertises_the_extension_methods(daemon_env: dict[str, str]) -> None:
    async with acp_agent(daemon_env) as (conn, _, _client):
        answer = await conn.initialize(protocol_version=PROTOCOL_VERSION)

    assert answer.field_meta["claudeSidecar"]["extensionMethods"] == [
        "_claude-sidecar/rewindFiles",
        "_claude-sidecar/forkSession",
        "_claude-sidecar/diagnostics",
        "_claude-sidecar/worktreeChanges",
        "_claude-sidecar/mergeWorktree",
        "_claude-sidecar/removeWorktree",
    ]


async def test_rewind_files_to_a_prompt_says_what_a_dry_run_would_do_then_does_it(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(WRITE))
    note = workspace / "note.txt"
    note.write_text("old\n")
    session = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    await acp.conn.set_session_mode(session_id=session, mode_id="acceptEdits")
    wrote = await acp.conn.prompt(session_id=session, prompt=[text("write it")])
    message_id = wrote.field_meta["claudeSidecar"]["messageId"]
    assert note.read_text() == "new\n"

    params = {"sessionId": session, "messageId": message_id}
    preview = await acp.conn.ext_method("claude-sidecar/rewindFiles", {**params, "dryRun": True})
    after_preview = note.read_text()
    done = await acp.conn.ext_method("claude-sidecar/rewindFiles", params)

    assert preview["canRewind"] and preview["filesChanged"] == [str(note)]
    (diff,) = preview["diffs"]
    assert "-new" in diff["diff"] and "+old" in diff["diff"]
    assert after_preview == "new\n", "a dry run changes nothing"
    assert done["filesChanged"] == [str(note)]
    assert note.read_text() == "old\n"


async def test_fork_at_a_message_continues_a_copy_through_that_exchange(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    session = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    first = await acp.conn.prompt(session_id=session, prompt=[text("hello one")])
    await acp.conn.prompt(session_id=session, prompt=[text("hello two")])

    fork = await acp.conn.ext_method(
        "claude-sidecar/forkSession",
        {"sessionId": session, "atMessageId": first.field_meta["claudeSidecar"]["messageId"]},
    )
    forked = fork["sessionId"]
    answer = await acp.conn.prompt(session_id=forked, prompt=[text("hello fork")])
    sent = str(model.main_requests[-1]["messages"])

    assert forked != session and answer.stop_reason == "end_turn"
    assert fork["modes"]["currentModeId"] == "default"
    assert {o["id"] for o in fork["configOptions"]} >= {"model"}
    assert "hello one" in sent and "hello fork" in sent and "hello two" not in sent
    await acp.client.wait(lambda: acp.client.of(forked, "available_commands_update"))


# It compares the pid the agent reports with its process's.
@pytest.mark.real_daemon_process
async def test_diagnostics_counts_what_the_agent_holds_and_each_sessions_cli(
    acp: Acp, workspace: Path
) -> None:
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])

    report = await acp.conn.ext_method("claude-sidecar/diagnostics", {})

    assert report["pid"] == acp.process.pid
    assert report["stats"]["channels"] == 1 and report["stats"]["children"] >= 1
    assert report["stats"]["fds"] > 0 and report["stats"]["rssKib"] > 0
    (described,) = report["sessions"]
    assert described["sessionId"] == opened.session_id
    assert described["pid"] == opened.field_meta["claudeSidecar"]["pid"]
    assert described["state"] == "idle" and described["cwd"] == str(workspace)


async def test_extension_methods_with_bad_params_name_the_field(acp: Acp, workspace: Path) -> None:
    session = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    await acp.conn.prompt(session_id=session, prompt=[text("hello")])
    stored = "00000000-0000-4000-8000-000000000000"
    fields = []
    for method, params in (
        ("rewindFiles", {"messageId": stored}),
        ("rewindFiles", {"sessionId": session, "messageId": "not-a-uuid"}),
        ("rewindFiles", {"sessionId": session, "messageId": stored, "dryRun": "yes"}),
        ("rewindFiles", {"sessionId": session, "messageId": stored}),
        ("forkSession", {"sessionId": stored}),
        ("forkSession", {"sessionId": session, "atMessageId": stored}),
    ):
        with pytest.raises(RequestError) as raised:
            await acp.conn.ext_method(f"claude-sidecar/{method}", params)
        assert raised.value.code == -32602
        fields.append(json_object(raised.value.data)["field"])
    with pytest.raises(RequestError) as unknown:
        await acp.conn.ext_method("claude-sidecar/nope", {})

    assert fields == ["sessionId", "messageId", "dryRun", "messageId", "cwd", "atMessageId"]
    assert unknown.value.code == -32601


async def test_a_session_in_a_worktree_is_reviewed_merged_and_removed(
    acp: Acp, model: ScriptedModel, tmp_path: Path
) -> None:
    model.set_scenario(load_scenario(WRITE))
    repo = make_repo(tmp_path / "repo")
    opened = await acp.conn.new_session(
        cwd=str(repo), mcp_servers=[], claudeSidecar={"worktree": {"name": "acp-one"}}
    )
    session = opened.session_id
    worktree = opened.field_meta["claudeSidecar"]["worktree"]
    await acp.conn.set_session_mode(session_id=session, mode_id="acceptEdits")
    await acp.conn.prompt(session_id=session, prompt=[text("write it")])

    changed = await acp.client.wait(
        lambda: [
            m["params"]
            for m in acp.client.incoming
            if m.get("method") == "_claude-sidecar/worktreeChanged"
        ]
    )
    changes = await acp.conn.ext_method("claude-sidecar/worktreeChanges", {"sessionId": session})
    merged = await acp.conn.ext_method(
        "claude-sidecar/mergeWorktree", {"sessionId": session, "strategy": "merge"}
    )
    removed = await acp.conn.ext_method("claude-sidecar/removeWorktree", {"sessionId": session})

    assert worktree["path"] == str(repo / ".claude" / "worktrees" / "acp-one")
    assert [(f["path"], f["status"]) for f in changes["files"]] == [("note.txt", "added")]
    assert changed[0] == {
        "sessionId": session,
        "files": [{"path": "note.txt", "status": "added", "added": 1, "deleted": 0}],
        "added": 1,
        "deleted": 0,
    }
    assert merged["files"] == ["note.txt"] and (repo / "note.txt").read_text() == "new\n"
    assert removed["branch"] == "worktree-acp-one" and not Path(worktree["path"]).exists()
    assert git(repo, "branch", "--list", "worktree-acp-one") == ""


async def test_a_worktree_that_cannot_be_made_names_the_field_under_meta(
    acp: Acp, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")

    with pytest.raises(RequestError) as raised:
        await acp.conn.new_session(
            cwd=str(repo), mcp_servers=[], claudeSidecar={"worktree": {"baseRef": "nope"}}
        )

    assert raised.value.code == -32602
    assert json_object(raised.value.data)["field"] == "worktree.baseRef"
    with pytest.raises(RequestError) as bad_name:
        await acp.conn.new_session(
            cwd=str(repo), mcp_servers=[], claudeSidecar={"worktree": {"name": "../up"}}
        )
    assert json_object(bad_name.value.data)["field"] == "worktree.name"
