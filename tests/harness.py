"""A test client for the daemon: pytest-lsp's LanguageClient plus a notification log.

``Sidecar`` starts ``python -m claude_sidecar --stdio`` with its own HOME, points the
CLI at a stand-in model, records every ``claude/*`` notification, and checks on the way
out that each channel's ``seq`` ran 1, 2, 3, ... without gaps.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from claude_sidecar.protocol import api
from claude_sidecar.runtime.processes import children_of, live_children
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests import zygote
from tests.env import daemon_argv

NOTIFICATIONS = tuple(api.NOTIFICATIONS)
FAKE_CLI = Path(__file__).parent / "fakes" / "fake_cli.py"
"""A synthetic CLI for what the real one cannot do on cue (see its docstring)."""


def json_object(value: Any) -> dict[str, Any]:
    """``value``, read from JSON, as the object it must be (else the test fails)."""
    assert isinstance(value, dict), f"expected a JSON object, got {value!r}"
    return value


def json_str(value: Any) -> str:
    """``value``, read from JSON, as the string it must be (else the test fails)."""
    assert isinstance(value, str), f"expected a JSON string, got {value!r}"
    return value


@dataclass
class RpcError:
    """A request's error answer: its code, message and ``data`` object (``{}`` if none)."""

    code: int
    message: str
    data: dict[str, Any]


@dataclass
class Note:
    """One notification as received, with its arrival time."""

    method: str
    params: dict[str, Any]
    at: float = field(default_factory=time.monotonic)

    @property
    def channel(self) -> str:
        """The channel it is about ("" for claude/sessionsChanged, about none)."""
        return json_str(self.params.get("channelId", ""))

    @property
    def message(self) -> Any:
        """The CLI message of a ``claude/message`` (usually a dict; any JSON passes through)."""
        return self.params.get("message") or {}


def is_result(note: Note) -> bool:
    """True for a ``claude/message`` carrying the CLI's ``result`` (the end of a turn)."""
    return isinstance(note.message, dict) and note.message.get("type") == "result"


@dataclass
class Turn:
    """One turn as :meth:`Sidecar.turn` saw it, from the send to ``claude/turnEnded``."""

    message_id: str
    start: int
    """Where the turn starts in ``Sidecar.notes`` (its length before the send): for
    ``after=``."""
    notes: list[Note]
    """The channel's notifications from the send to ``claude/turnEnded``, inclusive."""

    @property
    def ended(self) -> dict[str, Any]:
        """The ``claude/turnEnded`` params: outcome, cost, usage, messageIds, ..."""
        return self.notes[-1].params

    @property
    def result(self) -> dict[str, Any]:
        """The CLI's ``result`` message of the turn."""
        result = next((n.message for n in self.notes if is_result(n)), None)
        assert result is not None, f"the turn ended without a result: {self.ended}"
        return json_object(result)


# The worker's one LSP converter, for every test's client: cattrs generates a type's
# (un)structure code the first time a converter meets it, ~50 ms of CPU per test with a
# converter of its own.
_shared_converter = functools.cache(get_converter)


class Sidecar:
    """A running daemon and a client connected to it."""

    def __init__(
        self,
        env: dict[str, str],
        args: tuple[str, ...] = (),
        command: tuple[str, ...] = ("--stdio",),
        argv: tuple[str, ...] | None = None,
    ) -> None:
        self.env = env
        self.args = args
        # How the daemon is reached: its own over --stdio, or `connect` to a shared one;
        # ``argv``, when given, is the whole command line (`ssh HOST claude-sidecar ...`).
        self.command = command
        self.argv = argv
        self.client = LanguageClient(converter_factory=_shared_converter)
        self.notes: list[Note] = []
        self.pids: list[int] = []
        self.initialized = types.InitializeResult(capabilities=types.ServerCapabilities())
        self._changed = asyncio.Event()
        self._stopped = False
        for method in NOTIFICATIONS:
            self.client.feature(method)(self._recorder(method))

    def _recorder(self, method: str) -> Callable[[Any, Any], None]:
        def record(ls: Any, params: Any) -> None:
            self.notes.append(Note(method, params))
            self._changed.set()

        return record

    async def start(self, initialization_options: dict[str, Any] | None = None) -> None:
        argv = self.argv or daemon_argv("--log-level", "DEBUG", *self.command, *self.args)
        await self.client.start_io(*argv, env=self.env)
        self.initialized = await self.client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                # No warm pool unless a test asks: spare CLIs would double the suite's CPU load.
                initialization_options={
                    "clientName": "pytest",
                    "warmPool": {"size": 0},
                    # Many tests read the CLI's lines themselves.
                    "rawMessages": True,
                    **(initialization_options or {}),
                },
            )
        )

    @property
    def features(self) -> dict[str, Any]:
        """What the daemon said of itself at ``initialize`` (capabilities.experimental)."""
        experimental = self.initialized.capabilities.experimental
        assert isinstance(experimental, dict), "initialize has not answered yet"
        return json_object(experimental["claudeSidecar"])

    @property
    def process(self) -> asyncio.subprocess.Process:
        assert self.client._server is not None
        return self.client._server

    async def stop(self) -> None:
        """Shut the daemon down (``shutdown``, ``exit``); once, however often called."""
        if self._stopped:
            return
        self._stopped = True
        if self.process.returncode is None:
            await asyncio.wait_for(self.client.shutdown_session(), 30)
        await self.client.stop()

    # ------------------------------------------------------------ requests

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and return its result (raises JsonRpcException on error)."""
        return await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params or {}), 60
        )

    async def error(self, method: str, params: dict[str, Any]) -> RpcError:
        """Send a request that must fail and return the error."""
        try:
            result = await self.request(method, params)
        except JsonRpcException as e:
            return RpcError(e.code, e.message, {} if e.data is None else json_object(e.data))
        raise AssertionError(f"{method} succeeded with {result!r}; an error was expected")

    async def open_channel(
        self, method: str = "claude/newChannel", **params: Any
    ) -> dict[str, Any]:
        """Open a channel (newChannel or forkSession) and return the whole result; its pid
        is checked on teardown."""
        result = json_object(await self.request(method, params))
        self.pids.append(result["pid"])
        return result

    async def new_channel(self, cwd: str, **options: Any) -> str:
        return json_str((await self.open_channel(cwd=cwd, **options))["channelId"])

    async def chat(self, cwd: str, *prompts: str, **options: Any) -> tuple[str, list[str]]:
        """A closed chat of ``prompts`` in ``cwd`` (a channel opened with ``options``),
        each turn a success: its session id and message ids."""
        opened = await self.open_channel(cwd=cwd, **options)
        ids = []
        for prompt in prompts:
            turn = await self.turn(opened["channelId"], prompt)
            assert turn.result["subtype"] == "success", turn.result
            ids.append(turn.message_id)
        await self.request("claude/closeChannel", {"channelId": opened["channelId"]})
        return opened["sessionId"], ids

    async def send(self, channel_id: str, text: str, **extra: Any) -> str:
        result = await self.request(
            "claude/sendMessage", {"channelId": channel_id, "text": text, **extra}
        )
        return json_str(result["messageId"])

    async def turn(self, channel_id: str, text: str, *, timeout: float = 60, **extra: Any) -> Turn:
        """Send a message (``extra``: more sendMessage params) and wait for the
        ``claude/turnEnded`` of the channel that follows (which comes right after the
        turn's ``result``, or alone when the CLI dies mid-turn)."""
        start = len(self.notes)
        message_id = await self.send(channel_id, text, **extra)
        ended = await self.wait_for(
            lambda n: n.channel == channel_id and n.method == "claude/turnEnded", timeout, start
        )
        notes = []
        for note in self.notes[start:]:
            if note.channel == channel_id:
                notes.append(note)
            if note is ended:
                break
        return Turn(message_id, start, notes)

    # ------------------------------------------------------------ notifications

    def of(self, channel_id: str, method: str | None = None) -> list[Note]:
        return [
            n
            for n in self.notes
            if n.channel == channel_id and (method is None or n.method == method)
        ]

    async def wait_for(
        self, predicate: Callable[[Note], bool], timeout: float = 60, after: int = 0
    ) -> Note:
        """Wait for a notification (among those from index ``after``) matching ``predicate``."""
        deadline = time.monotonic() + timeout
        checked = after
        while True:
            for note in self.notes[checked:]:
                if predicate(note):
                    return note
            checked = len(self.notes)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"no matching notification within {timeout} s; "
                    f"last ones: {[n.params for n in self.notes[-5:]]}"
                )
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def wait_for_result(
        self, channel_id: str, after: int = 0, timeout: float = 60
    ) -> dict[str, Any]:
        """Wait for the next ``result`` message of a channel and return it."""
        note = await self.wait_for(
            lambda n: n.channel == channel_id and is_result(n), timeout, after
        )
        return json_object(note.message)

    async def wait_for_state(
        self, channel_id: str, state: str, after: int = 0, timeout: float = 60
    ) -> Note:
        return await self.wait_for(
            lambda n: n.channel == channel_id
            and n.method == "claude/status"
            and n.params["state"] == state,
            timeout,
            after,
        )

    def text(self, channel_id: str, kind: str = "text", after: int = 0) -> str:
        """Concatenate the channel's deltas of one kind."""
        return "".join(
            n.params["text"]
            for n in self.notes[after:]
            if n.channel == channel_id and n.method == "claude/delta" and n.params["kind"] == kind
        )

    def assert_seq_contiguous(self) -> None:
        by_channel: dict[str, list[int]] = {}
        for note in self.notes:
            if "channelId" not in note.params:
                continue  # claude/sessionsChanged: not about a channel
            by_channel.setdefault(note.channel, []).append(note.params["seq"])
        for channel_id, seqs in by_channel.items():
            assert seqs == list(range(1, len(seqs) + 1)), (
                f"seq of {channel_id} is not 1..n: {seqs[:50]}"
            )


class StartSidecar(Protocol):
    """The ``sidecar_with`` fixture: starts a daemon with these ``initializationOptions``
    and variables added to ``daemon_env``; ``args`` go on the daemon's command line,
    ``handlers`` answer the daemon's requests to the client (registered before start) and
    ``argv``, when given, is the daemon's whole command line."""

    def __call__(
        self,
        options: dict[str, Any],
        *,
        args: tuple[str, ...] = (),
        handlers: Mapping[str, Callable[[Any, Any], Any]] | None = None,
        argv: tuple[str, ...] | None = None,
        **env: str,
    ) -> Awaitable[Sidecar]: ...


def assistant_text(messages: list[dict[str, Any]]) -> str:
    """Concatenate the text blocks of the ``assistant`` messages given."""
    return "".join(
        block.get("text", "")
        for m in messages
        if m.get("type") == "assistant"
        for block in m["message"]["content"]
        if block.get("type") == "text"
    )


def tool_results(model: Any) -> list[dict[str, Any]]:
    """Every tool_result block in the stand-in model's latest main request, in order."""
    return [
        block
        for m in model.main_requests[-1]["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]


def pid_alive(pid: int) -> bool:
    """True if ``pid`` runs and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False
    except IndexError:
        return os.path.exists(f"/proc/{pid}")


def child_pids(pid: int) -> set[int]:
    """The live processes whose parent is ``pid`` (a daemon's CLIs); for a launcher of
    tests/zygote, those of the daemon it stands for."""
    return set(children_of(zygote.daemon_pid(pid)))


def descendant_pids(pid: int) -> set[int]:
    """The live processes below ``pid`` (its children, theirs, ...), from one scan of /proc;
    with tests run in parallel, a process scan must only see its own test's processes. For a
    launcher of tests/zygote, those below the daemon it stands for."""
    parents = live_children()
    found: set[int] = set()
    todo = [zygote.daemon_pid(pid)]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def logged_stats(log: Path, after: int, timeout: float = 30) -> dict[str, int]:
    """The figures of the first ``stats:`` line a daemon logged into ``log`` past offset
    ``after`` (what ``kill -USR1`` asks for; the signal is handled by the daemon's event
    loop, so it is waited for; the timeout is a hang guard)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [m for m in re.finditer(r"stats: (.*)", log.read_text()) if m.start() >= after]
        if lines:
            return {k: int(v) for k, v in (pair.split("=") for pair in lines[-1].group(1).split())}
        time.sleep(0.05)
    raise AssertionError(f"no stats line in {log}: {log.read_text()[-2000:]}")


async def wait_until_dead(pids: list[int], timeout: float = 30) -> list[int]:
    """Wait for every pid to end; return those still alive after ``timeout`` (a hang
    guard: a process's end is no event this process can await)."""
    deadline = time.monotonic() + timeout
    # Polls: another process ending is not an event this process can await.
    while (alive := [p for p in pids if pid_alive(p)]) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    return alive


class RawClient:
    """A bare JSON-RPC peer over pipes, for what a well-behaved client never does."""

    def __init__(
        self,
        env: dict[str, str],
        args: tuple[str, ...] = ("--log-level", "DEBUG"),
        command: tuple[str, ...] = ("--stdio",),
    ) -> None:
        import subprocess

        self.process = subprocess.Popen(
            daemon_argv(*args, *command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        # One watchdog for the client's life (a timer per message would start a thread per
        # message: 200,000 of them in the slow-client test). While a read is waiting, it
        # kills a daemon silent past the read's deadline, so the read ends instead of hanging.
        self._deadline: float | None = None
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while self.process.poll() is None:
            deadline = self._deadline
            if deadline is not None and time.monotonic() > deadline:
                self.process.kill()
                return
            time.sleep(0.1)

    def send(self, message: dict[str, Any]) -> None:
        import json

        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def receive(self, timeout: float = 30.0) -> dict[str, Any]:
        """Read the next message; a daemon silent for ``timeout`` s is killed and the test
        fails (rather than hang on a blocking read)."""
        import json

        assert self.process.stdout is not None
        self._deadline = time.monotonic() + timeout
        try:
            length = 0
            while (line := self.process.stdout.readline()) != b"\r\n":
                if not line:
                    raise AssertionError(
                        f"no message from the daemon within {timeout} s (or it closed stdout)"
                    )
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            return json_object(json.loads(self.process.stdout.read(length)))
        finally:
            self._deadline = None

    def reply_to(self, request_id: int | str, timeout: float = 30.0) -> dict[str, Any]:
        """Read messages until the response to ``request_id`` (each within ``timeout`` s)."""
        while (message := self.receive(timeout)).get("id") != request_id or "method" in message:
            pass
        return message

    def initialize(self) -> None:
        self.send(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}
        )
        self.reply_to(0)


def frame(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message with its Content-Length header."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def exchange(
    env: dict[str, str], requests: list[dict[str, Any]]
) -> tuple[dict[Any, dict[str, Any]], subprocess.CompletedProcess[bytes]]:
    """Pipe framed requests into a daemon; return its replies by id and the process."""
    done = subprocess.run(
        daemon_argv("--stdio", "--log-level", "DEBUG"),
        input=b"".join(frame(r) for r in requests),
        capture_output=True,
        env=env,
        timeout=60,
    )
    replies, rest = [], done.stdout
    while rest:
        header, _, rest = rest.partition(b"\r\n\r\n")
        fields = dict(line.split(b": ", 1) for line in header.split(b"\r\n"))
        assert set(fields) <= {b"Content-Length", b"Content-Type"}, (
            f"stray bytes on stdout: {header[:80]!r}"
        )
        length = int(fields[b"Content-Length"])
        replies.append(json.loads(rest[:length]))
        rest = rest[length:]
    return {r.get("id"): r for r in replies}, done
