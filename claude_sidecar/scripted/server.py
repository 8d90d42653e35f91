"""The HTTP server that plays the model: Anthropic Messages API on 127.0.0.1.

Point the CLI at it with ``ANTHROPIC_BASE_URL=<model.url>`` and any
``ANTHROPIC_API_KEY``.  Streams are sent as HTTP/1.1 chunked bodies on
keep-alive connections, which is what the CLI's HTTP client expects (verified
against CLI 2.1.330: it reuses one connection across turns).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import re
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import msgspec

from claude_sidecar.scripted.matching import Plan, is_side_call, plan_reply, prompt_text
from claude_sidecar.scripted.scenario import Block, Scenario, ScenarioSource, load_scenario
from claude_sidecar.scripted.sse import (
    encode_event,
    error_body,
    error_event,
    message_body,
    stream_events,
)

__all__ = ["ScriptedModel", "serve"]

log = logging.getLogger(__name__)

_MAX_BODY = 256 * 1024 * 1024  # generous: requests carry whole conversations and images


class _StopStream(Exception):
    """The model is stopping: abandon the current stream and drop the connection."""


class _Server(ThreadingHTTPServer):
    # Handler threads must never keep the process alive or make stop() wait
    # for a client that holds a keep-alive connection open.
    daemon_threads = True
    block_on_close = False
    # socketserver's default backlog of 5 resets bursts of parallel clients
    # (sub-agents, benchmarks running several CLIs at once).
    request_queue_size = 128
    model: ScriptedModel


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive + chunked bodies
    server: _Server
    server_version = "claude-sidecar-scripted"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        # Small writes (one SSE event each) must leave at once, not wait for Nagle.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.model._track(self.connection, add=True)
        log.debug("connection opened from %s:%s", *self.client_address[:2])

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.model._track(self.connection, add=False)
            log.debug("connection closed from %s:%s", *self.client_address[:2])

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    # --- plumbing -----------------------------------------------------------

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = msgspec.json.encode(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", self.server.model._next_id("req_scripted_"))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_error_json(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        self._send_json(status, error_body(error_type, message), headers)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    # Skip trailers up to the blank line.
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            raise ValueError(f"request body too large ({length} bytes)")
        return self.rfile.read(length) if length else b""

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    # --- verbs --------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if urlsplit(self.path).path in ("/", "/health", "/healthz"):
            self._send_json(200, {"status": "ok", "scripted": True})
        else:
            self._send_error_json(404, "not_found_error", f"Not found: {self.command} {self.path}")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        try:
            raw = self._read_body()
        except (ValueError, OSError) as e:
            self.close_connection = True
            self._send_error_json(400, "invalid_request_error", f"Could not read request body: {e}")
            return
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._send_error_json(404, "not_found_error", f"Not found: {self.command} {self.path}")
            return
        try:
            body = msgspec.json.decode(raw) if raw else None
        except msgspec.DecodeError as e:
            self._send_error_json(400, "invalid_request_error", f"Request body is not JSON: {e}")
            return
        if not isinstance(body, dict):
            self._send_error_json(
                400, "invalid_request_error", "Request body must be a JSON object"
            )
            return
        if not self._key_accepted():
            # The API's answer to a wrong key. Not to be retried: without the header CLI
            # 2.1.330 retries a 401 ten times, over a minute.
            self._send_error_json(
                401, "authentication_error", "invalid x-api-key", {"x-should-retry": "false"}
            )
            return
        if path == "/v1/messages/count_tokens":
            if not self.server.model._count_tokens():
                self.close_connection = True  # the model stopped while the count was held
                return
            # ~4 characters per token, same estimate as the replies' usage.
            self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
            return
        self.server.model._record(body)
        self._answer_messages(body, len(raw))

    def _key_accepted(self) -> bool:
        keys = self.server.model.scenario.api_keys
        if keys is None:
            return True
        bearer = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        return self.headers.get("x-api-key") in keys or bearer in keys

    def _other(self) -> None:
        self._read_body()  # keep the connection usable
        self._send_error_json(404, "not_found_error", f"Not found: {self.command} {self.path}")

    do_PUT = do_PATCH = do_DELETE = _other

    # --- /v1/messages ---------------------------------------------------------

    def _answer_messages(self, body: dict[str, Any], size: int) -> None:
        model = self.server.model
        try:
            plan = plan_reply(model.scenario, body, lambda: model._next_id("toolu_scripted_"), size)
        except Exception as e:  # a bug here must reach the client as an API error, not a hang
            log.exception("could not plan a reply")
            self._send_error_json(500, "api_error", f"scripted model failed: {e!r}")
            return
        stream = body.get("stream") is True
        log.info(
            "%s %s request: rule=%s step=%d prompt=%.60r%s",
            "stream" if stream else "json",
            "compaction" if plan.compaction else "side" if plan.side else "main",
            plan.rule,
            plan.step,
            plan.prompt,
            f" -> error {plan.error.status}" if plan.error else "",
        )
        if (
            plan.error is not None
            and plan.error.times is not None
            and model._failures(plan) > plan.error.times
        ):
            plan = msgspec.structs.replace(plan, error=None)
        if plan.error is not None:
            headers = (
                {}
                if plan.error.retry is None
                else {"x-should-retry": "true" if plan.error.retry else "false"}
            )
            self._send_error_json(plan.error.status, plan.error.type, plan.error.message, headers)
            return
        if any("{cwd}" in msgspec.json.encode(b).decode() for b in plan.blocks):
            log.warning("no working directory found in the request: `{cwd}` left as is")
        message_id = model._next_id("msg_scripted_")
        model_name = str(body.get("model") or "claude-scripted")
        if not stream:
            try:
                failed = self._held(plan.blocks)
            except _StopStream:
                self.close_connection = True
                return
            if failed is not None:
                self._send_error_json(500, "api_error", failed, {"x-should-retry": "false"})
                return
            self._send_json(
                200,
                message_body(
                    plan.blocks, message_id=message_id, model=model_name, usage=plan.usage
                ),
            )
            return
        self._stream(plan, message_id, model_name)

    def _stream(self, plan: Plan, message_id: str, model_name: str) -> None:
        stopping = self.server.model._stopping
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", self.server.model._next_id("req_scripted_"))
        self.end_headers()
        try:
            events = stream_events(
                plan.blocks, message_id=message_id, model=model_name, usage=plan.usage
            )
            for sent, event in enumerate(events):
                failed = self._held(event.waits)
                if failed is not None:
                    # As the API does when a stream fails once started: an error event, the end.
                    # Not an api_error: CLI 2.1.330 would retry that and play a later step;
                    # this one it ends the turn with, showing the message.
                    self._write_chunk(encode_event(error_event("invalid_request_error", failed)))
                    break
                # Event.wait doubles as an interruptible sleep: stop() ends slow streams at once.
                if (event.delay > 0 and stopping.wait(event.delay)) or stopping.is_set():
                    raise _StopStream
                if plan.cut_after_events is not None and sent >= plan.cut_after_events:
                    log.info("cutting the stream after %d events, as scripted", sent)
                    self.connection.shutdown(socket.SHUT_RDWR)
                    raise _StopStream
                self._write_chunk(encode_event(event))
            self._write_chunk(b"")  # zero-length chunk ends the body
        except _StopStream:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError) as e:
            # The client went away (interrupt, killed process): nothing to answer.
            log.debug("client dropped the stream: %s", e)
            self.close_connection = True

    def _held(self, blocks: list[Block]) -> str | None:
        """Wait for each ``wait_for_prompt`` block of ``blocks`` in turn: the failure message
        of the first to time out, or None once all have seen their prompt."""
        for wait in blocks:
            failed = self._hold(wait)
            if failed is not None:
                return failed
        return None

    def _hold(self, block: Block) -> str | None:
        """Wait as a ``wait_for_prompt`` block says (other blocks pass at once): None once a
        main request with a matching prompt has been received, else why not.  Raises
        _StopStream when the model stops meanwhile."""
        if block.wait_for_prompt is None:
            return None
        log.info("holding the reply until a prompt matches %r", block.wait_for_prompt)
        if self.server.model._wait_for_prompt(block.wait_for_prompt, block.wait_timeout):
            return None
        message = (
            f"scripted model: no request with a prompt matching {block.wait_for_prompt!r} "
            f"arrived within {block.wait_timeout:g}s (wait_for_prompt)"
        )
        log.warning("%s", message)
        return message


class ScriptedModel:
    """A scripted stand-in for the Anthropic Messages API, served on a local port.

    >>> with ScriptedModel(load_scenario(DEMO_SCENARIO_PATH)) as model:
    ...     env = {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "dummy"}

    ``port=0`` lets the OS choose a free port; read it back from :attr:`url`.
    """

    def __init__(self, scenario: ScenarioSource, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._scenario = load_scenario(scenario)
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        # Prompts of the main requests since the scenario was set or the requests cleared,
        # for wait_for_prompt blocks; `_arrived` is notified when one is added.
        self._prompts: list[str] = []
        self._arrived = threading.Condition(self._lock)
        self._token_counts = 0
        self._counts_held = False
        # Requests seen per (rule, step, prompt) of steps whose error has `times`.
        self._failed: dict[tuple[str | None, int, str], int] = {}
        self._connections: set[socket.socket] = set()
        self._counters: dict[str, itertools.count[int]] = {}
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------

    def start(self) -> ScriptedModel:
        """Bind the port and serve in a background thread.  Returns self."""
        if self._server is not None:
            raise RuntimeError("ScriptedModel already started")
        self._stopping.clear()
        server = _Server((self._host, self._port), _Handler)
        server.model = self
        self._server = server
        # A short poll interval keeps stop() prompt.
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        log.info("scripted model listening on %s", self.url)
        return self

    def stop(self) -> None:
        """Stop serving: close the listening socket and every open connection.

        Returns promptly even while streams are in flight (they are cut off).
        Safe to call twice.
        """
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        with self._arrived:
            self._arrived.notify_all()  # held replies give up at once
        server.shutdown()
        server.server_close()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            # Wakes handler threads blocked reading an idle keep-alive connection.
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- public state -----------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL for ``ANTHROPIC_BASE_URL``, e.g. ``http://127.0.0.1:41234``."""
        if self._server is None:
            raise RuntimeError("ScriptedModel is not started")
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}"

    @property
    def port(self) -> int:
        """The bound TCP port."""
        if self._server is None:
            raise RuntimeError("ScriptedModel is not started")
        return int(self._server.server_address[1])

    @property
    def scenario(self) -> Scenario:
        """The scenario answering new requests."""
        return self._scenario

    def set_scenario(self, scenario: ScenarioSource) -> None:
        """Swap the scenario; requests already being answered keep the old one.

        Counts of failed requests (``error.times``) start again, and ``wait_for_prompt``
        blocks only see prompts that arrive from now on."""
        self._scenario = load_scenario(scenario)
        with self._lock:
            self._failed.clear()
            self._prompts.clear()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Decoded bodies of every ``/v1/messages`` request so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def main_requests(self) -> list[dict[str, Any]]:
        """The requests that carried ``tools`` (the agent's own turns, not side calls)."""
        return [r for r in self.requests if r.get("tools")]

    @property
    def token_counts(self) -> int:
        """How many ``/v1/messages/count_tokens`` requests were answered so far."""
        with self._lock:
            return self._token_counts

    def _failures(self, plan: Plan) -> int:
        """Count one more request for a step that fails a limited number of times."""
        key = (plan.rule, plan.step, plan.prompt)
        with self._lock:
            self._failed[key] = self._failed.get(key, 0) + 1
            return self._failed[key]

    def wait_for_token_counts(self, count: int = 1, timeout: float = 60) -> bool:
        """Block until ``count`` ``count_tokens`` requests have been received (False after
        ``timeout`` seconds): for a test waiting on a CLI that counts its context."""
        with self._arrived:
            return self._arrived.wait_for(lambda: self._token_counts >= count, timeout)

    def release(self, prompt: str) -> None:
        """Let ``wait_for_prompt`` holds see ``prompt`` as if a main request had carried it:
        a test ends a held reply without sending another chat's message."""
        with self._arrived:
            self._prompts.append(prompt)
            self._arrived.notify_all()

    def hold_token_counts(self, held: bool = True) -> None:
        """Hold every ``count_tokens`` answer until called with ``held=False`` (or the model
        stops): a test keeps a CLI busy counting its context, e.g. a priming spare."""
        with self._arrived:
            self._counts_held = held
            self._arrived.notify_all()

    def _count_tokens(self) -> bool:
        """Count one ``count_tokens`` request and wait while they are held: False if the
        model stopped meanwhile (no answer then)."""
        with self._arrived:
            self._token_counts += 1
            self._arrived.notify_all()
            self._arrived.wait_for(lambda: self._stopping.is_set() or not self._counts_held)
            return not self._stopping.is_set()

    def clear_requests(self) -> None:
        """Forget the recorded requests (e.g. between phases of a test), also for
        ``wait_for_prompt`` blocks."""
        with self._lock:
            self._requests.clear()
            self._prompts.clear()

    # --- handler callbacks -------------------------------------------------------

    def _record(self, body: dict[str, Any]) -> None:
        messages = body.get("messages")
        with self._arrived:
            self._requests.append(body)
            if not is_side_call(body) and isinstance(messages, list):
                self._prompts.append(prompt_text(messages))
                self._arrived.notify_all()

    def _wait_for_prompt(self, pattern: str, timeout: float) -> bool:
        """Block until a main request whose prompt matches ``pattern`` (``re.search``) has
        been received, the request being answered included.  False after ``timeout``
        seconds; raises _StopStream if the model stops meanwhile."""
        regex = re.compile(pattern)
        with self._arrived:
            seen = self._arrived.wait_for(
                lambda: self._stopping.is_set() or any(map(regex.search, self._prompts)),
                timeout,
            )
        if self._stopping.is_set():
            raise _StopStream
        return bool(seen)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _next_id(self, prefix: str) -> str:
        # One counter per prefix: toolu_scripted_1, _2 ... read naturally in test output.
        with self._lock:
            counter = self._counters.setdefault(prefix, itertools.count(1))
            return f"{prefix}{next(counter)}"


def serve(
    scenario: ScenarioSource,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``scenario`` until interrupted (Ctrl-C / KeyboardInterrupt).

    Prints nothing to stdout; the URL is logged at INFO on the
    ``claude_sidecar.scripted.server`` logger and passed to ``on_ready`` once
    the port is bound, so a command-line entry point can announce it.
    """
    model = ScriptedModel(scenario, host=host, port=port)
    model.start()
    try:
        if on_ready is not None:
            on_ready(model.url)
        never = threading.Event()
        # A timed wait, so a KeyboardInterrupt raised without a real signal
        # (e.g. _thread.interrupt_main) is noticed too.
        while not never.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        model.stop()
