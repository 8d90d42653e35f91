"""A result already encoded as JSON, kept in the pieces it was encoded in.

A whole session's ``claude/getHistory`` answer is tens of megabytes for a long session.
Encoded entry by entry as it is read, then joined into a body and copied again into a
frame, it was held three times over (with an object per entry besides). Kept as pieces,
the front end frames it with one copy (``frontends.server.jsonrpc``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import msgspec

_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True, slots=True)
class EncodedJson:
    """One JSON value whose text is ``b"".join(pieces)``."""

    pieces: list[bytes]

    @property
    def size(self) -> int:
        """The length of the JSON text in bytes."""
        return sum(len(piece) for piece in self.pieces)

    def joined(self) -> bytes:
        """The JSON text in one piece (for tests and small answers)."""
        return b"".join(self.pieces)


def array_of_runs(runs_newest_first: Sequence[bytes]) -> EncodedJson:
    """A JSON array of runs of elements given newest first, each run one or more
    encoded elements joined by commas (:func:`run`, an exchange's entries): the array
    holds them oldest first. Empty runs are left out."""
    pieces = [b"["]
    for part in reversed(runs_newest_first):
        if not part:
            continue
        if len(pieces) > 1:
            pieces.append(b",")
        pieces.append(part)
    pieces.append(b"]")
    return EncodedJson(pieces)


def run(values: Iterable[msgspec.Struct]) -> bytes:
    """``values`` encoded and joined by commas: a run of elements of a JSON array."""
    return b",".join(_encode(value) for value in values)


def obj(fields: Sequence[tuple[str, object]]) -> EncodedJson:
    """A JSON object of ``fields`` (name and value) in order: a value that is an
    ``EncodedJson`` is put in as its pieces, any other is encoded."""
    pieces: list[bytes] = []
    for name, value in fields:
        pieces.append(b"%s%s:" % (b"," if pieces else b"{", _encode(name)))
        if isinstance(value, EncodedJson):
            pieces.extend(value.pieces)
        else:
            pieces.append(_encode(value))
    pieces.append(b"}" if pieces else b"{}")
    return EncodedJson(pieces)
