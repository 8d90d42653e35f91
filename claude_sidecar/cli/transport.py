"""Moving bytes to and from one CLI process; knows nothing of their meaning.

The process runs in its own process group (so its tools and MCP servers die with it)
and, on Linux, asks the kernel to SIGKILL it if the daemon dies, so no CLI outlives
the daemon even when the daemon is killed without a chance to clean up. Elsewhere
(macOS, or forced: ``runtime.host``) the daemon's watchdog does that (``watchdog``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from claude_sidecar.cli import priority
from claude_sidecar.cli.watchdog import watchdog
from claude_sidecar.runtime import host

log = logging.getLogger(__name__)

READ_CHUNK = 256 * 1024
STDERR_TAIL_LINES = 50
_PR_SET_PDEATHSIG = 1


_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGKILL me when the daemon thread that spawned me dies."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@functools.cache
def pdeathsig_wrapper() -> tuple[str, ...] | None:
    """A command prefix that sets the parent-death signal and execs the rest, if any.

    util-linux's ``setpriv --pdeathsig`` does in the child what ``_die_with_parent``
    does, without a ``preexec_fn``: Python can then spawn with vfork instead of a full
    fork of the daemon (~9 ms less per CLI, with the event loop blocked all that time).
    Checked once, as an old setpriv lacks the option.
    """
    setpriv = shutil.which("setpriv") if _LIBC is not None and host.HOST.linux else None
    if setpriv is None:
        return None
    prefix = (setpriv, "--pdeathsig", "KILL", "--")
    try:
        done = subprocess.run(
            [*prefix, "/bin/sh", "-c", "exit 0"], capture_output=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return prefix if done.returncode == 0 else None


def prepare_spawning() -> None:
    """Check or start now what spawning a CLI needs (setpriv's option on Linux, the
    watchdog elsewhere: a few ms), rather than on the first chat's way to its answer."""
    if host.HOST.linux:
        pdeathsig_wrapper()
    else:
        watchdog()


@dataclass(frozen=True)
class ProcessExit:
    """How a process ended: exactly one of ``code`` or ``signal`` is set."""

    code: int | None
    signal: int | None

    @classmethod
    def from_returncode(cls, returncode: int) -> ProcessExit:
        """Split asyncio's returncode (negative for a signal) into code and signal."""
        if returncode < 0:
            return cls(code=None, signal=-returncode)
        return cls(code=returncode, signal=None)


class CliProcess(Protocol):
    """A running CLI as a channel uses it: lines out, bytes in, and its end."""

    @property
    def pid(self) -> int:
        """Its process id (0 when there is no real process)."""

    def stderr_tail(self) -> str:
        """The last lines it wrote to stderr."""

    async def write(self, data: bytes) -> None:
        """Write to its stdin."""

    def reads(self) -> AsyncIterator[bytes]:
        """Its stdout, a block of complete lines per read (each ending in a newline),
        until EOF."""

    def close_stdin(self) -> None:
        """End its input."""

    async def wait(self) -> ProcessExit:
        """Wait for it to exit."""

    async def shutdown(self, grace: float = 5.0, term_grace: float = 2.0) -> ProcessExit:
        """End it politely, then not."""

    def kill_now(self) -> None:
        """SIGKILL it at once."""


class Spawn(Protocol):
    """Starts a CLI process (``Transport.spawn``; tests pass their own)."""

    async def __call__(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str]
    ) -> CliProcess:
        """Start ``argv`` in ``cwd`` with ``env``."""


class Transport:
    """One child process speaking newline-delimited JSON on stdin/stdout."""

    def __init__(self, process: asyncio.subprocess.Process, *, watched: bool = False) -> None:
        self._process = process
        # Enrolled with the daemon's watchdog, which must forget the group once killed.
        self._watched = watched
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())
        self._write_lock = asyncio.Lock()

    @classmethod
    async def spawn(cls, argv: Sequence[str], *, cwd: str, env: Mapping[str, str]) -> Transport:
        """Start ``argv`` in its own process group with piped stdin/stdout/stderr.

        No pipe is shared with the daemon's own stdout: fd 1 of the daemon carries
        JSON-RPC and a child must never write into it.
        """
        guarded = host.HOST.linux
        if guarded:
            wrapper = pdeathsig_wrapper()
            command = [*(wrapper or ()), *argv]
            pass_fds: tuple[int, ...] = ()
        else:
            command, pass_fds = watchdog().command(argv)
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            preexec_fn=_die_with_parent if guarded and not wrapper else None,
            pass_fds=pass_fds,
            limit=READ_CHUNK,
        )
        log.info("spawned pid %d: %s", process.pid, argv[0])
        priority.lower(process.pid)
        return cls(process, watched=not guarded)

    @property
    def pid(self) -> int:
        """The child's process id (also its process group id)."""
        return self._process.pid

    @property
    def exit_info(self) -> ProcessExit | None:
        """How the process ended, or None while it runs."""
        rc = self._process.returncode
        return None if rc is None else ProcessExit.from_returncode(rc)

    def stderr_tail(self) -> str:
        """The last lines the process wrote to stderr."""
        return "\n".join(self._stderr_tail)

    async def write(self, data: bytes) -> None:
        """Write bytes to the child's stdin and wait until the pipe accepts them."""
        stdin = self._process.stdin
        assert stdin is not None
        async with self._write_lock:
            stdin.write(data)
            await stdin.drain()

    async def reads(self) -> AsyncIterator[bytes]:
        """Yield the complete stdout lines of each read as one block, each line ending in
        a newline, until EOF (a last line without one gets it added).

        A block, not a list of lines: the router decodes a read's lines with one call
        (``msgspec.json.Decoder.decode_lines``), and a read that ends at a line's end, as
        most do, is passed on without a copy. A line has no length limit (one longer than
        a read is joined across reads).
        """
        stdout = self._process.stdout
        assert stdout is not None
        pending = bytearray()
        while chunk := await stdout.read(READ_CHUNK):
            end = chunk.rfind(b"\n") + 1
            if not end:
                pending += chunk
                continue
            if pending:
                pending += chunk[:end]
                block = bytes(pending)
                pending.clear()
            else:
                block = chunk[:end]  # the chunk itself when it ends with a newline
            pending += chunk[end:]
            yield block
        if pending:
            yield bytes(pending + b"\n")

    async def _drain_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        pending = b""
        while chunk := await stderr.read(READ_CHUNK):
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                text = raw.decode("utf-8", "replace")
                self._stderr_tail.append(text[:2000])
                log.debug("cli %d stderr: %s", self._process.pid, text[:2000])
        if pending:
            self._stderr_tail.append(pending.decode("utf-8", "replace")[:2000])

    async def wait(self) -> ProcessExit:
        """Wait for the process to exit and for its stderr to be drained."""
        rc = await self._process.wait()
        if self._watched:
            # The watchdog must forget the group before its id can come back (pids wrap
            # within days on macOS, at 99999), and only an empty group's can: its tools end
            # with it.
            self.signal_group(signal.SIGKILL)
        try:
            async with asyncio.timeout(1.0):
                await asyncio.shield(self._stderr_task)
        except TimeoutError:
            # A grandchild may hold stderr open; the tail we have is enough.
            pass
        return ProcessExit.from_returncode(rc)

    def close_stdin(self) -> None:
        """Signal end of input; the CLI then flushes its session file and exits."""
        stdin = self._process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to the child's whole process group (its tools included)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, sig)
        if sig == signal.SIGKILL and self._watched:
            self._watched = False
            watchdog().release(self._process.pid)

    async def shutdown(self, grace: float = 5.0, term_grace: float = 2.0) -> ProcessExit:
        """Close stdin, wait ``grace`` s, then SIGTERM, wait ``term_grace`` s, then SIGKILL."""
        self.close_stdin()
        for sig, wait_for in ((signal.SIGTERM, grace), (signal.SIGKILL, term_grace)):
            if await self._exited_within(wait_for):
                break
            log.warning("pid %d still running; sending %s", self.pid, sig.name)
            self.signal_group(sig)
        else:
            await self._process.wait()
        # The CLI may have left children in its group (e.g. a backgrounded Bash tool).
        self.signal_group(signal.SIGKILL)
        return await self.wait()

    async def _exited_within(self, seconds: float) -> bool:
        try:
            async with asyncio.timeout(seconds):
                await self._process.wait()
        except TimeoutError:
            return False
        return True

    def kill_now(self) -> None:
        """SIGKILL the process group at once; for when there is no time to be polite."""
        self.signal_group(signal.SIGKILL)
