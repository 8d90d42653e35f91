"""What a channel tells its front end: typed events, and the interface that receives them.

A channel does not know how its client is reached. It publishes events to a ``Feed``
(one per channel, in order); a front end (``Subscriber``) opens the feed for each channel
the hub opens and turns events into its own protocol: the ``claude/*`` stdio front end
numbers and encodes them as notifications (``outbox``); another front end (ACP, a client
attached to a running daemon) would map the same events to its own messages.

CLI lines travel as their original bytes (``CliMessage``): a front end that forwards
them verbatim never decodes them again. Streamed deltas, the one event that comes by the
hundred thousand per turn, have a method of their own (``Feed.delta``) instead of a
struct: building and dispatching one per delta cost ~6% of the daemon's CPU per delta
(bench (a)).
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from claude_sidecar.feed.changes import FileChange
from claude_sidecar.protocol.api import (
    CancelReason,
    ChannelState,
    ContextReading,
    DeltaKind,
    Entry,
    ExitInfo,
    InitializationOptions,
    PermissionRequest,
    RetryInfo,
    TurnError,
    TurnOutcome,
    TurnUsage,
    WorktreeFileCount,
    WorktreeInfo,
)


class CliMessage(msgspec.Struct, frozen=True, gc=False):
    """One line of the CLI, as it wrote it (a message the daemon does not interpret)."""

    raw: bytes


class Progress(msgspec.Struct, frozen=True, gc=False):
    """A CLI progress line (``system/thinking_tokens``): each carries a running total, so a
    front end may keep only the latest of a burst."""

    raw: bytes


class StatusChanged(msgspec.Struct, frozen=True):
    """The channel's state, session, model, mode or retry changed."""

    state: ChannelState
    session_id: str
    model: str | None
    permission_mode: str | None
    exit: ExitInfo | None = None
    retry: RetryInfo | None = None
    worktree: WorktreeInfo | None = None


class TurnEnded(msgspec.Struct, frozen=True):
    """A turn is over: how it ended, what it cost, which prompts it took up."""

    outcome: TurnOutcome
    duration_ms: int
    permission_wait_ms: int
    cost_usd: float
    total_cost_usd: float
    usage: TurnUsage
    num_turns: int = 0
    message_ids: list[str] = []
    error: TurnError | None = None
    # The context meter as the turn left it (None: not known).
    context: ContextReading | None = None


class PermissionAsked(msgspec.Struct, frozen=True):
    """A tool use waits for the person's decision (or was decided by a client rule)."""

    request: PermissionRequest


class PermissionWithdrawn(msgspec.Struct, frozen=True):
    """A pending ask needs no answer any more."""

    request_id: str
    reason: CancelReason


class FileUpdated(msgspec.Struct, frozen=True):
    """A file changed on disk (an edit tool, or a rewind)."""

    change: FileChange


class PromptSent(msgspec.Struct, frozen=True):
    """The client sent a prompt (``claude/sendMessage``); the CLI takes it up later."""

    message_id: str
    text: str
    image_count: int = 0


class EntryChanged(msgspec.Struct, frozen=True):
    """An entry of the conversation was added or changed (the whole entry, as it is now)."""

    entry: Entry


class WorktreeChanged(msgspec.Struct, frozen=True):
    """The files a worktree chat changed against its base, or their counts, changed."""

    files: list[WorktreeFileCount]
    added: int
    deleted: int


ChannelEvent = (
    CliMessage
    | Progress
    | StatusChanged
    | TurnEnded
    | PermissionAsked
    | PermissionWithdrawn
    | FileUpdated
    | PromptSent
    | EntryChanged
    | WorktreeChanged
)


class Feed(Protocol):
    """Where one channel's events go, in the order they happened."""

    def publish(self, event: ChannelEvent) -> None:
        """Take one event; must not block (it runs on the channel's reader)."""

    def delta(
        self,
        kind: DeltaKind,
        index: int,
        text: str,
        parent_tool_use_id: str | None,
        entry_id: str | None = None,
    ) -> None:
        """Take a piece of streamed text, thinking or tool input of content block
        ``index`` (of the sub-agent run by ``parent_tool_use_id``, if any) that appends to
        the conversation's entry ``entry_id``."""


class OpenedFeed(Feed, Protocol):
    """A feed for a channel that is still starting: it keeps its events until the channel
    is there (``release``), or drops them if it never comes to be (``discard``)."""

    def release(self) -> None:
        """Deliver what was kept, in order, and stop keeping."""

    def discard(self) -> list[bytes]:
        """Drop what was kept; returns it (encoded) for the log."""


class Subscriber(Protocol):
    """A front end: it receives the events of every channel the hub opens."""

    def open_feed(self, channel_id: str, client: InitializationOptions) -> OpenedFeed:
        """A feed for the new channel ``channel_id``, keeping its events until released;
        ``client`` is what the client opening it chose at ``initialize``."""


class Nowhere:
    """The feed of a warm-pool spare: nobody listens until a chat takes it."""

    def publish(self, event: ChannelEvent) -> None:
        """Drop the event."""

    def delta(
        self,
        kind: DeltaKind,
        index: int,
        text: str,
        parent_tool_use_id: str | None,
        entry_id: str | None = None,
    ) -> None:
        """Drop the delta."""


NOWHERE = Nowhere()
