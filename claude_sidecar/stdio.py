"""Serving JSON-RPC over the process's stdin/stdout, with stdout kept sacred.

The JSON-RPC stream gets a private duplicate of fd 1, and fd 1 itself is pointed at
stderr, so a stray ``print`` or a misbehaving library can never corrupt the stream.
When the client goes away (stdin EOF) every channel is closed before the daemon exits.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import BinaryIO

from pygls.io_ import StdinAsyncReader, run_async

from . import diagnostics
from .server import SidecarServer

log = logging.getLogger(__name__)

_HEADER_LIMIT = 1 << 20
_OUT_BUFFER = 1 << 16
# About 64 KiB of delta notifications: what a pipe holds.
_FRAMES_PER_WRITE = 400


def claim_stdout() -> BinaryIO:
    """Return a private binary stream onto the real stdout; fd 1 becomes stderr."""
    sys.stdout.flush()
    # Buffered: a raw write to a pipe may write only part of what it is given; the
    # buffered stream writes it all. FrameWriter decides when.
    rpc_out = os.fdopen(os.dup(1), "wb", buffering=_OUT_BUFFER)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return rpc_out


class FrameWriter:
    """The client's stream: pygls's writer, and the sink of every frame the daemon sends.

    Frames are collected in a list and written with one ``write`` per event-loop
    iteration (``queue``; a long burst in parts of a pipe's size), so the deltas read
    from a CLI in one chunk cost one join and one system call, not a buffered write
    each. pygls's own messages (``write``) go out at once, after whatever was queued
    before them: the order on the wire is the order of the calls. Once the stream
    fails, frames are dropped.
    """

    def __init__(self, stream: BinaryIO, on_error: Callable[[OSError | ValueError], None]) -> None:
        self._stream = stream
        self._on_error = on_error
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
        if self._lost:
            return
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


async def _stdin_reader() -> asyncio.StreamReader | StdinAsyncReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_HEADER_LIMIT)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    except ValueError:
        # stdin is a regular file (`< requests.bin`): only a thread can read it.
        return StdinAsyncReader(sys.stdin.buffer)
    return reader


async def _serve(server: SidecarServer, rpc_out: BinaryIO) -> None:
    # The ~50k objects of the imports (pygls, lsprotocol, cattrs) live as long as the
    # daemon: out of the collector's sight, a full collection takes ~3 ms instead of ~30.
    gc.collect()
    gc.freeze()
    reader = await _stdin_reader()
    # `kill -USR1 <pid>` logs what the daemon holds (see diagnostics.py).
    asyncio.get_running_loop().add_signal_handler(
        signal.SIGUSR1, lambda: diagnostics.log_snapshot(server.channel_count)
    )
    frames = FrameWriter(rpc_out, server.lose_client)
    server.connect(frames.queue)
    server.protocol.set_writer(frames)
    serving = asyncio.ensure_future(
        run_async(
            stop_event=threading.Event(),
            reader=reader,
            protocol=server.protocol,
            logger=log,
            error_handler=server.report_server_error,
        )
    )
    gone = asyncio.ensure_future(server.client_gone.wait())
    exited = asyncio.ensure_future(server.exited.wait())
    try:
        await asyncio.wait({serving, gone, exited}, return_when=asyncio.FIRST_COMPLETED)
        if serving.done():
            serving.result()
            log.info("client closed stdin")
    finally:
        serving.cancel()
        gone.cancel()
        exited.cancel()
        await server.close(grace=2.0)
        frames.close()


def serve_stdio(server: SidecarServer) -> int:
    """Run the server on stdin/stdout until the client exits or closes stdin."""
    rpc_out = claim_stdout()
    try:
        asyncio.run(_serve(server, rpc_out))
    except BrokenPipeError:
        log.error("the client's end of stdout is gone; shutting down")
        return 1
    finally:
        server.kill_now()
    # `exit` says how: 0 after `shutdown`, else 1 (LSP); a client closing stdin, 0.
    return server.exit_code if server.exited.is_set() else 0
