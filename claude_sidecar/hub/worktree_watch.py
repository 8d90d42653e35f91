"""Telling a worktree chat's client what its agent changed, as it changes
(``claude/worktreeChanged``), without the client polling.

The channel says when files may have changed (an edit tool's result, a state change such
as a turn's end); the files are then counted (``worktrees.changes.counted``). One count
runs at a time: what comes meanwhile makes one more count after it, so a burst of edits
costs two counts, not one each. Only a count that differs from the last one sent (another
set of files, or other +/- counts) is published.
"""

from __future__ import annotations

import logging

from claude_sidecar.channel.channel import Channel
from claude_sidecar.feed.events import WorktreeChanged
from claude_sidecar.protocol.api import WorktreeFileCount, WorktreeTotals
from claude_sidecar.protocol.errors import SidecarError
from claude_sidecar.runtime.background import Background
from claude_sidecar.worktrees import changes

log = logging.getLogger(__name__)


class WorktreeWatch:
    """Counts one worktree chat's changes when its channel says files may have changed."""

    def __init__(self, channel: Channel, background: Background) -> None:
        self._channel = channel
        self._background = background
        # What was last sent (a new worktree starts with nothing changed).
        self._sent: tuple[list[WorktreeFileCount], int, int] = ([], 0, 0)
        self._counting = False
        self._again = False
        # The totals of the last count sent (None: nothing counted yet).
        self.totals: WorktreeTotals | None = None

    def watch(self, channel: Channel) -> None:
        """Watch ``channel`` (the chat's channel, or its CLI's next one after a restart)."""
        self._channel = channel
        channel.files_may_have_changed = self.poke

    def poke(self) -> None:
        """Files may have changed: count them (now, or after the count under way)."""
        if self._counting:
            self._again = True
            return
        self._counting = True
        self._background.spawn(self._count(), f"worktree-watch-{self._channel.id}")

    async def _count(self) -> None:
        try:
            while True:
                self._again = False
                info = self._channel.settings.worktree
                if info is None:
                    return
                try:
                    counted = await changes.counted(info)
                except (SidecarError, OSError) as e:
                    # The worktree is being removed, or git failed: the next poke tries again.
                    log.info(
                        "channel %s: could not count its worktree's changes: %s",
                        self._channel.id,
                        e,
                    )
                    return
                if counted != self._sent:
                    self._sent = counted
                    self.totals = WorktreeTotals(len(counted[0]), counted[1], counted[2])
                    # Through the conversation, as every event: the roster sees it too.
                    self._channel.conversation.publish(WorktreeChanged(*counted))
                if not self._again:
                    return
        finally:
            self._counting = False
