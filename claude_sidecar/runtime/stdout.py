"""The daemon's stdout, kept for JSON-RPC only: claimed at start, written in frames.

Shared by both front ends (the ``claude/*`` server and the ACP agent); it imports no
JSON-RPC library, so the ACP agent does not load pygls.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import BinaryIO

_OUT_BUFFER = 1 << 16
# About 32 KiB of delta notifications (~170 bytes each): half of what a pipe holds, so
# the client reads one part while the next is written, and a write seldom waits for it
# (with 8 channels streaming, 400 frames, more than a pipe holds, made every write wait).
_FRAMES_PER_WRITE = 200


def claim_stdout() -> BinaryIO:
    """Return a private binary stream onto the real stdout; fd 1 becomes stderr."""
    sys.stdout.flush()
    # Buffered: a raw write to a pipe may write only part of what it is given; the
    # buffered stream writes it all. FrameWriter decides when.
    rpc_out = os.fdopen(os.dup(1), "wb", buffering=_OUT_BUFFER)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return rpc_out


class FrameBatcher:
    """Frames to one client, collected and sent with one ``_send`` per event-loop
    iteration (``queue``; a long burst in parts of a pipe's size), so the deltas read
    from a CLI in one chunk cost one join and one system call, not a write each.
    pygls's own messages (``write``) go out at once, after whatever was queued before
    them: the order on the wire is the order of the calls. Once the client is lost
    (``_lost``), frames are dropped. Subclasses say where the bytes go (``_send``).
    """

    def __init__(self) -> None:
        self._frames: list[bytes] = []
        self._lost = False

    def write(self, data: bytes) -> None:
        """Send one frame now (pygls's writer interface)."""
        self._frames.append(data)
        self.flush()

    def queue(self, data: bytes) -> None:
        """Send one frame before the event loop next waits for I/O."""
        frames = self._frames
        frames.append(data)
        if len(frames) == 1:
            asyncio.get_running_loop().call_soon(self.flush)
        elif len(frames) >= _FRAMES_PER_WRITE:
            # A long burst goes out in parts, so the client reads while the daemon
            # routes the rest (two processes on two cores, not one after the other).
            self.flush()

    def flush(self) -> None:
        """Write every frame collected so far."""
        if not self._frames:
            return
        data = b"".join(self._frames)
        self._frames.clear()
        if not self._lost:
            self._send(data)

    def _send(self, data: bytes) -> None:
        raise NotImplementedError


class FrameWriter(FrameBatcher):
    """The client's stream (stdout): pygls's writer, and the sink of every frame the
    daemon sends, written in batches (``FrameBatcher``)."""

    def __init__(self, stream: BinaryIO, on_error: Callable[[OSError | ValueError], None]) -> None:
        super().__init__()
        self._stream = stream
        self._on_error = on_error

    def _send(self, data: bytes) -> None:
        try:
            self._stream.write(data)
            self._stream.flush()
        except (OSError, ValueError) as e:
            self._lost = True
            self._on_error(e)

    def close(self) -> None:
        """Flush what is queued and close the stream (pygls's writer interface)."""
        self.flush()
        try:
            self._stream.close()
        except (OSError, ValueError) as e:
            self._on_error(e)
