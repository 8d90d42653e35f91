"""A conversation that came before a channel's own entries, produced from its end only as
far as pages reach (claude_sidecar.conversation.entries): pages, cursors, the whole."""

from __future__ import annotations

from collections.abc import Sequence

from claude_sidecar.conversation.entries import EncodedEntries, Entries
from claude_sidecar.conversation.paging import channel_scope
from claude_sidecar.protocol.api import Entry, PromptEntry, TextEntry

SCOPE = channel_scope("ch-1")


class Exchanges:
    """``count`` stored exchanges (a prompt and its answer), given newest first, one per
    call, counting the calls."""

    def __init__(self, count: int) -> None:
        self.left = count
        self.calls = 0

    def __call__(self) -> Sequence[Entry] | None:
        self.calls += 1
        if self.left == 0:
            return None
        self.left -= 1
        n = self.left
        return [PromptEntry(id=f"p{n}", text=f"prompt {n}"), TextEntry(id=f"t{n}", text="ok")]


def with_prefix(count: int) -> tuple[Entries, Exchanges]:
    entries = Entries()
    exchanges = Exchanges(count)
    entries.seed(EncodedEntries((), exchanges))
    return entries, exchanges


def ids(entries: Sequence[Entry]) -> list[str]:
    return [e.id for e in entries]


def test_the_last_page_reads_only_the_exchanges_it_shows_and_one_more() -> None:
    entries, exchanges = with_prefix(1000)

    page, bounds = entries.page(SCOPE, None, 3)

    assert ids(page) == ["t998", "p999", "t999"]
    assert bounds.has_more and exchanges.calls == 2, "a page of 3 and the entry before it"


def test_pages_walked_to_the_start_give_every_entry_once_in_order() -> None:
    entries, _ = with_prefix(50)
    entries.add(PromptEntry(id="own", text="typed here"))
    walked: list[str] = []
    before = None
    while True:
        page, bounds = entries.page(SCOPE, before, 7)
        walked[:0] = ids(page)
        if not bounds.has_more:
            break
        before = bounds.next_cursor

    assert walked == [x for n in range(50) for x in (f"p{n}", f"t{n}")] + ["own"]
    assert walked == ids(list(entries.each(page=9)))


def test_a_cursor_into_the_prefix_stays_good_while_the_channel_adds_entries() -> None:
    entries, _ = with_prefix(10)
    _, last = entries.page(SCOPE, None, 4)
    older, _ = entries.page(SCOPE, last.next_cursor, 2)

    entries.add(PromptEntry(id="new", text="later"))
    again, _ = entries.page(SCOPE, last.next_cursor, 2)

    assert ids(again) == ids(older) == ["p7", "t7"]
