"""``claude-sidecar connect``: an editor's stdio, bridged to the shared daemon's socket.

An editor runs ``claude-sidecar connect`` as its daemon command and speaks to it exactly
as to ``claude-sidecar --stdio``. The bridge connects to the per-user socket (starting the
daemon, detached and logging to a file, when none serves it) and copies bytes both ways
until either side closes. It never writes anything but the daemon's bytes to stdout.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from claude_sidecar.frontends.daemon.place import Place, check_private_directory
from claude_sidecar.protocol.errors import DaemonUnreachable

_CHUNK = 1 << 16
START_TIMEOUT = 30.0


def try_connect(place: Place) -> socket.socket | None:
    """A connection to the daemon serving ``place``, or None when none does (never starts
    one); the directory and socket are checked to be this user's alone."""
    if not place.directory.exists():
        return None
    # Checked before connecting: the socket's directory must be ours alone, or another
    # user could have put a socket of theirs there.
    check_private_directory(place.directory)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.fspath(place.socket))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    place.check_socket()
    return sock


def start_daemon(place: Place, log_file: Path, serve_args: list[str]) -> subprocess.Popen[bytes]:
    """Start ``claude-sidecar serve`` detached from this process (its own session), with
    its log in ``log_file``."""
    log_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(log_file, "ab") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "claude_sidecar",
                "--log-file",
                os.fspath(log_file),
                "serve",
                "--socket",
                os.fspath(place.socket),
                *serve_args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )


def reach(place: Place, log_file: Path, serve_args: list[str]) -> socket.socket:
    """A connection to the daemon on ``place``, started if none serves it."""
    sock = try_connect(place)
    if sock is not None:
        return sock
    place.prepare_directory()
    daemon = start_daemon(place, log_file, serve_args)
    deadline = time.monotonic() + START_TIMEOUT
    delay = 0.01
    while time.monotonic() < deadline:
        sock = try_connect(place)
        if sock is not None:
            return sock
        code = daemon.poll()
        if code is not None and code != 0:
            raise DaemonUnreachable(
                f"the daemon exited with code {code} before serving {place.socket}; see {log_file}",
                socket=os.fspath(place.socket),
                logFile=os.fspath(log_file),
            )
        # (Exit code 0: another `connect` started one first; keep trying to reach it.)
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
    raise DaemonUnreachable(
        f"no daemon answered on {place.socket} within {START_TIMEOUT:g} s; see {log_file}",
        socket=os.fspath(place.socket),
        logFile=os.fspath(log_file),
    )


def _to_daemon(sock: socket.socket) -> None:
    try:
        while data := os.read(0, _CHUNK):
            sock.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        # The editor is gone: the daemon reads EOF, and detaches this client.
        sock.shutdown(socket.SHUT_WR)


def bridge(sock: socket.socket) -> int:
    """Copy stdin to the daemon and the daemon to stdout until the daemon closes."""
    threading.Thread(target=_to_daemon, args=(sock,), daemon=True).start()
    try:
        while data := sock.recv(_CHUNK):
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]
    except BrokenPipeError:
        return 0  # the editor closed its end
    except OSError as e:
        print(f"claude-sidecar connect: {e}", file=sys.stderr)
        return 1
    return 0
