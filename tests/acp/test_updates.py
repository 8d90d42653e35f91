"""The conversation's entries as ACP updates, over the recorded real-CLI streams: every
entry of every golden stream is carried by the updates, and each update is valid ACP."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from acp.schema import SessionNotification
from claude_sidecar.conversation import LiveConversation
from claude_sidecar.feed.events import ChannelEvent, EntryChanged, FileUpdated
from claude_sidecar.frontends.acp.updates import SessionUpdates, plan_update, stop_reason
from claude_sidecar.protocol import api

from tests.conversation.replay import STREAMS, play

pytestmark = pytest.mark.same_on_every_cli("the mapping of recorded streams")

NAMES = sorted(p.name.removesuffix(".entries.json") for p in STREAMS.glob("*.entries.json"))


class UpdatesFeed:
    """A front end's feed that says what it gets as ACP updates (what the agent sends)."""

    def __init__(self) -> None:
        self.updates = SessionUpdates()
        self.sent: list[dict[str, Any]] = []

    def publish(self, event: ChannelEvent) -> None:
        if isinstance(event, EntryChanged):
            self.sent += self.updates.entry(event.entry)
        elif isinstance(event, FileUpdated):
            self.sent += self.updates.file_changed(event.change)

    def delta(
        self,
        kind: api.DeltaKind,
        index: int,
        text: str,
        parent: str | None,
        entry_id: str | None = None,
    ) -> None:
        update = self.updates.delta(kind, text, parent, entry_id)
        if update is not None:
            self.sent.append(update)


def _mapped(name: str) -> tuple[list[api.Entry], list[dict[str, Any]]]:
    feed = UpdatesFeed()
    play(name, LiveConversation(feed))
    entries = msgspec.convert(
        json.loads((STREAMS / f"{name}.entries.json").read_text()), list[api.Entry]
    )
    return entries, feed.sent


def _chunks(sent: list[dict[str, Any]], kind: str) -> str:
    return "".join(u["content"]["text"] for u in sent if u["sessionUpdate"] == kind)


def _calls(sent: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    calls: dict[str, dict[str, Any]] = {}
    for update in sent:
        if update["sessionUpdate"] == "tool_call":
            assert update["toolCallId"] not in calls, "a tool call was announced twice"
            calls[update["toolCallId"]] = dict(update)
        elif update["sessionUpdate"] == "tool_call_update":
            assert update["toolCallId"] in calls, "an update came before its tool call"
            calls[update["toolCallId"]].update(update)
    return calls


@pytest.mark.parametrize("name", NAMES)
def test_every_update_of_a_recorded_stream_is_a_valid_acp_session_update(name: str) -> None:
    _, sent = _mapped(name)

    for update in sent:
        SessionNotification.model_validate({"sessionId": "s", "update": update})


@pytest.mark.parametrize("name", NAMES)
def test_the_main_text_and_thinking_arrive_whole_and_once(name: str) -> None:
    entries, sent = _mapped(name)

    main = [e for e in entries if e.parent_id is None]
    # Notices are messages too, in their place among the texts.
    said = "".join(
        e.text
        for e in main
        if isinstance(e, api.TextEntry)
        or (isinstance(e, api.NoticeEntry) and e.subtype != "interrupted")
    )
    assert _chunks(sent, "agent_message_chunk") == said
    thought = "".join(e.text for e in main if isinstance(e, api.ThinkingEntry))
    assert _chunks(sent, "agent_thought_chunk") == thought


@pytest.mark.parametrize("name", NAMES)
def test_every_tool_use_is_a_tool_call_ending_in_its_status_with_its_input(name: str) -> None:
    entries, sent = _mapped(name)
    calls = _calls(sent)

    tools = [e for e in entries if isinstance(e, api.ToolEntry) and e.name != "TodoWrite"]
    assert sorted(calls) == sorted(t.id for t in tools)
    final = {"done": "completed", "running": "in_progress", "pending": "pending"}
    for tool in tools:
        call = calls[tool.id]
        assert call["status"] == final.get(tool.status, "failed"), tool
        assert call["_meta"]["claudeSidecar"]["status"] == tool.status
        assert call.get("rawInput") == tool.input
        if tool.result is not None:
            assert call["rawOutput"]["text"] == tool.result.text
        if tool.parent_id is not None:
            assert call["_meta"]["claudeSidecar"]["parentToolCallId"] == tool.parent_id


def test_an_edit_shows_its_diff_and_the_file_it_changed() -> None:
    entries, sent = _mapped("write-allowed")
    write = next(e for e in entries if isinstance(e, api.ToolEntry) and e.name == "Write")
    call = _calls(sent)[write.id]

    assert write.input is not None
    path = write.input["file_path"]
    assert call["kind"] == "edit" and call["title"] == f"Write {path}"
    assert call["locations"] == [{"path": path}]
    (diff,) = call["content"]
    assert diff["type"] == "diff" and diff["path"] == path
    assert diff["newText"] == write.input["content"]
    assert diff["oldText"] == "# Project\n\nA web shop.\n", "the file's text before the write"


def test_a_commands_output_is_the_tool_calls_text_content() -> None:
    entries, sent = _mapped("bash-output")
    bash = next(e for e in entries if isinstance(e, api.ToolEntry) and e.name == "Bash")
    call = _calls(sent)[bash.id]

    assert call["kind"] == "execute"
    assert bash.result is not None
    assert {"type": "content", "content": {"type": "text", "text": bash.result.text}} in call[
        "content"
    ]


def test_a_prompt_the_session_sent_is_not_echoed_and_another_clients_is() -> None:
    updates = SessionUpdates()
    updates.own_prompts.add("mine")

    assert updates.entry(api.PromptEntry(id="mine", text="hi")) == []
    assert updates.entry(api.PromptEntry(id="theirs", text="hello")) == [
        {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": "hello"},
            "messageId": "theirs",
        }
    ]


def test_the_todo_list_is_the_plan() -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running"},
    ]
    updates = SessionUpdates()

    sent = updates.entry(
        api.ToolEntry(id="t1", name="TodoWrite", status="running", input={"todos": todos})
    )

    assert sent == [plan_update({"todos": todos})]
    assert [(e["content"], e["status"]) for e in sent[0]["entries"]] == [
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
        ("Run the tests", "pending"),
    ]
    SessionNotification.model_validate({"sessionId": "s", "update": sent[0]})


@pytest.mark.parametrize(
    ("outcome", "cli_stop", "expected"),
    [
        ("success", "end_turn", "end_turn"),
        ("success", "max_tokens", "max_tokens"),
        ("success", "refusal", "refusal"),
        ("interrupted", None, "cancelled"),
        ("maxTurns", None, "max_turn_requests"),
        ("maxBudget", None, "max_turn_requests"),
        ("error", "end_turn", None),
    ],
)
def test_a_turns_outcome_is_the_prompts_stop_reason(
    outcome: api.TurnOutcome, cli_stop: str | None, expected: str | None
) -> None:
    assert stop_reason(outcome, cli_stop) == expected
