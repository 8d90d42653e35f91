"""The Claude Code CLI's own session files: listing, replaying history, renaming, deleting.

The CLI stores each conversation as JSON lines at
``<config>/projects/<slug of the cwd>/<session id>.jsonl`` where ``<config>`` is
``$HOME/.claude`` (or ``$CLAUDE_CONFIG_DIR``). Nothing here talks to a CLI process:
these are functions over those files, verified against CLI 2.1.330. The types they
return (``SessionPage``, ``History``) are protocol types and live in api.py.

One module per job:

* :mod:`.paths`: where the CLI keeps its files (config home, project folders, transcripts);
* :mod:`.entries`: a session file decoded into entries (and what such a file holds);
* :mod:`.chain`: which entries make the current conversation, in which order;
* :mod:`.render`: entries as the messages an editor renders;
* :mod:`.history`: a session's whole conversation, sub-agents included (``getHistory``);
* :mod:`.listing`: a directory's sessions, summarized, a page at a time (``listSessions``);
* :mod:`.edits`: renaming and deleting, done by the official SDK.

The rest of the daemon uses the names below.
"""

from __future__ import annotations

from .edits import ConfigDirMismatch, delete_session, rename_session
from .history import exchange_end, read_history
from .listing import BadCursor, list_sessions
from .paths import (
    claude_home,
    config_home,
    default_config_home,
    project_dir,
    session_exists,
    transcript_path,
)

__all__ = [
    "BadCursor",
    "ConfigDirMismatch",
    "claude_home",
    "config_home",
    "default_config_home",
    "delete_session",
    "exchange_end",
    "list_sessions",
    "project_dir",
    "read_history",
    "rename_session",
    "session_exists",
    "transcript_path",
]
