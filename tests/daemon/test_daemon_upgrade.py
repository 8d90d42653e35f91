"""After an upgrade: `connect` finds a shared daemon of another claude-sidecar version. One
without chats is replaced by the new version; one with chats keeps serving them, and
`connect` says how to replace it once they are done."""

from __future__ import annotations

import asyncio
import io
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from claude_sidecar import __version__
from claude_sidecar.frontends.daemon.admin import open_session
from claude_sidecar.frontends.daemon.place import Place, Serving
from claude_sidecar.frontends.daemon.upgrade import retire_other_version

from tests.daemon.conftest import wait_for_socket
from tests.harness import Sidecar, descendant_pids, wait_until_dead

OLD = "0.0.1+old"

StartOld = Callable[[], Awaitable[asyncio.subprocess.Process]]


@pytest.fixture
async def old_daemon(daemon_env: dict[str, str], socket_dir: Path) -> AsyncIterator[StartOld]:
    """Starts `claude-sidecar serve` as version OLD would run (its version patched in);
    on teardown it, the daemon that replaced it and all their CLIs are gone."""
    started: list[asyncio.subprocess.Process] = []
    socket = socket_dir / "daemon.sock"

    async def start() -> asyncio.subprocess.Process:
        code = (
            f"import sys, claude_sidecar; claude_sidecar.__version__ = {OLD!r}; "
            "from claude_sidecar.commands.main import main; sys.exit(main(sys.argv[1:]))"
        )
        process = await asyncio.create_subprocess_exec(
            *(sys.executable, "-c", code, "serve", "--socket", str(socket)),
            *("--warm-pool=0", "--linger=60"),
            env=daemon_env,
            stdin=asyncio.subprocess.DEVNULL,
        )
        started.append(process)
        await wait_for_socket(socket, process)
        return process

    yield start
    pids: set[int] = set()
    for process in started:
        pids |= descendant_pids(process.pid)
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 30)
    replacement = Place(socket).serving()
    if replacement is not None:
        pids |= descendant_pids(replacement.pid)
        stop = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "claude_sidecar", "stop", "--force", "--socket", str(socket)),
            env=daemon_env,
            stdout=asyncio.subprocess.DEVNULL,
        )
        await asyncio.wait_for(stop.wait(), 60)
        pids.add(replacement.pid)
    assert await wait_until_dead(sorted(pids)) == [], "a daemon or CLI outlived the test"


async def test_connect_replaces_an_idle_daemon_of_another_version(
    old_daemon: StartOld, daemon_env: dict[str, str], socket_dir: Path
) -> None:
    old = await old_daemon()
    socket = socket_dir / "daemon.sock"
    assert Place(socket).serving() == Serving(old.pid, OLD)

    client = Sidecar(
        daemon_env,
        command=("connect", "--socket", str(socket), "--warm-pool=0", "--linger=60"),
        args=("--daemon-log", str(socket_dir / "daemon.log")),
    )
    await client.start()
    try:
        assert client.initialized.server_info is not None
        assert client.initialized.server_info.version == __version__
        assert await asyncio.wait_for(old.wait(), 30) == 0, "the old daemon stopped cleanly"
        serving = Place(socket).serving()
        assert serving is not None and serving.version == __version__
    finally:
        await client.stop()


async def test_two_editors_connecting_at_once_after_an_upgrade_both_reach_the_new_version(
    old_daemon: StartOld, daemon_env: dict[str, str], socket_dir: Path
) -> None:
    old = await old_daemon()
    socket = socket_dir / "daemon.sock"
    clients = [
        Sidecar(
            daemon_env,
            command=("connect", "--socket", str(socket), "--warm-pool=0", "--linger=60"),
            args=("--daemon-log", str(socket_dir / "daemon.log")),
        )
        for _ in range(2)
    ]
    # Each may find the old daemon already stopping (the other stopped it): neither fails.
    await asyncio.gather(*(client.start() for client in clients))
    try:
        for client in clients:
            assert client.initialized.server_info is not None
            assert client.initialized.server_info.version == __version__
        assert await asyncio.wait_for(old.wait(), 30) == 0
    finally:
        for client in clients:
            await client.stop()


async def test_a_daemon_of_another_version_with_chats_keeps_serving_and_connect_says_why(
    old_daemon: StartOld, socket_dir: Path, workspace: Path
) -> None:
    old = await old_daemon()
    place = Place(socket_dir / "daemon.sock")

    def open_chat() -> str:
        opened = open_session(place, "pytest")
        assert opened is not None
        session, _ = opened
        try:
            return str(session.request("claude/newChannel", {"cwd": str(workspace)})["channelId"])
        finally:
            session.close()

    chat = await asyncio.to_thread(open_chat)
    said = io.StringIO()
    await asyncio.to_thread(retire_other_version, place, said)

    assert old.returncode is None, "a daemon with chats is not stopped"
    assert said.getvalue() == (
        f"claude-sidecar connect: the shared daemon (pid {old.pid}) runs claude-sidecar {OLD}, "
        f"this is {__version__}; it has 1 chat(s), which would end with it, so it keeps "
        f"serving. Run `claude-sidecar stop` once they are done: the next connection starts "
        f"{__version__}.\n"
    )

    def chats() -> list[str]:
        opened = open_session(place, "pytest")
        assert opened is not None
        session, _ = opened
        try:
            return [c["channelId"] for c in session.request("claude/listChannels", {})["channels"]]
        finally:
            session.close()

    assert await asyncio.to_thread(chats) == [chat]


async def test_connect_leaves_a_daemon_of_its_own_version_alone(
    start_shared: Callable[..., Awaitable[object]], socket_dir: Path
) -> None:
    await start_shared()
    place = Place(socket_dir / "daemon.sock")
    before = place.serving()
    said = io.StringIO()

    await asyncio.to_thread(retire_other_version, place, said)

    assert before is not None and before.version == __version__
    assert (place.serving(), said.getvalue()) == (before, "")
