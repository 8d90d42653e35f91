"""The daemon's front ends, each a subscriber of the same hub's channels:

- ``server``: the ``claude/*`` JSON-RPC server (``claude-sidecar --stdio``);
- ``daemon``: the shared per-user daemon (``claude-sidecar serve`` and ``connect``), the
  same ``server`` once per connection over one hub;
- ``acp``: the Agent Client Protocol agent (``claude-sidecar acp``).

May use ``hub`` and every layer below it. The ACP agent and the ``claude/*`` front ends
know nothing of each other; the shared daemon is built on ``server``, never the reverse.
"""
