"""Every chat of a daemon at a glance: what each is doing, when it last did something, what
it was last asked; and the clients watching that view (``claude/watchChannels``).

The hub has each channel's conversation tell the roster of every event it passed on to the
front end (``LiveConversation.watcher``; not the deltas, which come by the hundred thousand
per turn: the entries they build tell the same). A change a watcher must see at once (a
state, a permission asked or answered, a prompt, a turn's end, another count of what a
worktree chat changed, a chat opened or closed) is sent within ``COALESCE`` seconds,
together with whatever else changed meanwhile; a chat that only goes on producing output is
sent again at most every ``ACTIVITY_EVERY`` seconds (its last event time: a client shows
"2 s ago" from it by itself).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from claude_sidecar.feed.events import (
    ChannelEvent,
    PermissionAsked,
    PermissionWithdrawn,
    PromptSent,
    StatusChanged,
    TurnEnded,
    WorktreeChanged,
)
from claude_sidecar.protocol.api import ChannelsChangedNotification, ChannelSummary

log = logging.getLogger(__name__)

COALESCE = 0.1
"""Seconds a change waits for others to go out with it."""
ACTIVITY_EVERY = 2.0
"""Seconds between two notifications of a chat that only went on producing output."""
PROMPT_CHARS = 200
"""What of a prompt's first line the roster keeps."""

_AT_ONCE = (
    StatusChanged,
    PermissionAsked,
    PermissionWithdrawn,
    PromptSent,
    TurnEnded,
    WorktreeChanged,
)

Watcher = Callable[[ChannelsChangedNotification], None]
"""A client watching the roster: takes each notification (must not block)."""


def iso(seconds: float) -> str:
    """A time (``time.time()``) as the roster gives it: ISO 8601, UTC, milliseconds."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def first_line(text: str) -> str:
    """A prompt as the roster shows it: its first line that is not blank, shortened."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= PROMPT_CHARS else line[: PROMPT_CHARS - 1] + "…"


class _Record:
    """What the roster knows of one chat beyond what the channel itself tells."""

    __slots__ = ("last_event_at", "last_prompt", "sent_at")

    def __init__(self) -> None:
        # time.time() of the last event (formatted only when a summary is made: events
        # come by the line).
        self.last_event_at = time.time()
        self.last_prompt: str | None = None
        # The loop's time when this chat last went out to the watchers (None: not yet).
        self.sent_at: float | None = None


class Roster:
    """The chats of one hub as watchers see them. ``describe`` gives a chat's summary
    (None once it is closed); the roster adds what it noted (``annotate``)."""

    def __init__(self, describe: Callable[[str], ChannelSummary | None]) -> None:
        self._describe = describe
        self._records: dict[str, _Record] = {}
        self._watchers: list[Watcher] = []
        self._dirty: set[str] = set()
        self._closed: set[str] = set()
        self._flush: asyncio.TimerHandle | None = None

    def track(self, channel_id: str) -> _Watch:
        """Start noting chat ``channel_id`` (a new one); returns what its conversation
        tells of each event and each read of the CLI's output (its ``watcher``)."""
        self._records[channel_id] = _Record()
        return _Watch(self, channel_id)

    def opened(self, channel_id: str) -> None:
        """Chat ``channel_id`` has started: watchers hear of it."""
        self._changed(channel_id, at_once=True)

    def closed(self, channel_id: str) -> None:
        """Chat ``channel_id`` is gone: watchers hear so."""
        record = self._records.pop(channel_id, None)
        self._dirty.discard(channel_id)
        if record is not None and self._watchers:
            self._closed.add(channel_id)
            self._schedule()

    def annotate(self, summary: ChannelSummary, last_prompt: str | None) -> ChannelSummary:
        """``summary`` with the roster's times and prompt; ``last_prompt`` is the one its
        conversation holds, for a chat sent none here."""
        record = self._records.get(summary.channel_id)
        if record is None:
            return summary
        summary.last_event_at = iso(record.last_event_at)
        prompt = record.last_prompt or last_prompt
        summary.last_prompt = first_line(prompt) if prompt is not None else None
        return summary

    def watch(self, watcher: Watcher) -> None:
        """Send ``watcher`` every change from now on (until ``unwatch``)."""
        if watcher not in self._watchers:
            self._watchers.append(watcher)

    def unwatch(self, watcher: Watcher) -> None:
        """Stop sending to ``watcher``."""
        if watcher in self._watchers:
            self._watchers.remove(watcher)

    def sent(self, channel_ids: list[str]) -> None:
        """These chats were just given whole to a watcher (its ``watchChannels`` answer)."""
        now = asyncio.get_running_loop().time()
        for channel_id in channel_ids:
            record = self._records.get(channel_id)
            if record is not None and record.sent_at is None:
                record.sent_at = now

    def saw(self, channel_id: str, event: ChannelEvent) -> None:
        """An event of chat ``channel_id`` went by."""
        record = self._records.get(channel_id)
        if record is None:
            return
        record.last_event_at = time.time()
        if isinstance(event, PromptSent):
            record.last_prompt = event.text
        if isinstance(event, _AT_ONCE):
            self._changed(channel_id, at_once=True)
        elif record.sent_at is not None:
            self._changed(channel_id, at_once=False)

    def heard(self, channel_id: str) -> None:
        """Chat ``channel_id``'s CLI wrote output (a read of it: deltas come this way)."""
        record = self._records.get(channel_id)
        if record is None:
            return
        record.last_event_at = time.time()
        if record.sent_at is not None:
            self._changed(channel_id, at_once=False)

    def _changed(self, channel_id: str, *, at_once: bool) -> None:
        if not self._watchers or channel_id not in self._records:
            return
        record = self._records[channel_id]
        # Output only: again once ACTIVITY_EVERY has passed since it last went out.
        since = asyncio.get_running_loop().time() - (record.sent_at or 0.0)
        if not at_once and record.sent_at is not None and since < ACTIVITY_EVERY:
            return
        self._dirty.add(channel_id)
        self._schedule()

    def _schedule(self) -> None:
        if self._flush is None and self._watchers:
            self._flush = asyncio.get_running_loop().call_later(COALESCE, self._send)

    def _send(self) -> None:
        self._flush = None
        dirty, self._dirty = self._dirty, set()
        closed, self._closed = sorted(self._closed), set()
        now = asyncio.get_running_loop().time()
        channels = []
        # The records are kept in the order the chats opened: oldest first, as
        # claude/listChannels lists them.
        for channel_id, record in self._records.items():
            if channel_id not in dirty or (summary := self._describe(channel_id)) is None:
                continue
            record.sent_at = now
            channels.append(summary)
        if not channels and not closed:
            return
        notification = ChannelsChangedNotification(channels=channels, closed=closed)
        for watcher in list(self._watchers):
            try:
                watcher(notification)
            except Exception:  # one watcher's failure is not the others'
                log.exception("a claude/channelsChanged watcher failed")


class _Watch:
    """One chat's conversation telling the roster what happens (``ConversationWatcher``)."""

    __slots__ = ("_channel_id", "_roster")

    def __init__(self, roster: Roster, channel_id: str) -> None:
        self._roster = roster
        self._channel_id = channel_id

    def saw(self, event: ChannelEvent) -> None:
        """An event of the chat passed on to the front end."""
        self._roster.saw(self._channel_id, event)

    def heard(self) -> None:
        """A read of the chat's CLI output was routed."""
        self._roster.heard(self._channel_id)
