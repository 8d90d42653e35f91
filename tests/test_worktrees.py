"""Chats in git worktrees of their own, over the protocol, with the real CLI writing files
(the stand-in model scripts its Write tool uses): nothing collides, the changes are
listed and announced, merged into the user's checkout or removed, and a chat resumed or
forked stays in its worktree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import Sidecar, StartSidecar
from tests.test_listing_partial import SMALL, long_session
from tests.worktree_repo import git, make_repo, state


def write(content: str, name: str = "shared.txt") -> list[list[dict[str, Any]]]:
    """The steps of a turn that writes ``content`` to ``name`` in the chat's folder."""
    return [
        [
            {
                "tool_use": {
                    "name": "Write",
                    "input": {"file_path": "{cwd}/" + name, "content": content},
                }
            }
        ],
        [{"text": "Written."}],
    ]


WRITES = {
    "rules": [
        {"match": "(?i)write one", "steps": write("one\n")},
        {"match": "(?i)write two", "steps": write("two\n")},
        {"match": "(?i)write three", "steps": write("three\n")},
        {"match": "(?i)write feature", "steps": write("feature = True\n", "feature.py")},
    ],
    "default": [[{"text": "A scripted answer."}]],
}


@pytest.fixture
def repo(tmp_path: Path, model: ScriptedModel) -> Path:
    model.set_scenario(load_scenario(WRITES))
    return make_repo(tmp_path / "repo")


async def open_in_worktree(sidecar: Sidecar, repo: Path, **worktree: Any) -> dict[str, Any]:
    return await sidecar.open_channel(
        cwd=str(repo), permissionMode="acceptEdits", worktree=worktree
    )


GIT_WORK = pytest.mark.same_on_every_cli(
    "git and the daemon's reading of the worktree: the CLI only writes a file with a tool there,"
    " which the compatibility run checks in the tests left in it"
)
"""For the tests whose outcome is the daemon's git work (merges, removals, change counts)."""


@GIT_WORK
async def test_the_daemon_lists_the_worktrees_feature(sidecar: Sidecar) -> None:
    assert "worktrees" in sidecar.features["features"]


async def test_three_chats_in_three_worktrees_write_the_same_file_and_nothing_collides(
    sidecar: Sidecar, repo: Path
) -> None:
    opened = [await open_in_worktree(sidecar, repo, name=n) for n in ("one", "two", "three")]

    for chat, word in zip(opened, ("one", "two", "three"), strict=True):
        turn = await sidecar.turn(chat["channelId"], f"write {word}")
        assert turn.result["subtype"] == "success"

    for chat, word in zip(opened, ("one", "two", "three"), strict=True):
        worktree = chat["info"]["worktree"]
        assert worktree["path"] == str(repo / ".claude" / "worktrees" / word)
        assert worktree["branch"] == f"worktree-{word}"
        assert (Path(worktree["path"]) / "shared.txt").read_text() == f"{word}\n"
    assert not (repo / "shared.txt").exists()
    listed = (await sidecar.request("claude/listChannels", {}))["channels"]
    assert [c["worktree"]["name"] for c in listed] == ["one", "two", "three"]
    assert [c["cwd"] for c in listed] == [c["info"]["worktree"]["path"] for c in opened]


async def test_a_write_is_announced_as_worktree_changed_and_listed_with_its_diff(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    channel = chat["channelId"]

    await sidecar.turn(channel, "write feature")
    note = await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/worktreeChanged"
    )
    listed = await sidecar.request("claude/worktreeChanges", {"channelId": channel})

    assert note.params["files"] == [
        {"path": "feature.py", "status": "added", "added": 1, "deleted": 0}
    ]
    assert (note.params["added"], note.params["deleted"]) == (1, 0)
    (file,) = listed["files"]
    assert (file["path"], file["uncommitted"]) == ("feature.py", True)
    assert "+feature = True\n" in file["diff"]
    assert listed["worktree"] == chat["info"]["worktree"]
    info = await sidecar.request("claude/channelInfo", {"channelId": channel})
    assert info["worktree"] == chat["info"]["worktree"]


@GIT_WORK
async def test_the_overview_shows_what_a_worktree_chat_changed_as_it_changes(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await open_in_worktree(sidecar, repo, name="gamma")
    channel = chat["channelId"]
    watched = (await sidecar.request("claude/watchChannels", {}))["channels"]

    await sidecar.turn(channel, "write feature")
    note = await sidecar.wait_for(
        lambda n: n.method == "claude/channelsChanged"
        and any(c["channelId"] == channel and "changes" in c for c in n.params["channels"])
    )
    listed = (await sidecar.request("claude/listChannels", {}))["channels"]

    assert "changes" not in watched[0], "nothing counted yet"
    summary = next(c for c in note.params["channels"] if c["channelId"] == channel)
    assert summary["changes"] == {"files": 1, "added": 1, "deleted": 0}
    assert summary["worktree"]["branch"] == "worktree-gamma"
    assert listed[0]["changes"] == summary["changes"]


@GIT_WORK
async def test_the_same_changes_again_are_not_announced_again(sidecar: Sidecar, repo: Path) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    channel = chat["channelId"]
    await sidecar.turn(channel, "write feature")
    await sidecar.wait_for(lambda n: n.channel == channel and n.method == "claude/worktreeChanged")

    await sidecar.turn(channel, "write feature")  # the same file, the same content
    await sidecar.turn(channel, "write one")
    # Counts run one after another: this one comes after those of the second turn.
    last = await sidecar.wait_for(
        lambda n: n.channel == channel
        and n.method == "claude/worktreeChanged"
        and len(n.params["files"]) == 2
    )

    announced = sidecar.of(channel, "claude/worktreeChanged")
    assert [len(n.params["files"]) for n in announced] == [1, 2], [n.params for n in announced]
    assert last is announced[-1]


@GIT_WORK
async def test_merge_brings_the_chats_work_into_the_users_checkout(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    channel = chat["channelId"]
    await sidecar.turn(channel, "write feature")

    merged = await sidecar.request(
        "claude/mergeWorktree", {"channelId": channel, "strategy": "squash"}
    )

    assert (repo / "feature.py").read_text() == "feature = True\n"
    assert merged["files"] == ["feature.py"]
    # The commit of the agent's work is named after the chat's first prompt.
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "write feature"
    assert (await sidecar.request("claude/worktreeChanges", {"channelId": channel}))["files"] == []


@GIT_WORK
async def test_a_merge_is_refused_while_the_chat_waits_in_a_turn(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await sidecar.open_channel(cwd=str(repo), worktree={"name": "alpha"})
    channel = chat["channelId"]
    await sidecar.send(channel, "write feature")
    asked = await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/permissionRequest"
    )
    before = state(repo)

    refused = await sidecar.error(
        "claude/mergeWorktree", {"channelId": channel, "strategy": "merge"}
    )

    assert refused.data["name"] == "chatBusy"
    assert refused.data["state"] == "awaitingPermission"
    assert state(repo) == before
    await sidecar.request(
        "claude/respondPermission",
        {"channelId": channel, "requestId": asked.params["requestId"], "decision": "deny"},
    )
    await sidecar.wait_for(lambda n: n.channel == channel and n.method == "claude/turnEnded")


@GIT_WORK
async def test_a_conflicting_merge_is_answered_with_the_files_and_changes_nothing(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    channel = chat["channelId"]
    await sidecar.turn(channel, "write one")
    (repo / "shared.txt").write_text("the user's\n")
    git(repo, "add", "shared.txt")
    git(repo, "commit", "-qm", "user adds shared.txt")
    worktree = Path(chat["info"]["worktree"]["path"])
    checkout_before, worktree_before = state(repo), state(worktree)

    refused = await sidecar.error(
        "claude/mergeWorktree", {"channelId": channel, "strategy": "merge"}
    )

    assert (refused.data["name"], refused.data["files"]) == ("mergeConflict", ["shared.txt"])
    assert (state(repo), state(worktree)) == (checkout_before, worktree_before)


@GIT_WORK
async def test_the_users_uncommitted_change_blocks_a_merge_naming_the_file(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    await sidecar.turn(chat["channelId"], "write feature")
    (repo / "feature.py").write_text("the user's draft\n")

    refused = await sidecar.error(
        "claude/mergeWorktree", {"channelId": chat["channelId"], "strategy": "rebase"}
    )

    assert (refused.data["name"], refused.data["files"]) == ("uncommittedChanges", ["feature.py"])
    assert (repo / "feature.py").read_text() == "the user's draft\n"


@GIT_WORK
async def test_remove_refuses_unmerged_work_without_force_and_removes_it_with_force(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    channel = chat["channelId"]
    await sidecar.turn(channel, "write feature")
    path = Path(chat["info"]["worktree"]["path"])

    refused = await sidecar.error("claude/removeWorktree", {"channelId": channel})
    assert (refused.data["name"], refused.data["uncommittedFiles"]) == (
        "unmergedWork",
        ["feature.py"],
    )
    assert path.exists()

    removed = await sidecar.request("claude/removeWorktree", {"channelId": channel, "force": True})

    assert removed["discardedFiles"] == ["feature.py"]
    assert not path.exists()
    assert git(repo, "branch", "--list", "worktree-alpha") == ""
    assert (await sidecar.request("claude/listChannels", {}))["channels"] == []


@GIT_WORK
async def test_a_merged_worktree_is_removed_without_force(sidecar: Sidecar, repo: Path) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    channel = chat["channelId"]
    await sidecar.turn(channel, "write feature")
    await sidecar.request("claude/mergeWorktree", {"channelId": channel, "strategy": "merge"})

    removed = await sidecar.request("claude/removeWorktree", {"channelId": channel})

    assert (removed["discardedCommits"], removed["discardedFiles"]) == ([], [])
    assert (repo / "feature.py").exists()


async def test_a_chat_resumed_or_forked_stays_in_its_worktree(sidecar: Sidecar, repo: Path) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    await sidecar.turn(chat["channelId"], "write one")
    await sidecar.request("claude/closeChannel", {"channelId": chat["channelId"]})
    worktree = chat["info"]["worktree"]

    resumed = await sidecar.open_channel(
        cwd=str(repo),
        resume=chat["sessionId"],
        worktree={"name": "alpha"},
        permissionMode="acceptEdits",
    )
    forked = await sidecar.open_channel("claude/forkSession", channelId=resumed["channelId"])

    assert resumed["sessionId"] == chat["sessionId"]
    assert resumed["info"]["worktree"] == forked["info"]["worktree"] == worktree
    transcript = await sidecar.request("claude/getTranscript", {"channelId": resumed["channelId"]})
    assert any(e.get("text") == "write one" for e in transcript["entries"])
    turn = await sidecar.turn(forked["channelId"], "write two")
    assert turn.result["subtype"] == "success"
    assert (Path(worktree["path"]) / "shared.txt").read_text() == "two\n"
    assert not (repo / "shared.txt").exists()
    removed = await sidecar.request(
        "claude/removeWorktree", {"channelId": resumed["channelId"], "force": True}
    )
    assert removed["closedChannels"] == [resumed["channelId"], forked["channelId"]]


async def test_a_worktree_chat_resumed_from_the_main_checkout_runs_in_its_worktree(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    await sidecar.turn(chat["channelId"], "write one")
    await sidecar.request("claude/closeChannel", {"channelId": chat["channelId"]})

    resumed = await sidecar.open_channel(
        cwd=str(repo), resume=chat["sessionId"], permissionMode="acceptEdits"
    )
    await sidecar.turn(resumed["channelId"], "write two")

    worktree = chat["info"]["worktree"]
    assert resumed["info"]["worktree"] == worktree
    (listed,) = (await sidecar.request("claude/listChannels", {}))["channels"]
    assert listed["cwd"] == worktree["path"]
    assert (Path(worktree["path"]) / "shared.txt").read_text() == "two\n"
    assert not (repo / "shared.txt").exists()


async def test_the_worktree_of_a_chat_whose_cli_cannot_start_is_removed_again(
    sidecar_with: StartSidecar, repo: Path, tmp_path: Path
) -> None:
    daemon = await sidecar_with({"cliPath": str(tmp_path / "no-such-cli")})

    refused = await daemon.error(
        "claude/newChannel", {"cwd": str(repo), "worktree": {"name": "alpha"}}
    )

    assert refused.data["name"] == "cliNotFound"
    assert not (repo / ".claude" / "worktrees" / "alpha").exists()
    assert git(repo, "branch", "--list", "worktree-alpha") == ""


@pytest.mark.parametrize(
    ("where", "worktree", "field", "said"),
    [
        ("plain", {"name": "x"}, "cwd", "is not in a git repository"),
        ("repo", {"name": "x", "baseRef": "no-such-ref"}, "worktree.baseRef", "names no commit"),
        ("repo", {"name": "taken"}, "worktree.name", "is in use"),
        ("repo", {"name": "a..b"}, "worktree.name", "is not a worktree name"),
    ],
)
@GIT_WORK
async def test_a_worktree_that_cannot_be_made_is_refused_naming_the_field(
    sidecar: Sidecar, repo: Path, tmp_path: Path, where: str, worktree: Any, field: str, said: str
) -> None:
    (tmp_path / "plain").mkdir()
    git(
        repo, "worktree", "add", "-q", "-b", "worktree-taken", str(repo / ".claude/worktrees/taken")
    )

    refused = await sidecar.error(
        "claude/newChannel", {"cwd": str(tmp_path / where), "worktree": worktree}
    )

    assert (refused.code, refused.data["field"]) == (-32602, field)
    assert said in refused.message
    assert (await sidecar.request("claude/listChannels", {}))["channels"] == []


async def test_a_removed_worktrees_chat_resumes_in_the_main_checkout(
    sidecar: Sidecar, repo: Path
) -> None:
    chat = await open_in_worktree(sidecar, repo, name="alpha")
    await sidecar.turn(chat["channelId"], "write one")
    await sidecar.request("claude/removeWorktree", {"channelId": chat["channelId"], "force": True})

    listed = await sidecar.request("claude/listSessions", {"cwd": str(repo)})
    assert [s["sessionId"] for s in listed["sessions"]] == [chat["sessionId"]]
    resumed = await sidecar.open_channel(
        cwd=str(repo), resume=chat["sessionId"], permissionMode="acceptEdits"
    )

    assert resumed["info"]["worktree"] is None
    transcript = await sidecar.request("claude/getTranscript", {"channelId": resumed["channelId"]})
    assert any(e.get("text") == "write one" for e in transcript["entries"])
    turn = await sidecar.turn(resumed["channelId"], "write two")
    assert turn.result["subtype"] == "success"
    assert (repo / "shared.txt").read_text() == "two\n"


async def test_the_sessions_of_a_checkouts_worktrees_are_listed_with_it_naming_the_worktree(
    sidecar: Sidecar, repo: Path
) -> None:
    """The CLI stores a worktree chat's session under the worktree's own folder; the
    picker of the checkout it was made from lists it too, saying which worktree."""
    in_worktree = await open_in_worktree(sidecar, repo, name="feature/alpha")
    await sidecar.turn(in_worktree["channelId"], "write one")
    await sidecar.request("claude/closeChannel", {"channelId": in_worktree["channelId"]})
    at_home, _ = await sidecar.chat(str(repo), "hello", permissionMode="acceptEdits")

    listed = await sidecar.request("claude/listSessions", {"cwd": str(repo)})
    inside = await sidecar.request(
        "claude/listSessions", {"cwd": in_worktree["info"]["worktree"]["path"]}
    )

    by_id = {s["sessionId"]: s for s in listed["sessions"]}
    assert set(by_id) == {in_worktree["sessionId"], at_home}
    assert by_id[in_worktree["sessionId"]]["worktree"] == "feature/alpha"
    assert by_id[in_worktree["sessionId"]]["cwd"] == in_worktree["info"]["worktree"]["path"]
    assert "worktree" not in by_id[at_home]
    assert [s["sessionId"] for s in inside["sessions"]] == [in_worktree["sessionId"]]
    assert "worktree" not in inside["sessions"][0]


@pytest.mark.same_on_every_cli("the daemon reads stored files, no CLI runs")
async def test_a_worktree_session_listed_partial_from_its_checkout_is_announced_for_the_checkout(
    sidecar: Sidecar, repo: Path, home: Path
) -> None:
    """A worktree made outside the daemon (``git worktree add``, as ``claude --worktree``
    does) is named by its folder; a long session of it listed with ``allowPartial`` from
    the main checkout is read in the background and announced for the main checkout."""
    worktree = repo / ".claude" / "worktrees" / "beta"
    git(repo, "worktree", "add", "-q", "-b", "worktree-beta", str(worktree))
    long_id = long_session(home, worktree)
    params = {"cwd": str(repo), "allowPartial": True}

    first = await sidecar.request("claude/listSessions", params)
    changed = await sidecar.wait_for(lambda n: n.method == "claude/sessionsChanged")
    again = await sidecar.request("claude/listSessions", params)

    by_id = {s["sessionId"]: s for s in first["sessions"]}
    assert (by_id[long_id]["partial"], by_id[long_id]["worktree"]) == (True, "beta")
    assert by_id[SMALL]["worktree"] == "beta"
    assert changed.params == {"cwd": str(repo), "sessionIds": [long_id]}
    assert again == await sidecar.request("claude/listSessions", {"cwd": str(repo)})
    assert {s["sessionId"]: s.get("worktree") for s in again["sessions"]} == {
        long_id: "beta",
        SMALL: "beta",
    }
    assert all("partial" not in s for s in again["sessions"])
