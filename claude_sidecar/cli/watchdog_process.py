"""The watchdog's own program (``cli.watchdog`` says what it is for), and the step each
CLI's process takes before it runs: ``python -I -S <this file> watch`` or ``... enroll FD
-- COMMAND...``, run outside the package and importing only small standard modules (a
CLI's start waits for it: logging, subprocess and threading took ~12 ms more).

``watch``: fork the watchdog (the starting process exits, so the watchdog is not the
daemon's child) and print its pid; the watchdog reads ``+<group>`` and ``-<group>`` lines
from its stdin until its end, then SIGKILLs every group still enrolled. ``enroll``: write
``+<own pid>`` to descriptor FD, close it and exec COMMAND (the pid, which is the process
group's id, stays).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


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
        with contextlib.suppress(ProcessLookupError, PermissionError):  # ended already
            os.killpg(group, signal.SIGKILL)


def enroll(fd: int, argv: list[str]) -> None:
    """In a CLI's process before it runs: enrol this pid with the watchdog, then exec."""
    with contextlib.suppress(OSError):  # the watchdog is gone: the daemon logs it
        os.write(fd, b"+%d\n" % os.getpid())
    os.close(fd)
    os.execvp(argv[0], argv)


def main(args: list[str]) -> None:
    """``watch`` or ``enroll FD -- COMMAND...``."""
    if args == ["watch"]:
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
        raise SystemExit(f"usage: {sys.argv[0]} watch | enroll FD -- COMMAND...")


if __name__ == "__main__":
    main(sys.argv[1:])
