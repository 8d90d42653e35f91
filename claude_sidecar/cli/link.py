"""The link to one CLI process: spawn, handshake, in-queue, reader, control protocol, exit.

A ``CliLink`` moves a channel's lines and nothing more: it writes the in-queue to the
CLI's stdin in order, hands its stdout lines to the channel's ``route``, correlates the
control requests in both directions (``control.ControlProtocol``), and reports the
process's end once (``on_exit``). What a line means is the channel's business.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from claude_sidecar.cli import compat, wire
from claude_sidecar.cli.control import ControlProtocol, Route
from claude_sidecar.cli.discovery import known_cli_version
from claude_sidecar.cli.launch import LaunchSpec
from claude_sidecar.cli.transcript_wait import TranscriptWait
from claude_sidecar.cli.transport import CliProcess, ProcessExit, Spawn
from claude_sidecar.protocol.api import ExitInfo
from claude_sidecar.protocol.errors import (
    ChannelExited,
    CliStartFailed,
    ControlRequestFailed,
    ControlRequestTimeout,
    process_end,
)
from claude_sidecar.runtime.background import Background

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0


class CliLink:
    """One CLI process and the lines to and from it.

    ``name`` gives the owning channel's id for log lines (a warm-pool spare's changes
    when a chat takes it); ``route`` gets the stdout lines of each read, in order, as one
    block, each line ending in a newline (it must not raise: a failure to route one line
    is its to log); ``show`` gets the CLI's requests the daemon refused; ``on_exit`` is
    called once when the process has ended, after every waiter was released; ``hooks``
    are the hook callbacks registered at ``initialize`` (the channel's edit hooks).
    """

    def __init__(
        self,
        name: Callable[[], str],
        spawn: Spawn,
        route: Callable[[bytes], None],
        show: Callable[[bytes], None],
        on_exit: Callable[[ProcessExit], None],
        hooks: Mapping[str, Any],
    ) -> None:
        self._name = name
        self._hooks = hooks
        self._spawn = spawn
        self._route = route
        self._on_exit = on_exit
        self._process: CliProcess | None = None
        self._launch = LaunchSpec(argv=[], env={}, cwd=".")
        # The in-queue: lines for the CLI's stdin, in order; None closes stdin.
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.background = Background(name())
        self._writer: asyncio.Task[None] | None = None
        self._control = ControlProtocol(name, self._queue.put_nowait, show)
        self._exited = asyncio.Event()
        self.exit: ExitInfo | None = None
        # Set for a CLI that writes its transcript after the result line (older CLIs).
        self.transcript: TranscriptWait | None = None

    @property
    def pid(self) -> int:
        """The CLI's process id (0 before it is spawned)."""
        return self._process.pid if self._process else 0

    def send(self, line: bytes) -> None:
        """Queue one line for the CLI's stdin (written after every line queued before)."""
        self._queue.put_nowait(line)

    def serve(self, subtype: str, route: Route[Any]) -> None:
        """Serve the CLI's ``subtype`` control requests with ``route``."""
        self._control.serve(subtype, route)

    def resolve(self, response: wire.ControlResponseBody) -> None:
        """Settle the daemon's request that a ``control_response`` answers."""
        self._control.resolve(response)

    def receive(self, request_id: str, request: msgspec.Raw, raw: bytes) -> None:
        """Serve or refuse one of the CLI's control requests."""
        self._control.receive(request_id, request, raw)

    async def control(self, subtype: str, timeout: float, **fields: Any) -> msgspec.Raw:
        """Send a control request and wait for its answer (empty if it had none)."""
        return await self._control.request(subtype, timeout, **fields)

    async def start(self, launch: LaunchSpec) -> wire.InitializeReply:
        """Spawn the CLI, complete the ``initialize`` handshake and return its reply.

        A CLI older than 2.1.330 writes its transcript after the result line, so its
        result lines are held until it has (``transcript``).
        Raises ``CliStartFailed`` if the process cannot start or exits before answering.
        """
        self._launch = launch
        try:
            self._process = process = await self._spawn(launch.argv, cwd=launch.cwd, env=launch.env)
        except OSError as e:
            launch.remove_files()
            raise CliStartFailed(f"{type(e).__name__}: {e}") from e
        self._writer = self.background.spawn(self._write_loop(), "writer", self._crashed)
        self.background.spawn(self._read_loop(), "reader", self._crashed)
        try:
            return await self._initialize(launch, process)
        except asyncio.CancelledError:
            # Nobody waits for this CLI any more (a request cancelled, a spare dropped as
            # the daemon closes): it must not outlive its start, nor keep its waiter.
            await self.abandon()
            raise

    async def _initialize(self, launch: LaunchSpec, process: CliProcess) -> wire.InitializeReply:
        try:
            answer = await self.control("initialize", START_TIMEOUT, hooks=self._hooks)
        except ChannelExited as e:
            reason = (
                f"it exited during start-up ({process_end(e.data['exitCode'], e.data['signal'])})"
            )
            raise CliStartFailed(reason, process.stderr_tail()) from e
        except (ControlRequestTimeout, ControlRequestFailed) as e:
            tail = process.stderr_tail()
            await self.close(grace=0.5)
            raise CliStartFailed(f"`initialize` failed: {e.message}", tail) from e
        # The CLI has read its config files by now; removed at once, so that a daemon
        # that is killed later leaves none of them behind.
        launch.remove_files()
        reply = wire.InitializeReply()
        try:
            if answer:
                reply = wire.initialize_reply_decoder.decode(answer)
        except msgspec.MsgspecError as e:
            log.warning("channel %s: unexpected initialize answer (%s); no info", self._name(), e)
        if reply.claude_code_version is None:
            # Older CLIs (2.1.233) do not say their version at initialize: ask the binary
            # (once per binary; `--version` answers at once).
            version = await asyncio.to_thread(known_cli_version, launch.argv[0], launch.env)
            reply = msgspec.structs.replace(reply, claude_code_version=version)
        if compat.older_than(reply.claude_code_version, compat.WRITES_TRANSCRIPT_BEFORE_RESULT):
            self.transcript = TranscriptWait(launch.env, launch.cwd)
        return reply

    def stderr_tail(self) -> str:
        """The last lines the CLI wrote to stderr."""
        return self._process.stderr_tail() if self._process else ""

    async def close(self, grace: float = 5.0) -> ExitInfo:
        """Close stdin after every queued line, then wait, SIGTERM, SIGKILL (each ``grace``)."""
        assert self._process is not None and self._writer is not None
        if self.exit is None:
            self._queue.put_nowait(None)
            try:
                async with asyncio.timeout(grace):
                    await asyncio.wait({self._writer})
            except TimeoutError:
                log.warning("channel %s: the CLI is not reading its input", self._name())
            await self._process.shutdown(grace=grace)
            await self._exited.wait()
        self.background.cancel()
        assert self.exit is not None
        return self.exit

    async def abandon(self) -> ExitInfo:
        """SIGKILL the CLI and wait for its end: for a CLI nobody will use (its start was
        cancelled), where a graceful close would wait for work no one wants any more."""
        if self._process is not None:
            self.kill_now()
            await self._exited.wait()
        self.background.cancel()
        assert self.exit is not None
        return self.exit

    def kill_now(self) -> None:
        """SIGKILL the CLI's process group; used when the daemon itself is going away."""
        if self._process is not None and self.exit is None:
            self._process.kill_now()

    def _crashed(self, error: BaseException) -> None:
        # A dead reader or writer would leave the CLI blocked on a pipe: end it.
        self.kill_now()

    async def _write_loop(self) -> None:
        assert self._process is not None
        while True:
            data = await self._queue.get()
            if data is None:
                self._process.close_stdin()
                return
            try:
                await self._process.write(data)
            except (BrokenPipeError, ConnectionResetError) as e:
                # The reader sees EOF and reports the exit; nothing more to write.
                log.info("channel %s: stdin closed (%s)", self._name(), e)
                return

    async def _read_loop(self) -> None:
        process = self._process
        assert process is not None
        try:
            async for block in process.reads():
                transcript = self.transcript
                if transcript is None:
                    self._route(block)
                    continue
                for line in block[:-1].split(b"\n"):
                    if (
                        transcript.unwritten is not None
                        and (session_id := _result_session(line)) is not None
                    ):
                        # Held until the answer before it is in the session file.
                        await transcript.written(self._name(), session_id)
                    self._route(line + b"\n")
        finally:
            ended = await process.wait()
            self.exit = ExitInfo(
                code=ended.code, signal=ended.signal, stderr_tail=process.stderr_tail()
            )
            # Release waiters before telling the channel: if the client is gone, its
            # notification fails, and close() must not wait for that.
            self._exited.set()
            self._launch.remove_files()
            if self._writer is not None:
                self._writer.cancel()
            self._control.fail_all(ChannelExited(self._name(), ended.code, ended.signal))
            name = self._name()
            log.info("channel %s: CLI exited (code %s, signal %s)", name, ended.code, ended.signal)
            self._on_exit(ended)


def _result_session(raw: bytes) -> str | None:
    """The session id of a ``result`` line; None for any other line."""
    try:
        line = wire.line_decoder.decode(raw)
    except msgspec.MsgspecError:
        return None
    return (line.session_id or "") if line.type == "result" else None
