"""Fixtures of the shared daemon: one ``claude-sidecar serve`` per test on a socket of its
own, and clients that reach it through ``claude-sidecar connect`` as an editor would."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from tests import zygote
from tests.env import daemon_argv
from tests.harness import Sidecar, descendant_pids, wait_until_dead


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    """A private directory for the daemon's socket, short enough for sun_path."""
    path = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class SharedDaemon:
    """A running ``claude-sidecar serve`` and the clients connected to it."""

    socket: Path
    env: dict[str, str]
    process: asyncio.subprocess.Process | None = None
    clients: list[Sidecar] = field(default_factory=list)
    cli_pids: set[int] = field(default_factory=set)

    async def start(self, *args: str) -> None:
        """Start the daemon and wait until its socket answers."""
        # Forked by the test worker's fork server unless the test is marked
        # real_daemon_process (tests/zygote): its start-up is what tests/install and
        # those tests cover.
        self.process = await asyncio.create_subprocess_exec(
            *daemon_argv(
                "--log-level",
                "DEBUG",
                "serve",
                "--socket",
                str(self.socket),
                # No spares unless a test asks (they would double the suite's CPU load), and
                # a daemon that outlives its test by at most a minute if teardown fails.
                "--warm-pool=0",
                "--linger=60",
                *args,
            ),
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
        )
        await wait_for_socket(self.socket, self.process)

    async def client(
        self,
        options: dict[str, Any] | None = None,
        name: str = "pytest",
        handlers: Mapping[str, Callable[[Any, Any], Any]] | None = None,
    ) -> Sidecar:
        """A client connected through ``claude-sidecar connect``, initialized; ``handlers``
        answer the daemon's requests to it."""
        client = Sidecar(self.env, command=("connect", "--socket", str(self.socket)))
        for method, handler in (handlers or {}).items():
            client.client.feature(method)(handler)
        self.clients.append(client)
        await client.start({"clientName": name, **(options or {})})
        return client

    @property
    def pid(self) -> int:
        """The daemon's own pid (for a tests/zygote launcher, the child it stands for)."""
        assert self.process is not None, "the daemon was not started"
        return zygote.daemon_pid(self.process.pid)

    def note_cli_pids(self) -> None:
        """Remember the daemon's CLIs now, to check at the end that none survives it."""
        if self.process is not None:
            self.cli_pids |= descendant_pids(self.process.pid)

    async def stop(self) -> int | None:
        """End every client, then the daemon (SIGTERM); its exit code."""
        for client in self.clients:
            with contextlib.suppress(Exception):
                await client.stop()
        if self.process is None or self.process.returncode is not None:
            return None if self.process is None else self.process.returncode
        self.note_cli_pids()
        self.process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.process.wait(), 30)


async def wait_for_socket(path: Path, process: asyncio.subprocess.Process | None) -> None:
    """Wait until a daemon accepts connections on ``path`` (or has exited)."""
    delay = 0.01
    for _ in range(400):
        if process is not None and process.returncode is not None:
            raise AssertionError(f"the daemon exited with {process.returncode} before serving")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except OSError:
            # Polls: the daemon's readiness is not an event this process can await.
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.1)
            continue
        finally:
            probe.close()
        return
    raise AssertionError(f"no daemon served {path}")


class StartShared(Protocol):
    async def __call__(self, *args: str) -> SharedDaemon: ...


@pytest.fixture
async def start_shared(daemon_env: dict[str, str], socket_dir: Path) -> AsyncIterator[StartShared]:
    """Starts the shared daemon with extra ``serve`` arguments; on teardown its clients
    and the daemon are stopped and none of its CLIs may survive it."""
    daemons: list[SharedDaemon] = []

    async def start(*args: str) -> SharedDaemon:
        daemon = SharedDaemon(socket_dir / "daemon.sock", daemon_env)
        daemons.append(daemon)
        await daemon.start(*args)
        return daemon

    yield start
    for daemon in daemons:
        await daemon.stop()
        pids = set(daemon.cli_pids)
        for client in daemon.clients:
            pids |= set(client.pids)
        assert await wait_until_dead(sorted(pids)) == [], "CLI processes outlived the daemon"


@pytest.fixture
async def shared(start_shared: StartShared) -> SharedDaemon:
    """A shared daemon with no warm pool (its spares would double the suite's CPU)."""
    return await start_shared()


def seqs(client: Sidecar, channel_id: str) -> list[int]:
    """The seq of every notification ``client`` received of the chat, in arrival order."""
    return [n.params["seq"] for n in client.notes if n.channel == channel_id]


def kill_group(pid: int) -> None:
    """SIGKILL one process (a bridge), as a crash would."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
