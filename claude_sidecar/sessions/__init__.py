"""The Claude Code CLI's own session files: listing, replaying history, renaming, deleting.

The CLI stores each conversation as JSON lines at
``<config>/projects/<slug of the cwd>/<session id>.jsonl`` where ``<config>`` is
``$HOME/.claude`` (or ``$CLAUDE_CONFIG_DIR``). Nothing here talks to a CLI process:
these are functions over those files, verified against CLI 2.1.330. The types they
return (``SessionPage``, ``History``) are protocol types and live in ``protocol.api``;
where the CLI keeps these files is ``cli.paths`` (the CLI side knows it: discovery and
older CLIs' transcript waits need it too).

One module per job:

* :mod:`.entries`: a session file decoded into entries (and what such a file holds);
* :mod:`.chain`: which entries make the current conversation, in which order;
* :mod:`.render`: entries as the messages an editor renders;
* :mod:`.backward`: a session file's lines read from its end, their links first;
* :mod:`.tail`: the current conversation from the file's end, an exchange at a time;
* :mod:`.subagents`: a session's sub-agent transcripts, by the tool use that started each;
* :mod:`.history`: a session's whole conversation, sub-agents included (``getHistory``);
* :mod:`.reader`: a resumed chat's and ``getHistory``'s pages, kept encoded;
* :mod:`.listing`: a directory's sessions, summarized, a page at a time (``listSessions``);
* :mod:`.quick_listing`: ``listSessions`` with ``allowPartial``: long files from their
  head and tail (:mod:`.summary_edges`), read whole later by a process of its own;
* :mod:`.edits`: renaming and deleting, done by the official SDK.

The rest of the daemon uses the names below.
"""

from __future__ import annotations

from claude_sidecar.sessions.edits import ConfigDirMismatch, delete_session, rename_session
from claude_sidecar.sessions.history import exchange_end, read_history
from claude_sidecar.sessions.listing import BadCursor, list_sessions

__all__ = [
    "BadCursor",
    "ConfigDirMismatch",
    "delete_session",
    "exchange_end",
    "list_sessions",
    "read_history",
    "rename_session",
]
