"""Facts about processes: which run, whose children they are, a process's resident memory
and this process's open descriptors.

On Linux from ``/proc``; elsewhere (macOS, or forced: ``host``) from ``ps``, whose
``-A -o pid=,ppid=,stat=,rss=`` both procps (Linux) and BSD's ps (macOS) print the same
way, and ``/dev/fd``, this process's descriptors on both. ``ps`` rather than psutil: the
forced portable path then runs on Linux the very commands macOS runs, where psutil's macOS
code (sysctl, libproc) could not run here at all, and the daemon stays pure Python.
"""

from __future__ import annotations

import os
import subprocess

from claude_sidecar.runtime import host

PS_TIMEOUT = 10.0


def _ps(*args: str) -> tuple[int, list[list[str]]]:
    """The pid of a ``ps`` run with ``args`` and the lines it printed, split into fields
    (none: no such process)."""
    with subprocess.Popen(
        ["ps", *args], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    ) as ps:
        try:
            out, _ = ps.communicate(timeout=PS_TIMEOUT)
        except subprocess.TimeoutExpired:
            ps.kill()
            raise
    return ps.pid, [fields for line in out.splitlines() if (fields := line.split())]


def live_children() -> dict[int, list[int]]:
    """Every live (not zombie) process by its parent's pid, from one scan."""
    parents: dict[int, list[int]] = {}
    if host.HOST.linux:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        state, ppid = f.read().rsplit(") ", 1)[1].split()[:2]
                except (OSError, ValueError):
                    continue
                if state != "Z":
                    parents.setdefault(int(ppid), []).append(int(entry))
        return parents
    ps, rows = _ps("-A", "-o", "pid=,ppid=,stat=")
    for fields in rows:
        pid, ppid, state = fields[:3]
        if not state.startswith("Z") and int(pid) != ps:  # ps lists itself
            parents.setdefault(int(ppid), []).append(int(pid))
    return parents


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    return live_children().get(pid, [])


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped by its parent, does not)."""
    if host.HOST.linux:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                return f.read().rsplit(b") ", 1)[1][:1] != b"Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    _, state = _ps("-o", "stat=", "-p", str(pid))
    return bool(state) and not state[0][0].startswith("Z")


def rss_kib(pid: int | None = None) -> int:
    """The resident memory of ``pid`` (this process by default) in KiB; 0 if it is gone.

    Current, not peak: ``resource.getrusage``'s ``ru_maxrss`` is the peak (and in bytes on
    macOS, KiB on Linux).
    """
    if host.HOST.linux:
        try:
            with open(f"/proc/{pid or 'self'}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return 0
        return 0
    _, rss = _ps("-o", "rss=", "-p", str(pid or os.getpid()))
    return int(rss[0][0]) if rss else 0


def open_fds() -> int:
    """How many file descriptors this process has open (the one listing them included)."""
    # /dev/fd is a link to /proc/self/fd on Linux, the process's own descriptors on macOS.
    return len(os.listdir("/proc/self/fd" if host.HOST.linux else "/dev/fd"))
