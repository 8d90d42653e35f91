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
terminal's signals to the daemon's group do not reach it. Its program, and each CLI's
enrolment, is ``watchdog_process``.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Sequence

log = logging.getLogger(__name__)

# The watchdog's program and each CLI's enrolment, run outside the package.
_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "watchdog_process.py")


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
