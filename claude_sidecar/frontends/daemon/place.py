"""Where the shared daemon listens, and the checks that keep it private to its user.

The socket lives in a directory only its user can enter
(``$XDG_RUNTIME_DIR/claude-sidecar``, else ``<tmp>/claude-sidecar-<uid>``): the
directory must be a real directory (not a symlink), owned by the user, with no group or
other permissions; the socket is created 0600. A lock file beside it makes one daemon
per socket; whoever holds the lock may remove a stale socket left by a daemon that died.
The lock file says which daemon holds it: its pid and its claude-sidecar version.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from claude_sidecar import __version__
from claude_sidecar.protocol.errors import AlreadyServing, UnsafePlace

# sockaddr_un's sun_path holds 108 bytes on Linux, the terminating NUL included.
_SUN_PATH_MAX = 107


def default_socket() -> Path:
    """The per-user socket: under ``$XDG_RUNTIME_DIR`` when set, else the temp dir."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / "claude-sidecar" / "daemon.sock"
    return Path(tempfile.gettempdir()) / f"claude-sidecar-{os.geteuid()}" / "daemon.sock"


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
        if len(os.fsencode(self.socket)) > _SUN_PATH_MAX:
            raise UnsafePlace(
                self.socket,
                f"is longer than a Unix socket path may be ({_SUN_PATH_MAX} bytes)",
                "choose a shorter --socket path",
            )

    def prepare_directory(self) -> None:
        """Create the directory 0700 if it is missing; refuse one another user could use."""
        self.check_length()
        with contextlib.suppress(FileExistsError):
            self.directory.mkdir(mode=0o700, parents=True)
        check_private_directory(self.directory)

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


def _check_owner(path: Path, info: os.stat_result) -> None:
    if info.st_uid != os.geteuid():
        raise UnsafePlace(
            path,
            f"belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()})",
            "remove it, or choose another --socket path",
        )
