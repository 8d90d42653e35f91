"""Chats in git worktrees of their own: making and finding them (``layout``), what their
agent changed (``changes``), merging and removing them (``merge``), all through ``git``
subprocesses (``git``).

Below the hub, beside the CLI side: may use ``protocol`` and ``runtime`` only.
"""
