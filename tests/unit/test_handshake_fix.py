"""The fix a protocolMismatch names: the command that upgrades the daemon, by how it was
installed, and how each client upgrades."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from claude_sidecar.cli.signin import LAUNCHER_VARIABLE
from claude_sidecar.frontends.server import handshake


def installed(root: Path, marker: str | None) -> tuple[Path, Path]:
    """A tool environment (``prefix``) holding ``marker``, and a package directory in it."""
    prefix = root / "venv"
    package = prefix / "lib" / "python3.11" / "site-packages" / "claude_sidecar"
    package.mkdir(parents=True)
    if marker is not None:
        (prefix / marker).write_text("")
    return prefix, package


def test_a_uv_tool_install_is_upgraded_with_uv(tmp_path: Path) -> None:
    prefix, package = installed(tmp_path, "uv-receipt.toml")

    assert handshake.daemon_upgrade({}, prefix, package) == "uv tool upgrade claude-sidecar"


def test_a_pipx_install_is_upgraded_with_pipx(tmp_path: Path) -> None:
    prefix, package = installed(tmp_path, "pipx_metadata.json")

    assert handshake.daemon_upgrade({}, prefix, package) == "pipx upgrade claude-sidecar"


def test_any_other_install_is_upgraded_with_pip_of_the_daemons_python(tmp_path: Path) -> None:
    prefix, package = installed(tmp_path, None)

    assert handshake.daemon_upgrade({}, prefix, package) == (
        f"{shlex.quote(sys.executable)} -m pip install --upgrade claude-sidecar"
    )


def test_a_checkout_is_pulled_and_synced_through_bootstrap(tmp_path: Path) -> None:
    checkout = tmp_path / "my src"
    (checkout / "claude_sidecar").mkdir(parents=True)
    (checkout / "bootstrap.py").write_text("")
    prefix, _ = installed(tmp_path, "uv-receipt.toml")

    assert handshake.daemon_upgrade({}, prefix, checkout / "claude_sidecar") == (
        f"git -C '{checkout}' pull && python3 '{checkout}/bootstrap.py' doctor"
    )
    launcher = {LAUNCHER_VARIABLE: "/usr/bin/python3 /src/bootstrap.py"}
    assert handshake.daemon_upgrade(launcher, prefix, checkout / "claude_sidecar") == (
        f"git -C '{checkout}' pull && /usr/bin/python3 /src/bootstrap.py doctor"
    )


def test_each_client_is_told_how_it_upgrades() -> None:
    assert ":Lazy update claude_sidecar" in handshake.client_upgrade("claude_sidecar.nvim")
    assert "Extensions view" in handshake.client_upgrade("VS Code · project")
    assert "Settings > Plugins" in handshake.client_upgrade("claude-sidecar-intellij")
    assert "claude-sidecar-ui jar" in handshake.client_upgrade("swing-app")
    assert handshake.client_upgrade("emacs-claude") == (
        "install a release of emacs-claude that speaks protocol 1"
    )
