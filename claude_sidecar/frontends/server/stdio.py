"""Serving JSON-RPC over the process's stdin/stdout, with stdout kept sacred.

The JSON-RPC stream gets a private duplicate of fd 1, and fd 1 itself is pointed at
stderr, so a stray ``print`` or a misbehaving library can never corrupt the stream.
When the client goes away (stdin EOF) every channel is closed before the daemon exits.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import threading
from typing import TYPE_CHECKING, BinaryIO

from pygls.io_ import StdinAsyncReader, run_async

from claude_sidecar.frontends.server.server import SidecarServer
from claude_sidecar.runtime import diagnostics, heap
from claude_sidecar.runtime.stdout import FrameWriter, claim_stdout

if TYPE_CHECKING:
    from pygls.io_ import AsyncReader

log = logging.getLogger(__name__)

_HEADER_LIMIT = 1 << 20


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
    heap.settle_after_imports()
    reader = await _stdin_reader()
    # `kill -USR1 <pid>` logs what the daemon holds (see diagnostics.py).
    asyncio.get_running_loop().add_signal_handler(
        signal.SIGUSR1, lambda: diagnostics.log_snapshot(server.channel_count)
    )
    frames = FrameWriter(rpc_out, server.lose_client)
    server.connect(frames.queue)
    server.protocol.set_writer(frames)
    try:
        if await serve_client(server, reader, log):
            log.info("client closed stdin")
    finally:
        await server.close(grace=2.0)
        frames.close()


async def serve_client(server: SidecarServer, reader: AsyncReader, logger: logging.Logger) -> bool:
    """Serve one client's messages from ``reader`` until its stream ends, the stream to it
    fails (``client_gone``) or it sends ``exit``; True if its stream ended. An error reading
    the stream is raised."""
    serving = asyncio.ensure_future(
        run_async(
            stop_event=threading.Event(),
            reader=reader,
            protocol=server.protocol,
            logger=logger,
            error_handler=server.report_server_error,
        )
    )
    gone = asyncio.ensure_future(server.client_gone.wait())
    exited = asyncio.ensure_future(server.exited.wait())
    try:
        await asyncio.wait({serving, gone, exited}, return_when=asyncio.FIRST_COMPLETED)
        if serving.done():
            serving.result()
            return True
        return False
    finally:
        serving.cancel()
        gone.cancel()
        exited.cancel()


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
