"""JSON-RPC on pygls's public API: pygls reads the client's frames and correlates the
daemon's own requests to the client; the daemon answers the client's requests itself.

pygls dispatches requests through private methods (``_handle_request``,
``_send_handler_result``, ``_send_response``); overriding those would tie the daemon to
pygls's internals. ``SidecarProtocol`` overrides only the two seams pygls documents for
protocol subclasses:

* ``structure_message``, which pygls passes to ``json.loads`` as its ``object_hook``:
  every object stays a plain dict (pygls would take an object inside ``params`` that
  has a ``"jsonrpc"`` key for a message of its own, and never answer the request);
* ``handle_message``: the client's requests and notifications go to ``Requests``;
  responses to the daemon's requests (``claude/callEditorTool``) go back to pygls,
  which settles the future ``send_request_async`` returned.

``Requests`` runs each request in a task of its own and writes its answer, encoded with
msgspec, through the same frame writer as the notifications (so the wire order is the
order of the calls). A ``SidecarError`` is answered with its code and ``data`` and
logged as one line; any other exception is an internal error, logged with its traceback.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import cattrs
import msgspec
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
    JsonRpcRequestCancelled,
)
from pygls.protocol import JsonRPCProtocol
from pygls.server import JsonRPCServer

from claude_sidecar.protocol.encoded import EncodedJson
from claude_sidecar.protocol.errors import SidecarError

log = logging.getLogger(__name__)

Handler = Callable[[Any], Awaitable[Any]] | Callable[[Any], Any]
"""Serves one method: takes the request's raw ``params``, returns a msgspec-encodable
result. A coroutine function runs in a task of its own; a plain function runs as the
request arrives, so it takes effect before the next message is read (``initialize``)."""

Gate = Callable[[str], SidecarError | JsonRpcException | None]
"""Looks at a request's method on arrival; an error refuses the request with it."""

CANCEL_REQUEST = "$/cancelRequest"

_encoder = msgspec.json.Encoder()


class _Answer(msgspec.Struct, omit_defaults=False):
    jsonrpc: str
    id: str | int
    result: Any


class _ErrorBody(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: Any = None


class _Refusal(msgspec.Struct):
    jsonrpc: str
    id: str | int | None
    error: _ErrorBody


def _frame(message: msgspec.Struct) -> bytes:
    body = _encoder.encode(message)
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _answer(msg_id: str | int, result: Any) -> bytes:
    """The framed answer to request ``msg_id``. A result already encoded in pieces (a
    whole session's history) is framed with one copy of them, not joined first."""
    if not isinstance(result, EncodedJson):
        return _frame(_Answer("2.0", msg_id, result))
    head = b'{"jsonrpc":"2.0","id":%s,"result":' % _encoder.encode(msg_id)
    size = len(head) + result.size + 1
    return b"".join([b"Content-Length: %d\r\n\r\n%s" % (size, head), *result.pieces, b"}"])


class Requests:
    """The client's requests in flight: one task each, answered once, cancellable.

    ``handlers`` serve the methods by name; ``notifications`` take the client's
    notifications (others are ignored); ``gate`` may refuse a request on arrival;
    ``send`` writes one framed message to the client.
    """

    def __init__(
        self,
        handlers: Mapping[str, Handler],
        notifications: Mapping[str, Handler],
        gate: Gate,
        send: Callable[[bytes], None],
    ) -> None:
        self._handlers = handlers
        self._notifications = notifications
        self._gate = gate
        self._send = send
        self._running: dict[str | int, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[None]] = set()

    def request(self, msg_id: Any, method: Any, params: Any) -> None:
        """Start serving one request, or refuse it at once."""
        if not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
            self.refuse(
                None, JsonRpcInvalidRequest("a request's `id` must be a string or a number")
            )
            return
        if not isinstance(method, str):
            self.refuse(msg_id, JsonRpcInvalidRequest("a request's `method` must be a string"))
            return
        handler = self._handlers.get(method)
        if handler is None:
            self.refuse(msg_id, JsonRpcMethodNotFound.of(method))
            return
        refusal = self._gate(method)
        if refusal is not None:
            self.refuse(msg_id, refusal)
            return
        if msg_id in self._running:
            refusal = JsonRpcInvalidRequest(f"request id {msg_id!r} is still in use")
            self.refuse(msg_id, refusal)
            return
        if not inspect.iscoroutinefunction(handler):
            self._answer_now(msg_id, method, handler, params)
            return
        task = asyncio.ensure_future(self._serve(msg_id, method, handler, params))
        self._running[msg_id] = task
        task.add_done_callback(lambda _: self._running.pop(msg_id, None))

    def notification(self, method: Any, params: Any) -> None:
        """Take one notification; ``$/cancelRequest`` cancels a request in flight."""
        if method == CANCEL_REQUEST:
            msg_id = params.get("id") if isinstance(params, dict) else None
            task = self._running.get(msg_id) if isinstance(msg_id, (str, int)) else None
            if task is not None:
                task.cancel()
            return
        handler = self._notifications.get(method) if isinstance(method, str) else None
        if handler is None:
            log.debug("ignoring notification %r", method)
            return
        task = asyncio.ensure_future(self._notify(method, handler, params))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def cancel_others(self) -> None:
        """Cancel every request in flight but the one calling (its own answer still goes)."""
        me = asyncio.current_task()
        for task in list(self._running.values()):
            if task is not me:
                task.cancel()

    def refuse(self, msg_id: str | int | None, error: SidecarError | JsonRpcException) -> None:
        """Answer a request with an error."""
        name = error.NAME if isinstance(error, SidecarError) else type(error).__name__
        log.info("request %s answered with %s (%d): %s", msg_id, name, error.code, error.message)
        body = _ErrorBody(error.code, error.message, error.data)
        self._send(_frame(_Refusal("2.0", msg_id, body)))

    def _answer_now(
        self, msg_id: str | int, method: str, handler: Callable[[Any], Any], params: Any
    ) -> None:
        try:
            result = handler(params)
        except Exception:
            self.refuse(msg_id, _failure(msg_id, method))
            return
        self._send(_answer(msg_id, result))

    async def _serve(
        self, msg_id: str | int, method: str, handler: Callable[[Any], Awaitable[Any]], params: Any
    ) -> None:
        try:
            result = await handler(params)
        except (Exception, asyncio.CancelledError):
            self.refuse(msg_id, _failure(msg_id, method))
            return
        self._send(_answer(msg_id, result))

    @staticmethod
    async def _notify(method: str, handler: Handler, params: Any) -> None:
        try:
            await handler(params)
        except Exception:
            log.exception("notification %s failed", method)


def _failure(msg_id: str | int, method: str) -> SidecarError | JsonRpcException:
    """The answer to a request whose handler raised (called in the ``except`` block)."""
    kind, error, tb = sys.exc_info()
    if isinstance(error, SidecarError | JsonRpcException):
        # An answer the client asked for (a bad field, an unknown channel): no traceback.
        return error
    if isinstance(error, asyncio.CancelledError):
        return JsonRpcRequestCancelled(f"request {msg_id!r} was cancelled")
    # A daemon bug, as the client sees it: the exception and its traceback.
    log.exception("request %s (%s) failed", msg_id, method)
    message = "".join(traceback.format_exception_only(kind, error)).strip()
    return JsonRpcInternalError(message=message, data={"traceback": traceback.format_tb(tb)})


class SidecarProtocol(JsonRPCProtocol):
    """pygls's JSON-RPC protocol with the client's requests served by ``Requests``."""

    def __init__(self, server: JsonRPCServer, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        # Set by the front end before serving (``serve_requests``).
        self.requests: Requests | None = None

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Leave every object a plain dict (see the module docstring)."""
        return data

    def handle_message(self, message: Any) -> None:
        """Route one message from the client (see the module docstring)."""
        requests = self.requests
        if not isinstance(message, dict) or requests is None:
            log.warning("dropped a message that is not a JSON-RPC object: %.200r", message)
            return
        if "method" in message:
            params = message.get("params")
            if "id" in message:
                requests.request(message["id"], message["method"], params)
            else:
                requests.notification(message["method"], params)
        elif "id" in message and ("result" in message or "error" in message):
            # An answer to one of the daemon's requests: pygls settles its future.
            super().handle_message(super().structure_message(message))
        else:
            log.warning("dropped a message that is neither request nor answer: %.200r", message)
