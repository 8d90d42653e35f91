"""Where the shared daemon listens, and the checks that keep it private to its user.

The socket lives in a directory only its user can enter
(``$XDG_RUNTIME_DIR/claude-sidecar``, else ``<tmp>/claude-sidecar-<uid>``, where
``<tmp>`` is ``$TMPDIR`` (macOS gives each user a private one), else ``/tmp``): the
directory must be a real directory (not a symlink), owned by the user, with no group or
other permissions; the socket is created 0600. A default path too long for a socket
(sun_path: 108 bytes on Linux, 104 on macOS) falls back to ``/tmp/claude-sidecar-<uid>``.
A lock file beside it makes one daemon per socket; whoever holds the lock may remove a
stale socket left by a daemon that died. The lock file says which daemon holds it: its
pid and its claude-sidecar version.

Where the kernel cannot name a connection's peer (``peer``), the directory is what keeps
others out, so there the daemon also refuses a directory that another user could replace
(one under a directory others may write to without the sticky bit), and every connection
re-checks that the directory is still the daemon's own, private one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from claude_sidecar import __version__
from claude_sidecar.protocol.errors import AlreadyServing, UnsafePlace
from claude_sidecar.runtime import host

SOCKET_NAME = "daemon.sock"
SHORT_TMP = Path("/tmp")
"""Where a socket goes when the usual place makes its path too long."""


def default_socket(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user socket: under ``$XDG_RUNTIME_DIR`` when set, else in the temp dir
    (``$TMPDIR``); ``/tmp`` when that path would be too long for a socket."""
    environ = os.environ if environ is None else environ
    runtime = environ.get("XDG_RUNTIME_DIR")
    user_dir = f"claude-sidecar-{os.geteuid()}"
    if runtime and os.path.isabs(runtime):
        usual = Path(runtime) / "claude-sidecar" / SOCKET_NAME
        setting = "XDG_RUNTIME_DIR"
    else:
        tmp = environ.get("TMPDIR")
        # As the temp dir is chosen for files (tempfile), but from ``environ``.
        base = Path(tmp) if tmp and os.path.isabs(tmp) and os.path.isdir(tmp) else None
        base = base or Path(tempfile.gettempdir())
        usual = base / user_dir / SOCKET_NAME
        setting = "TMPDIR"
    for candidate in (usual, SHORT_TMP / user_dir / SOCKET_NAME):
        if _fits(candidate):
            return candidate
    raise UnsafePlace(
        usual,
        f"is longer than a Unix socket path may be ({host.HOST.sun_path_max} bytes), and so "
        f"is {SHORT_TMP / user_dir / SOCKET_NAME}",
        f"set a shorter {setting}, or give --socket a shorter path",
    )


def _fits(path: Path) -> bool:
    return len(os.fsencode(path)) <= host.HOST.sun_path_max


def default_log_file() -> Path:
    """Where a daemon started by ``connect`` logs: the user's state directory."""
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "claude-sidecar" / "daemon.log"


@dataclass(frozen=True)
class Serving:
    """What a lock file says of the daemon that took it (its version: None for a daemon
    older than the version in lock files)."""

    pid: int
    version: str | None


@dataclass(frozen=True)
class Place:
    """A socket path and the lock beside it."""

    socket: Path

    @property
    def directory(self) -> Path:
        """The directory that holds the socket and its lock."""
        return self.socket.parent

    @property
    def lock(self) -> Path:
        """The lock file a serving daemon holds."""
        return self.socket.with_name(self.socket.name + ".lock")

    def check_length(self) -> None:
        """Refuse a socket path the kernel cannot bind (sun_path's limit)."""
        if not _fits(self.socket):
            raise UnsafePlace(
                self.socket,
                f"is longer than a Unix socket path may be ({host.HOST.sun_path_max} bytes here)",
                "choose a shorter --socket path",
            )

    def prepare_directory(self) -> None:
        """Create the directory 0700 if it is missing; refuse one another user could use."""
        self.check_length()
        with contextlib.suppress(FileExistsError):
            self.directory.mkdir(mode=0o700, parents=True)
        check_private_directory(self.directory)

    def pin(self) -> tuple[int, int]:
        """Check the directory as the daemon starts and return its identity (device,
        inode) for ``check_pinned``; where no call names a connection's peer, also refuse
        a directory another user could replace."""
        if not host.HOST.names_socket_peers:
            check_no_one_else_can_replace(self.directory)
        check_private_directory(self.directory)
        info = os.lstat(self.directory)
        return info.st_dev, info.st_ino

    def check_pinned(self, pinned: tuple[int, int]) -> None:
        """Refuse if the directory is no longer the private one the daemon started in
        (a connection came through it: it must still admit this user alone)."""
        check_private_directory(self.directory)
        info = os.lstat(self.directory)
        if (info.st_dev, info.st_ino) != pinned:
            raise UnsafePlace(
                self.directory,
                "was replaced since the daemon started",
                "run `claude-sidecar stop`; the next connection starts a daemon there",
            )

    def check_socket(self) -> None:
        """Refuse a socket file that is not a socket owned by this user with mode 0600."""
        info = os.lstat(self.socket)
        if not stat.S_ISSOCK(info.st_mode):
            raise UnsafePlace(self.socket, "is not a socket", "remove it, or choose another path")
        _check_owner(self.socket, info)
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise UnsafePlace(
                self.socket,
                f"has mode {stat.S_IMODE(info.st_mode):o}: other users could connect",
                f"run `chmod 600 {self.socket}` or remove it",
            )

    def take_lock(self) -> int:
        """Hold the lock for this process's life; returns its descriptor.

        Raises ``AlreadyServing`` when another daemon holds it.
        """
        fd = os.open(self.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            os.close(fd)
            raise AlreadyServing(self.socket) from e
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {__version__}\n".encode())
        return fd

    def serving(self) -> Serving | None:
        """The pid and version the lock file names; None without a readable one (the
        daemon may have died since: connect to know)."""
        try:
            fields = self.lock.read_text().split()
            return Serving(int(fields[0]), fields[1] if len(fields) > 1 else None)
        except (OSError, ValueError, IndexError):
            return None


def check_private_directory(directory: Path) -> None:
    """Refuse a directory that is a symlink, not ours, or open to group or others."""
    info = os.lstat(directory)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePlace(
            directory,
            "is a symbolic link: another user could point it elsewhere",
            "remove the link; the daemon creates the directory itself",
        )
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePlace(directory, "is not a directory", "remove it, or choose another path")
    _check_owner(directory, info)
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise UnsafePlace(
            directory,
            f"has mode {stat.S_IMODE(info.st_mode):o}: other users could reach the socket",
            f"run `chmod 700 {directory}`",
        )


def check_no_one_else_can_replace(directory: Path) -> None:
    """Refuse a directory under one that another user may write to (and so rename or
    replace what it holds) without the sticky bit, which keeps entries their owner's:
    each directory above it must belong to root or this user."""
    parent = Path(os.path.realpath(directory.parent))
    for above in (parent, *parent.parents):
        info = os.stat(above)
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid not in (0, os.geteuid()):
            raise UnsafePlace(
                above,
                f"belongs to uid {info.st_uid}: that user could replace {directory}",
                "choose a --socket path under directories of your own or root's",
            )
        if mode & 0o022 and not mode & stat.S_ISVTX:
            raise UnsafePlace(
                above,
                f"has mode {mode:o} without the sticky bit: other users could replace {directory}",
                f"run `chmod +t {above}`, or choose a --socket path elsewhere",
            )


def _check_owner(path: Path, info: os.stat_result) -> None:
    if info.st_uid != os.geteuid():
        raise UnsafePlace(
            path,
            f"belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()})",
            "remove it, or choose another --socket path",
        )
