"""The entries of one conversation, in order, with the text still streaming into them.

An entry's place is where it was first added; a queued prompt stays apart (after every
other entry) until the CLI takes it up, and then goes to the end. Streamed text is kept
as a list of pieces per entry and joined only when the entry is read (``settle`` or
``snapshot``), so a delta costs one list append, not a copy of the text so far. Once per
read the pieces of that read are joined into one string (``compact``), so the deltas'
small strings are freed as they are sent, not kept until the entry is read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import msgspec

from claude_sidecar.conversation.paging import Page, Scope, decode_cursor, page_bounds
from claude_sidecar.protocol.api import Entry, PromptEntry, TextEntry, ThinkingEntry, ToolEntry
from claude_sidecar.protocol.errors import InvalidParams

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Entry)

E = TypeVar("E", bound=Entry)

# Pieces an entry collects before ``compact`` joins them: a read of a fast stream brings
# hundreds; a line routed alone (while the transcript wait holds lines) brings one.
_COMPACT_AT = 16


class EncodedEntries:
    """The entries of a conversation that came before, which no longer change: each kept
    as its JSON encoding and decoded only when read, counted back from the last (0).

    ``older`` (when given) produces the entries before those known so far, a few at a
    time (oldest first; None when there are no more): a stored session is read from its
    end, and only as far back as a page needs (``sessions.tail``). Entries given at once
    and those produced are alike. Thread-safe: a worker thread may produce entries while
    the event loop reads the ones known."""

    def __init__(
        self,
        entries: Sequence[Entry] = (),
        older: Callable[[], Sequence[Entry] | None] | None = None,
    ) -> None:
        # Newest first: producing more appends.
        self._ids: list[str] = []
        self._encoded: list[bytes] = []
        self._known: set[str] = set()
        self._older = older
        self._lock = threading.Lock()
        self._add(entries)

    def _add(self, entries: Sequence[Entry]) -> None:
        for entry in reversed(entries):
            self._ids.append(entry.id)
            self._encoded.append(_encoder.encode(entry))
            self._known.add(entry.id)

    def __len__(self) -> int:
        """How many entries are known (more may be produced)."""
        return len(self._encoded)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._known

    @property
    def complete(self) -> bool:
        """Whether every entry is known."""
        return self._older is None

    def produce(self, count: int | None) -> int:
        """Know at least ``count`` entries (None: all), fewer when there are no more;
        returns how many are known."""
        with self._lock:
            while self._older is not None and (count is None or len(self._encoded) < count):
                chunk = self._older()
                if chunk is None:
                    self._older = None
                else:
                    self._add(chunk)
            return len(self._encoded)

    def find_back(self, entry_id: str) -> int | None:
        """How far back from the last the entry ``entry_id`` is, producing entries until
        it is known (None: there is no such entry)."""
        while True:
            known = len(self._ids)
            if entry_id in self._known:
                return self._ids.index(entry_id)
            if self.produce(known + 1) == known:
                return None

    def id_back(self, back: int) -> str | None:
        """The id of the entry ``back`` before the last (0: the last); None: no such one."""
        if back >= len(self._encoded):
            self.produce(back + 1)
        return self._ids[back] if 0 <= back < len(self._ids) else None

    def read_back(self, newest: int, oldest: int) -> list[Entry]:
        """The entries from ``oldest`` back to ``newest`` back (both counted from the last,
        ``oldest`` exclusive), oldest first, decoded (new structs every time)."""
        self.produce(oldest)
        return [_decoder.decode(data) for data in reversed(self._encoded[newest:oldest])]

    def read(self, start: int, end: int) -> list[Entry]:
        """Entries ``start`` to ``end`` (exclusive) counted from the first, decoded (every
        entry is produced first)."""
        count = self.produce(None)
        return self.read_back(max(count - end, 0), count - start)


_NOTHING = EncodedEntries(())


class Entries:
    """An ordered store of entries by id: a prefix that came before (encoded, perhaps
    produced as pages reach back into it), then the channel's own.

    Positions (those cursors hold) count the channel's own entries from 0 and the prefix's
    back from -1 (its last), so a position names the same entry however much of the
    prefix is known. ``in`` knows the prefix's entries read so far: an id the CLI sends
    anew is never one of the others."""

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

    def known(self) -> bool:
        """Whether any entry is known (placed, or of the prefix read so far)."""
        return bool(self._order) or len(self._before) > 0

    def last_prompt(self, within: int = 64) -> PromptEntry | None:
        """The newest prompt of the main conversation the CLI took up (not a sub-agent's,
        not a queued one), among the newest ``within`` entries known: what came before is
        not produced for it (None: none there)."""
        for entry in reversed(self._order[-within:]):
            if isinstance(entry, PromptEntry) and entry.parent_id is None:
                return entry
        known = min(len(self._before), within)
        for entry in reversed(self._before.read_back(0, known) if known else []):
            if isinstance(entry, PromptEntry) and entry.parent_id is None:
                return entry
        return None

    def placed(self) -> list[Entry]:
        """The channel's own placed entries, oldest first (not what came before)."""
        return list(self._order)

    def snapshot(self) -> list[Entry]:
        """Every entry as it is now (copies), queued prompts last (the whole prefix is
        produced first)."""
        earliest = -self._before.produce(None)
        return self._read(earliest, len(self._order), queued=True)

    def each(self, page: int = 200) -> Iterator[Entry]:
        """Every entry known, oldest first, as :meth:`snapshot` gives them, decoded a
        ``page`` at a time (the prefix is not produced here: see ``produce``)."""
        oldest = len(self._before)
        while oldest > 0:
            newest = max(oldest - page, 0)
            yield from self._before.read_back(newest, oldest)
            oldest = newest
        yield from self._read(0, len(self._order), queued=True)

    def _id_at(self, position: int) -> str | None:
        if position < 0:
            return self._before.id_back(-position - 1)
        if position < len(self._order):
            return self._order[position].id
        return None

    def _first(self, wanted: int | None) -> int:
        """The position of the first entry known once the prefix reaches back past
        ``wanted`` (None: to its start)."""
        if wanted is None:
            return -self._before.produce(None)
        return -self._before.produce(max(0, 1 - wanted))

    def prefix_needed(self, scope: Scope, before: str | None, limit: int | None) -> int | None:
        """How many entries of the prefix a page asks for (None: all): what a worker
        thread produces before the page is read (a bad cursor: none)."""
        if limit is None:
            return None
        end = len(self._order)
        if before is not None:
            try:
                end, _ = decode_cursor(scope, before)
            except InvalidParams:
                return 0
        return max(0, 1 - (end - limit))

    def produced(self, count: int | None) -> bool:
        """Whether ``count`` entries of the prefix (None: all) are known, or all there are."""
        return self._before.complete or (count is not None and len(self._before) >= count)

    def produce(self, count: int | None) -> None:
        """Produce ``count`` entries of the prefix (None: all). Blocking: for a thread."""
        self._before.produce(count)

    def _read(self, start: int, end: int, *, queued: bool) -> list[Entry]:
        shown = self._before.read_back(-min(end, 0), -start) if start < 0 else []
        own = [*self._order[max(start, 0) : max(end, 0)]]
        if queued:
            own += self._queued.values()
        return shown + [msgspec.structs.replace(self.settle(entry)) for entry in own]

    def page(self, scope: Scope, before: str | None, limit: int | None) -> tuple[list[Entry], Page]:
        """The entries ``before``/``limit`` ask for as they are now (copies); the page at
        the end (no ``before``) ends with the queued prompts (see :mod:`.paging`)."""
        page = page_bounds(scope, len(self._order), self._id_at, before, limit, self._first)
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
