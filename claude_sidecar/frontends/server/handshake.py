"""The version handshake of ``initialize``: which clients this daemon serves, and the fix.

A client states the ``claude/*`` protocol it speaks and the oldest daemon protocol it works
with (``initializationOptions.protocol``; none: a client from before the handshake, which
speaks protocol 1). A client too old for this daemon, or one that needs a newer daemon, is
refused with one ``protocolMismatch`` error naming the side to upgrade and the command that
does it: for the daemon, the command of the way it was installed (a uv tool, pipx, a checkout
run through bootstrap.py, or pip).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from claude_sidecar import __version__
from claude_sidecar.cli.signin import LAUNCHER_VARIABLE
from claude_sidecar.protocol import api
from claude_sidecar.protocol.errors import ProtocolMismatch

_PACKAGE_DIR = Path(__file__).resolve().parents[2]


def check_client(
    protocol: api.ClientProtocol, client_name: str | None, env: Mapping[str, str]
) -> None:
    """Raise ``ProtocolMismatch`` when this daemon cannot serve a client of ``protocol``
    (``client_name``: its ``clientName`` option, named when ``protocol`` names no client)."""
    name = protocol.client.name if protocol.client is not None else client_name
    client = name or "this editor's claude-sidecar client"
    if protocol.version < api.OLDEST_CLIENT_PROTOCOL:
        upgrade, fix = "client", client_upgrade(client)
    elif protocol.needs > api.PROTOCOL_VERSION:
        upgrade, fix = "daemon", daemon_upgrade(env)
    else:
        return
    raise ProtocolMismatch(
        upgrade=upgrade,
        client=client,
        daemon_protocol=api.PROTOCOL_VERSION,
        oldest_client_protocol=api.OLDEST_CLIENT_PROTOCOL,
        client_protocol=protocol.version,
        client_oldest=protocol.needs,
        daemon_version=__version__,
        fix=fix,
    )


def features(shared: bool) -> list[str]:
    """The optional features a connection has: all but the shared daemon's own over --stdio."""
    return [f for f in api.FEATURES if shared or f not in api.SHARED_ONLY_FEATURES]


def client_upgrade(client: str) -> str:
    """How the user upgrades the client called ``client`` (its ``protocol.client.name``)."""
    known = client.lower()
    if "nvim" in known or "neovim" in known:
        return (
            "update the Neovim plugin with your plugin manager (e.g. `:Lazy update "
            "claude_sidecar`), then restart Neovim"
        )
    if any(name in known for name in ("vs code", "vscode", "visual studio code")):
        return "update the claude-sidecar extension in VS Code's Extensions view, then reload"
    if "swing" in known:
        return (
            "download the newer claude-sidecar-ui jar (the standalone app) and start it "
            "with `java -jar`"
        )
    if "intellij" in known or "jetbrains" in known:
        return (
            "update the claude-sidecar plugin (Settings > Plugins, or install the newer "
            "plugin jar), then restart the IDE"
        )
    return f"install a release of {client} that speaks protocol {api.OLDEST_CLIENT_PROTOCOL}"


def daemon_upgrade(
    env: Mapping[str, str], prefix: Path | None = None, package_dir: Path = _PACKAGE_DIR
) -> str:
    """The command that upgrades this daemon, by how it was installed: a checkout (bootstrap.py
    beside the package), a uv tool (its receipt in ``prefix``, this Python's environment), a
    pipx venv (its metadata there), else pip of this Python."""
    prefix_dir = Path(sys.prefix) if prefix is None else prefix
    checkout = package_dir.parent
    if (checkout / "bootstrap.py").is_file():
        launcher = env.get(LAUNCHER_VARIABLE) or (
            f"python3 {shlex.quote(str(checkout / 'bootstrap.py'))}"
        )
        # bootstrap.py syncs the checkout's environment before it runs doctor.
        return f"git -C {shlex.quote(str(checkout))} pull && {launcher} doctor"
    if (prefix_dir / "uv-receipt.toml").is_file():
        return "uv tool upgrade claude-sidecar"
    if (prefix_dir / "pipx_metadata.json").is_file():
        return "pipx upgrade claude-sidecar"
    return f"{shlex.quote(sys.executable)} -m pip install --upgrade claude-sidecar"


def unknown_options_warning(ignored: list[str]) -> str:
    """The log line naming the options a newer client sent that this daemon does not know."""
    return (
        f"initialize: ignoring options this daemon ({__version__}, protocol "
        f"{api.PROTOCOL_VERSION}) does not know: {', '.join(ignored)}"
    )
