"""A resumed session's conversation as its channel keeps it, read in a process of its own.

Reading a session file decodes every line of it: ~100 MB of Python objects for a 30 MB
file, freed when the entries are made, yet kept by the allocator (the daemon's RSS
stayed +80 MB for the channel's life). So the daemon runs ``python -m
claude_sidecar.sessions.resumed CWD SESSION_ID`` beside the resumed CLI: the child reads
the file (:func:`.store.read_stored`: the history, its turn footers placed, a notice of
what could not be read), makes what the channel keeps of it (``carried_over``: nothing
still under way) and writes it as one JSON document; the daemon keeps each entry as its
JSON bytes (``EncodedEntries``) and decodes a page when one is asked for. The child runs
on another core while the CLI starts (the CLI reads the same file, slower), so the
resume's answer does not wait for it, and the daemon's event loop never does either.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Mapping, Sequence

import msgspec

from claude_sidecar.conversation.entries import EncodedEntries
from claude_sidecar.conversation.live import carried_over
from claude_sidecar.protocol.api import ContextReading, Entry, TurnEntry
from claude_sidecar.protocol.errors import SessionNotFound
from claude_sidecar.sessions.footers import context_after
from claude_sidecar.sessions.store import SessionStore

log = logging.getLogger(__name__)


class Resumed(msgspec.Struct, rename="camel"):
    """What a channel continuing a stored session starts from: its conversation (each
    entry's JSON), and what the recorded turns cost and left in the context (``turns``:
    how many there were; none, nothing to carry on)."""

    entries: list[msgspec.Raw]
    turns: int = 0
    cost_usd: float = 0.0
    context: ContextReading | None = None


class _Id(msgspec.Struct):
    id: str


_decode_resumed = msgspec.json.Decoder(Resumed)
_decode_id = msgspec.json.Decoder(_Id)


def resumed_of(entries: Sequence[Entry], store: SessionStore, session_id: str) -> Resumed:
    """``entries`` of stored session ``session_id`` as a channel continues them."""
    turns = [e for e in entries if isinstance(e, TurnEntry)]
    context = context_after(entries, store.footers.load(session_id)) if turns else None
    kept = carried_over(entries)
    return Resumed(
        entries=[msgspec.Raw(data) for data in kept.encoded],
        turns=len(turns),
        cost_usd=sum(t.cost_usd for t in turns),
        context=context,
    )


def encoded(resumed: Resumed) -> EncodedEntries:
    """The entries of ``resumed``, kept encoded (each its own bytes: none holds on to the
    document they came in)."""
    raw = [bytes(r) for r in resumed.entries]
    return EncodedEntries.of_encoded([_decode_id.decode(r).id for r in raw], raw)


async def read_resumed(
    store: SessionStore, session_id: str, cwd: str, env: Mapping[str, str] | None
) -> Resumed:
    """Stored session ``session_id`` of ``cwd`` as a channel continues it, read by a child
    process (see the module docstring); in this process when the child cannot do it."""
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            __name__,
            cwd,
            session_id,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(os.environ if env is None else env),
        )
        try:
            out, err = await child.communicate()
        except BaseException:
            child.kill()
            await child.wait()
            raise
        if child.returncode == 0:
            return await asyncio.to_thread(_decode_resumed.decode, out)
        log.warning(
            "session %s: its reader exited with %s (%s); reading it here",
            session_id,
            child.returncode,
            err.decode(errors="replace").strip()[-500:],
        )
    except OSError as e:
        log.warning("session %s: no reader process (%s); reading it here", session_id, e)
    entries = await store.stored(session_id, cwd)
    return await asyncio.to_thread(resumed_of, entries, store, session_id)


def main(argv: Sequence[str]) -> int:
    """The child: ``CWD SESSION_ID``; the sessions of this process's environment."""
    cwd, session_id = argv
    store = SessionStore(None)
    try:
        entries = asyncio.run(store.stored(session_id, cwd))
    except SessionNotFound:
        entries = []
    sys.stdout.buffer.write(msgspec.json.encode(resumed_of(entries, store, session_id)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
