"""``claude-sidecar status`` and ``claude-sidecar stop``: the shared daemon, for a person.

Each connects to the daemon's socket as a client of its own (never starting a daemon),
asks one thing over JSON-RPC and prints the answer in words: which chats run and who is
attached, or that the daemon stopped (refused while a chat is in a turn, unless forced).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import msgspec

from claude_sidecar import __version__
from claude_sidecar.frontends.daemon.bridge import try_connect
from claude_sidecar.frontends.daemon.place import Place
from claude_sidecar.protocol.api import ChannelSummary, InitializeResult
from claude_sidecar.protocol.errors import SidecarError
from claude_sidecar.runtime.processes import running

_HEADER_END = b"\r\n\r\n"
# How long `stop` waits for the daemon's process to end after it answered.
STOP_WAIT = 30.0


class AdminError(SidecarError):
    """The daemon answered a request of ``status`` or ``stop`` with an error."""

    NAME = "adminRequestFailed"

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(
            f"{method}: {error.get('message', error)}",
            method=method,
            error=error.get("data") or {},
        )


class Session:
    """One connection to the daemon: requests answered in order, notifications skipped."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""
        self._ids = iter(range(1, 1 << 30))

    def request(self, method: str, params: dict[str, Any]) -> Any:
        request_id = next(self._ids)
        body = msgspec.json.encode(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )
        self._sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        for message in self._messages():
            if message.get("id") != request_id:
                continue  # a notification, or a request to the client: not ours to answer
            if "error" in message:
                raise AdminError(method, message["error"])
            return message.get("result")
        raise ConnectionError(f"the daemon closed the connection before answering {method}")

    def close(self) -> None:
        """End the connection (the daemon detaches this client)."""
        self._sock.close()

    def notify(self, method: str) -> None:
        body = msgspec.json.encode({"jsonrpc": "2.0", "method": method})
        self._sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def _messages(self) -> Iterator[dict[str, Any]]:
        while True:
            end = self._buffer.find(_HEADER_END)
            while end < 0:
                if not self._fill():
                    return
                end = self._buffer.find(_HEADER_END)
            length = next(
                int(line.split(b":", 1)[1])
                for line in self._buffer[:end].split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            start = end + len(_HEADER_END)
            while len(self._buffer) < start + length:
                if not self._fill():
                    return
            body = self._buffer[start : start + length]
            self._buffer = self._buffer[start + length :]
            yield msgspec.json.decode(body)

    def _fill(self) -> bool:
        data = self._sock.recv(1 << 16)
        self._buffer += data
        return bool(data)


def open_session(place: Place, name: str) -> tuple[Session, InitializeResult] | None:
    """A client session with the daemon serving ``place``, initialized as
    ``claude-sidecar NAME``, and the daemon's answer; None when no daemon serves it."""
    sock = try_connect(place)
    if sock is None:
        return None
    session = Session(sock)
    initialized = session.request(
        "initialize",
        {
            "processId": os.getpid(),
            "capabilities": {},
            "initializationOptions": {"clientName": f"claude-sidecar {name}"},
        },
    )
    session.notify("initialized")
    return session, msgspec.convert(initialized, InitializeResult)


def _serving_pid(place: Place) -> int | None:
    serving = place.serving()
    return serving.pid if serving is not None else None


def _chat_line(chat: ChannelSummary) -> str:
    where = chat.cwd.replace(str(Path.home()), "~", 1)
    parts = [chat.channel_id, chat.state, where]
    if chat.model:
        parts.append(chat.model)
    names = [c.client_name or c.connection_id for c in chat.clients]
    parts.append(f"{len(names)} attached: {', '.join(names)}" if names else "nobody attached")
    if chat.pending_permissions:
        parts.append(f"{len(chat.pending_permissions)} waiting for an answer")
    return "  ".join(parts)


def status(place: Place, out: TextIO = sys.stdout) -> int:
    """Print the daemon's version and pid and every chat with its attached clients;
    1 when no daemon serves ``place``."""
    opened = open_session(place, "status")
    if opened is None:
        out.write(f"no shared daemon serves {place.socket}\n")
        return 1
    session, initialized = opened
    listed = session.request("claude/listChannels", {})
    chats = msgspec.convert(listed["channels"], list[ChannelSummary])
    version = initialized.server_info.version
    pid = _serving_pid(place)
    out.write(
        f"claude-sidecar {version} (pid {pid if pid is not None else '?'}) serves {place.socket}\n"
    )
    if version != __version__:
        out.write(f"  (this command is claude-sidecar {__version__})\n")
    out.write(f"{len(chats)} chat(s)\n" if chats else "no chat\n")
    for chat in chats:
        out.write(f"  {_chat_line(chat)}\n")
    return 0


def stop(place: Place, *, force: bool, out: TextIO = sys.stdout) -> int:
    """Stop the daemon serving ``place`` (refused while a chat is in a turn, unless
    ``force``) and wait for it to end; 0 also when none serves it."""
    opened = open_session(place, "stop")
    if opened is None:
        out.write(f"no shared daemon serves {place.socket}\n")
        return 0
    session, _ = opened
    pid = _serving_pid(place)
    try:
        result = session.request("claude/stopDaemon", {"force": force})
    except AdminError as e:
        running = e.data["error"].get("channelIds")
        if running is None:
            raise
        out.write(
            f"not stopped: {len(running)} chat(s) are in a turn ({', '.join(running)}); "
            "wait for them to end, or run `claude-sidecar stop --force`\n"
        )
        return 1
    if pid is not None:
        wait_ended(pid)
    out.write(f"stopped the shared daemon; {result['closedChannels']} chat(s) closed\n")
    return 0


def wait_ended(pid: int, timeout: float = STOP_WAIT) -> None:
    """Wait until the process ``pid`` has ended, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while running(pid) and time.monotonic() < deadline:
        # Polls: another process's exit is not an event this one can wait for.
        time.sleep(0.05)
