"""The shared daemon's socket is its user's alone, and no client can harm the others:
another uid, an unsafe socket directory, garbage, and a client that never reads."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon, StartShared, seqs
from tests.env import both_platform_paths
from tests.harness import RawClient, Sidecar, wait_until_dead

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


@both_platform_paths
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


@both_platform_paths
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


def outsider(*caps: str) -> list[str]:
    """The command prefix that runs a process as uid 65534 with ``caps`` (setpriv)."""
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is needed"
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    for cap in caps:
        prefix += [f"--inh-caps=+{cap}", f"--ambient-caps=+{cap}"]
    return prefix


# Connects, sends a message and prints what came of it: the connect's error, "closed" for
# a connection closed without a word, else what the daemon answered.
PROBE = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    sys.exit(print(type(e).__name__))
try:
    s.sendall(b"Content-Length: 2\\r\\n\\r\\n{}")
    print(repr(s.recv(100)) if s.recv(100, socket.MSG_PEEK) else "closed")
except OSError:
    print("closed")
"""


async def probe(socket_path: Path, *prefix: str) -> str:
    """What PROBE prints when run with ``prefix`` (another uid) against the socket."""
    run = await asyncio.create_subprocess_exec(
        *prefix,
        sys.executable,
        "-c",
        PROBE,
        str(socket_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(run.communicate(), 60)
    assert not err, err
    return out.decode().strip()


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another uid")


@needs_root
@both_platform_paths
async def test_another_uid_cannot_reach_the_socket_and_others_are_served(
    shared: SharedDaemon,
) -> None:
    said = await probe(shared.socket, *outsider())

    assert said == "PermissionError", "the 0700 directory keeps it out"
    client = await shared.client()
    assert (await client.request("claude/listChannels"))["channels"] == []


@needs_root
# Native only: where no call names the peer (macOS has LOCAL_PEERCRED; the portable path
# forced on Linux has none), a process that ignores file permissions is let in.
@pytest.mark.parametrize("platform_path", ["native"], indirect=True)
async def test_a_connection_from_another_uid_is_refused_and_others_are_served(
    shared: SharedDaemon,
) -> None:
    # uid 65534 with the right to read any file (so it reaches the socket past the
    # directory's 0700): only the daemon's own check of the peer can refuse it.
    said = await probe(shared.socket, *outsider("dac_override"))

    assert said == "closed", "closed without a word"
    client = await shared.client()
    assert (await client.request("claude/listChannels"))["channels"] == []


@both_platform_paths
async def test_a_socket_directory_opened_to_others_after_the_start_refuses_connections(
    shared: SharedDaemon,
) -> None:
    shared.socket.parent.chmod(0o755)
    said = await probe(shared.socket)
    shared.socket.parent.chmod(0o700)

    assert said == "closed", "this user's own connection is refused while others could connect"
    client = await shared.client()
    assert (await client.request("claude/listChannels"))["channels"] == []


@needs_root
@both_platform_paths
def test_a_socket_directory_of_another_user_is_refused(
    socket_dir: Path, daemon_env: dict[str, str]
) -> None:
    theirs = socket_dir / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)

    served = serve(theirs / "daemon.sock", daemon_env)

    assert served.returncode == 1
    assert f"belongs to uid {NOBODY}, not to this user" in served.stderr, served.stderr


@pytest.mark.parametrize("platform_path", ["portable"], indirect=True)
def test_without_a_peer_check_a_directory_others_could_replace_is_refused(
    socket_dir: Path, daemon_env: dict[str, str]
) -> None:
    # Others may write to the directory above (no sticky bit): they could rename the
    # socket's directory away and put theirs in its place before the daemon binds.
    shared_dir = socket_dir / "shared"
    shared_dir.mkdir()
    shared_dir.chmod(0o777)

    served = serve(shared_dir / "private" / "daemon.sock", daemon_env)

    assert served.returncode == 1
    assert "has mode 777 without the sticky bit" in served.stderr, served.stderr
    assert f"chmod +t {shared_dir}" in served.stderr


@both_platform_paths
async def test_without_xdg_runtime_dir_the_socket_is_in_a_private_directory_of_tmpdir(
    daemon_env: dict[str, str], socket_dir: Path, workspace: Path
) -> None:
    env = {k: v for k, v in daemon_env.items() if k != "XDG_RUNTIME_DIR"}
    env["TMPDIR"] = str(socket_dir)
    command = ("connect", "--daemon-log", str(socket_dir / "daemon.log"), "--linger=1")
    client = Sidecar(env, command=(*command, "--warm-pool=0"))
    await client.start()
    channel = await client.new_channel(str(workspace))
    await client.turn(channel, "hello")

    directory = socket_dir / f"claude-sidecar-{os.geteuid()}"
    info = directory.lstat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (os.geteuid(), 0o700)
    assert stat.S_ISSOCK((directory / "daemon.sock").lstat().st_mode)
    daemon_pid = int((directory / "daemon.sock.lock").read_text().split()[0])
    await client.request("claude/closeChannel", {"channelId": channel})
    await client.stop()  # no chat, no client: it ends
    assert await wait_until_dead([daemon_pid]) == []


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
