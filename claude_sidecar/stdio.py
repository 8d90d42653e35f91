"""Serving JSON-RPC over the process's stdin/stdout, with stdout kept sacred.

The JSON-RPC stream gets a private duplicate of fd 1, and fd 1 itself is pointed at
stderr, so a stray ``print`` or a misbehaving library can never corrupt the stream.
When the client goes away (stdin EOF) every channel is closed before the daemon exits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

from .server import SidecarServer

log = logging.getLogger(__name__)

_HEADER_LIMIT = 1 << 20


def claim_stdout() -> BinaryIO:
    """Return a private binary stream onto the real stdout; fd 1 becomes stderr."""
    sys.stdout.flush()
    # Buffered: a raw write to a pipe may write only part of a frame; the writer
    # flushes after every message, so nothing waits in the buffer.
    rpc_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return rpc_out


async def _stdin_reader() -> asyncio.StreamReader | StdinAsyncReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_HEADER_LIMIT)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                     sys.stdin.buffer)
    except ValueError:
        # stdin is a regular file (`< requests.bin`): only a thread can read it.
        return StdinAsyncReader(sys.stdin.buffer)
    return reader


async def _serve(server: SidecarServer, rpc_out: BinaryIO) -> None:
    reader = await _stdin_reader()
    server.protocol.set_writer(StdoutWriter(rpc_out))
    serving = asyncio.ensure_future(run_async(
        stop_event=threading.Event(),
        reader=reader,
        protocol=server.protocol,
        logger=log,
        error_handler=server.report_server_error,
    ))
    gone = asyncio.ensure_future(server.client_gone.wait())
    try:
        await asyncio.wait({serving, gone}, return_when=asyncio.FIRST_COMPLETED)
        if serving.done():
            serving.result()
            log.info("client closed stdin")
    finally:
        serving.cancel()
        gone.cancel()
        await server.hub.close_all(grace=2.0)


def serve_stdio(server: SidecarServer) -> int:
    """Run the server on stdin/stdout until the client exits or closes stdin."""
    rpc_out = claim_stdout()
    try:
        asyncio.run(_serve(server, rpc_out))
    except SystemExit as e:
        # pygls ends the process this way on `exit`: 0 after `shutdown`, else 1.
        return int(e.code or 0)
    except BrokenPipeError:
        log.error("the client's end of stdout is gone; shutting down")
        return 1
    finally:
        server.hub.kill_all_now()
    return 0
