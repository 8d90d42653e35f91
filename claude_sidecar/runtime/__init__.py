"""The daemon process's own housekeeping, for every layer above: background tasks that
are kept and logged (``background``), stdout kept for JSON-RPC only (``stdout``), the
heap of a long-lived process (``heap``) and what it holds on request (``diagnostics``).

May use ``protocol`` only.
"""
