"""The control protocol with one CLI: requests in both directions over its stdin/stdout.

The daemon's own requests (``initialize``, ``interrupt``, ``set_model``, ...) get an id
and a future that the CLI's ``control_response`` resolves. The CLI's requests
(``can_use_tool``, ``hook_callback``, ``mcp_message``) go to the handler registered for
their subtype, decoded once on the way. One that no handler serves or that does not
decode is refused with an error answer at once, so the CLI never waits for an answer
that will not come, and the client sees the line as a ``claude/message``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from claude_sidecar.cli import wire
from claude_sidecar.protocol.errors import ControlRequestFailed, ControlRequestTimeout, SidecarError

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Route(Generic[T]):
    """How one subtype of the CLI's requests is served: its decoder and its handler,
    which answers (now or later) with the request id it is given."""

    decoder: msgspec.json.Decoder[T]
    handle: Callable[[str, T], None]


class ControlProtocol:
    """Correlates one CLI's control traffic; ``send`` queues a line for its stdin."""

    def __init__(
        self, name: Callable[[], str], send: Callable[[bytes], None], show: Callable[[bytes], None]
    ) -> None:
        # The channel's id, for log lines (a warm-pool spare's changes when a chat takes it).
        self._name = name
        self._send = send
        # Shows the client a CLI line the daemon could not serve.
        self._show = show
        self._routes: dict[str, Route[Any]] = {}
        self._pending: dict[str, tuple[str, asyncio.Future[msgspec.Raw]]] = {}
        self._ids = itertools.count(1)

    def serve(self, subtype: str, route: Route[Any]) -> None:
        """Register the handler of the CLI's ``subtype`` requests."""
        self._routes[subtype] = route

    async def request(self, subtype: str, timeout: float, **fields: Any) -> msgspec.Raw:
        """Send a control request and wait for its answer (an empty Raw if it had none).

        Raises ``ControlRequestTimeout`` after ``timeout`` seconds, ``ControlRequestFailed``
        when the CLI answers with an error, or what ``fail_all`` was given.
        """
        request_id = f"req_{next(self._ids)}_{secrets.token_hex(4)}"
        future: asyncio.Future[msgspec.Raw] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (subtype, future)
        self._send(wire.control_request(request_id, {"subtype": subtype, **fields}))
        try:
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError as e:
            raise ControlRequestTimeout(subtype, timeout) from e
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, response: wire.ControlResponseBody) -> None:
        """Settle the request a ``control_response`` answers."""
        entry = self._pending.get(response.request_id)
        if entry is None:
            # With --replay-user-messages the CLI echoes our own answers back; ignore them.
            log.debug(
                "channel %s: control_response for unknown id %s", self._name(), response.request_id
            )
            return
        subtype, future = entry
        if future.done():
            return
        if response.subtype == "success":
            future.set_result(response.response)
        else:
            future.set_exception(ControlRequestFailed(subtype, response.error or "unknown error"))

    def fail_all(self, error: SidecarError) -> None:
        """Fail every request still waiting (the CLI is gone)."""
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(error)

    def receive(self, request_id: str, request: msgspec.Raw, raw: bytes) -> None:
        """Serve one of the CLI's requests (``raw`` is its whole line), or refuse it."""
        subtype = "?"
        if request:
            with contextlib.suppress(msgspec.MsgspecError):
                subtype = wire.control_head_decoder.decode(request).subtype
        route = self._routes.get(subtype)
        if route is None:
            log.warning("channel %s: unsupported control request %s", self._name(), subtype)
            self._refuse(
                request_id, raw, f"claude-sidecar does not support control request `{subtype}`"
            )
            return
        try:
            decoded = route.decoder.decode(request)
        except msgspec.MsgspecError as e:
            log.warning("channel %s: malformed %s: %s", self._name(), subtype, e)
            self._refuse(request_id, raw, f"malformed {subtype} request: {e}")
            return
        route.handle(request_id, decoded)

    def _refuse(self, request_id: str, raw: bytes, reason: str) -> None:
        self._show(raw)
        self._send(wire.control_error(request_id, reason))
