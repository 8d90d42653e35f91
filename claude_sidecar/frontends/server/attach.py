"""The answer to ``claude/attach``: a chat as one client sees it at one ``seq``.

Given by the shared daemon to a connection that attaches, and by any daemon to a client
whose ``claude/newChannel`` resume joined a chat that was already open.
"""

from __future__ import annotations

from claude_sidecar.channel.channel import Channel
from claude_sidecar.conversation.paging import channel_scope
from claude_sidecar.protocol.api import AttachResult


def attach_answer(
    channel: Channel,
    seq: int,
    *,
    replayed: int = 0,
    missed: bool = False,
    whole: bool = True,
    limit: int | None = None,
) -> AttachResult:
    """``claude/attach``'s answer for ``channel`` as of ``seq``; ``whole``: with its
    conversation (its last ``limit`` entries, if given) and pending permission requests
    (a snapshot, not a replay)."""
    entries, page = None, None
    if whole:
        entries, page = channel.conversation.page(channel_scope(channel.id), None, limit)
    return AttachResult(
        channel_id=channel.id,
        pid=channel.pid,
        session_id=channel.session_id,
        info=channel.info(),
        seq=seq,
        replayed=replayed,
        missed=missed,
        entries=entries,
        pending_permissions=list(channel.permissions.values()) if whole else [],
        has_more=page is not None and page.has_more,
        next_cursor=page.next_cursor if page is not None else None,
    )
