"""Pages of a conversation, read backwards from its end: ``before``/``limit`` and cursors.

A conversation's entries only ever grow at the end, so a position names the same entry
for the conversation's life: a channel's own entries count from 0 at its start, and the
conversation that came before them (a resumed session's, read from its end only as far
as pages reach) counts back from -1, so no position depends on how much of it is read. A
cursor names the oldest entry of the page it came with: its position and its id (checked,
so that a cursor of another conversation, or of an entry that is gone, is refused rather
than silently misplaced), and the conversation it belongs to (a channel's id, a stored
session's id). It is opaque to clients: base64url of a small JSON array.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import NamedTuple

import msgspec

from claude_sidecar.protocol.api import Entry
from claude_sidecar.protocol.errors import InvalidParams

_VERSION = 1
_FIX = "pass a nextCursor of this {what}'s {method} unchanged, or leave it out for the last page"


class Scope(NamedTuple):
    """The conversation cursors belong to, and how to tell a client to get a good one."""

    key: str
    what: str  # "channel", "session"
    method: str  # "claude/getTranscript"


class Page(NamedTuple):
    """Entries ``start`` to ``end`` (exclusive) of a conversation, and the cursor of what
    comes before them (None: nothing does)."""

    start: int
    end: int
    has_more: bool
    next_cursor: str | None


def encode_cursor(scope: Scope, position: int, entry_id: str) -> str:
    """The cursor of the entry at ``position`` (the page before it ends there)."""
    raw = msgspec.json.encode([_VERSION, scope.key, position, entry_id])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _refuse(scope: Scope, problem: str) -> InvalidParams:
    return InvalidParams("before", problem, _FIX.format(what=scope.what, method=scope.method))


def decode_cursor(scope: Scope, cursor: str) -> tuple[int, str]:
    """The position and entry id ``cursor`` names, or ``InvalidParams`` naming ``before``
    when it is not a cursor of ``scope``."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        version, key, position, entry_id = msgspec.json.decode(raw, type=tuple[int, str, int, str])
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise _refuse(scope, f"is not a cursor ({cursor[:60]!r})") from None
    if version != _VERSION:
        raise _refuse(scope, f"is not a cursor ({cursor[:60]!r})")
    if key != scope.key:
        raise _refuse(scope, f"is a cursor of another {scope.what}")
    return position, entry_id


def page_bounds(
    scope: Scope,
    total: int,
    id_at: Callable[[int], str | None],
    before: str | None,
    limit: int | None,
    first: Callable[[int | None], int] = lambda _: 0,
) -> Page:
    """Which entries of a conversation a request for ``limit`` entries before the cursor
    ``before`` gets: positions below ``total``, ``id_at`` giving the id of the entry at a
    position (None when there is none) and ``first`` the position of the first entry
    once the conversation is known back past the one asked for (None: to its start;
    positions may be negative, see ``entries.Entries``). Refuses a cursor whose entry is
    not where it named it."""
    end = total
    if before is not None:
        end, entry_id = decode_cursor(scope, before)
        if end >= total or id_at(end) != entry_id:
            raise _refuse(
                scope,
                f"names an entry this {scope.what}'s conversation no longer has "
                "(a rewind or a new chain removed it)",
            )
    wanted = None if limit is None else end - limit
    earliest = first(wanted)
    start = earliest if wanted is None else max(wanted, earliest)
    cursor = None
    if start > earliest:
        first_id = id_at(start)
        assert first_id is not None
        cursor = encode_cursor(scope, start, first_id)
    return Page(start, end, start > earliest, cursor)


def page_of(
    scope: Scope, entries: Sequence[Entry], before: str | None, limit: int | None
) -> tuple[list[Entry], Page]:
    """The page of ``entries`` that ``before``/``limit`` ask for (see :func:`page_bounds`)."""
    page = page_bounds(
        scope,
        len(entries),
        lambda i: entries[i].id if 0 <= i < len(entries) else None,
        before,
        limit,
    )
    return list(entries[page.start : page.end]), page


def channel_scope(channel_id: str) -> Scope:
    """The cursors of a channel's conversation (claude/getTranscript, claude/attach)."""
    return Scope(channel_id, "channel", "claude/getTranscript")


def session_scope(session_id: str) -> Scope:
    """The cursors of a stored session's conversation (claude/getHistory)."""
    return Scope(session_id.lower(), "session", "claude/getHistory")
