"""The roster's pace: changes that matter go out together, output alone goes out rarely."""

from __future__ import annotations

import asyncio

from claude_sidecar.feed.events import CliMessage, PromptSent, StatusChanged
from claude_sidecar.hub.roster import Roster, first_line
from claude_sidecar.protocol.api import ChannelsChangedNotification, ChannelState, ChannelSummary

STATES: dict[str, ChannelState] = {}


def summary(channel_id: str) -> ChannelSummary | None:
    state = STATES.get(channel_id)
    if state is None:
        return None
    return ChannelSummary(channel_id=channel_id, pid=1, session_id="s", cwd="/w", state=state)


class Watcher:
    def __init__(self) -> None:
        self.got: list[ChannelsChangedNotification] = []
        self.arrived = asyncio.Event()

    def __call__(self, notification: ChannelsChangedNotification) -> None:
        self.got.append(notification)
        self.arrived.set()

    async def next(self) -> ChannelsChangedNotification:
        await asyncio.wait_for(self.arrived.wait(), 10)
        self.arrived.clear()
        return self.got[-1]


def status(state: ChannelState) -> StatusChanged:
    return StatusChanged(state=state, session_id="s", model=None, permission_mode=None)


async def test_changes_of_several_chats_in_one_moment_go_out_in_one_notification() -> None:
    STATES.update({"ch-1": "idle", "ch-2": "idle"})
    roster, watcher = Roster(summary), Watcher()
    roster.watch(watcher)
    chat_1, chat_2 = roster.track("ch-1"), roster.track("ch-2")

    STATES["ch-2"] = "running"
    chat_2.saw(status("running"))
    chat_1.saw(PromptSent("m1", "first\nsecond"))
    chat_2.saw(status("running"))
    got = await watcher.next()

    assert [c.channel_id for c in got.channels] == ["ch-1", "ch-2"]
    assert [c.state for c in got.channels] == ["idle", "running"]
    assert len(watcher.got) == 1


async def test_output_alone_right_after_a_notification_waits_for_the_next_change() -> None:
    STATES.update({"ch-3": "running"})
    roster, watcher = Roster(summary), Watcher()
    roster.watch(watcher)
    chat = roster.track("ch-3")
    chat.saw(status("running"))
    await watcher.next()

    for _ in range(50):
        chat.saw(CliMessage(b'{"type":"assistant"}'))
        chat.heard()
    STATES["ch-3"] = "idle"
    chat.saw(status("idle"))
    got = await watcher.next()

    assert len(watcher.got) == 2, "the output alone sent nothing of its own"
    assert got.channels[0].state == "idle"


async def test_a_chat_closed_before_it_went_out_is_only_named_as_closed() -> None:
    STATES.update({"ch-4": "idle"})
    roster, watcher = Roster(summary), Watcher()
    roster.watch(watcher)
    roster.track("ch-4")
    roster.opened("ch-4")

    del STATES["ch-4"]
    roster.closed("ch-4")
    got = await watcher.next()

    assert (got.channels, got.closed) == ([], ["ch-4"])


async def test_what_happens_while_nobody_watches_is_not_sent_later() -> None:
    STATES.update({"ch-5": "idle", "ch-6": "idle"})
    roster, watcher = Roster(summary), Watcher()
    roster.watch(watcher)
    roster.unwatch(watcher)
    chat_5, chat_6 = roster.track("ch-5"), roster.track("ch-6")
    chat_5.saw(status("running"))
    roster.closed("ch-5")

    roster.watch(watcher)
    chat_6.saw(status("running"))
    got = await watcher.next()

    assert ([c.channel_id for c in got.channels], got.closed) == (["ch-6"], [])
    assert len(watcher.got) == 1


def test_a_prompt_is_shown_by_its_first_line_that_is_not_blank_and_cut_when_long() -> None:
    assert first_line("\n   \n  Fix the cart  \nthen the tests") == "Fix the cart"
    assert first_line("x" * 300) == "x" * 199 + "…"
    assert first_line("") == ""
