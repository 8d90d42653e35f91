"""What a listing can know of a session file from its head and tail alone.

A session file is append-only: its head holds the first prompt, the first ``cwd`` and the
oldest timestamp; its tail the newest timestamp, the last git branch, and the latest
titles. The CLI keeps the titles in the tail: it (2.1.233 and 2.1.330) writes its
``custom-title`` and ``ai-title`` lines again (with ``last-prompt``, ``tag``, ...) after
every 32 KiB it appends, when it resumes a session and when it exits, so that a reader of
the last 64 KiB finds them (``tests/test_listing_partial.py`` checks it on the real CLI), and
``claude/renameSession`` appends its title at the end. What the edges cannot give is the
message count (the whole conversation chain) and a title written mid-file by a CLI that
does not write it again: a listing answered from the edges says so (``partial``) until
the file has been read whole.
"""

from __future__ import annotations

from typing import BinaryIO

import msgspec

from claude_sidecar.sessions.summary_scan import Fold, Scan, take_lines

EDGE = 64 * 1024
"""How much of each end is read (what the CLI keeps its titles within)."""

HEAD_MAX = 1024 * 1024
"""The head is read further, doubling, until it holds a prompt, up to this much (a first
prompt after a large pasted text or image)."""


def _head(f: BinaryIO, size: int) -> tuple[Fold, int]:
    """The fold of the complete lines of the file's head, and where they end."""
    want = EDGE
    while True:
        f.seek(0)
        data = f.read(min(want, size))
        end = data.rfind(b"\n") + 1
        scan = Scan()
        take_lines(data[:end], scan)
        fold = scan.fold
        if fold.first_prompt is not None or len(data) >= size or want >= HEAD_MAX:
            return fold, end
        want *= 2


def _tail(f: BinaryIO, size: int, start: int) -> Fold:
    """The fold of the lines of the file's last :data:`EDGE` bytes after ``start`` (a line
    end), the first one cut by the window left out; a last line still being written is
    taken when it already parses. A window without a timestamped entry (a last line longer
    than it) is widened, doubling, up to :data:`HEAD_MAX`."""
    want = EDGE
    while True:
        begin = max(start, size - want)
        f.seek(begin)
        data = f.read(size - begin)
        if begin > start:
            data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
        scan = Scan()
        take_lines(data, scan)
        if scan.fold.newest is not None or begin == start or want >= HEAD_MAX:
            return scan.fold
        want *= 2


def _oldest(a: str | None, b: str | None) -> str | None:
    return min(a, b) if a is not None and b is not None else a or b


def edge_fold(f: BinaryIO, size: int, known: Scan | None = None) -> Fold:
    """The listing's fields of a file of ``size`` bytes from its head and its tail.

    ``known``: what an earlier whole read gave of the file's first ``known.offset``
    bytes (the file grew since): its fields stand for the head, the tail is read after
    them.
    """
    grown = known is not None and known.offset > 0
    if known is not None and grown:
        head, start = known.fold, known.offset
    else:
        head, start = _head(f, size)
    tail = _tail(f, size, start)
    # Entries are appended in time order: the tail's newest is the file's. Without one
    # there, a grown file's is the one read before; another's is not known (the caller
    # shows the file's modification time).
    newest = tail.newest or (head.newest if grown else None)
    return msgspec.structs.replace(
        head,
        titles={**head.titles, **tail.titles},
        cwd=head.cwd or tail.cwd,
        git_branch=tail.git_branch or head.git_branch,
        oldest=_oldest(head.oldest, tail.oldest),
        newest=newest,
    )
