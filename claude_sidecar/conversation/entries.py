"""The entries of one conversation, in order, with the text still streaming into them.

An entry's place is where it was first added; a queued prompt stays apart (after every
other entry) until the CLI takes it up, and then goes to the end. Streamed text is kept
as a list of pieces per entry and joined only when the entry is read (``settle`` or
``snapshot``), so a delta costs one list append, not a copy of the text so far. Once per
read the pieces of that read are joined into one string (``compact``), so the deltas'
small strings are freed as they are sent, not kept until the entry is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import msgspec

from claude_sidecar.conversation.paging import Page, Scope, page_bounds
from claude_sidecar.protocol.api import Entry, PromptEntry, TextEntry, ThinkingEntry, ToolEntry

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Entry)

E = TypeVar("E", bound=Entry)

# Pieces an entry collects before ``compact`` joins them: a read of a fast stream brings
# hundreds; a line routed alone (while the transcript wait holds lines) brings one.
_COMPACT_AT = 16


class EncodedEntries:
    """Entries that no longer change, each kept as its JSON encoding and decoded only
    when read. Pure: it may be built in a worker thread."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.ids = [e.id for e in entries]
        self._known = frozenset(self.ids)
        self.encoded = [_encoder.encode(e) for e in entries]

    @classmethod
    def of_encoded(cls, ids: list[str], encoded: list[bytes]) -> EncodedEntries:
        """Entries already encoded (``encoded[i]`` is the JSON of entry ``ids[i]``)."""
        made = cls(())
        made.ids, made._known, made.encoded = ids, frozenset(ids), encoded
        return made

    def __len__(self) -> int:
        return len(self.encoded)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._known

    def read(self, start: int, end: int) -> list[Entry]:
        """Entries ``start`` to ``end`` (exclusive), decoded (new structs every time)."""
        return [_decoder.decode(data) for data in self.encoded[start:end]]


_NOTHING = EncodedEntries(())


class Entries:
    """An ordered store of entries by id: a prefix that came before (encoded), then the
    channel's own."""

    def __init__(self) -> None:
        self._before = _NOTHING
        # The placed entries in order, and each one's position there (by id): a page is a
        # slice, and an entry or a cursor's entry is found without a walk.
        self._order: list[Entry] = []
        self._position: dict[str, int] = {}
        self._queued: dict[str, PromptEntry] = {}
        # Entry id -> the pieces streamed since the entry was last compacted or settled
        # (the list the channel's hot path appends to).
        self.streaming: dict[str, list[str]] = {}
        # Entry id -> what ``compact`` joined since the entry was last settled.
        self.compacted: dict[str, list[str]] = {}

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._position or entry_id in self._queued or entry_id in self._before

    def seed(self, before: EncodedEntries) -> None:
        """Put the conversation that came before in front of every entry (once: the
        positions of cursors count it, and no page is read until it is in place)."""
        self._before = before

    def get(self, entry_id: str | None, kind: type[E]) -> E | None:
        """The entry ``entry_id`` if it is of ``kind``."""
        if entry_id is None:
            return None
        position = self._position.get(entry_id)
        entry = self._order[position] if position is not None else self._queued.get(entry_id)
        return entry if isinstance(entry, kind) else None

    def add(self, entry: Entry) -> Entry:
        """Place a new entry at the end (a queued prompt after everything else)."""
        if isinstance(entry, PromptEntry) and entry.queued:
            self._queued[entry.id] = entry
        else:
            self._place(entry)
        return entry

    def _place(self, entry: Entry) -> None:
        position = self._position.get(entry.id)
        if position is None:
            self._position[entry.id] = len(self._order)
            self._order.append(entry)
        else:
            self._order[position] = entry

    def take_up(self, prompt_id: str) -> PromptEntry | None:
        """Place a queued prompt at the end: the CLI took it up now."""
        prompt = self._queued.pop(prompt_id, None)
        if prompt is not None:
            prompt.queued = False
            self._place(prompt)
        return prompt

    def queued(self) -> list[PromptEntry]:
        """The prompts waiting to be taken up, oldest first."""
        return list(self._queued.values())

    def stream(self, entry_id: str) -> list[str]:
        """Start collecting streamed pieces for ``entry_id``; returns the list they go to."""
        return self.streaming.setdefault(entry_id, [])

    def compact(self) -> None:
        """Join each entry's pieces into one string (the channel calls it once per read).

        Kept apart, the small strings of 100,000 deltas took ~7 MB of memory new to the
        process every turn (Python's allocator returns it when the turn's text is
        settled): ~1,700 page faults, 3-5% of the CPU the turn cost.
        """
        for entry_id, pieces in self.streaming.items():
            if len(pieces) >= _COMPACT_AT:
                joined = "".join(pieces)
                pieces.clear()
                compacted = self.compacted.get(entry_id)
                if compacted is None:
                    self.compacted[entry_id] = [joined]
                else:
                    compacted.append(joined)

    def settle(self, entry: Entry) -> Entry:
        """Move what streamed into ``entry`` into its text (or partial input)."""
        pieces = self.streaming.get(entry.id)
        compacted = self.compacted.pop(entry.id, None)
        if pieces or compacted:
            streamed = "".join([*(compacted or ()), *(pieces or ())])
            if isinstance(entry, ToolEntry):
                entry.partial_input += streamed
            elif isinstance(entry, TextEntry | ThinkingEntry):
                entry.text += streamed
            if pieces:
                pieces.clear()
        return entry

    def end_stream(self, entry: Entry) -> Entry:
        """Settle ``entry`` and stop collecting for it."""
        self.settle(entry)
        self.streaming.pop(entry.id, None)
        return entry

    def placed(self) -> list[Entry]:
        """The channel's own placed entries, oldest first (not what came before)."""
        return list(self._order)

    def snapshot(self) -> list[Entry]:
        """Every entry as it is now (copies), queued prompts last."""
        return self._read(0, len(self._before) + len(self._order), queued=True)

    def _id_at(self, position: int) -> str | None:
        count = len(self._before)
        if 0 <= position < count:
            return self._before.ids[position]
        if count <= position < count + len(self._order):
            return self._order[position - count].id
        return None

    def _read(self, start: int, end: int, *, queued: bool) -> list[Entry]:
        count = len(self._before)
        shown = self._before.read(start, min(end, count))
        own = [*self._order[max(start - count, 0) : max(end - count, 0)]]
        if queued:
            own += self._queued.values()
        return shown + [msgspec.structs.replace(self.settle(entry)) for entry in own]

    def page(self, scope: Scope, before: str | None, limit: int | None) -> tuple[list[Entry], Page]:
        """The entries ``before``/``limit`` ask for as they are now (copies); the page at
        the end (no ``before``) ends with the queued prompts (see :mod:`.paging`)."""
        total = len(self._before) + len(self._order)
        page = page_bounds(scope, total, self._id_at, before, limit)
        return self._read(page.start, page.end, queued=before is None), page


def through_exchange(entries: Sequence[Entry], prompt_id: str) -> list[Entry] | None:
    """The entries up to the end of the exchange prompt ``prompt_id`` opened: what a fork
    "at" that prompt keeps (None: no such prompt of the main conversation).

    A sub-agent's prompt (``parent_id`` set) belongs to the exchange that started it;
    queued prompts were never part of the conversation.
    """
    kept: list[Entry] = []
    inside = False
    for entry in entries:
        if isinstance(entry, PromptEntry) and entry.parent_id is None:
            if entry.queued or inside:
                break
            inside = entry.id == prompt_id
        kept.append(entry)
    return kept if inside else None
