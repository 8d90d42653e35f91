"""The ACP connection's stream: newline-delimited JSON-RPC on stdin/stdout.

A message-level transport for the SDK's connection (``acp._transport.Transport``'s
``send``/``receive``/``close``), so that this agent sees every message it sends:

- ``notify`` writes a notification at once, without a task or a model object per
  message (every streamed delta is one);
- the JSON-RPC id of each ``session/request_permission`` is noted by the daemon's
  request id (``_meta.claudeSidecar.requestId``), so a withdrawn ask can be cancelled
  on the client with ``$/cancel_request``;
- an ``Invalid params`` answer the SDK built from a pydantic error also names the
  field and the fix (``data.field``, ``data.fix``), like the agent's own;
- once the answer to a request that opened a session (``OPENING``) is written,
  ``on_opened`` is called with the session's id: what a session says of itself
  (its slash commands, its title) must come after the client knows the session.

Frames are written through ``stdio.FrameWriter``: one write per event-loop iteration.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import msgspec

from claude_sidecar.frontends.acp.updates import META
from claude_sidecar.runtime.stdout import FrameWriter

log = logging.getLogger(__name__)

PERMISSION = "session/request_permission"
OPENING = frozenset(
    {
        "session/new",
        "session/load",
        "session/resume",
        "session/fork",
        "_claude-sidecar/forkSession",
    }
)
"""The requests whose answer opens a session on the client."""
# str: pydantic's error details may hold exceptions.
_encode = msgspec.json.Encoder(enc_hook=str).encode
_decode = msgspec.json.decode


class StdioTransport:
    """JSON-RPC messages over a byte reader (the client's stdin) and a ``FrameWriter``."""

    def __init__(self, reader: asyncio.StreamReader, frames: FrameWriter) -> None:
        self._reader = reader
        self._frames = frames
        # The daemon's permission request id -> the JSON-RPC id it was sent with.
        self._asks: dict[str, int | str] = {}
        # JSON-RPC id of a client request -> its method (for its error's fix).
        self._methods: dict[int | str, str] = {}
        # JSON-RPC id of a load or resume -> the session it opens (new, fork: the answer's).
        self._opening: dict[int | str, str | None] = {}
        self.on_eof: Callable[[], None] = lambda: None
        self.on_opened: Callable[[str], None] = lambda session_id: None

    # ------------------------------------------------------------ Transport

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message (the SDK's answers and requests)."""
        method = message.get("method")
        if method == PERMISSION:
            meta = ((message.get("params") or {}).get("_meta") or {}).get(META) or {}
            if "requestId" in meta:
                self._asks[meta["requestId"]] = message["id"]
        elif method is None and "id" in message:
            asked = self._methods.pop(message["id"], None)
            error = message.get("error")
            if error is not None and error.get("code") == -32602:
                _explain(error, asked)
            if asked in OPENING:
                loaded = self._opening.pop(message["id"], None)
                result = message.get("result")
                if isinstance(result, dict):
                    self._write(message)
                    opened = result.get("sessionId") or loaded
                    if isinstance(opened, str):
                        self.on_opened(opened)
                    return
        self._write(message)

    async def receive(self) -> dict[str, Any] | None:
        """The next message from the client; None at the end of its stream."""
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as e:
                line = e.partial
                if not line.strip():
                    self.on_eof()
                    return None
            if not line.strip():
                continue
            try:
                message = _decode(line)
            except msgspec.DecodeError:
                log.error("not a JSON-RPC message from the client: %.200r", line)
                continue
            if isinstance(message, dict):
                if "method" in message and "id" in message:
                    self._methods[message["id"]] = message["method"]
                    if message["method"] in OPENING:
                        params = message.get("params")
                        self._opening[message["id"]] = (
                            params.get("sessionId") if isinstance(params, dict) else None
                        )
                return message
            log.error("not a JSON-RPC object from the client: %.200r", line)

    async def close(self) -> None:
        """Flush what is queued (the stream itself is closed by the serving loop)."""
        self._frames.flush()

    # ------------------------------------------------------------ the agent's own

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Write a notification now (ordered with every other message written)."""
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def cancel_ask(self, request_id: str) -> bool:
        """Tell the client the permission request sent for the daemon's ``request_id``
        needs no answer any more (``$/cancel_request``); False if none was sent."""
        rpc_id = self._asks.pop(request_id, None)
        if rpc_id is None:
            return False
        self.notify("$/cancel_request", {"requestId": rpc_id})
        return True

    def forget_ask(self, request_id: str) -> None:
        """The client answered the permission request: nothing to cancel any more."""
        self._asks.pop(request_id, None)

    def _write(self, message: dict[str, Any]) -> None:
        self._frames.queue(_encode(message) + b"\n")


def _explain(error: dict[str, Any], method: str | None) -> None:
    """Name the field and the fix in an ``Invalid params`` error the SDK built from
    pydantic's ``errors`` (the agent's own errors already do)."""
    data = error.get("data")
    if not isinstance(data, dict) or "field" in data:
        return
    errors = data.get("errors")
    if not isinstance(errors, list) or not errors or not isinstance(errors[0], dict):
        return
    first = errors[0]
    field = ".".join(str(part) for part in first.get("loc") or ()) or "params"
    problem = str(first.get("msg") or "is invalid")
    fix = (
        f"see {method or 'the method'} in the ACP schema (docs/acp.md lists what this agent takes)"
    )
    data["field"] = field
    data["fix"] = fix
    error["message"] = f"Invalid params: `{field}`: {problem}; {fix}"
