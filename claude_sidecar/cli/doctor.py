"""``claude-sidecar doctor``: which CLI would run, how it authenticates, where its files are.

Everything is asked of the real CLI (``--version``, ``auth status``) in the daemon's own
environment, so the answer is what a channel would get. Secrets are never read or printed:
the CLI's ``auth status`` names the source of a key, not the key.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

import msgspec

from claude_sidecar import __version__
from claude_sidecar.cli.compat import tested_range
from claude_sidecar.cli.discovery import describe_cli
from claude_sidecar.cli.paths import env_config_home
from claude_sidecar.cli.signin import login_fix
from claude_sidecar.protocol.api import AuthInfo, CliInfo, DoctorReport, PlatformInfo
from claude_sidecar.runtime.host import platform_support

AUTH_TIMEOUT = 25.0
"""A hang guard for `claude auth status`: it answers in under a second, but a CLI start on a
machine loaded several times over its cores took over 10 s (seen in the test command)."""


class _AuthStatus(msgspec.Struct, rename="camel"):
    """The fields of ``claude auth status --json`` the doctor reports (CLI 2.1.330)."""

    logged_in: bool = False
    auth_method: str | None = None
    api_provider: str | None = None
    api_key_source: str | None = None
    config_directory: str | None = None


def _base_url(env: Mapping[str, str]) -> str | None:
    raw = env.get("ANTHROPIC_BASE_URL")
    if not raw:
        return None
    parts = urlsplit(raw)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _auth_status(cli: str, env: Mapping[str, str]) -> tuple[_AuthStatus | None, str | None]:
    try:
        done = subprocess.run(
            [cli, "auth", "status", "--json"],
            capture_output=True,
            text=True,
            timeout=AUTH_TIMEOUT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, f"`claude auth status` did not answer within {AUTH_TIMEOUT:g} s"
    except OSError as e:
        return None, f"cannot run `claude auth status`: {e}"
    try:
        return msgspec.json.decode(done.stdout, type=_AuthStatus), None
    except msgspec.DecodeError:
        said = (done.stdout + done.stderr).strip().splitlines()
        return None, (
            "this CLI cannot report its authentication (`claude auth status --json` "
            f"exited with {done.returncode}: {said[0][:120] if said else 'no output'!r})"
        )


def _auth(cli: CliInfo, env: Mapping[str, str]) -> tuple[AuthInfo, str | None]:
    if cli.path is None:
        return AuthInfo(logged_in=None, base_url=_base_url(env), error="no CLI to ask"), None
    status, error = _auth_status(cli.path, env)
    if status is None:
        return AuthInfo(logged_in=None, base_url=_base_url(env), error=error), None
    return AuthInfo(
        logged_in=status.logged_in,
        method=status.auth_method,
        source=status.api_key_source,
        provider=status.api_provider,
        base_url=_base_url(env),
    ), status.config_directory


def examine(cli_path: str | None = None, env: Mapping[str, str] | None = None) -> DoctorReport:
    """Look at the set-up a daemon started with ``--cli cli_path`` in ``env`` would have."""
    env = os.environ if env is None else env
    cli = describe_cli(cli_path, env)
    auth, config_dir = _auth(cli, env)
    problems: list[str] = []
    warnings: list[str] = []
    if cli.error:
        problems.append(cli.error)
    if cli.tested is False:
        warnings.append(
            f"CLI {cli.version} is outside the tested range ({tested_range()}): it may work; if "
            "something breaks, run the CLI bundled with claude-sidecar's claude-agent-sdk "
            "(unset CLAUDE_SIDECAR_CLI / --cli, or put it first on PATH)"
        )
    if auth.logged_in is False:
        problems.append(f"the CLI has no credentials: {login_fix(env)}")
    elif auth.error and cli.path is not None:
        warnings.append(auth.error)
    return DoctorReport(
        daemon_version=__version__,
        python=f"{platform.python_version()} ({sys.executable})",
        platform=PlatformInfo(**dataclasses.asdict(platform_support())),
        cli=cli,
        auth=auth,
        config_dir=config_dir or str(env_config_home(env)),
        problems=problems,
        warnings=warnings,
    )


_SUPPORT = {
    "supported": "supported",
    "throughWsl": "not supported as such: run claude-sidecar inside WSL",
    "untested": "not tested: it may work",
}


def _platform_line(platform: PlatformInfo) -> str:
    return f"{platform.system} {platform.machine} ({_SUPPORT[platform.support]})"


def render_text(report: DoctorReport) -> str:
    """The report for a person: one fact per line, then problems and warnings with fixes."""
    cli = report.cli
    if cli.path is None:
        cli_line = "none found"
    else:
        tested = {
            True: "in the tested range",
            False: "NOT in the tested range",
            None: "version unknown",
        }[cli.tested]
        cli_line = (
            f"{cli.version or '?'} at {cli.path} (found via {cli.source}; {tested}: "
            f"{tested_range()})"
        )
    auth = report.auth
    if auth.logged_in is None:
        auth_line = f"unknown ({auth.error})"
    elif not auth.logged_in:
        auth_line = "not logged in"
    else:
        auth_line = " ".join(
            filter(
                None,
                [
                    auth.method,
                    f"from {auth.source}" if auth.source else None,
                    f"({auth.provider})" if auth.provider else None,
                ],
            )
        )
    lines = [
        f"claude-sidecar {report.daemon_version}, Python {report.python}",
        f"platform: {_platform_line(report.platform)}",
        f"CLI:      {cli_line}",
        f"auth:     {auth_line}",
        f"API URL:  {auth.base_url or 'default (Anthropic API)'}",
        f"config:   {report.config_dir}",
    ]
    lines += [f"problem:  {p}" for p in report.problems]
    lines += [f"warning:  {w}" for w in report.warnings]
    lines.append(
        "result:   "
        + ("ready" if not report.problems else f"{len(report.problems)} problem(s) to fix")
    )
    return "\n".join(lines) + "\n"
