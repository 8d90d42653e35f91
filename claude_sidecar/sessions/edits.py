"""Renaming and deleting stored sessions, done by the official SDK.

Renaming and deleting are done by ``claude_agent_sdk``'s ``rename_session`` and
``delete_session``, so that a session is edited exactly the way every other SDK host
edits it. This module finds the file first (as reading does) and makes sure the SDK
edits the config home the daemon's CLIs write.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

from claude_sidecar.cli.paths import config_home, env_config_home, session_file


def _sdk() -> ModuleType:
    """The ``claude_agent_sdk`` package, imported on first use: it imports ``mcp``
    (about a second), which the daemon's start-up should not pay for an edit that may
    never come."""
    import claude_agent_sdk

    return claude_agent_sdk


class ConfigDirMismatch(RuntimeError):
    """The SDK would edit another config directory than the one the daemon's CLIs use."""


def _check_sdk_config_dir(home: Path, config_dir: Path | None) -> None:
    """Make sure the SDK's session functions edit the folder the daemon's CLIs write.

    ``claude_agent_sdk.rename_session``/``delete_session`` take no config directory: they
    read ``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (``$HOME``), from this process's
    ``os.environ`` (SDK 0.2.187, ``_internal/sessions.py``). The daemon's CLIs get the
    environment the hub was given, which is ``os.environ`` too when the daemon runs as
    ``claude-sidecar --stdio``. Changing ``os.environ`` for the call would leak into every
    other thread of the daemon, so a hub given another environment is refused instead.
    """
    sdk = env_config_home(os.environ)
    ours = config_home(home, config_dir)
    if os.path.realpath(sdk) != os.path.realpath(ours):
        raise ConfigDirMismatch(
            f"the CLIs of this daemon keep sessions in {ours}, but the SDK's session "
            f"functions would edit {sdk} (they read only the daemon's own environment); "
            "run the daemon with the HOME / CLAUDE_CONFIG_DIR its CLIs use"
        )


def _edit(
    action: str, home: Path, cwd: str, session_id: str, config_dir: Path | None, *args: Any
) -> None:
    """Run the SDK's ``action`` (``rename_session``, ``delete_session``) on a session file.

    The file is looked up here first, as :func:`.history.read_history` does, so that an
    edit finds exactly the sessions that :func:`.listing.list_sessions` shows for ``cwd``
    (the SDK alone would also search the other git worktrees of ``cwd``) and an unknown
    session fails alike everywhere. The SDK is then given ``cwd`` as its ``directory``.
    """
    path = session_file(home, cwd, session_id, config_dir)
    _check_sdk_config_dir(home, config_dir)
    edit = getattr(_sdk(), action)
    try:
        edit(session_id, *args, directory=cwd)
    except FileNotFoundError:
        # SDK 0.2.187 derives the folder from the NFC form of ``cwd`` and replaces code
        # points, the CLI uses the path as given and replaces UTF-16 units (see
        # paths._slug): for a path with an emoji or in NFD (macOS HFS+) the SDK looks in
        # another folder. Without a directory it searches every folder, which finds the file
        # that was found above, provided that no other folder holds the same id.
        if list(path.parent.parent.glob(f"*/{session_id}.jsonl")) != [path]:
            raise
        edit(session_id, *args, directory=None)


def rename_session(
    home: Path, cwd: str, session_id: str, title: str, *, config_dir: Path | None = None
) -> None:
    """Give the stored session ``session_id`` of ``cwd`` a custom title.

    Done by the SDK's ``rename_session``, which appends
    ``{"type":"custom-title","customTitle":<title stripped>,"sessionId":<id>}`` to the
    session file (the entry the CLI's ``/rename`` writes). The last custom title in the
    file wins, here (:func:`.listing.list_sessions`) as in the SDK's and the CLI's
    listings, so a rename can be repeated. Appending is safe while a CLI is writing the
    same file: it is one ``O_APPEND`` write, and (the SDK notes) a CLI that re-appends its
    metadata reads the file's tail first. Verified with CLI 2.1.330: the title stays through the
    channel's later turns and its close.

    Raises ``ValueError`` (``session_id`` not a UUID, ``title`` blank, ``cwd`` not
    absolute), ``FileNotFoundError`` (no such session in ``cwd``'s folder),
    ``ConfigDirMismatch`` (see :func:`_check_sdk_config_dir`), ``OSError`` (the write
    failed).
    """
    if not title.strip():
        raise ValueError("title must not be empty or only whitespace")
    _edit("rename_session", home, cwd, session_id, config_dir, title)


def delete_session(
    home: Path, cwd: str, session_id: str, *, config_dir: Path | None = None
) -> None:
    """Delete the stored session ``session_id`` of ``cwd`` for good.

    Done by the SDK's ``delete_session``: it removes ``<id>.jsonl`` and the ``<id>/``
    folder next to it (sub-agent transcripts). It leaves the CLI's file checkpoints
    (``<config>/file-history/<id>/``). Do not delete the session of a running CLI: the
    CLI keeps appending and recreates the file with only its newest entries (verified
    with CLI 2.1.330), a fragment that lists as a session of its own.

    Raises like :func:`rename_session`.
    """
    _edit("delete_session", home, cwd, session_id, config_dir)
