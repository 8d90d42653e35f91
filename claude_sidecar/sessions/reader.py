"""A stored session's conversation as the daemon keeps it: read from the end, a page at a
time, kept encoded.

A resumed channel's conversation starts with the stored session's (:func:`read_resumed`),
and ``claude/getHistory`` pages it (:func:`history_page`). Either way the file is read by
a :class:`.tail.TailReader`: from its end, as far back as the pages asked for reach, each
entry kept as its JSON bytes (``EncodedEntries``) and decoded again only for a page. The
last page of a session costs the same whatever its length, and memory grows with what
the client has read, not with the file (a 22 MB session read whole took ~100 MB of Python
objects, which the allocator kept).

Reading runs in worker threads; the event loop never waits for the file. What a resumed
chat's recorded turns cost is the one thing that needs the chain to its start: for a
large file it is counted by ``python -m claude_sidecar.sessions.reader totals CWD
SESSION_ID``, a process of its own, whose memory goes when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from claude_sidecar.conversation.entries import EncodedEntries
from claude_sidecar.conversation.live import settled
from claude_sidecar.conversation.paging import (
    decode_cursor,
    encode_cursor,
    page_bounds,
    session_scope,
)
from claude_sidecar.conversation.stored import unreadable_notice
from claude_sidecar.protocol import encoded
from claude_sidecar.protocol.api import ContextReading, Entry, History
from claude_sidecar.protocol.errors import SessionNotFound
from claude_sidecar.sessions.footers import Footer
from claude_sidecar.sessions.store import SessionStore
from claude_sidecar.sessions.tail import TailReader

log = logging.getLogger(__name__)

FIRST_PAGE = 200
"""Entries a resume produces before its channel's conversation is ready: the last page a
client asks for first (the clients ask for 50 to 200)."""

READ_APART_FROM = 2 * 1024 * 1024
"""A session file this large has its recorded turns counted (:func:`totals`) by a process
of its own: that walks the chain's links to the start, ~130 MB of Python objects for a
167 MB file, which the allocator would keep in the daemon."""

KEPT_HISTORIES = 4
"""Sessions whose ``claude/getHistory`` pages are kept between requests (the reading goes
on from where the last page left it)."""


class Resumed(msgspec.Struct):
    """What a channel continuing a stored session starts from: its conversation (read back
    from the end as pages need it), and what the recorded turns cost and left in the
    context (``turns``: how many there were; none, nothing to carry on)."""

    before: EncodedEntries
    turns: int = 0
    cost_usd: float = 0.0
    context: ContextReading | None = None


def older_entries(reader: TailReader, *, notice: bool) -> Callable[[], Sequence[Entry] | None]:
    """What produces ``reader``'s entries one exchange at a time, newest first, settled
    (nothing under way), the file closed after the last; ``notice``: led by a notice of
    what of the file could not be read, as a resumed chat shows it."""
    noticed = not notice

    def older() -> Sequence[Entry] | None:
        nonlocal noticed
        chunk = reader.older()
        if chunk is not None:
            return settled(chunk)
        reader.close()
        if not noticed:
            noticed = True
            found = unreadable_notice(reader.warnings)
            if found is not None:
                return [found]
        return None

    return older


def totals(path: Path, footers: Sequence[Footer]) -> tuple[int, float, ContextReading | None]:
    """How many recorded turns the conversation of ``path`` has, what they cost, and the
    context meter its last turn that recorded one left: the footers whose prompts are on
    its chain. Reads the chain's links to the start (not the entries)."""
    if not footers:
        return 0, 0.0, None
    reader = TailReader(path)
    try:
        newest = {uuid: i for i, uuid in enumerate(reader.chain_uuids())}
    finally:
        reader.close()
    counted: dict[str, tuple[int, int, Footer]] = {}
    for i, footer in enumerate(footers):
        places = [newest[p] for p in footer.prompts if p in newest]
        if places and footer.entry.id not in counted:
            counted[footer.entry.id] = (min(places), -i, footer)
    turns = len(counted)
    cost = sum(f.entry.cost_usd for _, _, f in counted.values())
    metered = sorted(c for c in counted.values() if c[2].context is not None)
    return turns, cost, metered[0][2].context if metered else None


def _last_page(path: Path | None, footers: Sequence[Footer]) -> EncodedEntries:
    """The conversation of ``path`` as a resumed channel keeps it, its last page read."""
    if path is None:
        return EncodedEntries(())
    try:
        reader = TailReader(path, footers)
    except OSError:
        return EncodedEntries(())
    before = EncodedEntries((), older_entries(reader, notice=True))
    before.produce(FIRST_PAGE)
    return before


class _Totals(msgspec.Struct, array_like=True):
    turns: int
    cost_usd: float
    context: ContextReading | None


async def _totals_apart(
    store: SessionStore, session_id: str, cwd: str, env: Mapping[str, str] | None
) -> _Totals | None:
    """:func:`totals` of a session, made by a process of its own (None: it could not
    run; why is logged)."""
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            __name__,
            "totals",
            cwd,
            session_id,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(os.environ if env is None else env),
        )
    except OSError as e:
        log.warning("session %s: no reader process (%s); reading it here", session_id, e)
        return None
    try:
        out, err = await child.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):  # (it may have just ended)
            child.kill()
        await child.wait()
        raise
    if child.returncode == 0:
        with contextlib.suppress(msgspec.DecodeError):
            return msgspec.json.decode(out, type=_Totals)
    log.warning(
        "session %s: its reader exited with %s (%s); reading it here",
        session_id,
        child.returncode,
        err.decode(errors="replace").strip()[-500:],
    )
    return None


async def read_resumed(
    store: SessionStore, session_id: str, cwd: str, env: Mapping[str, str] | None
) -> Resumed:
    """Stored session ``session_id`` of ``cwd`` as a channel continues it, its last page
    read (nothing when there is no such session: the CLI resumed what it found), with
    the :func:`totals` of its recorded turns."""
    path = await store.file(cwd, session_id)
    footers = await asyncio.to_thread(store.footers.load, session_id)
    before = await asyncio.to_thread(_last_page, path, footers)
    if path is None or not footers:
        return Resumed(before)
    found = None
    if (await store.size(cwd, session_id) or 0) >= READ_APART_FROM:
        found = await _totals_apart(store, session_id, cwd, env)
    if found is None:
        found = _Totals(*await asyncio.to_thread(totals, path, footers))
    return Resumed(before, found.turns, found.cost_usd, found.context)


class _Kept(msgspec.Struct):
    reader: TailReader
    entries: EncodedEntries
    signature: tuple[int, float]
    lock: threading.Lock


class StoredPages:
    """The stored sessions whose ``claude/getHistory`` pages were read last, each with
    its reading: a page before one read continues it. When the file changed (a CLI went
    on with the session, or it was cut short), a new reading starts, and a cursor finds
    its entry again, or is refused when the conversation no longer has it."""

    def __init__(self) -> None:
        self._kept: OrderedDict[Path, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    def _reading(self, path: Path, store: SessionStore, session_id: str) -> tuple[_Kept, bool]:
        """The kept reading of ``path``, a new one when there is none or its file changed
        (and whether it is new)."""
        stat = path.stat()
        signature = (stat.st_size, stat.st_mtime)
        kept = self._kept.get(path)
        if kept is not None and kept.signature == signature:
            self._kept.move_to_end(path)
            return kept, False
        if kept is not None:
            with kept.lock:
                kept.reader.close()
        reader = TailReader(path, store.footers.load(session_id))
        entries = EncodedEntries((), older_entries(reader, notice=False))
        made = _Kept(reader, entries, (reader.index.size, reader.index.mtime), threading.Lock())
        self._kept[path] = made
        self._kept.move_to_end(path)
        while len(self._kept) > KEPT_HISTORIES:
            _, dropped = self._kept.popitem(last=False)
            with dropped.lock:
                dropped.reader.close()
        return made, True

    def page(
        self,
        store: SessionStore,
        path: Path,
        session_id: str,
        before: str | None,
        limit: int | None,
    ) -> History:
        """The page ``before``/``limit`` ask for (``messages`` left empty). Blocking."""
        scope = session_scope(session_id)
        with self._lock:
            kept, new = self._reading(path, store, session_id)
        with kept.lock:
            entries = kept.entries
            if before is not None and new:
                # A cursor of an earlier reading (the file changed since, or the reading
                # was dropped): its entry, if the conversation still has it, is found
                # again from the end.
                _, entry_id = decode_cursor(scope, before)
                back = entries.find_back(entry_id)
                if back is not None:
                    before = encode_cursor(scope, -back - 1, entry_id)

            def id_at(position: int) -> str | None:
                return entries.id_back(-position - 1) if position < 0 else None

            def first(wanted: int | None) -> int:
                return -entries.produce(None if wanted is None else max(0, 1 - wanted))

            page = page_bounds(scope, 0, id_at, before, limit, first)
            shown = entries.read_back(-page.end, -page.start)
            warnings = kept.reader.warnings
        return History(session_id, [], warnings, shown, page.has_more, page.next_cursor)


def whole_history(path: Path, session_id: str, footers: Sequence[Footer]) -> WholeHistory:
    """``claude/getHistory``'s whole answer for the session at ``path``, read from the end
    an exchange at a time, each one encoded before the next is read. Blocking."""
    reader = TailReader(path, footers)
    # Newest first, an exchange's entries (and messages) encoded and joined per exchange:
    # one bytes object each, not one object per entry (a 100k-entry session's answer is
    # ~30 MB; per entry, the objects around it took as much again).
    entries: list[bytes] = []
    messages: list[bytes] = []
    try:
        while (exchange := reader.older()) is not None:
            entries.append(encoded.run(exchange))
            messages.append(encoded.run(reader.messages))
    finally:
        reader.close()
    return WholeHistory(session_id, messages, reader.warnings, entries)


@dataclass
class WholeHistory:
    """A session's whole ``History``, its messages and entries encoded as they were read
    (runs of elements, newest first): never held decoded."""

    session_id: str
    messages: list[bytes]
    warnings: list[str]
    entries: list[bytes]

    def answer(self) -> encoded.EncodedJson:
        """The ``History`` JSON (the same fields, in its order), in pieces."""
        return encoded.obj(
            [
                ("sessionId", self.session_id),
                ("messages", encoded.array_of_runs(self.messages)),
                ("warnings", self.warnings),
                ("entries", encoded.array_of_runs(self.entries)),
                ("hasMore", False),
                ("nextCursor", None),
            ]
        )


async def read_whole_history(
    store: SessionStore, session_id: str, cwd: str, before: str | None
) -> encoded.EncodedJson:
    """``claude/getHistory`` without ``limit``: every message, and every entry (before
    ``before``, when given), as JSON in pieces. ``SessionNotFound`` when there is no such
    session."""
    path = await store.file(cwd, session_id)
    if path is None:
        raise SessionNotFound(session_id, cwd)
    footers = await asyncio.to_thread(store.footers.load, session_id)
    try:
        whole = await asyncio.to_thread(whole_history, path, session_id, footers)
    except FileNotFoundError as e:
        raise SessionNotFound(session_id, cwd) from e
    if before is not None:
        page = await history_page(store, session_id, cwd, before, None)
        whole.entries = [encoded.run(page.entries)]
    return whole.answer()


_PAGES = StoredPages()


async def history_page(
    store: SessionStore, session_id: str, cwd: str, before: str | None, limit: int | None
) -> History:
    """A page of ``claude/getHistory``'s entries (``messages`` left empty), read from the
    session file's end only as far as the page reaches (``SessionNotFound`` when there is
    no such session)."""
    path = await store.file(cwd, session_id)
    if path is None:
        raise SessionNotFound(session_id, cwd)
    try:
        return await asyncio.to_thread(_PAGES.page, store, path, session_id, before, limit)
    except FileNotFoundError as e:
        raise SessionNotFound(session_id, cwd) from e


def main(argv: Sequence[str]) -> int:
    """The child: ``totals CWD SESSION_ID`` of the sessions of this process's environment,
    as JSON on stdout."""
    mode, cwd, session_id = argv
    if mode != "totals":
        print(f"unknown mode {mode!r}: totals", file=sys.stderr)
        return 2
    store = SessionStore(None)
    path = asyncio.run(store.file(cwd, session_id))
    if path is None:
        print(f"no session {session_id} in {cwd}", file=sys.stderr)
        return 3
    found = _Totals(*totals(path, store.footers.load(session_id)))
    sys.stdout.buffer.write(msgspec.json.encode(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
