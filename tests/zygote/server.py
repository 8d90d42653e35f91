"""The fork server: imports the daemon's modules, then forks a daemon per launcher.

``python -m tests.zygote.server SOCKET`` serves until its stdin closes (its test worker
ended) or SIGTERM. ``python tests/zygote/server.py --in FOLDER`` (any Python whose
``claude_sidecar`` it is to preload: another release's too) serves on ``FOLDER/s`` and
writes ``FOLDER/claude-sidecar``, an executable that runs the launcher on that socket: a
stand-in for the console script, for the tests in other languages (command.sh);
the folder is removed when the server ends.

One thread, one ``selectors`` loop: a forked child must not inherit another thread's held
locks. Per connection: a launcher sends its stdin, stdout and stderr
(SCM_RIGHTS) with a length-prefixed JSON request ``{argv, env, cwd, umask, ignored}``; the server
forks, answers ``{"pid": N}``, and when the child ends (its pidfd turns readable) sends
``{"status": WAITSTATUS}``. A launcher that goes away first (killed) takes its child with it.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import random
import selectors
import shutil
import signal
import socket
import struct
import sys
import tempfile
import traceback
from dataclasses import dataclass
from typing import Any

# What the daemon imports for each of its commands, so that a child imports nothing.
PRELOAD = (
    "claude_sidecar.commands.main",
    "claude_sidecar.frontends.server.server",
    "claude_sidecar.frontends.server.stdio",
    "claude_sidecar.frontends.daemon.admin",
    "claude_sidecar.frontends.daemon.bridge",
    "claude_sidecar.frontends.daemon.place",
    "claude_sidecar.frontends.daemon.serve",
    "claude_sidecar.frontends.daemon.upgrade",
    "claude_sidecar.frontends.acp",
    "claude_sidecar.scripted.server",
    "anyio._backends._asyncio",
)
# What a daemon imports later: the mcp package, which each daemon whose client declares
# editor tools imported at its first chat (~0.5 s of CPU per daemon, as much as its CLI's
# start; every Neovim test paid it). An older release's daemon has no such function.
IMPORT_LATER = ("claude_sidecar.channel.editor_tools", "import_mcp")

HEADER = struct.Struct("!I")
"""The request's length, sent with the three descriptors."""

_OWN_FDS: list[int] = []
"""The server's descriptors that no socket object owns (closed in each child)."""


@dataclass
class Launch:
    """One launcher's connection and the child forked for it."""

    connection: socket.socket
    pid: int
    pidfd: int


def main() -> None:
    """Serve launchers on the socket named by ``sys.argv[1]`` (or in ``--in FOLDER``)."""
    for module in PRELOAD:
        __import__(module)
    module, function = IMPORT_LATER
    with contextlib.suppress(ImportError):
        getattr(importlib.import_module(module), function, lambda: None)()
    # Out of the collector's sight, as each daemon puts its imports when it starts serving
    # (claude_sidecar.runtime.heap.settle_after_imports): its first full collection then
    # walks only its own objects, not every preloaded one (writing to each: a copy of the
    # server's pages in every child).
    gc.collect()
    gc.freeze()
    folder = sys.argv[2] if sys.argv[1] == "--in" else None
    path = os.path.join(folder, "s") if folder else sys.argv[1]
    # Where launchers record the daemon each stands for (tests.zygote.daemon_pid).
    os.makedirs(os.path.join(os.path.dirname(path), "pids"), exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    if folder:
        _write_command(os.path.join(folder, "claude-sidecar"), path)
    try:
        _serve(listener, path)
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def _serve(listener: socket.socket, path: str) -> None:
    """Fork a daemon per launcher that connects to ``listener`` (bound at ``path``)."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    # The worker that started this server holds its stdin: EOF means the worker is gone.
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    stop_r, stop_w = os.pipe()
    _OWN_FDS.extend((stop_r, stop_w))
    signal.signal(signal.SIGTERM, lambda *_: os.write(stop_w, b"x"))
    selector.register(stop_r, selectors.EVENT_READ, "stop")
    print("ready", flush=True)
    launches: dict[int, Launch] = {}
    try:
        while True:
            for key, _ in selector.select():
                what = key.data
                if what in ("stdin", "stop"):
                    return
                if what == "accept":
                    connection, _ = listener.accept()
                    launch = _fork(connection, listener, selector, launches)
                    if launch is not None:
                        launches[launch.pid] = launch
                        selector.register(launch.pidfd, selectors.EVENT_READ, ("exit", launch))
                        selector.register(connection, selectors.EVENT_READ, ("gone", launch))
                elif what[0] == "exit":
                    # (Unless its launcher's end, in the same select, reaped it already.)
                    if launches.get(what[1].pid) is what[1]:
                        _reap(what[1], selector, launches, report=True)
                elif what[0] == "gone":
                    # The launcher died (or misbehaved): its daemon goes with it, as if killed.
                    launch = what[1]
                    if launches.get(launch.pid) is launch:
                        os.kill(launch.pid, signal.SIGKILL)
                        _reap(launch, selector, launches, report=False)
    finally:
        for launch in list(launches.values()):
            os.kill(launch.pid, signal.SIGKILL)
            _reap(launch, selector, launches, report=False)
        listener.close()
        os.unlink(path)


def _write_command(command: str, path: str) -> None:
    """An executable at ``command`` that starts a daemon through this server, as the
    ``claude-sidecar`` console script would start one (written whole, then renamed: a
    suite that finds it can run it)."""
    launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")
    script = f'#!/bin/sh\nexec "{sys.executable}" -I -S "{launcher}" "{path}" "$@"\n'
    with open(command + ".new", "w") as f:
        f.write(script)
    os.chmod(command + ".new", 0o755)
    os.rename(command + ".new", command)


def _fork(
    connection: socket.socket,
    listener: socket.socket,
    selector: selectors.BaseSelector,
    launches: dict[int, Launch],
) -> Launch | None:
    """Read a launcher's request and fork its daemon; None if the request was broken."""
    try:
        head, fds, _, _ = socket.recv_fds(connection, HEADER.size, 3)
        (length,) = HEADER.unpack(head)
        body = b""
        while len(body) < length:
            chunk = connection.recv(length - len(body))
            if not chunk:
                raise ConnectionError("the launcher closed mid-request")
            body += chunk
        request = json.loads(body)
    except (OSError, ValueError, struct.error) as e:
        print(f"zygote: a broken request: {e}", file=sys.stderr, flush=True)
        connection.close()
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    # The server's SIGTERM handler must never run in a child (a signal the launcher
    # forwards at once): blocked across the fork, the child unblocks it once its own
    # handling is the default, and a SIGTERM that came meanwhile ends it then.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        _become_daemon(request, fds, [listener, connection], selector, launches)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    for fd in fds:
        os.close(fd)
    try:
        connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    except OSError:
        # The launcher went before it learnt its daemon's pid (killed right after it
        # started): its daemon goes with it, as when it goes later ("gone"), and the server
        # serves on. A BrokenPipeError here once ended the server mid-run (ci44: every
        # later daemon of that editor suite failed to start).
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        connection.close()
        return None
    return Launch(connection, pid, os.pidfd_open(pid))


def _reap(
    launch: Launch,
    selector: selectors.BaseSelector,
    launches: dict[int, Launch],
    report: bool,
) -> None:
    """Collect an ended child; with ``report``, tell its launcher how it ended."""
    _, status = os.waitpid(launch.pid, 0)
    launches.pop(launch.pid, None)
    for fd in (launch.pidfd, launch.connection):
        selector.unregister(fd)
    os.close(launch.pidfd)
    if report:
        with contextlib.suppress(OSError):  # the launcher is gone too
            launch.connection.sendall(json.dumps({"status": status}).encode() + b"\n")
    launch.connection.close()


def _become_daemon(
    request: dict[str, Any],
    fds: list[int],
    sockets: list[socket.socket],
    selector: selectors.BaseSelector,
    launches: dict[int, Launch],
) -> None:
    """In the forked child: take the launcher's place and run the daemon's ``main``.
    Never returns: the child's exit is its ``main``'s."""
    code = 1
    interrupted = False
    try:
        selector.close()
        for s in sockets:
            s.close()
        for launch in launches.values():
            launch.connection.close()
            os.close(launch.pidfd)
        for fd in _OWN_FDS:
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        # SIGINT and SIGQUIT as a fresh Python started by the launcher would have them, not
        # as the server inherited them (ignored, when a shell started it in the background).
        ignored = set(request.get("ignored", ()))
        sigint = signal.SIG_IGN if signal.SIGINT in ignored else signal.default_int_handler
        signal.signal(signal.SIGINT, sigint)
        signal.signal(
            signal.SIGQUIT, signal.SIG_IGN if signal.SIGQUIT in ignored else signal.SIG_DFL
        )
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        # State a fresh process would have made from its own environment and entropy.
        random.seed()
        tempfile.tempdir = None
        from claude_sidecar.runtime import host

        host.HOST = host.Host.detect()
        import claude_sidecar
        from claude_sidecar.commands.main import main as daemon_main

        # As `python -m claude_sidecar` would have them.
        sys.argv = [os.path.join(os.path.dirname(claude_sidecar.__file__), "__main__.py")]
        sys.argv += request["argv"]
        sys.path[0] = request["cwd"]
        try:
            code = daemon_main(request["argv"])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int | None):
                print(e.code, file=sys.stderr)
    except KeyboardInterrupt:
        # As Python ends on an uncaught KeyboardInterrupt: its traceback, then SIGINT itself.
        traceback.print_exc()
        interrupted = True
    except BaseException:  # the child's uncaught error, printed as Python would
        traceback.print_exc()
        code = 1
    finally:
        # What the interpreter's exit would do: atexit (logging's shutdown among them) and
        # the streams flushed; then out without unwinding into the server's frames.
        try:
            import atexit

            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            if interrupted:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGINT)
            os._exit(code)


if __name__ == "__main__":
    main()
