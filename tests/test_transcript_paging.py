"""A conversation read a page at a time from its end: claude/getTranscript and
claude/getHistory with ``before``/``limit`` (real CLI, stand-in model, and the real session
files of tests/data/sessions)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.cli.paths import project_dir
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import held_cli_env
from tests.harness import Sidecar, StartSidecar
from tests.repeated_session import write_long_session

DATA = Path(__file__).parent / "data" / "sessions"
# Real CLI sessions (see tests/data/sessions/README.md), each with what paging must keep
# in place.
SUBAGENT = "f0cd8d40-d1f2-45cf-9c9b-dd440c68021f"  # parallel Writes, a background sub-agent
COMPACTED = "d1f3ce72-7d3c-4abf-89a9-1ecb98ca36a3"  # interrupt, /compact, /rename, resume
BRANCHED = "08db6f3a-7584-4dc1-8d26-3bada228e9b5"  # --resume-session-at: a fork point
STORED = [SUBAGENT, COMPACTED, BRANCHED]

HELD = {
    "rules": [
        {
            # Streams, then holds until a prompt that never comes (an interrupt ends it).
            "match": "^long story$",
            "steps": [[{"text": "Once upon a time"}, {"wait_for_prompt": "^never$"}]],
        },
    ],
    "default": [[{"text": "Answer to: {prompt}"}]],
}


def install(home: Path, workspace: Path, session_id: str) -> None:
    """Put a stored session (and its sub-agents) among ``workspace``'s sessions."""
    folder = project_dir(home, str(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / f"{session_id}.jsonl", folder / f"{session_id}.jsonl")
    if (DATA / session_id).is_dir():
        shutil.copytree(DATA / session_id, folder / session_id)


def ids(entries: list[dict[str, Any]]) -> list[str]:
    return [e["id"] for e in entries]


async def walk(
    sidecar: Sidecar, method: str, params: dict[str, Any], limit: int, before: str | None = None
) -> list[dict[str, Any]]:
    """Every entry of ``method``'s pages of ``limit`` from the end (or from ``before``) to
    the start, in conversation order; each page checked to be at most ``limit`` long."""
    pages: list[list[dict[str, Any]]] = []
    while True:
        page = await sidecar.request(
            method, {**params, "limit": limit, **({"before": before} if before else {})}
        )
        assert len(page["entries"]) <= limit
        assert (page["nextCursor"] is None) == (not page["hasMore"])
        pages.append(page["entries"])
        if not page["hasMore"]:
            break
        before = page["nextCursor"]
    return [entry for page in reversed(pages) for entry in page]


@pytest.mark.same_on_every_cli("the daemon reads the session files without a CLI")
@pytest.mark.parametrize("session_id", STORED)
async def test_history_pages_give_every_entry_once_in_order(
    sidecar: Sidecar, home: Path, workspace: Path, session_id: str
) -> None:
    install(home, workspace, session_id)
    params = {"sessionId": session_id, "cwd": str(workspace)}
    whole = await sidecar.request("claude/getHistory", params)

    walked = {limit: await walk(sidecar, "claude/getHistory", params, limit) for limit in (1, 2, 4)}
    last = await sidecar.request("claude/getHistory", {**params, "limit": 3})

    assert len(whole["entries"]) > 4 and len(set(ids(whole["entries"]))) == len(whole["entries"])
    assert (whole["hasMore"], whole["nextCursor"]) == (False, None)
    for entries in walked.values():
        assert entries == whole["entries"]
    assert last["entries"] == whole["entries"][-3:]
    assert last["messages"] == [], "paged, the legacy messages are left out"
    assert last["warnings"] == whole["warnings"]


async def test_history_pages_keep_sub_agent_entries_after_their_tool_use(
    sidecar: Sidecar, home: Path, workspace: Path
) -> None:
    install(home, workspace, SUBAGENT)
    params = {"sessionId": SUBAGENT, "cwd": str(workspace)}

    entries = await walk(sidecar, "claude/getHistory", params, 2)

    agent = next(i for i, e in enumerate(entries) if e.get("name") == "Agent")
    inside = [e for e in entries if e.get("parentId") == entries[agent]["id"]]
    assert inside, "the sub-agent's entries are paged too"
    assert entries[agent + 1 : agent + 1 + len(inside)] == inside


@pytest.mark.parametrize("session_id", STORED)
async def test_a_resumed_chat_pages_its_stored_conversation(
    sidecar: Sidecar, home: Path, workspace: Path, session_id: str
) -> None:
    install(home, workspace, session_id)
    channel = await sidecar.new_channel(str(workspace), resume=session_id)
    whole = await sidecar.request("claude/getTranscript", {"channelId": channel})

    walked = [
        await walk(sidecar, "claude/getTranscript", {"channelId": channel}, n) for n in (1, 3)
    ]

    assert len(whole["entries"]) > 3
    assert (whole["hasMore"], whole["nextCursor"]) == (False, None)
    assert walked == [whole["entries"], whole["entries"]]


async def test_a_resumed_chats_last_page_is_read_from_its_history_while_its_cli_starts(
    sidecar_with: StartSidecar, home: Path, workspace: Path, tmp_path: Path
) -> None:
    # A client shows a resumed chat at once (a 100k-entry session's CLI takes seconds to
    # start): getHistory's last page, then the channel's, which must be the same entries.
    install(home, workspace, SUBAGENT)
    go = tmp_path / "go"
    sidecar = await sidecar_with({}, **held_cli_env(go))
    opening = asyncio.ensure_future(sidecar.open_channel(cwd=str(workspace), resume=SUBAGENT))

    history = await sidecar.request(
        "claude/getHistory", {"sessionId": SUBAGENT, "cwd": str(workspace), "limit": 3}
    )
    held = not opening.done()
    go.touch()
    channel = (await opening)["channelId"]
    page = await sidecar.request("claude/getTranscript", {"channelId": channel, "limit": 3})

    assert held, "getHistory answered only after the CLI was let start"
    assert history["hasMore"] and page["hasMore"]
    assert page["entries"] == history["entries"]


async def test_a_resume_that_joins_an_open_chat_answers_with_its_last_page(
    sidecar: Sidecar, home: Path, workspace: Path
) -> None:
    install(home, workspace, SUBAGENT)
    channel = await sidecar.new_channel(str(workspace), resume=SUBAGENT)

    again = await sidecar.request(
        "claude/newChannel", {"cwd": str(workspace), "resume": SUBAGENT, "limit": 3}
    )
    joined = again["attached"]
    page = await sidecar.request("claude/getTranscript", {"channelId": channel, "limit": 3})
    older = await walk(
        sidecar, "claude/getTranscript", {"channelId": channel}, 3, joined["nextCursor"]
    )
    whole = await sidecar.request("claude/getTranscript", {"channelId": channel})

    assert again["channelId"] == channel
    assert joined["entries"] == page["entries"]
    assert (joined["hasMore"], joined["nextCursor"]) == (True, page["nextCursor"])
    assert older + joined["entries"] == whole["entries"], "the cursor pages on to the start"


async def test_a_chat_with_a_compaction_a_clear_and_a_fork_pages_every_entry_once(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(HELD))
    channel = await sidecar.new_channel(str(workspace))
    # Two exchanges before it: CLI 2.1.233 compacts nothing shorter.
    sent = [
        (await sidecar.turn(channel, text)).message_id
        for text in ("hello", "hello again", "/compact", "after it", "and on")
    ]
    # Forked at a prompt in the middle (before the /clear: after it the CLI knows none of
    # the earlier messages).
    fork = await sidecar.open_channel("claude/forkSession", channelId=channel, atMessageId=sent[3])
    await sidecar.turn(fork["channelId"], "in the fork")
    for text in ("/clear", "last one"):
        await sidecar.turn(channel, text)

    for chat in (channel, fork["channelId"]):
        whole = await sidecar.request("claude/getTranscript", {"channelId": chat})
        for limit in (1, 2, 5):
            walked = await walk(sidecar, "claude/getTranscript", {"channelId": chat}, limit)
            assert walked == whole["entries"], (chat, limit)
        assert len(set(ids(whole["entries"]))) == len(whole["entries"])
    kinds = [e.get("subtype") for e in whole["entries"] if e["kind"] == "notice"]
    assert "compaction" in kinds, "the fork keeps the compaction"


async def test_a_cursor_stays_valid_while_a_turn_adds_entries(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(HELD))
    channel = await sidecar.new_channel(str(workspace))
    for text in ("one", "two", "three"):
        await sidecar.turn(channel, text)
    started = len(sidecar.notes)
    await sidecar.send(channel, "long story")
    await sidecar.wait_for(
        lambda n: n.channel == channel and "Once" in n.params.get("text", ""), after=started
    )
    last = await sidecar.request("claude/getTranscript", {"channelId": channel, "limit": 2})
    queued = await sidecar.send(channel, "queued meanwhile")

    during = await walk(
        sidecar, "claude/getTranscript", {"channelId": channel}, 2, last["nextCursor"]
    )
    first_page = await sidecar.request("claude/getTranscript", {"channelId": channel, "limit": 2})
    await sidecar.request("claude/interrupt", {"channelId": channel})
    await sidecar.wait_for(
        lambda n: n.channel == channel and n.method == "claude/turnEnded", after=started
    )
    after = await walk(
        sidecar, "claude/getTranscript", {"channelId": channel}, 3, last["nextCursor"]
    )
    final = await sidecar.request("claude/getTranscript", {"channelId": channel})

    assert during == after, "entries added meanwhile do not move the cursor"
    assert ids(final["entries"])[: len(during) + 2] == ids(during) + ids(last["entries"])
    assert ids(first_page["entries"])[-1] == queued, "a queued prompt is last, in the last page"
    assert queued not in ids(during)


@pytest.mark.same_on_every_cli("the daemon checks the cursor without a CLI")
async def test_bad_cursors_are_refused_naming_before(
    sidecar: Sidecar, home: Path, workspace: Path
) -> None:
    for session_id in (SUBAGENT, BRANCHED):
        install(home, workspace, session_id)
    params = {"sessionId": SUBAGENT, "cwd": str(workspace)}
    page = await sidecar.request("claude/getHistory", {**params, "limit": 2})
    folder = project_dir(home, str(workspace))
    lines = (folder / f"{SUBAGENT}.jsonl").read_bytes().splitlines(keepends=True)

    garbled = await sidecar.error("claude/getHistory", {**params, "before": "not a cursor"})
    other = await sidecar.error(
        "claude/getHistory",
        {"sessionId": BRANCHED, "cwd": str(workspace), "before": page["nextCursor"]},
    )
    # The session's conversation loses the cursor's entry (its file cut short).
    (folder / f"{SUBAGENT}.jsonl").write_bytes(b"".join(lines[:4]))
    gone = await sidecar.error("claude/getHistory", {**params, "before": page["nextCursor"]})
    too_small = await sidecar.error("claude/getHistory", {**params, "limit": 0})

    for error in (garbled, other, gone):
        assert error.code == -32602 and error.data["field"] == "before", error
        assert "pass a nextCursor of this session's claude/getHistory unchanged" in error.message
    assert "another session" in other.message
    assert "no longer has" in gone.message
    assert too_small.code == -32602 and too_small.data["field"] == "limit"


async def test_a_cursor_of_another_channel_is_refused(sidecar: Sidecar, workspace: Path) -> None:
    first = await sidecar.new_channel(str(workspace))
    second = await sidecar.new_channel(str(workspace))
    for channel in (first, second):
        await sidecar.turn(channel, "hello")
    page = await sidecar.request("claude/getTranscript", {"channelId": first, "limit": 1})

    error = await sidecar.error(
        "claude/getTranscript", {"channelId": second, "before": page["nextCursor"]}
    )

    assert error.code == -32602 and error.data["field"] == "before"
    assert "another channel" in error.message
    assert "pass a nextCursor of this channel's claude/getTranscript unchanged" in error.message


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


async def test_a_long_resumed_session_pages_from_its_end_and_is_not_kept_decoded(
    sidecar: Sidecar, home: Path, workspace: Path
) -> None:
    session_id = "5e0c1f6a-6a8e-4e2b-9a57-3f1d2c4b5a69"
    folder = project_dir(home, str(workspace))
    folder.mkdir(parents=True)
    count = write_long_session(folder / f"{session_id}.jsonl", 1500, session_id)
    daemon = sidecar.process.pid
    idle = rss_kib(daemon)

    channel = await sidecar.new_channel(str(workspace), resume=session_id)
    last = await sidecar.request("claude/getTranscript", {"channelId": channel, "limit": 50})
    grown = rss_kib(daemon) - idle
    entries = await walk(sidecar, "claude/getTranscript", {"channelId": channel}, 1000)

    assert len(entries) == count == 10_500
    assert len(set(ids(entries))) == count, "every entry once"
    assert last["entries"] == entries[-50:]
    assert [e["text"] for e in entries[-7:] if e["kind"] == "prompt"] == [
        "hello there",
        "please write a file",
    ]
    # Decoded, its lines took ~50 MB more that the allocator kept; encoded, a few.
    assert grown < 25 * 1024, f"the daemon grew {grown // 1024} MB"


def before_compaction(entries: list[dict[str, Any]]) -> list[str]:
    """The prompts of what came before the (last) compaction notice of ``entries``."""
    boundary = max(
        i for i, e in enumerate(entries) if e["kind"] == "notice" and e["subtype"] == "compaction"
    )
    return [e["text"] for e in entries[:boundary] if e["kind"] == "prompt"]


@pytest.mark.same_on_every_cli("the daemon reads the session files without a CLI")
async def test_history_pages_of_a_compacted_session_reach_what_came_before_the_compaction(
    sidecar: Sidecar, home: Path, workspace: Path
) -> None:
    install(home, workspace, COMPACTED)
    params = {"sessionId": COMPACTED, "cwd": str(workspace)}

    entries = await walk(sidecar, "claude/getHistory", params, 2)
    last = await sidecar.request("claude/getHistory", {**params, "limit": 4})

    assert before_compaction(entries) == ["hello one", "two", "slow please"]
    assert len(set(ids(entries))) == len(entries), "every entry once"
    # What the compaction kept follows its summary, once: not again before the boundary.
    kept = [e["id"] for e in entries if e.get("text") == "a long slow an"]
    assert len(kept) == 1 and ids(entries).index(kept[0]) > ids(entries).index(
        next(e["id"] for e in entries if e.get("subtype") == "compactSummary")
    )
    assert last["entries"] == entries[-4:]


async def test_a_resumed_chat_pages_back_past_its_compaction_to_its_first_prompt(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(HELD))
    # Two exchanges before it: CLI 2.1.233 compacts nothing shorter.
    session, _ = await sidecar.chat(str(workspace), "hello", "hello again", "/compact", "after it")
    channel = await sidecar.new_channel(str(workspace), resume=session)

    entries = await walk(sidecar, "claude/getTranscript", {"channelId": channel}, 2)
    whole = await sidecar.request("claude/getTranscript", {"channelId": channel})

    assert before_compaction(entries) == ["hello", "hello again"]
    assert [e["text"] for e in entries if e["kind"] == "prompt"][-2:] == ["/compact", "after it"]
    assert entries == whole["entries"]
    assert len(set(ids(entries))) == len(entries), "every entry once"


async def test_a_resumed_chat_after_a_clear_pages_the_conversation_since_the_clear(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(HELD))
    opened = await sidecar.open_channel(cwd=str(workspace))
    for text in ("before the clear", "/clear", "after the clear", "and on"):
        await sidecar.turn(opened["channelId"], text)
    listed = (await sidecar.request("claude/listChannels"))["channels"]
    session = next(c["sessionId"] for c in listed if c["channelId"] == opened["channelId"])
    assert session != opened["sessionId"], "/clear goes on in a session of its own"
    await sidecar.request("claude/closeChannel", {"channelId": opened["channelId"]})
    channel = await sidecar.new_channel(str(workspace), resume=session)

    entries = await walk(sidecar, "claude/getTranscript", {"channelId": channel}, 1)

    prompts = [e["text"] for e in entries if e["kind"] == "prompt"]
    assert prompts == ["/clear", "after the clear", "and on"], "the session /clear began"
    assert len(set(ids(entries))) == len(entries), "every entry once"


async def test_a_resumed_fork_pages_to_the_fork_point_and_what_came_before_it(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(HELD))
    channel = await sidecar.new_channel(str(workspace))
    sent = [(await sidecar.turn(channel, text)).message_id for text in ("one", "two", "three")]
    fork = await sidecar.open_channel("claude/forkSession", channelId=channel, atMessageId=sent[1])
    await sidecar.turn(fork["channelId"], "in the fork")
    await sidecar.request("claude/closeChannel", {"channelId": fork["channelId"]})
    resumed = await sidecar.new_channel(str(workspace), resume=fork["sessionId"])

    entries = await walk(sidecar, "claude/getTranscript", {"channelId": resumed}, 2)

    assert [e["text"] for e in entries if e["kind"] == "prompt"] == ["one", "two", "in the fork"]
    assert len(set(ids(entries))) == len(entries), "every entry once"
