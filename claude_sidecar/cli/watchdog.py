"""No CLI outlives the daemon where the kernel cannot tie it to the daemon (macOS: there is
no ``PR_SET_PDEATHSIG``): one watchdog process per daemon kills the CLIs' process groups
once the daemon is gone, however it ended (``kill -9`` included).

The daemon holds the write end of a pipe whose read end is the watchdog's stdin. Each CLI
is started through this file's ``enroll`` (a Python that writes ``+<its pid>`` into the
pipe, closes it and execs the CLI, keeping its pid, which is its process group's id):
the CLI is enrolled before it runs, and since the starting process holds a copy of the
write end until then, the watchdog cannot see the end of the pipe before the enrolment,
even when the daemon is killed between the fork and the exec (a window that
``PR_SET_PDEATHSIG``, set by the child after the fork, leaves open). The daemon writes
``-<pid>`` once it has killed a group itself. When every write end is closed (the daemon
has exited or was killed), the watchdog SIGKILLs each group still enrolled and exits.

The watchdog is not the daemon's child (started through a process that forks it and
exits): it does not count among the daemon's CLIs, and in a session of its own, a
terminal's signals to the daemon's group do not reach it. It runs Python with ``-I -S``
and imports nothing but the standard library.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence

log = logging.getLogger(__name__)

_PROGRAM = os.path.abspath(__file__)


def watch(fd: int = 0) -> None:
    """The watchdog's loop: enrolments from ``fd`` until its end, then the kill."""
    groups: set[int] = set()
    pending = b""
    while chunk := os.read(fd, 4096):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            if line.startswith(b"+"):
                groups.add(int(line[1:]))
            elif line.startswith(b"-"):
                groups.discard(int(line[1:]))
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


def enroll(fd: int, argv: Sequence[str]) -> None:
    """In a CLI's process before it runs: enrol this pid with the watchdog, then exec."""
    with contextlib.suppress(OSError):  # a watchdog gone: the daemon has logged it
        os.write(fd, b"+%d\n" % os.getpid())
    os.close(fd)
    os.execvp(argv[0], list(argv))


class Watchdog:
    """The daemon's end of its watchdog."""

    def __init__(self, fd: int, pid: int) -> None:
        self._fd = fd
        self.pid = pid
        """The watchdog's process id."""
        self._lost = False

    @classmethod
    def start(cls) -> Watchdog:
        """Start a watchdog for this process (it runs until this process has ended)."""
        read, write = os.pipe()
        try:
            starter = subprocess.run(
                [sys.executable, "-I", "-S", _PROGRAM, "watch"],
                stdin=read,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                check=False,
            )
        finally:
            os.close(read)
        if starter.returncode != 0 or not starter.stdout.strip().isdigit():
            os.close(write)
            raise OSError(f"the CLI watchdog did not start (exit code {starter.returncode})")
        return cls(write, int(starter.stdout))

    def command(self, argv: Sequence[str]) -> tuple[list[str], tuple[int, ...]]:
        """The command that runs ``argv`` enrolled, and the descriptor to pass it."""
        enrolling = [sys.executable, "-I", "-S", _PROGRAM, "enroll", str(self._fd), "--"]
        return [*enrolling, *argv], (self._fd,)

    def close(self) -> None:
        """Close the daemon's end, as its exit does: the watchdog kills what is enrolled."""
        os.close(self._fd)

    def release(self, group: int) -> None:
        """The daemon has killed process group ``group`` itself: forget it."""
        try:
            os.write(self._fd, b"-%d\n" % group)
        except OSError as e:
            if not self._lost:
                self._lost = True
                log.warning("the CLI watchdog is gone (%s): a killed daemon may leave CLIs", e)


_started: Watchdog | None = None
_starting = threading.Lock()


def watchdog() -> Watchdog:
    """This process's watchdog, started on first use."""
    global _started
    with _starting:
        if _started is None:
            _started = Watchdog.start()
        return _started


def _main(args: list[str]) -> None:
    if args == ["watch"]:
        # The starter forks the watchdog and exits: it is not the daemon's child.
        pid = os.fork()
        if pid == 0:
            os.chdir("/")  # holds no directory of the daemon's
            # Off the starter's stdout, which the daemon reads to its end.
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            watch()
            os._exit(0)
        print(pid)
    elif args[:1] == ["enroll"] and args[2:3] == ["--"] and args[3:]:
        enroll(int(args[1]), args[3:])
    else:
        raise SystemExit(f"usage: {_PROGRAM} watch | enroll FD -- COMMAND...")


if __name__ == "__main__":
    _main(sys.argv[1:])
