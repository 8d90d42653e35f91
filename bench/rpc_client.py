"""A minimal, fast JSON-RPC client over a child's stdin/stdout (Content-Length framing).

The benchmarks read the daemon (or a peer) with this instead of pygls so the client is
never the bottleneck: stdout is read in 1 MiB chunks with ``os.read``, frames are split
by their ``Content-Length`` header, and bodies stay bytes; a caller decodes only the few
it needs. Everything is synchronous: one blocking reader, the arrival time of a frame is
the moment the read that completed it returned.

Used by relay.py, memory.py and file_updated.py; not run by itself.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

READ_SIZE = 1 << 20
_CL = b"Content-Length: "


class RpcError(Exception):
    """An error response: ``code``, ``message`` and ``data`` as the server sent them."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        self.code = error.get("code")
        self.data = error.get("data")
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")


class Framer:
    """Splits a byte stream into message bodies by their Content-Length header."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The bodies completed by ``chunk``, in order (a partial frame is kept)."""
        data = self._rest + chunk if self._rest else chunk
        bodies = []
        pos, size = 0, len(data)
        find = data.find
        while True:
            end_headers = find(b"\r\n\r\n", pos)
            if end_headers < 0:
                break
            if data.startswith(_CL, pos):
                eol = find(b"\r\n", pos)
                length = int(data[pos + 16 : eol])
            else:
                length = _content_length(data[pos:end_headers])
            start = end_headers + 4
            end = start + length
            if end > size:
                break
            bodies.append(data[start:end])
            pos = end
        self._rest = data[pos:]
        return bodies


def _content_length(headers: bytes) -> int:
    for line in headers.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise ValueError(f"no Content-Length in {headers!r}")


_live: list[subprocess.Popen[Any]] = []


def track(process: subprocess.Popen[Any]) -> subprocess.Popen[Any]:
    """Remember a child process so that ``kill_all`` can end it if the benchmark fails."""
    _live.append(process)
    return process


def kill_all() -> None:
    """SIGKILL every tracked child that is still running (their CLIs die with them:
    the daemon's and the synthetic CLI's children have PR_SET_PDEATHSIG)."""
    while _live:
        process = _live.pop()
        if process.poll() is None:
            process.kill()
            process.wait()


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class Peer:
    """A child process read through a ``Framer``: the daemon or the msgspec relay."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stderr_path: str | None = None,
        cwd: str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.stderr_path = stderr_path
        with contextlib.ExitStack() as opened:
            stderr = (
                opened.enter_context(open(stderr_path, "ab")) if stderr_path else subprocess.DEVNULL
            )
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                bufsize=0,
            )
        track(self.process)
        self.pid = self.process.pid
        self._out = self.process.stdout.fileno()  # type: ignore[union-attr]
        self.framer = Framer()
        self._ids = itertools.count(1)
        self._responses: dict[Any, dict[str, Any]] = {}
        # Frames that wait_response read past (no on_other given): bodies() yields them.
        self._backlog: list[tuple[int, bytes]] = []

    # ------------------------------------------------------------ raw I/O

    def write(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        view = memoryview(data)
        while view:
            view = view[stdin.write(view) :]

    def read_chunk(self, timeout: float) -> bytes:
        """The next bytes from stdout; ``TimeoutError`` after ``timeout`` s of silence,
        ``EOFError`` when the process closed stdout."""
        ready, _, _ = select.select([self._out], [], [], timeout)
        if not ready:
            raise TimeoutError(f"{self.argv[:3]}: nothing read for {timeout} s{self._tail()}")
        chunk = os.read(self._out, READ_SIZE)
        if not chunk:
            raise EOFError(f"{self.argv[:3]} closed its stdout{self._tail()}")
        return chunk

    def bodies(
        self, timeout: float, clock: Callable[[], int] = time.monotonic_ns
    ) -> Iterator[tuple[int, bytes]]:
        """(arrival time by ``clock``, body) for every frame, forever; the arrival time is
        taken when the read that completed the frame returned."""
        while self._backlog:
            at, body = self._backlog.pop(0)  # stamped with time.monotonic_ns()
            yield at + (clock() - time.monotonic_ns()), body
        while True:
            chunk = self.read_chunk(timeout)
            now = clock()
            for body in self.framer.feed(chunk):
                yield now, body

    # ------------------------------------------------------------ JSON-RPC

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame(message))

    def request_frame(self, method: str, params: Any) -> tuple[int, bytes]:
        """(id, framed request) to send later, e.g. many in one write."""
        request_id = next(self._ids)
        return request_id, frame(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )

    def request(
        self,
        method: str,
        params: Any = None,
        timeout: float = 60,
        on_other: Callable[[dict[str, Any]], None] | None = None,
    ) -> Any:
        """Send a request and read until its response; other messages go to ``on_other``."""
        request_id, data = self.request_frame(method, params)
        self.write(data)
        return self.wait_response(request_id, method, timeout, on_other)

    def wait_response(
        self,
        request_id: int,
        method: str,
        timeout: float = 60,
        on_other: Callable[[dict[str, Any]], None] | None = None,
    ) -> Any:
        """Read until the response to ``request_id``; responses to other requests are
        kept for their own ``wait_response``, everything else goes to ``on_other`` or, if
        none is given, is kept for ``bodies()`` (with its arrival time)."""
        deadline = time.monotonic() + timeout
        while (message := self._responses.pop(request_id, None)) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no response to {method} within {timeout} s")
            chunk = self.read_chunk(remaining)
            now = time.monotonic_ns()
            for body in self.framer.feed(chunk):
                other = json.loads(body)
                if "method" not in other:
                    self._responses[other.get("id")] = other
                elif on_other is not None:
                    on_other(other)
                else:
                    self._backlog.append((now, body))
        if "error" in message:
            raise RpcError(method, message["error"])
        return message.get("result")

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # ------------------------------------------------------------ the end

    def close(self, timeout: float = 10) -> None:
        """Close stdin and wait; SIGKILL if the process is still there after ``timeout``."""
        try:
            if self.process.stdin is not None and not self.process.stdin.closed:
                self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        if self.process in _live:
            _live.remove(self.process)

    def _tail(self) -> str:
        if not self.stderr_path:
            return ""
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.stderr_path) - 2000))
                return "; stderr ends with:\n" + f.read().decode("utf-8", "replace")
        except OSError:
            return ""


class Daemon(Peer):
    """``python -m claude_sidecar --stdio`` started directly (no ``uv`` in between), so
    ``pid`` is the daemon's own Python process.

    Its CLIs run at ``cli_nice`` 0, the daemon's own priority, as the peers' do (the SDK,
    the msgspec relay and the CLI started alone run theirs at the default one): at the
    daemon's default of 10 they would lose to the peers' under load, a difference of the
    scheduler, not of the relay measured. None: the daemon's default."""

    def __init__(
        self,
        *,
        cli: str | None = None,
        env: Mapping[str, str] | None = None,
        stderr_path: str | None = None,
        log_level: str = "WARNING",
        cli_nice: int | None = 0,
    ) -> None:
        argv = [sys.executable, "-m", "claude_sidecar", "--stdio", "--log-level", log_level]
        if cli:
            argv += ["--cli", cli]
        if cli_nice is not None:
            argv += ["--cli-nice", str(cli_nice)]
        super().__init__(argv, env=env, stderr_path=stderr_path)

    def initialize(self, options: dict[str, Any] | None = None) -> Any:
        result = self.request(
            "initialize",
            {"processId": os.getpid(), "capabilities": {}, "initializationOptions": options or {}},
        )
        self.notify("initialized", {})
        return result

    def new_channel(self, cwd: str, **params: Any) -> dict[str, Any]:
        result = self.request("claude/newChannel", {"cwd": cwd, **params})
        assert isinstance(result, dict), result
        return result

    def shutdown(self, timeout: float = 30) -> None:
        """``shutdown`` + ``exit``, then wait; SIGKILL whatever does not end in time."""
        try:
            if self.process.poll() is None:
                self.request("shutdown", None, timeout=timeout)
                self.notify("exit", None)
        except (OSError, EOFError, TimeoutError, RpcError):
            pass
        finally:
            self.close()


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of ``pid`` in KiB, from /proc/<pid>/status."""
    figures = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                figures[name] = int(value.split()[0])
    return figures
