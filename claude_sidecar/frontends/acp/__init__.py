"""``claude-sidecar acp``: the daemon as an Agent Client Protocol agent on stdio.

A second front end over the same hub and channels as the ``claude/*`` server: ``agent``
(the ACP methods), ``registry`` (the sessions by id: opening, closing, deleting,
listing), ``session`` (one session: a channel's feed, its prompts and permission asks),
``config`` (modes, model and thought level, pure), ``asks`` (an ask's options and the
chosen one's answer, pure), ``updates`` (the conversation's entries as
``session/update``s, pure), ``prompt`` (prompt blocks and MCP servers in the CLI's
shapes, pure), ``errors`` (ACP's error shapes), ``auth`` (whether the CLI can log in),
``rpc`` (the newline-delimited JSON-RPC stream), ``serve`` (stdin/stdout and the life of
the process). docs/acp.md maps each method and update to the daemon.
"""

from __future__ import annotations

from claude_sidecar.frontends.acp.serve import serve_acp

__all__ = ["serve_acp"]
