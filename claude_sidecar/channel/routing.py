"""The routing of a channel's stdout lines: each line is read once and handed to the
part of the channel it concerns.

Content deltas (most of a turn's lines) take a written-out fast path: decoded for their
routing fields only, appended to the open conversation entry and handed to the front
end as ``Feed.delta``. Control lines go to the link (answers) or to the channel's
served routes (the CLI's requests) and pending asks (withdrawals). Everything else is
published verbatim, then noted by the parts it concerns: the transcript wait, the
settings (init, status, retries, tasks), the turn tracker (prompts taken up, results),
the context meter and the edit log.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Protocol

import msgspec

from claude_sidecar.channel.settings import NOTED_SYSTEM
from claude_sidecar.channel.turns import read_api_error, read_result
from claude_sidecar.cli import wire
from claude_sidecar.conversation import LiveConversation
from claude_sidecar.feed.events import CliMessage, Feed, Progress
from claude_sidecar.protocol.api import CancelReason, ChannelState, DeltaKind

if TYPE_CHECKING:
    from claude_sidecar.channel.files import EditLog
    from claude_sidecar.channel.meter import ContextMeter
    from claude_sidecar.channel.permissions import PendingAsks
    from claude_sidecar.channel.settings import ChannelSettings
    from claude_sidecar.channel.turns import TurnTracker
    from claude_sidecar.cli.link import CliLink

log = logging.getLogger(__name__)

_STREAM_EVENT = wire.STREAM_EVENT_PREFIX
_decode_stream_event = wire.stream_event_decoder.decode
_decode_stream_event_lines = wire.stream_event_decoder.decode_lines
# A read whose lines are longer than this on average goes line by line (_skim_lines).
_SKIM_AVERAGE_MAX = 4096

# A stream delta's type -> the claude/delta kind and the delta's field holding the text.
_DELTA_KINDS: dict[str, tuple[DeltaKind, str]] = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "input_json_delta": ("toolInput", "partial_json"),
}


class Routed(Protocol):
    """What the router reads and moves of the channel that owns it (``Channel``): its
    parts, and its state. The router is given this, not the channel's class, so the
    channel can own a router without the two importing each other."""

    @property
    def id(self) -> str: ...
    @property
    def settings(self) -> ChannelSettings: ...
    @property
    def link(self) -> CliLink: ...
    @property
    def permissions(self) -> PendingAsks: ...
    @property
    def turns(self) -> TurnTracker: ...
    @property
    def edits(self) -> EditLog: ...
    @property
    def meter(self) -> ContextMeter: ...
    @property
    def first_turn_done(self) -> asyncio.Event: ...
    @property
    def state(self) -> ChannelState: ...
    def set_state(self, state: ChannelState) -> None: ...
    def publish_status(self) -> None: ...


class LineRouter:
    """Reads one channel's CLI lines and updates its parts; ``route_all`` is the link's
    callback for the lines of each read."""

    def __init__(self, channel: Routed) -> None:
        self._channel = channel
        # Read on every streamed line; the channel keeps this object for its whole life.
        self._settings = channel.settings
        self.interrupting = False

    def use(self, conversation: LiveConversation) -> None:
        """Route into ``conversation``. Every event passes through it on its way to the
        front end; the hot path reaches past it (the lists deltas append to, the front
        end's delta)."""
        self._feed: Feed = conversation
        self._main_open = conversation.main_open
        self._sub_open = conversation.sub_open
        self._front_delta = conversation.feed.delta
        self._compact = conversation.entries.compact
        self._heard = conversation.heard

    def route_all(self, block: bytes) -> None:
        """Hand each line of one read (a block of lines, each ending in a newline) to the
        part of the channel it concerns, in order (the link's callback).

        The block's lines are decoded with one call, for the routing fields of a
        ``stream_event`` line only (``decode_lines``: no line objects, no call per line;
        a third of what decoding line by line costs). Content deltas, most of a turn's
        lines, are handled in this loop itself: appended to the open entry and handed to
        the front end, with no call but the feed's. Every other line goes to ``route``
        as its own bytes (split off the block once, when the first such line comes),
        and is decoded again there, for everything its routing needs. Then the pieces the
        read appended are joined (``Entries.compact``).
        """
        lines: list[wire.StreamEventLine] | list[wire.StreamEventLine | None] | None
        lines = _skim_lines(block)
        raws = None
        if lines is None:
            # Line by line: a line that is not JSON or not an object, or a blank line
            # (which decode_lines skips, so the decoded lines would not match the raw).
            raws = block.split(b"\n")
            raws.pop()  # the empty piece after the last newline
            lines = [_skim(raw) for raw in raws]
        settings = self._settings
        # Locals: the front end's delta called as self._front_delta(...) would be looked
        # up on the class first, every line (an instance attribute called as a method).
        main_open, sub_open, front_delta = self._main_open, self._sub_open, self._front_delta
        for i, line in enumerate(lines):
            try:
                # (During a retry the general path notes that the model answers again.)
                streamed = False
                if line is not None and line.type == "stream_event" and settings.retry is None:
                    streamed = True
                    event = line.event
                    if (
                        event is not None
                        and event.type == "content_block_delta"
                        and (delta := event.delta) is not None
                        and (known := _DELTA_KINDS.get(delta.type)) is not None
                        and (text := getattr(delta, known[1])) is not None
                    ):
                        # The conversation's delta (LiveConversation.delta), inline:
                        # append to the open entry, hand the delta with the entry's id to
                        # the front end.
                        index = event.index or 0
                        parent = line.parent_tool_use_id
                        if parent is None:
                            opened = main_open.get(index)
                        else:
                            opened = sub_open.get((parent, index))
                        if opened is None:
                            front_delta(known[0], index, text, parent, None)
                        else:
                            opened[1].append(text)
                            front_delta(known[0], index, text, parent, opened[0])
                        continue
                if raws is None:
                    raws = block.split(b"\n")
                if streamed:
                    # Another stream event (a message's or a block's start or stop): on as it is.
                    self._feed.publish(CliMessage(raws[i]))
                else:
                    self.route(raws[i])
            except Exception:
                # A routing bug must not stop the reader: the CLI would block on a full
                # pipe and the channel would hang. Log it and route the next line.
                raw = (raws or block.split(b"\n"))[i]
                log.exception("channel %s: failed to route: %.200r", self._channel.id, raw)
        self._compact()
        self._heard()

    def route(self, raw: bytes) -> None:
        """Hand one stdout line to the part of the channel it concerns (the general
        path: any line, content deltas too)."""
        line: wire.StreamEventLine | wire.CliLine | None = None
        if raw.startswith(_STREAM_EVENT):
            try:
                line = _decode_stream_event(raw)
            except msgspec.MsgspecError:
                line = None  # the general path says what is wrong with it
        if line is None and (line := self._decode(raw)) is None:
            return
        kind = line.type
        channel = self._channel
        if kind == "stream_event":
            if self._settings.retry is not None:
                self._retry_over()
            event = line.event
            if event is not None and event.type == "content_block_delta":
                delta = event.delta
                known = _DELTA_KINDS.get(delta.type) if delta is not None else None
                if known is not None:
                    text = getattr(delta, known[1])
                    if text is not None:
                        # The conversation appends it to the open entry, as route_all
                        # does inline.
                        self._feed.delta(known[0], event.index or 0, text, line.parent_tool_use_id)
                        return
            self._feed.publish(CliMessage(raw))
            return
        assert isinstance(line, wire.CliLine)
        if self._settings.retry is not None and kind in ("assistant", "result"):
            self._retry_over()
        if kind == "control_response" and line.response is not None:
            channel.link.resolve(line.response)
        elif kind == "control_request" and line.request_id is not None:
            channel.link.receive(line.request_id, line.request, raw)
        elif kind == "control_cancel_request" and line.request_id in channel.permissions:
            assert line.request_id is not None
            reason: CancelReason = "interrupted" if self.interrupting else "withdrawn"
            channel.permissions.withdraw(line.request_id, reason)
        elif kind == "system" and line.subtype == "thinking_tokens":
            self._feed.publish(Progress(raw))
        else:
            self._feed.publish(CliMessage(raw))
            self._note(kind, line, raw)

    def _decode(self, raw: bytes) -> wire.CliLine | None:
        """A line's routing fields; None for a line that has nothing to route."""
        if not raw or raw.isspace():  # isspace: no copy of a many-MB line, unlike strip()
            return None
        try:
            return wire.line_decoder.decode(raw)
        except msgspec.ValidationError:
            # Valid JSON that is not a typed message: pass it on, the client may know it.
            self._feed.publish(CliMessage(raw))
        except msgspec.DecodeError:
            log.warning("channel %s: skipping non-JSON line: %.200r", self._channel.id, raw)
        return None

    def _retry_over(self) -> None:
        # The model answered again: the retry the CLI was waiting for is over.
        self._settings.retry = None
        self._channel.publish_status()

    def _note(self, kind: str, line: wire.CliLine, raw: bytes) -> None:
        """Update the parts a published line concerns."""
        channel = self._channel
        turns, settings = channel.turns, self._settings
        if kind in ("user", "assistant") and (transcript := channel.link.transcript) is not None:
            transcript.saw(line, turns.is_queued(line.uuid))
        if kind == "system" and line.subtype in ("init", "status"):
            if settings.reported_line(line):
                channel.publish_status()
            if line.subtype == "init" and channel.state == "idle":
                # A turn the CLI started by itself, e.g. when a background agent ends.
                channel.set_state("running")
        elif kind == "system" and line.subtype in NOTED_SYSTEM:
            if settings.reported_system(line.subtype, raw):
                channel.publish_status()
        elif kind == "user" and line.uuid is not None and turns.is_queued(line.uuid):
            turns.take_up(line.uuid)
            channel.edits.prompt(line.uuid)
        elif kind == "assistant" and line.parent_tool_use_id is not None:
            uses = wire.assistant_tool_uses_decoder.decode(raw).tool_use_ids()
            channel.edits.made_by_subagent(uses, line.parent_tool_use_id)
        elif kind == "assistant":
            channel.meter.assistant(raw)
            if b'"is_api_error_message"' in raw:
                turns.api_error(read_api_error(raw, channel.id))
        elif kind == "result":
            channel.first_turn_done.set()
            # Not while starting: e.g. a `resume` of an unknown session, which the CLI
            # answers with an error result before it exits.
            if channel.state != "starting":
                channel.meter.result(raw)
                ended, state = turns.result(read_result(raw, channel.id), channel.meter.reading)
                self._feed.publish(ended)
                channel.set_state(state)


def _skim_lines(block: bytes) -> list[wire.StreamEventLine] | None:
    """The routing fields of every line of ``block`` as a ``stream_event`` line, one per
    line; None when a line is not a JSON object or is blank, or when the lines are long
    on average (then go line by line)."""
    count = block.count(b"\n")
    if len(block) > count * _SKIM_AVERAGE_MAX:
        # Not a stream of deltas but e.g. a file's contents in a tool result: line by
        # line, such a line is decoded once (by route), not skimmed first.
        return None
    try:
        lines = _decode_stream_event_lines(block)
    except msgspec.MsgspecError:
        return None
    # decode_lines skips blank lines; the count says none was skipped.
    return lines if len(lines) == count else None


def _skim(raw: bytes) -> wire.StreamEventLine | None:
    """One line's routing fields as a ``stream_event`` line; None when it is not one."""
    if not raw.startswith(_STREAM_EVENT):
        return None
    try:
        return _decode_stream_event(raw)
    except msgspec.MsgspecError:
        return None  # the general path says what is wrong with it
