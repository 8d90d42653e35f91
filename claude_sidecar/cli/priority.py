"""The CLIs run at a lower CPU priority than the editor they serve.

A CLI streaming an answer takes most of a core, and the editor drawing that answer needs
its UI thread on a core at the same moments: on a two-core machine the VS Code page's
`claude/turnEnded` reached the page 150-300 ms after the daemon sent it, waiting behind the
CLI for a core, and key echo doubled (issue 43). At nice 10 the same answer's end was on
screen within 100 ms, at the cost of the CLI's share of a busy machine only (an idle core
runs it at full speed whatever its niceness). So each CLI is lowered as it starts, its
tools with it (they inherit its niceness).

How, per system: ``setpriority`` on the CLI's process group (every thread of every process
in it: a process's own niceness is its first thread's on Linux). Linux also groups the
processes of a session (``setsid``: each CLI leads its own) into an *autogroup* that the
scheduler weighs against the others as one, by the autogroup's own niceness alone: there,
that is written too (``/proc/PID/autogroup``; the kernel takes a write by a user without
CAP_SYS_ADMIN once per 100 ms, so a refused one is tried again). The portable path (macOS,
and Linux forced by ``CLAUDE_SIDECAR_PLATFORM=portable``) is ``setpriority`` alone.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
from collections.abc import Mapping

from claude_sidecar.runtime import host

log = logging.getLogger(__name__)

DEFAULT_NICE = 10
"""The niceness CLIs start at unless the daemon is told otherwise (``--cli-nice``)."""

NICE_ENV = "CLAUDE_SIDECAR_CLI_NICE"
"""The niceness when ``--cli-nice`` is not given: for an editor that starts the daemon with
arguments of its own (and for test suites, whose every process is a test)."""

_AUTOGROUP_SWITCH = "/proc/sys/kernel/sched_autogroup_enabled"
_AUTOGROUP_TRIES = 30
_AUTOGROUP_RETRY_S = 0.11

_nice = DEFAULT_NICE


def nice_from(environ: Mapping[str, str]) -> int:
    """The niceness ``environ`` asks for (``CLAUDE_SIDECAR_CLI_NICE``), else DEFAULT_NICE;
    ValueError naming the variable for anything but 0-19."""
    value = environ.get(NICE_ENV)
    if value is None:
        return DEFAULT_NICE
    if not value.strip().isdigit() or not 0 <= int(value) <= 19:
        raise ValueError(f"{NICE_ENV} is {value!r}: expected a niceness from 0 to 19")
    return int(value)


def configure(nice: int) -> None:
    """Set the niceness of the CLIs this daemon starts from now on (0: as the daemon's)."""
    global _nice
    if not 0 <= nice <= 19:
        raise ValueError(f"a CLI's niceness is 0-19, not {nice}")
    _nice = nice


def lower(pid: int) -> None:
    """Lower the CLI just started as ``pid`` (its process group's leader and its session's)
    to the configured niceness. A CLI that cannot be lowered runs as it is (logged)."""
    if _nice <= os.getpriority(os.PRIO_PROCESS, 0):
        return  # 0, or the daemon runs at that niceness or lower already: the CLI inherits it
    try:
        os.setpriority(os.PRIO_PGRP, pid, _nice)
    except OSError as e:
        log.warning("CLI pid %d keeps its priority: setpriority: %s", pid, e)
    if host.HOST.linux and _autogroups():
        _set_autogroup(pid, _AUTOGROUP_TRIES)


@functools.cache
def _autogroups() -> bool:
    try:
        with open(_AUTOGROUP_SWITCH, encoding="ascii") as switch:
            return switch.read().strip() == "1"
    except OSError:
        return False


def _set_autogroup(pid: int, tries: int) -> None:
    try:
        with open(f"/proc/{pid}/autogroup", "w", encoding="ascii") as group:
            group.write(str(_nice))
    except OSError as e:
        if e.errno == errno.EAGAIN and tries > 1:
            # Another process's autogroup was set less than 100 ms ago. (asyncio imported
            # here: the commands that start no CLI import this module too.)
            import asyncio

            asyncio.get_running_loop().call_later(
                _AUTOGROUP_RETRY_S, _set_autogroup, pid, tries - 1
            )
        elif e.errno != errno.ENOENT:  # ENOENT: the CLI has ended already
            log.warning("CLI pid %d keeps its autogroup's priority: %s", pid, e)
