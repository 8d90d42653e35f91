"""The stored sessions of a directory, newest first, a page at a time (``claude/listSessions``).

Each session file is summarized once (title, first prompt, dates, message count) and the
summary is cached by the file's mtime and size, so listing again reads only what changed.
A page ends with a cursor naming its last session; the next page starts after it.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from claude_sidecar.cli.paths import existing_project_dir, project_dirs, session_files
from claude_sidecar.protocol.api import SessionPage, SessionSummary, is_uuid
from claude_sidecar.sessions.history import render_conversation
from claude_sidecar.sessions.render import Renderer


class BadCursor(ValueError):
    """A ``cursor`` that is not the ``nextCursor`` of a page (garbled, made up, cut)."""


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
    return _iso(datetime.now(UTC).timestamp()) or ""


def _iso(value: Any) -> str | None:
    """A timestamp as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (sortable as text), or None."""
    try:
        if isinstance(value, str):
            dt = datetime.fromisoformat(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            dt = datetime.fromtimestamp(value, UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _summarize(path: Path, session_id: str) -> SessionSummary | None:
    """The listing entry of one session file; None if it has no user prompt."""
    renderer, file = render_conversation(path)
    first = command = None
    titles: dict[str, str] = {}
    cwd = branch = None
    stamps: list[str] = []
    for line in file.lines:
        e = line.entry
        if e.is_sidechain:
            continue
        if (stamp := _iso(e.timestamp)) is not None:
            stamps.append(stamp)
        for key, value in (
            ("custom-title", e.custom_title),
            ("ai-title", e.ai_title),
            ("summary", e.summary),
        ):
            if e.type == key and isinstance(value, str) and value.strip():
                titles[key] = value
        if cwd is None and isinstance(e.cwd, str):
            cwd = e.cwd
        if isinstance(e.git_branch, str) and e.git_branch:
            branch = e.git_branch
        if first is None and e.type == "user":
            probe = Renderer([])
            probe.render(line)
            first = probe.first_prompt
            command = command or probe.first_command
    prompt = first or command
    if prompt is None:
        return None
    mtime = _iso(file.mtime) or ""
    title = next(
        (titles[k].strip() for k in ("custom-title", "ai-title", "summary") if k in titles), None
    ) or prompt_title(prompt)
    custom = titles["custom-title"].strip() if "custom-title" in titles else None
    return SessionSummary(
        session_id=session_id,
        title=title,
        first_prompt=_cut(prompt, _PROMPT_MAX),
        updated_at=max(stamps) if stamps else mtime,
        created_at=min(stamps) if stamps else mtime,
        message_count=renderer.prompts + len(renderer.responses),
        custom_title=custom,
        cwd=cwd,
        git_branch=branch,
    )


def _cached_summary(path: Path, session_id: str) -> SessionSummary | None:
    """``_summarize`` once per version of the file (mtime and size); None if unreadable."""
    try:
        st = path.stat()
    except OSError:
        return None
    with _cache_lock:
        hit = _cache.get(path)
        if hit is not None and hit[:2] == (st.st_mtime_ns, st.st_size):
            _cache.move_to_end(path)
            return hit[2]
    try:
        summary = _summarize(path, session_id)
    except OSError:
        return None
    with _cache_lock:
        _cache[path] = (st.st_mtime_ns, st.st_size, summary)
        while len(_cache) > _CACHE_MAX:
            _cache.popitem(last=False)
    return summary


def summarize_session(
    home: Path, cwd: str, session_id: str, *, config_dir: Path | None = None
) -> SessionSummary | None:
    """The listing entry of one stored session of ``cwd`` (None: not stored, or no
    prompt yet)."""
    if not is_uuid(session_id):
        return None
    directory = existing_project_dir(home, cwd, config_dir)
    if directory is None:
        return None
    return _cached_summary(directory / f"{session_id}.jsonl", session_id)


def recorded_cwd(path: Path) -> str | None:
    """The working directory the CLI recorded in a session file (None: none recorded,
    no user prompt, or unreadable)."""
    summary = _cached_summary(path, path.stem)
    return summary.cwd if summary is not None else None


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
    if _iso(stamp) != stamp or not is_uuid(session_id):
        raise BadCursor(problem)
    return stamp, session_id


def list_sessions(
    home: Path,
    cwd: str | None,
    limit: int = 50,
    cursor: str | None = None,
    *,
    config_dir: Path | None = None,
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
    Results are cached per file by mtime and size.
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    after = _decode_cursor(cursor) if cursor is not None else None
    if cwd is None:
        directories = project_dirs(home, config_dir)
    else:
        directory = existing_project_dir(home, cwd, config_dir)
        directories = [] if directory is None else [directory]
    summaries: list[SessionSummary] = []
    for directory in directories:
        for path in session_files(directory):
            summary = _cached_summary(path, path.stem)
            if summary is not None and (cwd is not None or summary.cwd is not None):
                summaries.append(summary)
    summaries.sort(key=lambda s: (s.updated_at, s.session_id), reverse=True)
    if after is not None:
        summaries = [s for s in summaries if (s.updated_at, s.session_id) < after]
    page = summaries[:limit]
    more = len(summaries) > limit
    return SessionPage(page, _encode_cursor(page[-1]) if more else None)
