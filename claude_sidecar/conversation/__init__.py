"""The conversation of a channel, computed once in the daemon: entries every client renders.

``entries`` keeps them in order (with the text still streaming into them); ``live``
turns a channel's events into them, ``stored`` a stored session's history (with the same
ids); ``blocks`` reads content blocks for both.
"""

from __future__ import annotations

from claude_sidecar.conversation.entries import Entries, through_exchange
from claude_sidecar.conversation.live import LiveConversation

__all__ = ["Entries", "LiveConversation", "through_exchange"]
