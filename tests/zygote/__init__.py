"""Daemons for the tests started by forking one that has already imported everything.

A daemon's start costs ~0.5 s of CPU, most of it importing (lsprotocol's types alone
~0.23 s: attrs compiles each class's methods); the suite starts ~750 of them, as many as
it starts CLIs, and the CPU they take is the test command's main cost. The fork server
(``server``) imports the daemon's modules once per test worker and forks a child per
start; ``launch`` is what the test runs in place of ``python -m claude_sidecar``: it hands
its stdin, stdout and stderr, arguments, environment and folder to the server and then
stands for the child (signals forwarded, the child's exit status as its own), so the test
sees one process that behaves as the daemon does.

What differs from a daemon started directly, and what covers it:
- The process the test holds is the launcher, not the daemon: a test that looks at the
  daemon's own process (its children, its memory, its threads) is marked
  ``real_daemon_process`` and starts it directly; ``tests.harness.descendant_pids`` refuses
  a launcher's pid, so such a test cannot pass by looking at the wrong process.
- SIGKILL cannot be forwarded: when the launcher dies, the server kills its child with
  SIGKILL, as the test meant.
- What the daemon computes from its environment at import is computed again in the child
  (``runtime.host.HOST``); the modules read nothing else of it at import.
Starting the daemon itself (imports, ``python -m``, console scripts) stays covered by the
tests that start it directly: tests/install, the shared daemon's ``serve`` that
``connect`` starts and those of tests/daemon's socket and upgrade tests (the fixtures'
``serve`` is forked), the ACP agent under acpx, the demo and doctor, the tests marked
``real_daemon_process``, and the cross-release run's other daemon.
``SIDECAR_TEST_NO_ZYGOTE=1`` starts every daemon of a run directly. The editor suites' tests
(VS Code, Kotlin) get their daemons from a server of their own (``command.sh``, started by
tests/run-all.sh and tests/cross-release.sh), through ``CLAUDE_SIDECAR_BIN``.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

LAUNCHER = Path(__file__).with_name("launch.py")
_ROOT = Path(__file__).parents[2]


def argv(socket: str, *args: str) -> list[str]:
    """The command line that starts a daemon with ``args`` through the server at
    ``socket``: Python without ``site`` (-S) and isolated from the environment (-I)."""
    return [sys.executable, "-I", "-S", str(LAUNCHER), socket, *args]


@contextlib.contextmanager
def serving() -> Iterator[str]:
    """A fork server for this process's tests: its socket's path while it runs."""
    # A short folder: a Unix socket's path has at most 107 bytes.
    with tempfile.TemporaryDirectory(prefix="zygote-", dir="/tmp") as folder:
        socket = str(Path(folder) / "s")
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote.server", socket],
            cwd=_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert server.stdin is not None and server.stdout is not None
        ready = server.stdout.readline()
        assert ready == b"ready\n", f"the fork server did not start: {ready!r}"
        try:
            yield socket
        finally:
            server.stdin.close()  # its end of file: it kills what still runs and exits
            server.wait(30)


def daemon_pid(pid: int, timeout: float = 30) -> int:
    """The daemon's own pid: ``pid`` itself, or for a launcher the child it stands for
    (waited for while the launcher waits for the server's fork; ``timeout``: a hang guard)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return pid  # ended (or never was): nothing stands between
        launcher = str(LAUNCHER).encode()
        if launcher not in command:
            return pid
        socket = command[command.index(launcher) + 1].decode()
        record = Path(socket).parent / "pids" / str(pid)
        if record.exists() and (text := record.read_text()):
            return int(text)
        assert time.monotonic() < deadline, f"launcher {pid} started no daemon ({record})"
        # Polls: the launcher's writing a file is no event this process can await.
        time.sleep(0.01)
