"""The ``claude/*`` front end: one JSON-RPC client, many channels.

``server`` has one handler per method and owns the daemon's life; ``jsonrpc`` is
JSON-RPC on pygls's public API; ``outbox`` numbers, coalesces and encodes each channel's
events into notifications; ``stdio`` serves it on stdin/stdout; ``attach`` is the answer
to ``claude/attach``, and ``sharing`` what a connection of the shared daemon lends the
server (implemented by ``frontends.daemon``, which this package never imports).
"""
