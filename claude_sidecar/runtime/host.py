"""Which of the operating system's calls this process uses: Linux's own, or the portable
ones macOS (and any other Unix) gets.

Linux-only calls: ``SO_PEERCRED`` (a socket peer's uid), ``PR_SET_PDEATHSIG`` (a CLI dies
with the daemon) and ``/proc`` (process facts); and sockaddr_un's 108-byte path. Their
portable paths: ``LOCAL_PEERCRED`` on macOS (else the socket's private directory), a
watchdog process (``cli.watchdog``), ``ps`` and ``/dev/fd``, and macOS's 104 bytes.

``CLAUDE_SIDECAR_PLATFORM=portable`` in the environment makes a Linux process take the
portable paths, so that the tests run them on Linux (a macOS machine is not at hand).
It is read once, when this module is imported, so that a process never changes paths
midway; an environment variable, not a flag, because the tests must reach every process
the suite starts (daemons, ``connect``, the ACP agent) and each passes its environment on.
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass
from typing import Literal

PLATFORM_ENV = "CLAUDE_SIDECAR_PLATFORM"
"""The switch: ``portable`` forces the portable paths; unset (or ``native``) detects."""

Support = Literal["supported", "throughWsl", "untested"]


@dataclass(frozen=True)
class Host:
    """The system this process runs on, and whether it takes Linux's own calls."""

    system: str
    """``sys.platform``: ``linux``, ``darwin``, ..."""
    forced_portable: bool = False
    """Portable paths taken on Linux because ``CLAUDE_SIDECAR_PLATFORM=portable``."""

    @classmethod
    def detect(cls, environ: dict[str, str] | os._Environ[str] = os.environ) -> Host:
        """This process's host, with the switch read from ``environ``."""
        wanted = environ.get(PLATFORM_ENV, "native")
        if wanted not in ("native", "portable"):
            raise ValueError(f"{PLATFORM_ENV} is {wanted!r}: expected 'portable' or 'native'")
        return cls(sys.platform, forced_portable=wanted == "portable")

    @property
    def linux(self) -> bool:
        """Whether Linux's own calls (SO_PEERCRED, PR_SET_PDEATHSIG, /proc) are used."""
        return self.system.startswith("linux") and not self.forced_portable

    @property
    def darwin(self) -> bool:
        """Whether this is macOS (``LOCAL_PEERCRED``); never when forced on Linux."""
        return self.system == "darwin"

    @property
    def names_socket_peers(self) -> bool:
        """Whether a call names a Unix socket's peer (SO_PEERCRED, LOCAL_PEERCRED)."""
        return self.linux or self.darwin

    @property
    def sun_path_max(self) -> int:
        """The longest socket path ``bind`` takes, in bytes, its terminating NUL not
        counted: sun_path is 108 bytes on Linux, 104 on macOS and the BSDs."""
        return 107 if self.linux else 103


HOST = Host.detect()
"""This process's host (tests that call the portable paths in-process replace it)."""


@dataclass(frozen=True)
class PlatformSupport:
    """What ``claude-sidecar doctor`` says of the platform."""

    system: str
    """``Linux``, ``macOS``, ``Windows``, ... (``platform.system()``, macOS by its name)."""
    machine: str
    """The processor architecture as the system names it: ``x86_64``, ``arm64``, ..."""
    support: Support


def platform_support(system: str | None = None, machine: str | None = None) -> PlatformSupport:
    """Linux (x86-64, arm64, WSL's included) and macOS are supported; Windows through WSL
    (the daemon needs Unix sockets, process groups and signals); anything else may work,
    untested."""
    system = system or platform.system()
    machine = machine or platform.machine()
    arch = machine.lower()
    support: Support = "untested"
    if system == "Darwin" or (
        system == "Linux" and arch in ("x86_64", "amd64", "aarch64", "arm64")
    ):
        support = "supported"
    elif system == "Windows" or system.startswith(("CYGWIN", "MSYS", "MINGW")):
        support = "throughWsl"
    return PlatformSupport("macOS" if system == "Darwin" else system, machine, support)
