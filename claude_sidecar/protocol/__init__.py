"""The ``claude/*`` surface and the daemon's errors: the vocabulary every layer shares.

``api`` holds the msgspec types of every method, parameter, result and notification (the
single source of docs/protocol.md and of the clients' types), ``schema`` the JSON Schema
made from them, ``errors`` every error with its JSON-RPC code. The bottom layer: it
imports nothing else of the daemon.
"""
