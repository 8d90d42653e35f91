"""The stored sessions of a directory, newest first, a page at a time (``claude/listSessions``).

Each session file is summarized (title, first prompt, dates, message count) from what
:mod:`.summary_scan` reads of it; the summary is cached in memory by the file's mtime and
size, and with an index (:mod:`.summary_index`, the daemon's) what was read is kept
between runs, so a file is read whole once and then only what the CLI appends to it.
With a :class:`Budget` a listing reads at most that many bytes of the files: the files
it cannot read within it are summarized from their head and tail (:mod:`.summary_edges`),
marked ``partial``, and named in the budget for a reader off the request path
(:mod:`.quick_listing`) to read whole into the index.
A page ends with a cursor naming its last session; the next page starts after it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import msgspec

from claude_sidecar.cli.paths import existing_project_dir, project_dirs, session_files
from claude_sidecar.protocol.api import SessionPage, SessionSummary, is_uuid
from claude_sidecar.protocol.errors import InvalidParams
from claude_sidecar.sessions.summary_edges import EDGE, edge_fold
from claude_sidecar.sessions.summary_index import Indexed, SummaryIndex, fingerprint
from claude_sidecar.sessions.summary_scan import (
    Fold,
    Scan,
    advance,
    extend,
    iso,
    link_keys,
    message_count,
)
from claude_sidecar.sessions.summary_scan import tally as tally_of
from claude_sidecar.worktrees import layout

log = logging.getLogger(__name__)


class BadCursor(ValueError):
    """A ``cursor`` that is not the ``nextCursor`` of a page (garbled, made up, cut)."""


class Budget:
    """How many bytes of session files one listing may still read (``left``), and the
    files it summarized from their head and tail instead (``deferred``: to be read whole
    off the request path)."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.deferred: list[Path] = []

    def take(self, size: int) -> bool:
        """Whether ``size`` more bytes may be read (they are then counted)."""
        if size > self.left:
            return False
        self.left -= size
        return True


_TITLE_MAX = 80
_PROMPT_MAX = 200
_cache: OrderedDict[Path, tuple[int, int, SessionSummary | None]] = OrderedDict()
_CACHE_MAX = 4096
_cache_lock = threading.Lock()  # the daemon may list from worker threads


def _cut(text: str, limit: int) -> str:
    """``text`` with its white space collapsed, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def prompt_title(prompt: str) -> str:
    """The title of a session that has only its first prompt to go by (a listing's
    ``title`` when the session has no custom or generated one)."""
    return _cut(prompt, _TITLE_MAX)


def iso_now() -> str:
    """Now, as the listing's timestamps are written (``updatedAt``)."""
    return iso(datetime.now(UTC).timestamp()) or ""


def _summary(
    session_id: str, fold: Fold, count: int, mtime: float, *, partial: bool = False
) -> SessionSummary | None:
    """The listing entry of a session from what its lines gave; None if it has no user
    prompt. ``partial``: the lines were not all read (``count`` is the last whole read's)."""
    prompt = fold.first_prompt or fold.first_command
    if prompt is None:
        return None
    modified = iso(mtime) or ""
    titles = fold.titles
    title = next(
        (titles[k].strip() for k in ("custom-title", "ai-title", "summary") if k in titles), None
    ) or prompt_title(prompt)
    custom = titles["custom-title"].strip() if "custom-title" in titles else None
    return SessionSummary(
        session_id=session_id,
        title=title,
        first_prompt=_cut(prompt, _PROMPT_MAX),
        updated_at=fold.newest or modified,
        created_at=fold.oldest or modified,
        message_count=count,
        custom_title=custom,
        cwd=fold.cwd,
        git_branch=fold.git_branch,
        partial=partial,
    )


def _over(budget: Budget, read: int, size: int) -> bool:
    """Whether reading ``read`` more bytes of a file of ``size`` is beyond ``budget``
    (they are counted when not). A file of up to twice :data:`.summary_edges.EDGE` is
    read all the same: its edges are the whole of it."""
    return not budget.take(read) and size > 2 * EDGE


def _from_edges(
    f: BinaryIO,
    path: Path,
    session_id: str,
    st: os.stat_result,
    known: Scan | None,
    count: int,
    budget: Budget,
) -> SessionSummary | None:
    """The ``partial`` entry of a file the ``budget`` does not cover: from its head and
    tail (after what ``known`` gave of it, with ``count``, its count then); the file is
    named in ``budget.deferred``."""
    budget.deferred.append(path)
    fold = edge_fold(f, st.st_size, known)
    return _summary(session_id, fold, count, st.st_mtime, partial=True)


def _summarize(
    path: Path, session_id: str, index: SummaryIndex | None, budget: Budget | None = None
) -> SessionSummary | None:
    """The listing entry of one session file; None if it has no user prompt.

    With an ``index``, only what the file gained since the index last saw it is read
    (all of it when the file was rewritten or never indexed), and the index is updated.
    With a ``budget`` too, a file whose read does not fit in it is not read but
    summarized from its edges (:func:`_from_edges`).
    """
    if index is None:
        budget = None  # what is read off the request path goes into the index
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        known = index.get(path) if index is not None else None
        scan, tally = Scan(), None
        if (
            index is not None
            and known is not None
            and known.ino == st.st_ino
            and known.offset <= st.st_size
            and fingerprint(f, known.offset) == known.fingerprint
        ):
            scan = Scan(known.offset, known.fold)
        kept = Scan(scan.offset, scan.fold) if scan.offset else None
        before = known.count if kept is not None and known is not None else 0
        if budget is not None and _over(budget, st.st_size - scan.offset, st.st_size):
            return _from_edges(f, path, session_id, st, kept, before, budget)
        start = scan.offset
        writing = extend(f, scan)
        if index is not None and known is not None and start == known.offset == scan.offset:
            count = known.count  # nothing new
        else:
            if index is not None and start:
                tally = index.tally(path)
                if scan.links and not advance(tally, scan.links, index.keys(path)):
                    # Not a plain extension of the chain (a branch, a compaction): read it all.
                    if budget is not None and _over(budget, start, st.st_size):
                        return _from_edges(f, path, session_id, st, kept, before, budget)
                    scan, tally, start = Scan(), None, 0
                    writing = extend(f, scan)
            if tally is None:
                tally = tally_of(scan.links)
            count = tally.count
        if index is not None and tally is not None:
            digest = fingerprint(f, scan.offset)
            indexed = Indexed(
                st.st_ino, st.st_size, st.st_mtime_ns, scan.offset, digest, scan.fold, count
            )
            index.put(path, indexed, tally, start, link_keys(scan.links))
        if writing is None:
            return _summary(session_id, scan.fold, count, st.st_mtime)
        if len(writing.links) > len(scan.links):
            # The line the CLI is writing adds to the chain: counted from the whole file.
            if start and budget is not None and _over(budget, start, st.st_size):
                budget.deferred.append(path)
                return _summary(session_id, writing.fold, count, st.st_mtime, partial=True)
            whole = writing
            if start:
                whole = Scan()
                whole = extend(f, whole) or whole
            count = message_count(whole.links)
        return _summary(session_id, writing.fold, count, st.st_mtime)


def _cached_summary(
    path: Path, session_id: str, index: SummaryIndex | None, budget: Budget | None = None
) -> SessionSummary | None:
    """``_summarize`` once per version of the file (mtime and size); None if unreadable.
    A ``partial`` summary is not kept: the next listing looks again."""
    try:
        st = path.stat()
    except OSError:
        return None
    with _cache_lock:
        hit = _cache.get(path)
        if hit is not None and hit[:2] == (st.st_mtime_ns, st.st_size):
            _cache.move_to_end(path)
            return hit[2]
    usable = index if index is not None and index.usable else None
    try:
        try:
            summary = _summarize(path, session_id, usable, budget)
        except sqlite3.Error as e:
            assert usable is not None  # only the index raises these
            log.warning("listing index %s not used: %s", usable.path, e)
            usable.usable = False
            summary = _summarize(path, session_id, None)
    except OSError:
        return None
    if summary is not None and summary.partial:
        return summary
    with _cache_lock:
        _cache[path] = (st.st_mtime_ns, st.st_size, summary)
        while len(_cache) > _CACHE_MAX:
            _cache.popitem(last=False)
    return summary


@contextmanager
def _opened(index: Path | None) -> Iterator[SummaryIndex | None]:
    opened = SummaryIndex(index) if index is not None else None
    try:
        yield opened
    finally:
        if opened is not None:
            opened.close()


def summarize_session(
    home: Path,
    cwd: str,
    session_id: str,
    *,
    config_dir: Path | None = None,
    index: Path | None = None,
) -> SessionSummary | None:
    """The listing entry of one stored session of ``cwd`` (None: not stored, or no
    prompt yet); ``index`` as for :func:`list_sessions`."""
    if not is_uuid(session_id):
        return None
    directory = existing_project_dir(home, cwd, config_dir)
    if directory is None:
        return None
    with _opened(index) as opened:
        return _cached_summary(directory / f"{session_id}.jsonl", session_id, opened)


def recorded_cwd(path: Path, *, index: Path | None = None) -> str | None:
    """The working directory the CLI recorded in a session file (None: none recorded,
    no user prompt, or unreadable)."""
    with _opened(index) as opened:
        summary = _cached_summary(path, path.stem, opened)
    return summary.cwd if summary is not None else None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _unread(directory: Path, index: SummaryIndex | None) -> Callable[[Path], int]:
    """How much of a session file of ``directory`` a listing would read: its size, or what
    it gained since ``index`` read it (a guess: a rewritten file may be read whole)."""
    read: dict[str, int] = {}
    if index is not None and index.usable:
        try:
            read = index.sizes(directory)
        except sqlite3.Error as e:
            log.warning("listing index %s not used: %s", index.path, e)
            index.usable = False

    def unread(path: Path) -> int:
        size = _size(path)
        before = read.get(str(path), 0)
        return size - before if size >= before else size

    return unread


def index_whole(paths: list[Path], index: Path) -> None:
    """Read each of ``paths`` (session files) whole into ``index``, or what it gained
    since it was indexed: what a listing's ``budget`` deferred. A file that is gone or
    unreadable is skipped."""
    with _opened(index) as opened:
        assert opened is not None
        for path in paths:
            try:
                _summarize(path, path.stem, opened)
            except OSError as e:
                log.info("listing index: %s not read (%s)", path, e)


def unindexed(directory: Path, index: Path) -> list[Path]:
    """The session files of ``directory`` that ``index`` does not hold as they are now
    (never read, or changed since), smallest first."""
    stale: list[Path] = []
    with _opened(index) as opened:
        assert opened is not None
        for path in session_files(directory):
            try:
                st = path.stat()
                known = opened.get(path)
            except OSError:
                continue
            if known is None or (known.ino, known.size) != (st.st_ino, st.st_size):
                stale.append(path)
    return sorted(stale, key=_size)


def _encode_cursor(summary: SessionSummary) -> str:
    """The cursor of the page after ``summary``: its sort key, opaque to clients."""
    raw = f"{summary.updated_at}|{summary.session_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[str, str]:
    """The sort key a cursor names; :class:`BadCursor` if it is not one we made."""
    problem = (
        "invalid cursor: pass the nextCursor of a previous claude/listSessions "
        "page unchanged, or leave it out for the first page"
    )
    if not isinstance(cursor, str) or not 0 < len(cursor) <= 200:
        raise BadCursor(problem)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise BadCursor(problem) from None
    stamp, _, session_id = raw.partition("|")
    if iso(stamp) != stamp or not is_uuid(session_id):
        raise BadCursor(problem)
    return stamp, session_id


def list_sessions(
    home: Path,
    cwd: str | None,
    limit: int = 50,
    cursor: str | None = None,
    *,
    config_dir: Path | None = None,
    index: Path | None = None,
    budget: Budget | None = None,
    worktrees: Sequence[tuple[str, str]] = (),
) -> SessionPage:
    """The sessions the CLI stored for ``cwd`` (None: for every directory, those that
    recorded theirs), newest (``updatedAt``) first.

    ``cursor`` is the ``nextCursor`` of the previous page (None for the first). Cursors
    name a position (the last session shown), so sessions created meanwhile do not shift
    later pages. Raises :class:`BadCursor` (a ``ValueError``) for a bad cursor, and
    ``ValueError`` for a ``limit`` below 1 or a relative ``cwd``. A folder with no
    sessions gives an empty page.

    Listed: files named ``<uuid>.jsonl`` (so not the ``agent-*.jsonl`` sidechains older
    CLIs kept there) holding at least one user prompt outside sidechain entries.
    Results are cached per file by mtime and size. ``index``: the file of the
    :mod:`.summary_index` to keep what was read in (None: files that changed since
    this process last listed them are read whole). ``budget``: at most that much is read
    (the files with the least to read first; a file of up to twice
    :data:`.summary_edges.EDGE` always); the other files are summarized from their head
    and tail, ``partial``, and named in ``budget.deferred`` (with an ``index`` only).
    ``worktrees``: (name, folder) of the worktrees made from ``cwd``'s checkout, each
    with ``cwd``'s counterpart in it: their sessions are listed too, named by
    ``worktree`` (a session stored in both places is listed once, its newer copy).
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    after = _decode_cursor(cursor) if cursor is not None else None
    # Each folder whose sessions are listed, with the worktree it is in (None: cwd's own).
    directories: list[tuple[Path, str | None]] = []
    if cwd is None:
        directories = [(d, None) for d in project_dirs(home, config_dir)]
    else:
        for folder, worktree in [(cwd, None), *((f, n) for n, f in worktrees)]:
            directory = existing_project_dir(home, folder, config_dir)
            if directory is not None:
                directories.append((directory, worktree))
    found: dict[str, SessionSummary] = {}
    with _opened(index) as opened:
        listed = [(path, d, w) for d, w in directories for path in session_files(d)]
        if budget is not None:
            # The files with the least to read first: as many as can be are exact.
            unread = {d: _unread(d, opened) for d, _ in directories}
            listed.sort(key=lambda item: unread[item[1]](item[0]))
        for path, _, worktree in listed:
            summary = _cached_summary(path, path.stem, opened, budget)
            if summary is None or (cwd is None and summary.cwd is None):
                continue
            if worktree is not None:
                # (The cached summary is the file's, kept as it is.)
                summary = msgspec.structs.replace(summary, worktree=worktree)
            kept = found.get(summary.session_id)
            if kept is None or kept.updated_at < summary.updated_at:
                found[summary.session_id] = summary
        if opened is not None and opened.usable:
            try:
                for directory, _ in directories:
                    opened.prune(directory, {p for p, d, _ in listed if d == directory})
            except sqlite3.Error as e:
                log.warning("listing index %s not used: %s", opened.path, e)
                opened.usable = False
    summaries = sorted(found.values(), key=lambda s: (s.updated_at, s.session_id), reverse=True)
    if after is not None:
        summaries = [s for s in summaries if (s.updated_at, s.session_id) < after]
    page = summaries[:limit]
    more = len(summaries) > limit
    return SessionPage(page, _encode_cursor(page[-1]) if more else None)


async def listed_page(
    home: Path,
    cwd: str | None,
    limit: int,
    cursor: str | None,
    *,
    config_dir: Path | None,
    index: Path | None,
    budget: Budget | None = None,
) -> SessionPage:
    """``list_sessions`` off the event loop, with the sessions of the worktrees made from
    ``cwd``'s checkout, a bad ``cursor`` refused as the ``claude/listSessions`` param it is."""
    worktrees = await layout.worktree_folders(cwd) if cwd is not None else []
    try:
        return await asyncio.to_thread(
            list_sessions,
            home,
            cwd,
            limit,
            cursor,
            config_dir=config_dir,
            index=index,
            budget=budget,
            worktrees=worktrees,
        )
    except BadCursor as e:
        raise InvalidParams(
            "cursor",
            f"is not valid ({e})",
            "pass the nextCursor of the previous page, or leave it out",
        ) from e
