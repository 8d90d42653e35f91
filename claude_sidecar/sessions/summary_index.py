"""The listing's index of session files, kept between daemon runs (an SQLite file).

For each session file listed: where the read stopped (the end of its last complete line),
a fingerprint of the bytes read (their first and last 4 KiB), what the listing folded
over them (:class:`.summary_scan.Fold`), the message count's :class:`.summary_scan.Tally`,
and a key of each uuid read (a row per read). A file that only grew is read from where the
last read stopped; one whose fingerprint, inode or size says otherwise is read again from
the start.

The file is a cache: ``$XDG_CACHE_HOME/claude-sidecar/listing-v1.sqlite``
(``~/.cache`` when unset). Anything wrong with it (corrupt, locked, a read-only disk)
is logged and the listing reads the session files instead; deleting it only costs one
whole read of each file at the next listing.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

import msgspec

from claude_sidecar.sessions.summary_scan import Fold, Tally

_EDGE = 4096
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, ino INTEGER, size INTEGER, mtime_ns INTEGER, offset INTEGER,
    fingerprint BLOB, fold BLOB, count INTEGER, tally BLOB);
CREATE TABLE IF NOT EXISTS keys (
    path TEXT, start INTEGER, data BLOB, PRIMARY KEY (path, start));
"""
_encode = msgspec.msgpack.Encoder().encode
_decode_fold = msgspec.msgpack.Decoder(Fold).decode
_decode_tally = msgspec.msgpack.Decoder(Tally).decode


def index_path(env: Mapping[str, str]) -> Path:
    """Where the index of an environment's listings is kept."""
    cache = env.get("XDG_CACHE_HOME")
    base = Path(cache) if cache and os.path.isabs(cache) else Path(env.get("HOME", "~")) / ".cache"
    return base.expanduser() / "claude-sidecar" / "listing-v1.sqlite"


def fingerprint(f: BinaryIO, offset: int) -> bytes:
    """A digest of the first and the last 4 KiB before ``offset`` of ``f``."""
    f.seek(0)
    head = f.read(min(offset, _EDGE))
    f.seek(max(0, offset - _EDGE))
    tail = f.read(offset - max(0, offset - _EDGE))
    return hashlib.blake2b(head + b"\0" + tail, digest_size=16).digest()


LOCK_WAIT = 10.0
"""Seconds a connection waits for another one's lock on the index before it gives up."""


def _pause(seconds: float) -> None:
    """The wait between two tries of :func:`_use_wal` (a seam: the test lets the other
    connection finish its switch here, instead of sleeping)."""
    time.sleep(seconds)


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch ``db`` to write-ahead logging, waiting for another connection switching it.

    Two connections switching a new index at once (a daemon's first listing and the
    workspace's indexing at initialize, or the reader process) are a deadlock to SQLite,
    which fails one of them at once ("database is locked") instead of letting the busy
    timeout wait: that one tries again until the other has switched (then it is a no-op).
    """
    deadline = time.monotonic() + LOCK_WAIT
    wait = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if e.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
        _pause(wait)
        wait = min(wait * 2, 0.1)


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=LOCK_WAIT)
    try:
        # A cache: no syncing to disk (a listing never waits on the disk); what a crash
        # loses or breaks is read again from the session files.
        _use_wal(db)
        db.execute("PRAGMA synchronous=OFF")
        db.executescript(_SCHEMA)
    except sqlite3.Error:
        db.close()
        raise
    return db


class Indexed(msgspec.Struct):
    """What the index holds of one file (but its tally and keys)."""

    ino: int
    size: int
    mtime_ns: int
    offset: int
    fingerprint: bytes
    fold: Fold
    count: int


class SummaryIndex:
    """The index at ``path``, opened on first use (one per listing: a connection belongs
    to its thread). Its methods raise ``sqlite3.Error``; the caller then sets ``usable``
    to False and reads the files instead."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.usable = True
        self._opened: sqlite3.Connection | None = None

    @property
    def _db(self) -> sqlite3.Connection:
        if self._opened is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError as e:
                raise sqlite3.OperationalError(f"cannot create {self.path.parent}: {e}") from e
            try:
                self._opened = _connect(self.path)
            except sqlite3.OperationalError:
                raise  # locked, no room, no permission: the file stays
            except sqlite3.DatabaseError:
                # Not a database (a crash mid-write with syncing off, another program's
                # file): a cache, so it is started again.
                for leftover in (
                    self.path,
                    *(self.path.with_name(self.path.name + x) for x in ("-wal", "-shm")),
                ):
                    leftover.unlink(missing_ok=True)
                self._opened = _connect(self.path)
        return self._opened

    def close(self) -> None:
        """Close the connection (if it was opened)."""
        if self._opened is not None:
            self._opened.close()
            self._opened = None

    def get(self, path: Path) -> Indexed | None:
        """What was indexed of ``path`` (None: nothing)."""
        row = self._db.execute(
            "SELECT ino, size, mtime_ns, offset, fingerprint, fold, count FROM files "
            "WHERE path = ?",
            (str(path),),
        ).fetchone()
        if row is None:
            return None
        ino, size, mtime_ns, offset, digest, fold, count = row
        return Indexed(ino, size, mtime_ns, offset, digest, _decode_fold(fold), count)

    def tally(self, path: Path) -> Tally:
        """The tally of ``path`` (one :meth:`get` returned)."""
        row = self._db.execute("SELECT tally FROM files WHERE path = ?", (str(path),)).fetchone()
        if row is None:
            raise sqlite3.DataError(f"{path} is no longer in the index")
        return _decode_tally(row[0])

    def keys(self, path: Path) -> set[int]:
        """The keys (:func:`.summary_scan.link_keys`) of the links of ``path`` read so far."""
        keys: set[int] = set()
        for (data,) in self._db.execute("SELECT data FROM keys WHERE path = ?", (str(path),)):
            keys.update(array("Q", data))
        return keys

    def sizes(self, directory: Path) -> dict[str, int]:
        """The size each file of ``directory`` had when it was last read (by path)."""
        prefix = f"{directory}{os.sep}"
        return dict(
            self._db.execute(
                "SELECT path, size FROM files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)
            )
        )

    def prune(self, directory: Path, present: set[Path]) -> None:
        """Forget the files of ``directory`` that are not ``present`` (deleted sessions)."""
        prefix = f"{directory}{os.sep}"
        names = {str(p) for p in present}
        gone = [
            (path,)
            for (path,) in self._db.execute(
                "SELECT path FROM files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)
            )
            if path not in names
        ]
        if gone:
            with self._db:
                self._db.executemany("DELETE FROM files WHERE path = ?", gone)
                self._db.executemany("DELETE FROM keys WHERE path = ?", gone)

    def put(self, path: Path, indexed: Indexed, tally: Tally, start: int, added: list[int]) -> None:
        """Record ``path`` as read up to ``indexed.offset``: ``added``, the keys of the
        links read from ``start`` on (0: the file was read from its start, earlier keys
        are dropped)."""
        key = str(path)
        with self._db:
            if start == 0:
                self._db.execute("DELETE FROM keys WHERE path = ?", (key,))
            if added:
                self._db.execute(
                    "INSERT OR REPLACE INTO keys VALUES (?, ?, ?)",
                    (key, start, array("Q", added).tobytes()),
                )
            self._db.execute(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    indexed.ino,
                    indexed.size,
                    indexed.mtime_ns,
                    indexed.offset,
                    indexed.fingerprint,
                    _encode(indexed.fold),
                    indexed.count,
                    _encode(tally),
                ),
            )
