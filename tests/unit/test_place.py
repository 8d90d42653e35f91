"""Where the shared daemon's socket goes: the per-user directory, and a path within the
system's sun_path (108 bytes on Linux, 104 on macOS), falling back to /tmp when the usual
place is too long, with an error naming the setting when nothing fits."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from claude_sidecar.frontends.daemon import place
from claude_sidecar.frontends.daemon.place import Place, default_socket
from claude_sidecar.protocol.errors import UnsafePlace
from claude_sidecar.runtime import host
from claude_sidecar.runtime.host import Host

LINUX = Host("linux")
MACOS = Host("darwin")
PORTABLE = Host("linux", forced_portable=True)
USER_DIR = f"claude-sidecar-{os.geteuid()}"


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A directory in /tmp (pytest's own are too long for a socket path under them)."""
    path = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))
    yield path
    shutil.rmtree(path)


@pytest.fixture
def tmpdir_of_length(short_tmp: Path) -> Callable[[int], str]:
    """Makes a TMPDIR that makes the default socket path ``total`` bytes long: padded under
    a short directory, as pytest's own (its run number, the test's name) can be too long."""

    def make(total: int) -> str:
        tail = len(f"/{USER_DIR}/daemon.sock")
        pad = total - tail - len(str(short_tmp)) - 1
        assert pad > 0, f"{short_tmp} leaves no room for a path of {total} bytes"
        made = short_tmp / ("t" * pad)
        made.mkdir(exist_ok=True)
        return str(made)

    return make


@pytest.fixture(params=[LINUX, MACOS, PORTABLE], ids=["linux", "macos", "portable"])
def on(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Host:
    monkeypatch.setattr(host, "HOST", request.param)
    return request.param  # type: ignore[no-any-return]


def test_under_xdg_runtime_dir_when_it_is_set(on: Host) -> None:
    env = {"XDG_RUNTIME_DIR": "/run/user/1000", "TMPDIR": "/var/tmp"}

    assert default_socket(env) == Path("/run/user/1000/claude-sidecar/daemon.sock")


def test_without_it_a_directory_of_this_users_own_in_tmpdir(on: Host, short_tmp: Path) -> None:
    # As long as macOS's: /var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/
    tmpdir = short_tmp / "zz" / "zyxvpxvq6csfxvn_n0000000000000" / "T"
    tmpdir.mkdir(parents=True)

    assert default_socket({"TMPDIR": f"{tmpdir}/"}) == tmpdir / USER_DIR / "daemon.sock"


def test_a_tmpdir_that_is_not_a_directory_is_passed_over(on: Host, tmp_path: Path) -> None:
    chosen = default_socket({"TMPDIR": str(tmp_path / "missing")})

    assert chosen == Path(tempfile.gettempdir()) / USER_DIR / "daemon.sock"


def test_sun_path_is_108_bytes_on_linux_104_on_macos_and_on_the_portable_path(on: Host) -> None:
    assert on.sun_path_max + 1 == (108 if on is LINUX else 104)


@pytest.mark.parametrize("total", [103, 104, 107, 108])
def test_a_path_too_long_for_the_system_falls_back_to_tmp(
    on: Host, total: int, tmpdir_of_length: Callable[[int], str]
) -> None:
    usual = Path(tmpdir_of_length(total)) / USER_DIR / "daemon.sock"
    assert len(str(usual)) == total

    chosen = default_socket({"TMPDIR": str(usual.parents[1])})

    fits = total < on.sun_path_max + 1
    assert chosen == (usual if fits else Path("/tmp") / USER_DIR / "daemon.sock")


def test_when_nothing_fits_the_error_names_the_setting(
    on: Host, monkeypatch: pytest.MonkeyPatch, tmpdir_of_length: Callable[[int], str]
) -> None:
    monkeypatch.setattr(place, "SHORT_TMP", Path("/" + "s" * 120))

    with pytest.raises(UnsafePlace) as refused:
        default_socket({"TMPDIR": tmpdir_of_length(120)})

    assert "set a shorter TMPDIR, or give --socket a shorter path" in refused.value.message


def test_a_socket_path_of_105_bytes_is_taken_on_linux(
    monkeypatch: pytest.MonkeyPatch, tmpdir_of_length: Callable[[int], str]
) -> None:
    monkeypatch.setattr(host, "HOST", LINUX)

    Place(Path(tmpdir_of_length(105)) / USER_DIR / "daemon.sock").check_length()


@pytest.mark.parametrize("system", [MACOS, PORTABLE], ids=["macos", "portable"])
def test_a_socket_path_over_macos_limit_is_refused_naming_the_option(
    system: Host, monkeypatch: pytest.MonkeyPatch, tmpdir_of_length: Callable[[int], str]
) -> None:
    monkeypatch.setattr(host, "HOST", system)

    with pytest.raises(UnsafePlace, match="choose a shorter --socket path"):
        Place(Path(tmpdir_of_length(105)) / USER_DIR / "daemon.sock").check_length()
