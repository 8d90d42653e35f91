"""A synthetic Claude Code CLI for the relay benchmarks: stream-json out, as fast as asked.

Standard library only; not run by hand, but by the daemon (``--cli``/``cliPath``), by
the SDK peer (``ClaudeAgentOptions(cli_path=...)``) and by the msgspec relay, always
through the small shell wrapper that ``wrapper()`` writes (a stable executable path that
runs this file with the benchmark's own Python and ``-S``, for a quick start).

It speaks just enough of the CLI's stream-json protocol:

- every ``control_request`` (``initialize``, ``interrupt``, ...) gets a ``success``
  ``control_response`` at once;
- every ``user`` line is echoed back (``isReplay``, as with ``--replay-user-messages``)
  and starts a turn, chosen by the message's text:

  ``burst [N]``
      N text deltas (default ``$SYNTH_BURST``) written as fast as the pipe takes them.
      The delta lines for ``$SYNTH_BURST`` are built once at start-up (and reused by
      every such turn) and written in 1 MiB chunks, so this process emits over a
      million lines a second and is never the bottleneck.
  ``paced RATE SECONDS``
      RATE text deltas a second for SECONDS, each line written and flushed on its own;
      the delta's text is ``time.monotonic_ns()`` taken just before the write, plus
      ``|``. ``CLOCK_MONOTONIC`` is system-wide on Linux, so a reader in another process
      can compute the line's latency.

  A turn looks like a real one: ``system/init``, ``message_start``,
  ``content_block_start``, the deltas (all ``text_delta`` of block 0, with
  ``session_id``, ``parent_tool_use_id`` and a ``uuid`` like the real CLI's), the
  block's stop, ``message_delta``, ``message_stop``, the complete ``assistant`` message
  and a ``result`` carrying every field the Python SDK requires.

stdin EOF ends the process; on Linux it also dies with its parent (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import uuid
from typing import Any

CHUNK = 1 << 20

DELTA = (
    b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"%s"}},"session_id":"%s",'
    b'"parent_tool_use_id":null,"uuid":"%s%012x"}\n'
)


def burst_text(i: int) -> bytes:
    """The text of burst delta ``i``: 8 ASCII characters (for i < 10**6)."""
    return b"w%06d " % i


def wrapper(directory: str, python: str | None = None) -> str:
    """Write an executable ``synthetic-cli`` script into ``directory``; return its path."""
    path = os.path.join(directory, "synthetic-cli")
    with open(path, "w") as f:
        f.write(
            f'#!/bin/sh\nexec "{python or sys.executable}" -S "{os.path.abspath(__file__)}" "$@"\n'
        )
    os.chmod(path, 0o755)
    return path


class Cli:
    def __init__(self) -> None:
        self.session = os.environ.get("SYNTH_SESSION_ID") or str(uuid.uuid4())
        self.sid = self.session.encode()
        # 24 characters, then 12 hex digits per line: a uuid-shaped, unique id.
        self.uuid_prefix = str(uuid.uuid4())[:24].encode()
        self.count = 0
        self.burst_n = int(os.environ.get("SYNTH_BURST") or 0)
        self.prebuilt: dict[int, tuple[bytes, bytes]] = {}
        if self.burst_n:
            self.prebuilt[self.burst_n] = self.build(self.burst_n)

    def build(self, n: int) -> tuple[bytes, bytes]:
        """(the n delta lines, their concatenated text)."""
        texts = [burst_text(i) for i in range(n)]
        sid, prefix = self.sid, self.uuid_prefix
        base = self.count + 1
        self.count += n
        lines = b"".join([DELTA % (t, sid, prefix, base + i) for i, t in enumerate(texts)])
        return lines, b"".join(texts)

    def uid(self) -> str:
        self.count += 1
        return f"{self.uuid_prefix.decode()}{self.count:012x}"

    def emit(self, obj: object) -> None:
        write_all(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def event(self, event: dict[str, Any]) -> None:
        self.emit(
            {
                "type": "stream_event",
                "event": event,
                "session_id": self.session,
                "parent_tool_use_id": None,
                "uuid": self.uid(),
            }
        )

    # ------------------------------------------------------------ one turn

    def turn(self, message: dict[str, Any]) -> None:
        text = " ".join(block.get("text", "") for block in _content(message)).split()
        if "--replay-user-messages" in sys.argv:
            self.emit({**message, "session_id": self.session, "isReplay": True})
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "session_id": self.session,
                "cwd": os.getcwd(),
                "model": "synthetic",
                "permissionMode": "default",
                "tools": [],
                "mcp_servers": [],
                "slash_commands": [],
                "claude_code_version": "2.1.330",
                "uuid": self.uid(),
            }
        )
        self.event(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_synthetic",
                    "type": "message",
                    "role": "assistant",
                    "model": "synthetic",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            }
        )
        self.event(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        )
        if text and text[0] == "paced":
            full = self.paced(float(text[1]), float(text[2]))
        else:
            n = int(text[1]) if len(text) > 1 else self.burst_n
            lines, full = self.prebuilt.get(n) or self.build(n)
            for start in range(0, len(lines), CHUNK):
                write_all(lines[start : start + CHUNK])
        self.event({"type": "content_block_stop", "index": 0})
        self.event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            }
        )
        self.event({"type": "message_stop"})
        self.emit(
            {
                "type": "assistant",
                "message": {
                    "id": "msg_synthetic",
                    "type": "message",
                    "role": "assistant",
                    "model": "synthetic",
                    "content": [{"type": "text", "text": full.decode()}],
                    "stop_reason": None,
                },
                "parent_tool_use_id": None,
                "session_id": self.session,
                "uuid": self.uid(),
            }
        )
        self.emit(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "duration_ms": 1,
                "duration_api_ms": 1,
                "num_turns": 1,
                "result": "ok",
                "stop_reason": "end_turn",
                "session_id": self.session,
                "total_cost_usd": 0,
                "usage": {"input_tokens": 1, "output_tokens": 1},
                "uuid": self.uid(),
            }
        )

    def paced(self, rate: float, seconds: float) -> bytes:
        """Deltas at ``rate``/s for ``seconds``, each stamped with monotonic_ns at write."""
        total = int(rate * seconds)
        period = 1e9 / rate
        sid, prefix = self.sid, self.uuid_prefix
        start = time.monotonic_ns()
        for i in range(total):
            delay = start + i * period - time.monotonic_ns()
            if delay > 0:
                time.sleep(delay / 1e9)
            self.count += 1
            now = time.monotonic_ns()
            write_all(DELTA % (b"%d|" % now, sid, prefix, self.count))
        return b"(%d paced deltas)" % total

    # ------------------------------------------------------------ main loop

    def control(self, message: dict[str, Any]) -> None:
        request = message.get("request") or {}
        response: dict[str, Any] = {}
        if request.get("subtype") == "initialize":
            response = {
                "commands": [],
                "models": [],
                "account": {},
                "current_permission_mode": "default",
            }
        self.emit(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": message.get("request_id"),
                    "response": response,
                },
            }
        )

    def serve(self) -> None:
        for line in sys.stdin.buffer:
            if not line.strip():
                continue
            message = json.loads(line)
            kind = message.get("type")
            if kind == "control_request":
                self.control(message)
            elif kind == "user":
                self.turn(message)


def _content(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = (message.get("message") or {}).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            sys.exit(0)


if __name__ == "__main__":
    _die_with_parent()
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        Cli().serve()
