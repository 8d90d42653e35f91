"""The set of channels of one daemon (``hub``): new, restart, fork, close, lookup, with the
warm pool of spare CLIs (``pool``), the stored sessions the channels resume, and the git
worktrees chats run in, each watched for what its agent changed (``worktree_watch``).

May use every layer below the front ends: ``channel``, ``sessions``, ``conversation``,
``feed``, ``cli``, ``worktrees``, ``runtime``, ``protocol``. Knows no front end: it opens
each channel's feed through the ``feed.events.Subscriber`` it was given.
"""
