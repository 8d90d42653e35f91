"""Who connected to the shared daemon: the peer's uid as the kernel saw it at connect, on
each system by its own call.

* Linux: ``SO_PEERCRED``, a ``struct ucred`` (pid, uid, gid).
* macOS: ``LOCAL_PEERCRED`` at level ``SOL_LOCAL``, a ``struct xucred`` (``cr_version``,
  ``cr_uid``, ``cr_ngroups``, ``cr_groups[16]``); no pid.
* Elsewhere, and on Linux forced onto the portable paths (``runtime.host``), no call
  names the peer: the uid is unknown, and the connection is this user's because it came
  through the socket's directory, which only this user can enter (``connect`` needs
  search permission on every directory of the path): ``place`` checks that directory
  (its owner, mode 0700, and on these paths that no other user can replace it or a
  directory above it) when the daemon starts and again at every connection. What that
  cannot refuse is a process allowed to ignore file permissions (root, or
  ``CAP_DAC_OVERRIDE``), which can read this user's credentials anyway.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

from claude_sidecar.runtime import host

SOL_LOCAL = 0
LOCAL_PEERCRED = 1
XUCRED_VERSION = 0
# struct xucred in <sys/ucred.h>: u_int, uid_t, short, gid_t[NGROUPS = 16], C alignment.
_XUCRED = struct.Struct("@IIh16I")
_UCRED = struct.Struct("3i")


@dataclass(frozen=True)
class Peer:
    """The connecting process, as far as the kernel says."""

    uid: int | None
    """Its effective uid; None where no call says (the directory vouches for it)."""
    pid: int | None
    """Its process id (Linux only)."""


def parse_xucred(data: bytes) -> int:
    """The uid in macOS's ``struct xucred``; ``ValueError`` for another layout."""
    if len(data) < _XUCRED.size:
        raise ValueError(f"struct xucred is {_XUCRED.size} bytes, got {len(data)}")
    version, uid, ngroups, *_groups = _XUCRED.unpack_from(data)
    if version != XUCRED_VERSION:
        raise ValueError(f"struct xucred version {version}, expected {XUCRED_VERSION}")
    if not 0 <= ngroups <= 16:
        raise ValueError(f"struct xucred has {ngroups} groups, at most 16")
    return int(uid)


def peer_of(sock: socket.socket, on: host.Host | None = None) -> Peer:
    """The peer of the connected Unix socket ``sock`` (on this host, or ``on``)."""
    on = on or host.HOST
    if on.linux:
        pid, uid, _gid = _UCRED.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
        )
        return Peer(uid=uid, pid=pid)
    if on.darwin:
        return Peer(
            uid=parse_xucred(sock.getsockopt(SOL_LOCAL, LOCAL_PEERCRED, _XUCRED.size)), pid=None
        )
    return Peer(uid=None, pid=None)
