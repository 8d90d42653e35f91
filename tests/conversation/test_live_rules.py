"""The rules of a live conversation, one at a time, on hand-made CLI lines."""

from __future__ import annotations

import json
from typing import Any

from claude_sidecar.conversation import LiveConversation
from claude_sidecar.feed.changes import FileChange
from claude_sidecar.feed.events import (
    CliMessage,
    FileUpdated,
    PermissionAsked,
    PermissionWithdrawn,
    PromptSent,
    StatusChanged,
    TurnEnded,
)
from claude_sidecar.protocol import api

from .replay import Recorder


def line(**fields: Any) -> CliMessage:
    return CliMessage(json.dumps(fields).encode())


def stream(event: dict[str, Any], parent: str | None = None) -> CliMessage:
    return line(type="stream_event", event=event, parent_tool_use_id=parent)


def start_text(conversation: LiveConversation, message_id: str, index: int = 0) -> None:
    conversation.publish(stream({"type": "message_start", "message": {"id": message_id}}))
    conversation.publish(
        stream({"type": "content_block_start", "index": index, "content_block": {"type": "text"}})
    )


def ended(outcome: api.TurnOutcome = "success", message_ids: list[str] | None = None) -> TurnEnded:
    return TurnEnded(outcome, 10, 0, 0.01, 0.01, api.TurnUsage(), 1, message_ids or [])


def ask(request_id: str, tool_use_id: str) -> PermissionAsked:
    return PermissionAsked(
        api.PermissionRequest(
            request_id=request_id,
            tool_name="Bash",
            tool_use_id=tool_use_id,
            input={"command": "ls"},
            suggestions=[],
        )
    )


def test_deltas_stream_into_their_entry_and_a_snapshot_shows_the_text_so_far() -> None:
    conversation = LiveConversation(Recorder())
    start_text(conversation, "msg_1")

    conversation.delta("text", 0, "Hel", None)
    conversation.delta("text", 0, "lo", None)

    [entry] = conversation.snapshot()
    assert entry == api.TextEntry(id="msg_1:0", text="Hello", streaming=True)


def test_text_joined_read_by_read_reads_as_it_streamed_and_a_tools_input_too() -> None:
    conversation = LiveConversation(Recorder())
    start_text(conversation, "msg_1")
    conversation.publish(
        stream(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash"},
            }
        )
    )
    words = [f"w{n} " for n in range(100)]

    # The channel joins each read's pieces (Entries.compact): reads of 40, 1 and 59.
    sent = ""
    for read in (words[:40], words[40:41], words[41:]):
        for word in read:
            conversation.delta("text", 0, word, None)
            conversation.delta("toolInput", 1, word, None)
        conversation.entries.compact()
        sent += "".join(read)
        [text, tool] = conversation.snapshot()
        assert text == api.TextEntry(id="msg_1:0", text=sent, streaming=True)
        assert isinstance(tool, api.ToolEntry) and tool.partial_input == sent
    conversation.delta("text", 0, "end", None)
    conversation.publish(stream({"type": "content_block_stop", "index": 0}))

    assert conversation.snapshot()[0] == api.TextEntry(id="msg_1:0", text="".join(words) + "end")
    assert conversation.entries.streaming.keys() == {"toolu_1"}
    assert not conversation.entries.compacted


def test_the_complete_message_replaces_what_streamed_and_ends_the_stream() -> None:
    conversation = LiveConversation(Recorder())
    start_text(conversation, "msg_1")
    conversation.delta("text", 0, "Hel", None)

    conversation.publish(
        line(
            type="assistant", message={"id": "msg_1", "content": [{"type": "text", "text": "Hi!"}]}
        )
    )
    conversation.delta("text", 0, "late", None)

    assert conversation.snapshot() == [api.TextEntry(id="msg_1:0", text="Hi!")]


def test_a_sub_agents_deltas_go_to_its_own_entry() -> None:
    conversation = LiveConversation(Recorder())
    start_text(conversation, "msg_1")
    conversation.publish(stream({"type": "message_start", "message": {"id": "msg_2"}}, "toolu_a"))
    conversation.publish(
        stream(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            "toolu_a",
        )
    )

    conversation.delta("text", 0, "main", None)
    conversation.delta("text", 0, "sub", "toolu_a")

    assert [(e.id, e.text, e.parent_id) for e in conversation.snapshot()] == [  # type: ignore[union-attr]
        ("msg_1:0", "main", None),
        ("msg_2:0", "sub", "toolu_a"),
    ]


def test_a_prompt_sent_during_a_turn_waits_last_until_the_cli_takes_it_up() -> None:
    conversation = LiveConversation(Recorder())
    conversation.publish(PromptSent("p1", "first"))
    start_text(conversation, "msg_1")
    conversation.publish(PromptSent("p2", "second"))
    assert [(e.id, getattr(e, "queued", False)) for e in conversation.snapshot()] == [
        ("p1", False),
        ("msg_1:0", False),
        ("p2", True),
    ]

    conversation.publish(ended(message_ids=["p1"]))
    conversation.publish(line(type="user", uuid="p2", isReplay=True, message={"content": "second"}))

    assert [e.id for e in conversation.snapshot()] == ["p1", "msg_1:0", "turn:p1", "p2"]
    assert conversation.snapshot()[-1] == api.PromptEntry(id="p2", text="second")


def test_a_withdrawn_ask_is_cancelled_and_the_tool_runs_on() -> None:
    conversation = LiveConversation(Recorder())
    conversation.publish(ask("r1", "toolu_1"))
    [waiting] = conversation.snapshot()
    assert isinstance(waiting, api.ToolEntry) and waiting.status == "awaitingPermission"

    conversation.publish(PermissionWithdrawn("r1", "withdrawn"))

    [tool] = conversation.snapshot()
    assert isinstance(tool, api.ToolEntry) and tool.permission is not None
    assert (tool.status, tool.permission.decision) == ("running", "cancelled")


def test_tools_left_running_by_an_interrupted_turn_are_marked_interrupted() -> None:
    conversation = LiveConversation(Recorder())
    conversation.publish(ask("r1", "toolu_1"))
    conversation.publish(StatusChanged("awaitingPermission", "s", None, None))

    conversation.publish(ended("interrupted"))

    tool, footer = conversation.snapshot()
    assert isinstance(tool, api.ToolEntry) and tool.permission is not None
    assert (tool.status, tool.permission.decision) == ("interrupted", "cancelled")
    assert isinstance(footer, api.TurnEntry) and footer.outcome == "interrupted"


def test_an_entry_passed_on_does_not_change_with_later_events() -> None:
    front = Recorder()
    conversation = LiveConversation(front)
    conversation.publish(ask("r1", "toolu_1"))
    passed_on = front.entries_changed()[-1]

    conversation.publish(PermissionWithdrawn("r1", "withdrawn"))

    assert isinstance(passed_on, api.ToolEntry) and passed_on.permission is not None
    assert (passed_on.status, passed_on.permission.decision) == ("awaitingPermission", "pending")


def test_the_entries_an_event_changed_follow_it_to_the_front_end() -> None:
    front = Recorder()
    conversation = LiveConversation(front)
    asked = ask("r1", "toolu_1")

    conversation.publish(asked)

    assert front.events[0] is asked
    assert [type(e).__name__ for e in front.events] == ["PermissionAsked", "EntryChanged"]


def test_the_prompt_sent_is_not_passed_on() -> None:
    front = Recorder()
    conversation = LiveConversation(front)

    conversation.publish(PromptSent("p1", "hello"))

    assert [type(e).__name__ for e in front.events] == ["EntryChanged"]


def test_a_sub_agents_complete_text_does_not_take_the_id_of_a_main_block_still_open() -> None:
    conversation = LiveConversation(Recorder())
    start_text(conversation, "msg_1")
    conversation.delta("text", 0, "main so far", None)

    answer = {"id": "msg_9", "content": [{"type": "text", "text": "sub answer"}]}
    conversation.publish(
        CliMessage(
            json.dumps(
                {"type": "assistant", "parent_tool_use_id": "toolu_a", "message": answer}
            ).encode()
        )
    )

    assert [(e.id, e.text) for e in conversation.snapshot()] == [  # type: ignore[union-attr]
        ("msg_1:0", "main so far"),
        ("msg_9:0", "sub answer"),
    ]


def test_a_tools_file_counts_come_from_the_changes_diff() -> None:
    conversation = LiveConversation(Recorder())
    conversation.publish(ask("r1", "toolu_1"))
    change = FileChange("/p/a.md", "Edit", "toolu_1", None, "--- rule\nkeep\nold\n", "keep\nnew\n")

    conversation.publish(FileUpdated(change))

    [tool] = conversation.snapshot()
    assert isinstance(tool, api.ToolEntry)
    assert tool.files == [api.EntryFileChange(path="/p/a.md", added=1, removed=2)]


def test_clear_leaves_a_cleared_notice() -> None:
    conversation = LiveConversation(Recorder())

    conversation.publish(line(type="conversation_reset", trigger="clear", uuid="u1"))

    [notice] = conversation.snapshot()
    assert isinstance(notice, api.NoticeEntry)
    assert (notice.id, notice.subtype, notice.level) == ("u1", "cleared", "info")


def assistant(uuid: str, message_id: str, text: str, parent: str | None = None) -> CliMessage:
    return line(
        type="assistant",
        uuid=uuid,
        parent_tool_use_id=parent,
        message={"id": message_id, "content": [{"type": "text", "text": text}]},
    )


def test_a_prompts_exchange_ends_at_its_last_top_level_answer_not_at_a_sub_agents() -> None:
    conversation = LiveConversation(Recorder())
    conversation.publish(PromptSent("p1", "delegate it", 0))
    conversation.publish(line(type="user", uuid="p1", isReplay=True, message={"content": "x"}))
    conversation.publish(assistant("a1", "msg_1", "Delegating."))
    conversation.publish(line(type="user", uuid="s1", parent_tool_use_id="tool_1", message={}))
    conversation.publish(assistant("s2", "msg_2", "sub-agent work", parent="tool_1"))
    conversation.publish(assistant("a2", "msg_3", "Done."))
    conversation.publish(PromptSent("p2", "next", 0))
    conversation.publish(line(type="user", uuid="p2", isReplay=True, message={"content": "y"}))
    conversation.publish(assistant("a3", "msg_4", "Next."))

    assert conversation.exchange_ends == {"p1": "a2", "p2": "a3"}


def test_a_compaction_leaves_a_notice_and_its_summary_but_no_other_synthetic_line() -> None:
    conversation = LiveConversation(Recorder())
    summary = "This session is being continued ... Summary:\n1. Primary Request: hello"
    synthetic = {"type": "user", "isReplay": False, "isSynthetic": True}

    conversation.publish(line(**synthetic, uuid="s0", message={"content": "before: not shown"}))
    conversation.publish(line(type="system", subtype="compact_boundary", uuid="b1"))
    conversation.publish(line(**synthetic, uuid="s1", message={"content": summary}))
    conversation.publish(line(**synthetic, uuid="s2", message={"content": "after: not shown"}))

    assert conversation.snapshot() == [
        api.NoticeEntry(id="b1", subtype="compaction", level="info", text="Conversation compacted"),
        api.NoticeEntry(id="s1", subtype="compactSummary", level="info", text=summary),
    ]
