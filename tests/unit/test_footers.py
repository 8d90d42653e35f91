"""Turn footers recorded beside the sessions, and put back into a stored conversation."""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.conversation import LiveConversation
from claude_sidecar.feed.events import StatusChanged, TurnEnded
from claude_sidecar.protocol import api
from claude_sidecar.sessions.footers import Footer, FooterLog, context_after, place_footers

from tests.conversation.replay import Recorder


def prompt(entry_id: str, parent: str | None = None) -> api.PromptEntry:
    return api.PromptEntry(id=entry_id, text=entry_id, parent_id=parent)


def text(entry_id: str) -> api.TextEntry:
    return api.TextEntry(id=entry_id, text="answer")


def footer(prompt_id: str, cost: float = 0.01) -> api.TurnEntry:
    return api.TurnEntry(f"turn:{prompt_id}", "success", 10, 0, cost)


def test_a_footer_goes_at_the_end_of_its_turns_exchange() -> None:
    entries: list[api.Entry] = [prompt("p1"), text("m1:0"), prompt("p2"), text("m2:0")]

    placed = place_footers(entries, [Footer(["p1"], footer("p1")), Footer(["p2"], footer("p2"))])

    assert [e.id for e in placed] == ["p1", "m1:0", "turn:p1", "p2", "m2:0", "turn:p2"]


def test_a_sub_agents_prompt_does_not_end_the_exchange_and_a_merged_turn_ends_after_both() -> None:
    entries: list[api.Entry] = [
        prompt("p1"),
        prompt("sub", parent="toolu_1"),
        text("m1:0"),
        prompt("p2"),
        text("m2:0"),
        prompt("p3"),
    ]

    placed = place_footers(entries, [Footer(["p1", "p2"], footer("p1"))])

    assert [e.id for e in placed] == ["p1", "sub", "m1:0", "p2", "m2:0", "turn:p1", "p3"]


def interrupted(prompt_id: str) -> api.TurnEntry:
    return api.TurnEntry(f"turn:{prompt_id}", "interrupted", 10, 0, 0.01)


def test_an_interrupted_turns_last_answer_is_marked_aborted_as_it_was_live() -> None:
    notice = api.NoticeEntry(id="n1", subtype="interrupted", level="info", text="[Request ...]")
    entries: list[api.Entry] = [prompt("p1"), text("m1:0"), notice, prompt("p2"), text("m2:0")]

    placed = place_footers(entries, [Footer(["p1"], interrupted("p1"))])

    assert placed[1] == api.TextEntry(id="m1:0", text="answer", aborted=True)
    assert placed[2:4] == [notice, interrupted("p1")]
    assert placed[-1] == text("m2:0")


def test_an_answer_before_a_tool_the_interrupt_stopped_is_not_marked_aborted() -> None:
    tool = api.ToolEntry(id="toolu_1", name="Bash", status="interrupted")
    entries: list[api.Entry] = [prompt("p1"), text("m1:0"), tool]

    placed = place_footers(entries, [Footer(["p1"], interrupted("p1"))])

    assert placed == [prompt("p1"), text("m1:0"), tool, interrupted("p1")]


def test_a_footer_of_prompts_the_session_lost_or_already_there_is_left_out() -> None:
    entries: list[api.Entry] = [prompt("p1"), footer("p1")]

    placed = place_footers(
        entries, [Footer(["gone"], footer("gone")), Footer(["p1"], footer("p1"))]
    )

    assert [e.id for e in placed] == ["p1", "turn:p1"]


def test_two_footers_of_one_exchange_follow_it_in_order_and_only_the_first_marks_aborted() -> None:
    entries: list[api.Entry] = [prompt("p1"), text("m1:0"), prompt("p2")]
    again = api.TurnEntry(
        id="turn:again", outcome="interrupted", duration_ms=1, permission_wait_ms=0, cost_usd=0
    )

    placed = place_footers(entries, [Footer(["p1"], footer("p1")), Footer(["p1"], again)])

    assert [e.id for e in placed] == ["p1", "m1:0", "turn:p1", "turn:again", "p2"]
    assert isinstance(placed[1], api.TextEntry) and not placed[1].aborted


def test_every_footer_of_a_long_session_goes_after_its_own_exchange() -> None:
    entries: list[api.Entry] = []
    for i in range(3000):
        entries += [prompt(f"p{i}"), text(f"m{i}:0")]

    placed = place_footers(entries, [Footer([f"p{i}"], footer(f"p{i}")) for i in range(3000)])

    assert [e.id for e in placed[:6]] == ["p0", "m0:0", "turn:p0", "p1", "m1:0", "turn:p1"]
    assert [e.id for e in placed[2::3]] == [f"turn:p{i}" for i in range(3000)]


def test_a_conversations_footers_are_recorded_under_its_session_and_read_back(
    tmp_path: Path,
) -> None:
    log = FooterLog({"HOME": str(tmp_path)})
    conversation = LiveConversation(Recorder())
    conversation.footers = log
    ended = TurnEnded("success", 10, 0, 0.02, 0.02, api.TurnUsage(), 1, ["p1"])

    conversation.publish(StatusChanged("idle", "sid-1", None, "default"))
    conversation.publish(ended)

    assert log.load("sid-1") == [Footer(["p1"], footer("p1", cost=0.02))]
    assert (tmp_path / ".local/state/claude-sidecar/turns/sid-1.jsonl").exists()
    log.forget("sid-1")
    assert log.load("sid-1") == []


def test_an_unreadable_footer_line_is_skipped(tmp_path: Path) -> None:
    log = FooterLog({"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")})
    log.record("sid-1", ["p1"], footer("p1"))
    path = tmp_path / "state/claude-sidecar/turns/sid-1.jsonl"
    path.write_bytes(path.read_bytes() + b"{not json\n")
    log.record("sid-1", ["p2"], footer("p2"))

    assert [f.entry.id for f in log.load("sid-1")] == ["turn:p1", "turn:p2"]


def test_the_meter_a_conversation_goes_on_from_is_its_last_turn_that_recorded_one(
    tmp_path: Path,
) -> None:
    log = FooterLog({"HOME": str(tmp_path)})
    early = api.ContextReading(total_tokens=1000, max_tokens=200_000, percentage=0.5)
    later = api.ContextReading(total_tokens=3000, max_tokens=200_000, percentage=1.5)
    log.record("sid-1", ["p1"], footer("p1"), early)
    log.record("sid-1", ["p2"], footer("p2"), later)
    log.record("sid-1", ["p3"], footer("p3"))  # a turn the CLI's exit ended: no meter
    footers = log.load("sid-1")
    entries: list[api.Entry] = [prompt(p) for p in ("p1", "p2", "p3")]

    assert context_after(place_footers(entries, footers), footers) == later
    # A fork cut after the first exchange goes on from that exchange's meter.
    assert context_after(place_footers(entries[:1], footers), footers) == early
    assert context_after(entries, footers) is None, "no footer placed: nothing recorded"
