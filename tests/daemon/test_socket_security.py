"""The shared daemon's socket is its user's alone, and no client can harm the others:
another uid, an unsafe socket directory, garbage, and a client that never reads."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon, StartShared, seqs
from tests.harness import RawClient

NOBODY = 65534


def serve(socket_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "claude_sidecar", "serve", "--socket", str(socket_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def connect(socket_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "claude_sidecar", "connect", "--socket", str(socket_path)],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_socket_directory_other_users_can_enter_is_refused(
    socket_dir: Path, daemon_env: dict[str, str]
) -> None:
    open_dir = socket_dir / "open"
    open_dir.mkdir(mode=0o755)
    open_dir.chmod(0o755)

    served = serve(open_dir / "daemon.sock", daemon_env)
    connected = connect(open_dir / "daemon.sock", daemon_env)

    for run in (served, connected):
        assert run.returncode == 1
        assert "has mode 755: other users could reach the socket" in run.stderr, run.stderr
        assert "chmod 700" in run.stderr
    assert not (open_dir / "daemon.sock").exists()


def test_a_symlinked_socket_directory_is_refused(
    socket_dir: Path, daemon_env: dict[str, str]
) -> None:
    real = socket_dir / "real"
    real.mkdir(mode=0o700)
    (socket_dir / "link").symlink_to(real)

    served = serve(socket_dir / "link" / "daemon.sock", daemon_env)

    assert served.returncode == 1
    assert "is a symbolic link" in served.stderr, served.stderr
    assert list(real.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another uid")
async def test_a_connection_from_another_uid_is_refused_and_others_are_served(
    shared: SharedDaemon,
) -> None:
    # uid 65534 with the right to read any file (so it reaches the socket past the
    # directory's 0700): only the daemon's own check of the peer can refuse it.
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is needed"
    probe = (
        "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
        "s.sendall(b'Content-Length: 2\\r\\n\\r\\n{}'); print(repr(s.recv(100)))"
    )
    outsider = await asyncio.create_subprocess_exec(
        setpriv,
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        "--inh-caps=+dac_override",
        "--ambient-caps=+dac_override",
        sys.executable,
        "-c",
        probe,
        str(shared.socket),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(outsider.communicate(), 60)

    assert out.decode().strip() in ("b''", ""), (out, err)  # closed without a word
    client = await shared.client()
    assert (await client.request("claude/listChannels"))["channels"] == []


async def test_garbage_disconnects_only_the_client_that_sent_it(
    shared: SharedDaemon, workspace: Path
) -> None:
    client = await shared.client()
    channel = await client.new_channel(str(workspace))
    rogue = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    rogue.connect(str(shared.socket))
    rogue.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    rogue.settimeout(30)

    assert rogue.recv(100) == b"", "the daemon hangs up on a stream that is not LSP-framed"
    rogue.close()
    turn = await client.turn(channel, "hello")
    assert turn.result["subtype"] == "success"


async def test_a_client_that_never_reads_is_dropped_and_others_get_everything(
    start_shared: StartShared, workspace: Path, model: ScriptedModel
) -> None:
    # ~2 MB of notifications: more than the pipe and socket buffers between the daemon
    # and a client that stopped reading (~0.5 MB), and its 50 KiB allowance on top.
    model.set_scenario(
        load_scenario({"rules": [], "default": [[{"text": "x" * 600_000}]], "chunk": 100})
    )
    # The stall is long enough that the healthy reader, on a loaded machine, never goes so
    # long without reading anything.
    daemon = await start_shared("--client-buffer", "0.05", "--client-stall", "8")
    reader = await daemon.client()
    channel = await reader.new_channel(str(workspace))
    stuck = RawClient(daemon.env, command=("connect", "--socket", str(daemon.socket)))
    stuck.initialize()
    attach = {"channelId": channel}
    stuck.send({"jsonrpc": "2.0", "id": "a", "method": "claude/attach", "params": attach})
    stuck.reply_to("a")  # and nothing is read from now on

    await reader.turn(channel, "a long answer, please")

    # Eight seconds after it fell behind, with nothing read, the stuck client is dropped
    # (asked of the daemon: its decision is not an event this process can await).
    while len((await reader.request("claude/listChannels"))["channels"][0]["clients"]) > 1:  # noqa: ASYNC110
        await asyncio.sleep(0.2)
    got = seqs(reader, channel)
    assert got == list(range(1, got[-1] + 1))
    stuck.process.kill()
