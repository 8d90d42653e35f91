"""Which calls a process takes (Linux's own or the portable ones), the switch the tests
force the portable ones with, and the platforms ``doctor`` calls supported."""

from __future__ import annotations

import pytest
from claude_sidecar.runtime.host import PLATFORM_ENV, Host, platform_support


@pytest.mark.parametrize(
    ("system", "switch", "linux", "darwin"),
    [
        ("linux", None, True, False),
        ("linux", "native", True, False),
        ("linux", "portable", False, False),
        ("darwin", None, False, True),
        ("darwin", "portable", False, True),
        ("freebsd14", None, False, False),
    ],
)
def test_linux_calls_are_taken_on_linux_unless_the_portable_ones_are_forced(
    monkeypatch: pytest.MonkeyPatch, system: str, switch: str | None, linux: bool, darwin: bool
) -> None:
    monkeypatch.setattr("sys.platform", system)
    environ = {} if switch is None else {PLATFORM_ENV: switch}

    detected = Host.detect(environ)

    assert (detected.linux, detected.darwin) == (linux, darwin)
    assert detected.names_socket_peers == (linux or darwin)


def test_an_unknown_switch_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="CLAUDE_SIDECAR_PLATFORM is 'macos'"):
        Host.detect({PLATFORM_ENV: "macos"})


@pytest.mark.parametrize(
    ("system", "machine", "support"),
    [
        ("Linux", "x86_64", "supported"),
        ("Linux", "aarch64", "supported"),
        ("Darwin", "arm64", "supported"),
        ("Darwin", "x86_64", "supported"),
        ("Windows", "AMD64", "throughWsl"),
        ("Linux", "riscv64", "untested"),
        ("FreeBSD", "amd64", "untested"),
    ],
)
def test_linux_on_x86_64_and_arm64_and_macos_are_supported_windows_through_wsl(
    system: str, machine: str, support: str
) -> None:
    said = platform_support(system, machine)

    assert (said.system, said.support) == ("macOS" if system == "Darwin" else system, support)
