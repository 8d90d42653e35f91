"""A connection's peer, by each system's own call: SO_PEERCRED on Linux, LOCAL_PEERCRED's
struct xucred on macOS (checked here on bytes laid out as macOS lays them out: the call
itself cannot run on Linux), none on the portable path."""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator

import pytest
from claude_sidecar.frontends.daemon.peer import (
    LOCAL_PEERCRED,
    SOL_LOCAL,
    Peer,
    parse_xucred,
    peer_of,
)
from claude_sidecar.runtime.host import Host


def xucred(uid: int, groups: list[int], version: int = 0) -> bytes:
    """<sys/ucred.h>'s struct xucred as macOS fills it (both its CPUs are little-endian):
    u_int cr_version, uid_t cr_uid, short cr_ngroups, 2 bytes of padding, gid_t
    cr_groups[16]."""
    padded = groups + [0] * (16 - len(groups))
    return struct.pack("<IIh2x16I", version, uid, len(groups), *padded)


class MacSocket:
    """A connected socket as macOS answers getsockopt(SOL_LOCAL, LOCAL_PEERCRED)."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.asked: list[tuple[int, int, int]] = []

    def getsockopt(self, level: int, option: int, size: int) -> bytes:
        self.asked.append((level, option, size))
        return self.answer[:size]


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ends = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    yield ends
    for end in ends:
        end.close()


def test_xucred_is_76_bytes_and_gives_the_uid() -> None:
    data = xucred(501, [20, 12, 61, 79])

    assert len(data) == 76
    assert parse_xucred(data) == 501


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (xucred(501, [20])[:40], "76 bytes, got 40"),
        (xucred(501, [20], version=1), "version 1"),
        (struct.pack("<IIh2x16I", 0, 501, 17, *[0] * 16), "17 groups"),
    ],
)
def test_an_xucred_of_another_layout_is_refused(data: bytes, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_xucred(data)


def test_on_macos_the_peer_is_asked_with_local_peercred() -> None:
    sock = MacSocket(xucred(501, [20, 12]))

    peer = peer_of(sock, Host("darwin"))  # type: ignore[arg-type]

    assert peer == Peer(uid=501, pid=None)
    assert sock.asked == [(SOL_LOCAL, LOCAL_PEERCRED, 76)] == [(0, 1, 76)]


def test_on_linux_the_peer_is_asked_with_so_peercred(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    assert peer_of(pair[0], Host("linux")) == Peer(uid=os.geteuid(), pid=os.getpid())


def test_on_the_portable_path_no_call_names_the_peer(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    assert peer_of(pair[0], Host("linux", forced_portable=True)) == Peer(uid=None, pid=None)
