"""The channel's control protocol, driven line by line through a scripted process (no CLI).

Each test starts a channel on a ``ScriptedProcess`` (the ``transport.Spawn`` seam), plays
the CLI's side of the wire by hand, and checks what the channel writes back and which
events it publishes. Behaviour the real CLI shows is tested against it elsewhere; these
cover the edges the real CLI does not produce on cue.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import pytest
from claude_sidecar.channel.channel import Channel
from claude_sidecar.cli.launch import LaunchSpec
from claude_sidecar.cli.transport import ProcessExit
from claude_sidecar.feed import events
from claude_sidecar.protocol.api import NewChannelParams, RespondPermissionParams
from claude_sidecar.protocol.errors import ChannelExited, PermissionRequestNotFound


class ScriptedProcess:
    """A CLI process whose stdout the test writes and whose stdin the test reads."""

    pid = 4242

    def __init__(self) -> None:
        self._out: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._in: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._ended = asyncio.Event()

    # the CLI's side, for the test

    def say(self, line: dict[str, Any] | bytes) -> None:
        """Write one line to the channel, as the CLI would on its stdout."""
        self._out.put_nowait(line if isinstance(line, bytes) else json.dumps(line).encode())

    async def heard(self) -> dict[str, Any]:
        """The next line the channel wrote to the CLI's stdin."""
        async with asyncio.timeout(5):
            return await self._in.get()

    def exit(self) -> None:
        """End the process (stdout EOF, then exit code 0)."""
        self._out.put_nowait(None)

    # transport.CliProcess

    def stderr_tail(self) -> str:
        return ""

    async def write(self, data: bytes) -> None:
        for line in data.splitlines():
            self._in.put_nowait(json.loads(line))

    async def reads(self) -> AsyncIterator[bytes]:
        while (line := await self._out.get()) is not None:
            yield line + b"\n"
        self._ended.set()

    def close_stdin(self) -> None:
        self.exit()

    async def wait(self) -> ProcessExit:
        await self._ended.wait()
        return ProcessExit(code=0, signal=None)

    async def shutdown(self, grace: float = 5.0, term_grace: float = 2.0) -> ProcessExit:
        self.exit()
        return await self.wait()

    def kill_now(self) -> None:
        self.exit()


class Recorder:
    """A feed that keeps every event."""

    def __init__(self) -> None:
        self.events: list[events.ChannelEvent] = []
        self.deltas: list[str] = []
        # Deltas' text and CLI lines' bytes, in the order they came.
        self.stream: list[str | bytes] = []

    def publish(self, event: events.ChannelEvent) -> None:
        self.events.append(event)
        if isinstance(event, events.CliMessage):
            self.stream.append(event.raw)

    def delta(
        self,
        kind: str,
        index: int,
        text: str,
        parent_tool_use_id: str | None,
        entry_id: str | None = None,
    ) -> None:
        self.deltas.append(text)
        self.stream.append(text)

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def _success(request_id: str, response: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response or {}},
    }


@pytest.fixture
async def wired(tmp_path: Any) -> AsyncIterator[tuple[Channel, ScriptedProcess, Recorder]]:
    process, feed = ScriptedProcess(), Recorder()

    async def spawn(argv: Sequence[str], *, cwd: str, env: Mapping[str, str]) -> ScriptedProcess:
        return process

    channel = Channel("ch-1", NewChannelParams(cwd=str(tmp_path)), "sid", feed, spawn=spawn)
    starting = asyncio.create_task(
        channel.start(LaunchSpec(argv=["claude"], env={}, cwd=str(tmp_path)))
    )
    initialize = await process.heard()
    assert initialize["request"]["subtype"] == "initialize"
    process.say(_success(initialize["request_id"], {"claude_code_version": "2.1.330"}))
    await starting
    yield channel, process, feed
    if channel.exit is None:
        await channel.close(grace=1)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_tool_use_ask_waits_for_the_client_and_its_answer_goes_back_once(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    channel, process, feed = wired
    process.say(
        {
            "type": "control_request",
            "request_id": "ask-1",
            "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}},
        }
    )
    await _settle()

    assert [e.request.request_id for e in feed.of(events.PermissionAsked)] == ["ask-1"]
    asked = channel.state  # (a local: mypy would keep channel.state narrowed to this value)
    assert asked == "awaitingPermission"
    channel.respond_permission(
        RespondPermissionParams(channel_id="ch-1", request_id="ask-1", decision="allow")
    )
    answer = await process.heard()
    assert answer["response"] == {
        "subtype": "success",
        "request_id": "ask-1",
        "response": {"behavior": "allow", "updatedInput": {"command": "ls"}},
    }
    assert channel.state == "running"
    with pytest.raises(PermissionRequestNotFound):
        channel.respond_permission(
            RespondPermissionParams(channel_id="ch-1", request_id="ask-1", decision="deny")
        )


async def test_an_ask_the_cli_withdraws_is_withdrawn_from_the_client_without_an_answer(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    channel, process, feed = wired
    process.say(
        {
            "type": "control_request",
            "request_id": "ask-2",
            "request": {"subtype": "can_use_tool", "tool_name": "Write", "input": {}},
        }
    )
    process.say({"type": "control_cancel_request", "request_id": "ask-2"})
    await _settle()

    assert [(e.request_id, e.reason) for e in feed.of(events.PermissionWithdrawn)] == [
        ("ask-2", "withdrawn")
    ]
    assert len(channel.permissions) == 0
    assert process._in.empty(), "a withdrawn ask gets no answer"


async def test_a_request_of_an_unknown_subtype_is_refused_and_shown_to_the_client(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    _, process, feed = wired
    line = {
        "type": "control_request",
        "request_id": "odd-1",
        "request": {"subtype": "elicitation", "message": "?"},
    }
    process.say(line)

    refusal = await process.heard()
    assert refusal["response"]["subtype"] == "error"
    assert refusal["response"]["request_id"] == "odd-1"
    assert "elicitation" in refusal["response"]["error"]
    assert [json.loads(e.raw) for e in feed.of(events.CliMessage)] == [line]


async def test_a_request_that_does_not_decode_is_refused_not_served(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    channel, process, feed = wired
    process.say(
        {
            "type": "control_request",
            "request_id": "bad-1",
            "request": {"subtype": "can_use_tool", "tool_name": 42},
        }
    )

    refusal = await process.heard()
    assert refusal["response"]["subtype"] == "error"
    assert "malformed can_use_tool" in refusal["response"]["error"]
    assert len(channel.permissions) == 0
    assert feed.of(events.PermissionAsked) == []
    assert len(feed.of(events.CliMessage)) == 1


async def test_an_edit_hook_pair_publishes_the_file_change(
    wired: tuple[Channel, ScriptedProcess, Recorder], tmp_path: Any
) -> None:
    _, process, feed = wired
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    tool = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(path), "content": "new\n"},
        "tool_use_id": "tu-1",
    }
    process.say(
        {
            "type": "control_request",
            "request_id": "pre",
            "request": {
                "subtype": "hook_callback",
                "callback_id": "sidecar_pre_edit",
                "input": tool,
            },
        }
    )
    assert (await process.heard())["response"]["response"] == {}
    path.write_text("new\n")
    process.say(
        {
            "type": "control_request",
            "request_id": "post",
            "request": {
                "subtype": "hook_callback",
                "callback_id": "sidecar_post_edit",
                "input": tool,
            },
        }
    )
    assert (await process.heard())["response"]["response"] == {}

    [updated] = feed.of(events.FileUpdated)
    assert (updated.change.old, updated.change.new) == ("old\n", "new\n")
    assert "-old\n+new\n" in (updated.change.diff or "")


async def test_requests_waiting_when_the_cli_exits_fail_with_channel_exited(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    channel, process, feed = wired
    asking = asyncio.create_task(channel.control("get_context_usage", 5))
    assert (await process.heard())["request"]["subtype"] == "get_context_usage"
    process.exit()

    with pytest.raises(ChannelExited):
        await asking
    assert channel.state == "exited"
    assert feed.of(events.StatusChanged)[-1].state == "exited"


async def test_streamed_text_goes_to_the_delta_path_and_other_lines_verbatim(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    _, process, feed = wired
    for text in ("Hel", "lo"):
        process.say(
            {
                "type": "stream_event",
                "event": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": text},
                },
            }
        )
    start = {"type": "stream_event", "event": {"type": "message_start", "message": {}}}
    process.say(start)
    await _settle()

    assert feed.deltas == ["Hel", "lo"]
    assert [json.loads(e.raw) for e in feed.of(events.CliMessage)] == [start]


async def test_a_retry_the_cli_waits_for_is_over_when_the_model_streams_again(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    channel, process, feed = wired
    process.say(
        {
            "type": "system",
            "subtype": "api_retry",
            "attempt": 1,
            "max_retries": 10,
            "retry_delay_ms": 500,
            "error_status": 529,
            "error": "overloaded",
        }
    )
    await _settle()
    waiting = channel.settings.retry
    process.say({"type": "stream_event", "event": {"type": "message_start", "message": {}}})
    await _settle()

    assert waiting is not None and waiting.error_status == 529
    assert channel.settings.retry is None
    statuses = [e.retry.error_status if e.retry else None for e in feed.of(events.StatusChanged)]
    assert statuses[-2:] == [529, None], "the retry is published, then its end"


async def test_an_ask_the_cli_withdraws_while_interrupting_is_withdrawn_as_interrupted(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    channel, process, feed = wired
    process.say(
        {
            "type": "control_request",
            "request_id": "ask-3",
            "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {}},
        }
    )
    await _settle()
    interrupting = asyncio.create_task(channel.interrupt())
    interrupt = await process.heard()
    assert interrupt["request"]["subtype"] == "interrupt"
    process.say({"type": "control_cancel_request", "request_id": "ask-3"})
    process.say(_success(interrupt["request_id"]))
    await interrupting

    assert [(e.request_id, e.reason) for e in feed.of(events.PermissionWithdrawn)] == [
        ("ask-3", "interrupted")
    ]


async def test_the_private_config_files_are_gone_once_the_cli_has_started(tmp_path: Any) -> None:
    process = ScriptedProcess()
    config = tmp_path / "mcp.json"
    config.write_text("{}")

    async def spawn(argv: Sequence[str], *, cwd: str, env: Mapping[str, str]) -> ScriptedProcess:
        return process

    channel = Channel("ch-1", NewChannelParams(cwd=str(tmp_path)), "sid", Recorder(), spawn=spawn)
    launch = LaunchSpec(argv=["claude"], env={}, cwd=str(tmp_path), files=(str(config),))
    starting = asyncio.create_task(channel.start(launch))
    initialize = await process.heard()
    assert config.exists(), "the CLI reads it while it starts"
    process.say(_success(initialize["request_id"], {"claude_code_version": "2.1.330"}))
    await starting

    assert not config.exists()
    await channel.close(grace=1)


def _delta_line(text: str, *, compact: bool) -> bytes:
    line = {
        "type": "stream_event",
        "event": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": text},
        },
        "parent_tool_use_id": None,
    }
    return json.dumps(line, separators=(",", ":") if compact else None).encode()


def _block(*lines: bytes) -> bytes:
    """Lines as one read hands them to the router: each ending in a newline."""
    return b"".join(line + b"\n" for line in lines)


_BLOCK_START = (
    b'{"type":"stream_event","event":{"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":""}},"parent_tool_use_id":null}'
)
_SYSTEM = b'{"type":"system","subtype":"noted","text":"a line the client may know"}'


async def test_a_read_routes_every_line_in_order_and_passes_other_lines_on_as_their_own_bytes(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    channel, _, feed = wired
    spaced = _delta_line("spaced", compact=False)

    channel.lines.route_all(
        _block(
            _BLOCK_START,
            _delta_line("a", compact=True),
            _SYSTEM,
            spaced,
            _delta_line("b", compact=True),
        )
    )

    assert feed.stream == [_BLOCK_START, "a", _SYSTEM, "spaced", "b"]


async def test_a_read_with_a_blank_or_non_json_line_routes_its_other_lines_as_a_clean_read_does(
    wired: tuple[Channel, ScriptedProcess, Recorder],
    caplog: pytest.LogCaptureFixture,
) -> None:
    channel, _, feed = wired
    lines = [_BLOCK_START, _delta_line("a", compact=True), _SYSTEM, _delta_line("b", compact=True)]
    channel.lines.route_all(_block(*lines))
    clean = list(feed.stream)
    feed.stream.clear()

    # decode_lines skips a blank line and fails on one that is not JSON: either way no
    # line may take another's place.
    for odd in (b"", b"not json"):
        channel.lines.route_all(_block(lines[0], lines[1], odd, lines[2], lines[3]))
        assert feed.stream == clean
        feed.stream.clear()
    assert "skipping non-JSON line: b'not json'" in caplog.text


async def test_a_read_of_long_lines_routes_them_in_order(
    wired: tuple[Channel, ScriptedProcess, Recorder],
) -> None:
    channel, _, feed = wired
    # A file's contents in a tool result: the read goes line by line.
    long = b'{"type":"system","subtype":"noted","text":"%s"}' % (b"x" * 100_000)

    channel.lines.route_all(_block(_BLOCK_START, long, _delta_line("a", compact=True)))

    assert feed.stream == [_BLOCK_START, long, "a"]


async def test_a_line_that_fails_to_route_is_logged_and_the_rest_of_its_read_is_routed(
    wired: tuple[Channel, ScriptedProcess, Recorder],
    caplog: pytest.LogCaptureFixture,
) -> None:
    channel, _, feed = wired
    broken = b'{"type":"system","subtype":"broken"}'
    publish = feed.publish

    def fail_on_broken(event: events.ChannelEvent) -> None:
        if isinstance(event, events.CliMessage) and event.raw == broken:
            raise RuntimeError("a routing bug")
        publish(event)

    feed.publish = fail_on_broken  # type: ignore[method-assign]
    after = b'{"type":"system","subtype":"after"}'
    channel.lines.route_all(
        _block(_delta_line("a", compact=True), broken, _delta_line("b", compact=True), after)
    )

    assert feed.deltas == ["a", "b"]
    assert [e.raw for e in feed.of(events.CliMessage)] == [after]
    assert "failed to route" in caplog.text
