"""A resumed or forked channel's conversation starts from the one before it: what it
keeps (the fork cut) and what it makes of what was still under way."""

from __future__ import annotations

from claude_sidecar.conversation import LiveConversation, through_exchange
from claude_sidecar.protocol import api

from .replay import Recorder
from .test_live_rules import ended


def prompt(entry_id: str, parent: str | None = None, queued: bool = False) -> api.PromptEntry:
    return api.PromptEntry(id=entry_id, text=entry_id, parent_id=parent, queued=queued)


def text(entry_id: str, parent: str | None = None) -> api.TextEntry:
    return api.TextEntry(id=entry_id, text="answer", parent_id=parent)


def test_a_cut_keeps_the_whole_exchange_of_its_prompt_and_nothing_after() -> None:
    entries: list[api.Entry] = [prompt("p1"), text("m1:0"), prompt("p2"), text("m2:0")]

    kept = through_exchange(entries, "p1")

    assert kept is not None
    assert [e.id for e in kept] == ["p1", "m1:0"]


def test_a_sub_agent_prompt_does_not_end_the_exchange_that_started_it() -> None:
    agent = api.ToolEntry(id="toolu_1", name="Agent", status="done")
    entries: list[api.Entry] = [
        prompt("p1"),
        agent,
        prompt("sub", parent="toolu_1"),
        text("s:0", parent="toolu_1"),
        text("m1:0"),
        prompt("p2"),
    ]

    kept = through_exchange(entries, "p1")

    assert kept is not None
    assert [e.id for e in kept] == ["p1", "toolu_1", "sub", "s:0", "m1:0"]


def test_a_cut_leaves_queued_prompts_out_and_an_unknown_prompt_gives_none() -> None:
    entries: list[api.Entry] = [prompt("p1"), text("m1:0"), prompt("q", queued=True)]

    kept = through_exchange(entries, "p1")

    assert kept is not None
    assert [e.id for e in kept] == ["p1", "m1:0"]
    assert through_exchange(entries, "m1:0") is None


def test_a_seeded_conversation_has_nothing_under_way_and_tells_the_front_end_nothing() -> None:
    front = Recorder()
    conversation = LiveConversation(front)
    asked = api.EntryPermission(request_id="r1", decision="pending")
    streaming = api.TextEntry(id="m1:0", text="half", streaming=True)
    tool = api.ToolEntry(id="toolu_1", name="Write", status="awaitingPermission", permission=asked)

    conversation.seed([prompt("p1"), streaming, tool])

    entries = conversation.snapshot()
    assert [e.id for e in entries] == ["p1", "m1:0", "toolu_1"]
    assert isinstance(entries[1], api.TextEntry) and not entries[1].streaming
    assert isinstance(entries[2], api.ToolEntry) and entries[2].status == "interrupted"
    assert entries[2].permission is not None
    assert entries[2].permission.decision == "cancelled"
    assert asked.decision == "pending", "the source's entry is not changed"
    assert front.events == []


def test_a_turn_footer_is_named_after_the_first_prompt_it_answered() -> None:
    conversation = LiveConversation(Recorder())
    conversation.seed([prompt("p1"), api.TurnEntry("turn:p1", "success", 10, 0, 0.01)])

    conversation.publish(ended(message_ids=["p2", "p3"]))

    assert [e.id for e in conversation.snapshot()] == ["p1", "turn:p1", "turn:p2"]


def test_a_seed_leaves_out_prompts_still_queued_where_it_came_from() -> None:
    conversation = LiveConversation(Recorder())

    conversation.seed([prompt("p1"), text("m1:0"), prompt("q", queued=True)])

    assert [e.id for e in conversation.snapshot()] == ["p1", "m1:0"]
