"""The answer to ``claude/attach``: a chat as one client sees it at one ``seq``.

Given by the shared daemon to a connection that attaches, and by any daemon to a client
whose ``claude/newChannel`` resume joined a chat that was already open.
"""

from __future__ import annotations

from claude_sidecar.channel.channel import Channel
from claude_sidecar.protocol.api import AttachResult


def attach_answer(
    channel: Channel, seq: int, *, replayed: int = 0, missed: bool = False, whole: bool = True
) -> AttachResult:
    """``claude/attach``'s answer for ``channel`` as of ``seq``; ``whole``: with its
    conversation and pending permission requests (a snapshot, not a replay)."""
    return AttachResult(
        channel_id=channel.id,
        pid=channel.pid,
        session_id=channel.session_id,
        info=channel.info(),
        seq=seq,
        replayed=replayed,
        missed=missed,
        entries=channel.conversation.snapshot() if whole else None,
        pending_permissions=list(channel.permissions.values()) if whole else [],
    )
