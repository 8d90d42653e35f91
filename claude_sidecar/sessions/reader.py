"""A stored session read by a process of its own: the daemon keeps its entries encoded.

Reading a session file decodes every line of it: ~100 MB of Python objects for a 30 MB
file, freed when the entries are made, yet kept by the allocator (the daemon's RSS stayed
~80 MB larger for good). So the daemon runs ``python -m claude_sidecar.sessions.reader
MODE CWD SESSION_ID``: the child reads the file (``SessionStore``: the history with its
turn footers placed) and writes one JSON document of what the daemon needs; the daemon
keeps each entry as its JSON bytes and decodes only the entries of a page.

* ``resumed``: what a channel continuing the session starts from (:class:`Resumed`: the
  entries with nothing still under way, led by a notice of what could not be read, and
  what the recorded turns cost and left in the context). Run while the resumed CLI starts
  (the CLI reads the same file, slower): the resume's answer does not wait for it.
* ``history``: ``claude/getHistory``'s entries and warnings (:class:`HistoryEntries`),
  for a request that asks for a page of them.

The child runs on another core and the daemon's event loop never waits for a read. When
the child cannot run, or the file is small (``READ_HERE_BELOW``), the daemon reads the file
itself, in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

from claude_sidecar.conversation.entries import EncodedEntries
from claude_sidecar.conversation.live import carried_over
from claude_sidecar.conversation.paging import page_bounds, session_scope
from claude_sidecar.protocol.api import ContextReading, Entry, History, TurnEntry
from claude_sidecar.protocol.errors import SessionNotFound
from claude_sidecar.sessions.footers import context_after
from claude_sidecar.sessions.store import SessionStore

log = logging.getLogger(__name__)

Mode = Literal["resumed", "history"]
_MODES: dict[str, Mode] = {"resumed": "resumed", "history": "history"}
# The child's exit status when there is no such session.
_NOT_FOUND = 3

READ_HERE_BELOW = 2 * 1024 * 1024
"""A session file smaller than this is read in the daemon (in a thread): a few MB of the
allocator's, where a child's start (~0.2 s of CPU) would take from the CLI's own start
on a busy machine (bench (l): resume at 1k entries 1.20x the CLI's instead of 1.02x)."""


class Resumed(msgspec.Struct, rename="camel"):
    """What a channel continuing a stored session starts from: its conversation (each
    entry's JSON), and what the recorded turns cost and left in the context (``turns``:
    how many there were; none, nothing to carry on)."""

    entries: list[msgspec.Raw]
    turns: int = 0
    cost_usd: float = 0.0
    context: ContextReading | None = None


class HistoryEntries(msgspec.Struct):
    """``claude/getHistory``'s entries (each entry's JSON) and warnings."""

    entries: list[msgspec.Raw]
    warnings: list[str]


class _Id(msgspec.Struct):
    id: str


_decode_id = msgspec.json.Decoder(_Id)


def encoded(entries: Sequence[msgspec.Raw]) -> EncodedEntries:
    """``entries`` kept encoded, each as its own bytes (none holds on to the document
    they came in)."""
    raw = [bytes(r) for r in entries]
    return EncodedEntries.of_encoded([_decode_id.decode(r).id for r in raw], raw)


def history_entries(history: History) -> HistoryEntries:
    """``history``'s entries (each encoded) and warnings."""
    return HistoryEntries(
        [msgspec.Raw(msgspec.json.encode(e)) for e in history.entries], history.warnings
    )


def resumed_of(entries: Sequence[Entry], store: SessionStore, session_id: str) -> Resumed:
    """``entries`` of stored session ``session_id`` as a channel continues them."""
    turns = [e for e in entries if isinstance(e, TurnEntry)]
    context = context_after(entries, store.footers.load(session_id)) if turns else None
    return Resumed(
        entries=[msgspec.Raw(data) for data in carried_over(entries).encoded],
        turns=len(turns),
        cost_usd=sum(t.cost_usd for t in turns),
        context=context,
    )


async def _read_apart(
    mode: Mode, store: SessionStore, session_id: str, cwd: str, env: Mapping[str, str] | None
) -> bytes | None:
    """The child's document for ``mode``; None when the child could not make it (why is
    logged) or the file is small enough to read here. ``SessionNotFound`` when there is no
    such session."""
    size = await store.size(cwd, session_id)
    if size is None or size < READ_HERE_BELOW:
        return None
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            __name__,
            mode,
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
        return out
    if child.returncode == _NOT_FOUND:
        raise SessionNotFound(session_id, cwd)
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
    """Stored session ``session_id`` of ``cwd`` as a channel continues it (nothing when
    there is no such session: the CLI resumed what it found)."""
    out = await _read_apart("resumed", store, session_id, cwd, env)
    if out is not None:
        return await asyncio.to_thread(msgspec.json.decode, out, type=Resumed)
    entries = await store.stored(session_id, cwd)
    return await asyncio.to_thread(resumed_of, entries, store, session_id)


async def read_history_entries(
    store: SessionStore, session_id: str, cwd: str, env: Mapping[str, str] | None
) -> HistoryEntries:
    """``claude/getHistory``'s entries and warnings of stored session ``session_id``
    (``SessionNotFound`` when there is none)."""
    out = await _read_apart("history", store, session_id, cwd, env)
    if out is not None:
        return await asyncio.to_thread(msgspec.json.decode, out, type=HistoryEntries)
    history = await store.history(session_id, cwd)
    return history_entries(history)


async def history_page(
    store: SessionStore,
    env: Mapping[str, str] | None,
    session_id: str,
    cwd: str,
    before: str | None,
    limit: int,
) -> History:
    """A page of ``claude/getHistory``'s entries (``messages`` left empty), only its own
    entries decoded in this process."""
    read = await read_history_entries(store, session_id, cwd, env)
    kept = await asyncio.to_thread(encoded, read.entries)
    page = page_bounds(
        session_scope(session_id),
        len(kept),
        lambda i: kept.ids[i] if 0 <= i < len(kept) else None,
        before,
        limit,
    )
    shown = kept.read(page.start, page.end)
    return History(session_id, [], read.warnings, shown, page.has_more, page.next_cursor)


async def _document(mode: Mode, cwd: str, session_id: str) -> msgspec.Struct:
    store = SessionStore(None)
    if mode == "resumed":
        return resumed_of(await store.stored(session_id, cwd), store, session_id)
    history = await store.history(session_id, cwd)
    return history_entries(history)


def main(argv: Sequence[str]) -> int:
    """The child: ``MODE CWD SESSION_ID``, the sessions of this process's environment;
    the document on stdout."""
    name, cwd, session_id = argv
    mode = _MODES.get(name)
    if mode is None:
        print(f"unknown mode {name!r}: resumed or history", file=sys.stderr)
        return 2
    try:
        document = asyncio.run(_document(mode, cwd, session_id))
    except SessionNotFound:
        return _NOT_FOUND
    sys.stdout.buffer.write(msgspec.json.encode(document))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
