"""The Claude Code CLI side: everything that knows the CLI, and nothing of front ends.

Which CLI runs (``discovery``, ``compat``, ``doctor``) and where it keeps its files
(``paths``); the command line and environment it starts with (``launch``); its process and
the bytes to and from it (``transport``); its stream-json lines as types (``wire``); the
control protocol in both directions (``control``); one channel's connection to one CLI
process (``link``, with ``transcript_wait`` for older CLIs).

May use ``protocol`` and ``runtime``.
"""
