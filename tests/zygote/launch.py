"""Stands for a daemon the fork server starts: ``python -I -S launch.py SOCKET ARGS...``
behaves as ``python -m claude_sidecar ARGS...`` would, for the process that started it.

It hands its stdin, stdout and stderr, ``ARGS``, environment, folder and umask to the
server (tests/zygote/server.py), lets go of its own copies of those streams (so that the
daemon's closing stdout is an end of file for the test), forwards the signals a test sends,
and ends as the daemon ended: its exit code, or killed by the same signal. Run without
``site`` and with nothing but the standard library: it starts in ~20 ms.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


def main() -> None:
    """Launch the daemon through the server at ``sys.argv[1]`` and stand for it."""
    path, argv = sys.argv[1], sys.argv[2:]
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.connect(path)
    umask = os.umask(0)
    os.umask(umask)
    # A daemon started directly keeps the SIGINT and SIGQUIT its parent ignored (a shell's
    # background job has both ignored): the child is told, whatever the server inherited.
    ignored = [
        sig for sig in (signal.SIGINT, signal.SIGQUIT) if signal.getsignal(sig) == signal.SIG_IGN
    ]
    body = json.dumps(
        {
            "argv": argv,
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "umask": umask,
            "ignored": [int(sig) for sig in ignored],
        }
    ).encode()
    socket.send_fds(server, [struct.pack("!I", len(body))], [0, 1, 2])
    server.sendall(body)
    answers = server.makefile("rb")
    pid = json.loads(answers.readline())["pid"]
    for sig in FORWARDED:
        signal.signal(sig, lambda number, _: os.kill(pid, number))
    # Where a test finds the daemon this process stands for (tests.zygote.daemon_pid): once
    # it is there, a signal sent to this process reaches the daemon.
    record = os.path.join(os.path.dirname(path), "pids", str(os.getpid()))
    with open(record + ".new", "w") as f:
        f.write(str(pid))
    os.rename(record + ".new", record)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    line = answers.readline()
    if not line:
        os._exit(70)  # the server went away without the daemon's status
    status = json.loads(line)["status"]
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
