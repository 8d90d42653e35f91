"""Malformed frames are logged and skipped; the daemon keeps serving the next message."""

from __future__ import annotations

import pytest

from tests.harness import RawClient

pytestmark = pytest.mark.same_on_every_cli("the daemon's reading of the client's frames")


def test_garbage_frames_do_not_kill_the_daemon(daemon_env: dict[str, str]) -> None:
    client = RawClient(daemon_env)
    client.initialize()
    assert client.process.stdin is not None
    for garbage in (
        b"Content-Length: 8\r\n\r\nnot json",  # body is not JSON
        b"Content-Length: abc\r\n\r\n",  # length is not a number
        b"Content-Length: 2\r\n\r\n[]",  # JSON but not a message
        b'Content-Length: 15\r\n\r\n{"jsonrpc":"2"}',  # not JSON-RPC 2.0
        b"X-Unknown-Header: 1\r\n\r\n",
    ):  # no length at all
        client.process.stdin.write(garbage)
        client.process.stdin.flush()
        client.send({"jsonrpc": "2.0", "id": 7, "method": "claude/listChannels"})
        assert client.reply_to(7) == {"jsonrpc": "2.0", "id": 7, "result": {"channels": []}}

    client.send({"jsonrpc": "2.0", "id": 8, "method": "shutdown"})
    client.reply_to(8)
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert client.process.wait(20) == 0
